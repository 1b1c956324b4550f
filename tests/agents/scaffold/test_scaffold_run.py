"""`wildhold run` offline: two replay arms and a scripted arm through the real MCP server on loopback, and what it writes."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import zipfile
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from wildhold.agents.scaffold.accounting import Telemetry, rebuild
from wildhold.agents.scaffold.adapters import ReplayAdapter
from wildhold.agents.scaffold.experiment import Experiment, Run, spend_curve, stage_ticks, trial_ticks
from wildhold.agents.scaffold.session import SCAFFOLD_TOOLS
from wildhold.cli import app
from paths_support import FIXTURES, ROOT

EXAMPLE = ROOT / "examples" / "offline-smoke.yaml"
LEAK_WORDS = ("budget", "spend", "spent", "dollar", "usd", "ceiling", "wall-clock", "wall clock", "$")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    run = Run(Experiment.load(EXAMPLE), out, EXAMPLE.parent)
    asyncio.run(run.play())
    return run, run.finish()


def _strings(value, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    else:
        out.append(json.dumps(value))
    return out


def test_the_run_writes_archive_telemetry_manifest_report_and_spend_curve(smoke):
    run, paths = smoke
    assert set(paths) == {"archive", "telemetry", "manifest", "report", "report_html", "spend_curve"}
    assert zipfile.is_zipfile(paths["archive"])
    manifest = json.loads(paths["manifest"].read_text())
    assert manifest["tools_hash"] and manifest["rules_digest"] and manifest["caps"]["max_tool_calls"] == 40
    arms = {a["name"]: a for a in manifest["arms"]}
    assert arms["explorer"]["model"] == "replay/explorer-v1" and arms["explorer"]["price"]["input_per_mtok"] == 3.0
    assert (arms["explorer"]["budget_usd"], arms["explorer"]["ceiling_s"]) == (5.0, 600.0)  # the experiment's default
    assert arms["baseline"]["policy"] == "producer"
    report = json.loads(paths["report"].read_text())
    assert {c["name"] for c in report["agents"]} == {"explorer", "stumbler", "baseline"}
    curve = json.loads(paths["spend_curve"].read_text())["arms"]
    assert set(curve) == {"explorer", "stumbler"}
    points = curve["explorer"]["points"]
    assert [p["session"] for p in points] == [1, 2]
    assert points[0]["tokens"] < points[1]["tokens"] and points[0]["cost_usd"] < points[1]["cost_usd"]
    assert all(p["quests"] is not None and p["wealth_cents"] is not None for p in points)
    assert all(p["trial_stages"] == 0 and p["trial_stages_independent"] == 0 for p in points)  # from the archive


def test_the_archive_carries_each_sessions_spend_and_the_report_shows_the_ledgers_tokens_and_dollars(smoke):
    from wildhold.eval.html import render_html
    from wildhold.store.archive import Archive

    run, paths = smoke
    ledger = rebuild(Telemetry(paths["telemetry"]).records())
    report = json.loads(paths["report"].read_text())
    ids = {card["name"]: card["agent"] for card in report["agents"]}
    tokens, dollars = report["curves"]["tokens"], report["curves"]["dollars"]
    assert set(tokens) == set(dollars) == {ids["explorer"], ids["stumbler"]}  # the scripted baseline spent nothing
    with Archive(paths["archive"]) as a:
        records = [i for i in a.inputs() if i.kind == "spend"]
        table = a.manifest["price_table_sha256"]
        assert a.manifest["horizon"] == "hidden" and a.manifest["records_digest"]
    for arm in ("explorer", "stumbler"):
        a, t, d = ledger.arm(arm), tokens[ids[arm]], dollars[ids[arm]]
        assert (t["input_tokens"], t["cached_input_tokens"], t["output_tokens"], t["llm_calls"], t["sessions"]) == \
            (a.input_tokens, a.cached_input_tokens, a.output_tokens, a.llm_calls, a.sessions)
        assert t["tokens"] == a.tokens and d["dollars"] == pytest.approx(a.cost_usd, rel=1e-12) and d["dollars"] > 0
        assert [r.args["session"] for r in records if r.agent == ids[arm]] == list(range(1, a.sessions + 1))
        assert d["price_table"] == table and d["points"][-1]["dollars"] == pytest.approx(a.cost_usd, rel=1e-12)
    run_file = json.loads(paths["spend_curve"].read_text())["arms"]
    for arm in ("explorer", "stumbler"):  # the archive agrees with what the run read from the world, point by point
        points, curve = dollars[ids[arm]]["points"], run_file[arm]["points"]
        assert [(p["tick"], p["quests"], p["wealth_cents"]) for p in points] == \
            [(p["tick"], p["quests"], p["wealth_cents"]) for p in curve]
        assert [p["dollars"] for p in points] == pytest.approx([p["cost_usd"] for p in curve])
    html = render_html(report)
    assert "Not recorded: this archive carries no model usage" not in html and 'id="spend"' in html


def test_every_arm_talked_to_a_real_server_on_loopback_that_is_gone_after_the_run(smoke):
    run, paths = smoke
    start = next(r for r in Telemetry(paths["telemetry"]).records() if r["kind"] == "run_start" and r["arm"] is None)
    host, port = start["server"].removeprefix("http://").split(":")
    assert host == "127.0.0.1" and int(port) > 0
    with pytest.raises(OSError):  # shut down cleanly: nothing listens there any more
        socket.create_connection((host, int(port)), timeout=1.0).close()
    assert run.server is None and run.host.archives.path is not None


def test_telemetry_records_every_kind_and_the_ledger_rebuilt_from_it_matches_provider_usage(smoke):
    run, paths = smoke
    records = Telemetry(paths["telemetry"]).records()
    kinds = {r["kind"] for r in records}
    assert {"run_start", "session_start", "llm_call", "tool_call", "workspace_write", "wake_scheduled",
            "session_end", "run_complete"} <= kinds
    cassette = json.loads((EXAMPLE.parent / "cassettes" / "explorer.json").read_text())
    ledger = rebuild(records).arm("explorer")
    assert ledger.input_tokens == sum(t["usage"]["input_tokens"] for t in cassette["turns"])
    assert ledger.cached_input_tokens == sum(t["usage"]["cached_input_tokens"] for t in cassette["turns"])
    expected = sum(t["usage"]["input_tokens"] * 3.0 + t["usage"]["output_tokens"] * 15.0 for t in cassette["turns"]) / 1e6
    assert ledger.cost_usd == pytest.approx(expected) and ledger.complete == "cassette_exhausted"


def test_caps_errors_and_the_repetition_breaker_end_sessions_with_a_recorded_reason(smoke):
    run, paths = smoke
    records = Telemetry(paths["telemetry"]).records()
    ends = [(r["arm"], r["reason"]) for r in records if r["kind"] == "session_end"]
    assert ("stumbler", "repetition") in ends and ("explorer", "end_session") in ends
    codes = {r["name"]: r["code"] for r in records if r["kind"] == "tool_call" and r["arm"] == "stumbler"}
    assert codes["read_file"] == "bad_path" and codes["teleport"] == "unknown_tool"
    assert codes["eat"] == "not_in_inventory"
    assert not any(p.is_file() for p in (run.out / "workspaces" / "stumbler").rglob("*"))


def test_the_workspace_persists_across_sessions(smoke):
    run, _ = smoke
    received = run.adapters["explorer"].received
    session2_read = next(m for call in received for m in call["messages"]
                         if m["role"] == "tool" and m["name"] == "read_file")
    assert "I start with berries" in session2_read["content"]
    assert (run.out / "workspaces" / "explorer" / "notes" / "log.md").exists()


def _world_surface() -> list[dict]:
    """The server's published tool surface (pinned by the manifest's tools_hash), as the scaffold passes it on."""
    from wildhold.server.mcp import tool_surface

    return [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            for t in tool_surface() if t["name"] != "register"]


def test_no_string_the_model_received_carries_budget_spend_or_duration(smoke):
    run, paths = smoke
    records = Telemetry(paths["telemetry"]).records()
    secrets = {f"{r['cost_usd']}" for r in records if "cost_usd" in r and r["cost_usd"]}
    secrets |= {str(r["tokens"]) for r in records if r["kind"] == "progress"}
    exp = run.exp
    secrets |= {str(exp.budget_usd), str(exp.ceiling_s), str(int(exp.ceiling_s))}
    world_tools = _world_surface()
    for arm in ("explorer", "stumbler"):
        received = run.adapters[arm].received
        assert received, arm
        for call in received:
            # The tool listing is the world's fixed published surface plus the scaffold's own tools: nothing
            # in it depends on the run. (World tool texts may use words like "budget" for rules of the world.)
            assert call["tools"] == world_tools + SCAFFOLD_TOOLS
        strings = _strings([[c["system"], c["messages"]] for c in received] + [SCAFFOLD_TOOLS], [])
        assert any("Complete as many quests" in s for s in strings)
        for s in strings:
            low = s.lower()
            assert not [w for w in LEAK_WORDS if w in low], s[:200]
        for s in _strings(received, []):
            assert not [x for x in secrets if x in s and len(x) > 3], s[:200]


def test_under_the_default_hidden_horizon_no_answer_a_model_got_says_when_the_match_ends(smoke):
    run, paths = smoke
    end = str(run.host.world.end_tick)
    results = [r["result"] for r in Telemetry(paths["telemetry"]).records() if r["kind"] == "tool_call"]
    assert run.exp.horizon == "hidden" and any('"tick"' in text for text in results)
    assert not [text for text in results if "ends_at_tick" in text or end in text]


def test_the_system_prompt_holds_no_strategy_or_budget_and_tools_come_from_the_server(smoke):
    run, _ = smoke
    first = run.adapters["explorer"].received[0]
    names = {t["name"] for t in first["tools"]}
    assert {"observe", "eat", "rules", "write_file", "set_next_wake", "end_session"} <= names
    assert "register" not in names
    assert len(first["messages"]) == 1  # no summary carried in: each session starts fresh


def test_wildhold_run_on_the_offline_example_from_the_command_line_writes_the_report_a_person_opens(tmp_path):
    example = tmp_path / "exp"
    shutil.copytree(EXAMPLE.parent, example)
    result = CliRunner().invoke(app, ["run", str(example / "offline-smoke.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    for name in ("telemetry.jsonl", "manifest.json", "report.json", "report.html", "spend_curve.json",
                 "world/match.wildhold.zip"):
        assert (tmp_path / "out" / name).exists(), name
    assert f"report_html: {tmp_path / 'out' / 'report.html'}" in result.output.replace("\n", "")
    page = (tmp_path / "out" / "report.html").read_text()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert page.startswith("<!DOCTYPE html>") and all(card["name"] in page for card in report["agents"])


class Crash(Exception):
    """Stands in for the process dying between two model calls."""


def test_a_run_killed_mid_way_resumes_and_its_accounting_matches_an_uninterrupted_run(smoke, tmp_path, monkeypatch):
    uninterrupted = rebuild(Telemetry(smoke[1]["telemetry"]).records())
    real = ReplayAdapter.complete
    calls = {"n": 0}

    async def dying(self, system, messages, tools):
        calls["n"] += 1
        if calls["n"] == 6:
            raise Crash()
        return await real(self, system, messages, tools)

    monkeypatch.setattr(ReplayAdapter, "complete", dying)
    first = Run(Experiment.load(EXAMPLE), tmp_path, EXAMPLE.parent)
    with pytest.raises(Exception) as died:
        asyncio.run(first.play())
    assert died.type is Crash or died.group_contains(Crash)
    first.host.close()
    crashed = rebuild(Telemetry(tmp_path / "telemetry.jsonl").records())
    assert all(a.complete is None for a in crashed.arms.values()) and crashed.arm("explorer").llm_calls < 7

    monkeypatch.setattr(ReplayAdapter, "complete", real)
    second = Run(Experiment.load(EXAMPLE), tmp_path, EXAMPLE.parent)
    asyncio.run(second.play())
    paths = second.finish()
    resumed = rebuild(Telemetry(paths["telemetry"]).records())
    for arm in ("explorer", "stumbler"):
        a, b = resumed.arm(arm), uninterrupted.arm(arm)
        assert (a.input_tokens, a.cached_input_tokens, a.output_tokens, a.llm_calls, a.sessions) == \
            (b.input_tokens, b.cached_input_tokens, b.output_tokens, b.llm_calls, b.sessions)
        assert a.cost_usd == pytest.approx(b.cost_usd) and a.complete == b.complete == "cassette_exhausted"
    assert zipfile.is_zipfile(paths["archive"])
    # Each session's spend is in the match once, the sessions cut short and resumed included.
    report = json.loads(paths["report"].read_text())
    for card in report["agents"]:
        if card["name"] in ("explorer", "stumbler"):
            spent = report["curves"]["dollars"][card["agent"]]
            assert [p["session"] for p in spent["points"]] == list(range(1, resumed.arm(card["name"]).sessions + 1))
            assert spent["dollars"] == pytest.approx(resumed.arm(card["name"]).cost_usd)


def test_an_arm_may_carry_its_own_budget_and_ceiling_and_the_manifest_records_what_each_ran_under(tmp_path):
    data = yaml.safe_load(EXAMPLE.read_text())
    data["arms"][0]["budget_usd"] = 0.05  # explorer: its first session costs about 0.09
    data["arms"][1]["ceiling_s"] = 0.001  # stumbler: out of wall clock before its first session
    run = Run(Experiment.model_validate(data), tmp_path, EXAMPLE.parent)
    asyncio.run(run.play())
    paths = run.finish()
    ledger = rebuild(Telemetry(paths["telemetry"]).records())
    assert (ledger.arm("explorer").complete, ledger.arm("explorer").sessions) == ("budget", 1)
    assert (ledger.arm("stumbler").complete, ledger.arm("stumbler").sessions) == ("ceiling", 0)
    manifest = json.loads(paths["manifest"].read_text())
    arms = {a["name"]: a for a in manifest["arms"]}
    assert (arms["explorer"]["budget_usd"], arms["explorer"]["ceiling_s"]) == (0.05, 600.0)
    assert (arms["stumbler"]["budget_usd"], arms["stumbler"]["ceiling_s"]) == (5.0, 0.001)
    assert (manifest["budget_usd"], manifest["ceiling_s"]) == (5.0, 600.0)


def test_an_experiment_may_name_its_evaluated_arms_as_the_cohort_and_both_manifests_carry_it(tmp_path):
    from wildhold.agents.scaffold.experiment import manifest
    from wildhold.store.archive import Archive

    data = yaml.safe_load(EXAMPLE.read_text())
    assert "cohort" not in manifest(Experiment.model_validate(data), EXAMPLE.parent)
    exp = Experiment.model_validate({**data, "cohort": ["explorer", "stumbler"]})
    assert manifest(exp, EXAMPLE.parent)["cohort"] == ["explorer", "stumbler"]
    run = Run(exp, tmp_path, EXAMPLE.parent)
    try:
        with Archive(run.host.archives.export()) as archive:
            assert archive.manifest["cohort"] == ["explorer", "stumbler"] and archive.verify()
            assert json.loads(archive.zip.read("header.json"))["cohort"] == ["explorer", "stumbler"]
    finally:
        run.host.close()


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["arms"][0].update(budget_usd=0), "budget_usd"),
    (lambda d: d["arms"][0].pop("price"), "pinned price"),
    (lambda d: d["arms"][1].update(name="explorer"), "distinct"),
    (lambda d: d["arms"][0].pop("cassette"), "needs a cassette"),
    (lambda d: d.update(clock="sundial"), "clock"),
    (lambda d: d.update(arms=d["arms"][2:]), "at least one model arm"),
    (lambda d: d["caps"].update(max_tool_cals=5), "max_tool_cals"),
    (lambda d: d["caps"].update(max_tokens="lots"), "max_tokens"),
    (lambda d: d.update(cohort=["explorer", "ghost"]), "the cohort names arms the experiment does not have: ghost"),
])
def test_a_bad_experiment_file_is_refused_naming_the_problem(change, message):
    data = yaml.safe_load(EXAMPLE.read_text())
    change(data)
    with pytest.raises(ValidationError, match=message):
        Experiment.model_validate(data)


def _tool_names() -> set[str]:
    return {t["name"] for t in _world_surface()} | {t["name"] for t in SCAFFOLD_TOOLS}


EXPERIMENTS = sorted(p for p in EXAMPLE.parent.glob("*.yaml") if not p.name.startswith("sweep-"))  # sweep-*: sweep files


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_every_example_experiment_file_is_valid_and_its_references_resolve(path, content):
    from wildhold.agents.scripted import make_policy

    exp = Experiment.load(path)
    content.scenario(exp.scenario)
    assert exp.arms and exp.budget_usd > 0
    for arm in exp.arms:
        if arm.provider == "scripted":
            make_policy(arm.policy or "producer", content)
        elif arm.provider == "replay":
            cassette = ReplayAdapter(path.parent / arm.cassette)
            assert cassette.turns and cassette.model
            called = {c["name"] for t in cassette.turns for c in t.get("tool_calls", [])}
            assert called - _tool_names() <= {"teleport"}, called  # the stumbler calls one tool that does not exist
        elif arm.provider == "standin":  # a scripted policy behind the stand-in model, named for it
            make_policy(arm.policy, content)
            assert arm.model == f"wildhold-standin/{arm.policy}" and arm.price, arm.name
        else:
            assert arm.model and arm.price, arm.name
            # Keys come from the environment only; an arm without one is a local server that needs none.
            assert arm.api_key_env or (arm.base_url or "").startswith("http://127.0.0.1:"), arm.name


def test_the_three_protocols_have_ready_examples():
    live = [e for e in (Experiment.load(p) for p in EXPERIMENTS) if any(a.provider != "replay" for a in e.arms)]
    scenarios = {e.scenario: e for e in live}  # the protocols as they run live (a replay of one is an offline copy)
    assert {"season", "famine", "frontier"} <= set(scenarios)
    assert scenarios["frontier"].clock == "realtime"
    assert scenarios["frontier"].objective == "Complete as many quests as possible."


def _trace(name: str) -> list[dict]:
    path = FIXTURES / "trial" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _progress(arm: str, tick: int, session: int) -> dict:
    return {"kind": "progress", "arm": arm, "session": session, "tick": tick, "elapsed_s": 1.0, "tokens": 100 * session,
            "cached_input_tokens": 0, "cost_usd": 0.01 * session, "quests": 0, "wealth_cents": 500}


def test_the_spend_curve_counts_trial_stages_reached_by_each_points_tick():
    from wildhold.eval.trial import assess

    events = _trace("season_all_stages")
    stages = stage_ticks(events, "season", {"a1": "explorer"})
    credited = assess(events)["a1"]["native_ticks"]
    first, home, last = credited["foothold"], credited["home"], max(credited.values())
    ticks = [first - 1, first, home, last - 1, last]
    curve = spend_curve([_progress("explorer", t, n) for n, t in enumerate(ticks, start=1)], stages)
    points = curve["arms"]["explorer"]["points"]
    native = [p["trial_stages"] for p in points]
    assert native[0] == 0 and native[1] >= 1 and native[2] >= list(credited).index("home") + 1
    assert native[3] < 8 and native[4] == 8 and native == sorted(native)
    assert all(p["trial_stages_independent"] >= p["trial_stages"] for p in points)
    assert [p["cost_usd"] for p in points] == [0.01 * n for n in range(1, 6)]


def test_trial_stages_come_from_the_archive_joined_by_agent_name():
    from wildhold.eval.trial import assess
    from wildhold.store.archive import Archive

    archive = FIXTURES / "eval" / "delve_seed11.wildhold.zip"
    with Archive(archive) as a:
        names = {agent["id"]: agent["name"] for agent in a.manifest["agents"]}
        attained = assess(a.events(), scenario=a.manifest["scenario"])
    stages = trial_ticks(archive)
    assert set(stages) == set(names.values())
    delver = next(i for i, n in names.items() if n == "delver")
    ticks = sorted(r["tick"] for r in attained[delver]["independent"].values())
    assert ticks and stages["delver"]["independent"] == ticks
    curve = spend_curve([_progress("delver", ticks[0] - 1, 1), _progress("delver", ticks[-1], 2)], stages)
    assert [p["trial_stages_independent"] for p in curve["arms"]["delver"]["points"]] == [0, len(ticks)]


def test_the_closing_summary_shows_each_arm_as_its_artifacts_record_it(smoke):
    from rich.console import Console

    from wildhold.agents.scaffold.progress import summary_table

    run, paths = smoke
    console = Console(record=True, width=220)
    console.print(summary_table(paths["manifest"].parent))
    text = console.export_text()
    ledger = rebuild(Telemetry(paths["telemetry"]).records())
    report = json.loads(paths["report"].read_text())
    ranks = {card["name"]: card["rank"] for card in report["agents"]}
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]] for line in text.splitlines()
            if line.startswith("│")}
    assert set(rows) == {"explorer", "stumbler", "baseline"}
    for arm in ("explorer", "stumbler"):
        a = ledger.arm(arm)
        assert rows[arm][1:6] == [a.complete, str(a.sessions), str(a.llm_calls), f"{a.tokens:,}", f"{a.cached_input_tokens:,}"]
        assert rows[arm][6] == f"${a.cost_usd:.4f}" and rows[arm][9] == str(ranks[arm])
    assert rows["baseline"][0] == "scripted producer" and rows["baseline"][9] == str(ranks["baseline"])


@pytest.mark.parametrize("observation", ["image", "both"])
def test_a_vision_arm_receives_its_view_as_an_image_and_the_manifest_records_it(tmp_path, observation):
    import base64

    data = yaml.safe_load(EXAMPLE.read_text())
    data["observation"] = observation
    data["arms"] = [data["arms"][0]]  # explorer: its recorded turns observe
    run = Run(Experiment.model_validate(data), tmp_path, EXAMPLE.parent)
    asyncio.run(run.play())
    paths = run.finish()
    assert json.loads(paths["manifest"].read_text())["observation"] == observation
    seen = [m for r in run.adapters["explorer"].received for m in r["messages"] if m.get("name") == "observe"]
    assert seen and all(len(m["images"]) == 1 and m["images"][0]["mime"] == "image/png" for m in seen)
    assert base64.b64decode(seen[0]["images"][0]["data"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(("view" in json.loads(m["content"])) == (observation == "both") for m in seen)
    records = Telemetry(paths["telemetry"]).records()
    assert any(r["kind"] == "tool_call" and r["name"] == "observe" and r.get("images") for r in records)
