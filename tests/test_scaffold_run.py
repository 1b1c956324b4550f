"""`wildhold run` offline: two replay arms and a scripted arm through the real MCP server, and what it writes."""

from __future__ import annotations

import asyncio
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildhold.agents.scaffold.accounting import Telemetry, rebuild
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "offline-smoke.yaml"
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
    assert set(paths) == {"archive", "telemetry", "manifest", "report", "spend_curve"}
    assert zipfile.is_zipfile(paths["archive"])
    manifest = json.loads(paths["manifest"].read_text())
    assert manifest["tools_hash"] and manifest["rules_digest"] and manifest["caps"]["max_tool_calls"] == 40
    arms = {a["name"]: a for a in manifest["arms"]}
    assert arms["explorer"]["model"] == "replay/explorer-v1" and arms["explorer"]["price"]["input_per_mtok"] == 3.0
    assert arms["baseline"]["policy"] == "producer"
    report = json.loads(paths["report"].read_text())
    assert {c["name"] for c in report["agents"]} == {"explorer", "stumbler", "baseline"}
    curve = json.loads(paths["spend_curve"].read_text())["arms"]
    assert set(curve) == {"explorer", "stumbler"}
    points = curve["explorer"]["points"]
    assert [p["session"] for p in points] == [1, 2]
    assert points[0]["tokens"] < points[1]["tokens"] and points[0]["cost_usd"] < points[1]["cost_usd"]
    assert all(p["quests"] is not None and p["wealth_cents"] is not None for p in points)


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


def test_no_string_the_model_received_carries_budget_spend_or_duration(smoke):
    run, paths = smoke
    records = Telemetry(paths["telemetry"]).records()
    secrets = {f"{r['cost_usd']}" for r in records if "cost_usd" in r and r["cost_usd"]}
    secrets |= {str(r["tokens"]) for r in records if r["kind"] == "progress"}
    exp = run.exp
    secrets |= {str(exp.budget_usd), str(exp.ceiling_s), str(int(exp.ceiling_s))}
    for arm in ("explorer", "stumbler"):
        received = run.adapters[arm].received
        assert received, arm
        strings = _strings(received, [])
        assert any("Complete as many quests" in s for s in strings)
        for s in strings:
            low = s.lower()
            assert not [w for w in LEAK_WORDS if w in low], s[:200]
            assert not [x for x in secrets if x in s and len(x) > 3], s[:200]


def test_the_system_prompt_holds_no_strategy_or_budget_and_tools_come_from_the_server(smoke):
    run, _ = smoke
    first = run.adapters["explorer"].received[0]
    names = {t["name"] for t in first["tools"]}
    assert {"observe", "eat", "rules", "write_file", "set_next_wake", "end_session"} <= names
    assert "register" not in names
    assert len(first["messages"]) == 1  # no summary carried in: each session starts fresh


def test_wildhold_run_on_the_offline_example_from_the_command_line(tmp_path):
    example = tmp_path / "exp"
    shutil.copytree(EXAMPLE.parent, example)
    result = CliRunner().invoke(app, ["run", str(example / "offline-smoke.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    for name in ("telemetry.jsonl", "manifest.json", "report.json", "spend_curve.json", "world/match.wildhold.zip"):
        assert (tmp_path / "out" / name).exists(), name


class Crash(Exception):
    """Stands in for the process dying between two model calls."""


def test_a_run_killed_mid_way_resumes_and_its_accounting_matches_an_uninterrupted_run(smoke, tmp_path, monkeypatch):
    from wildhold.agents.scaffold.adapters import ReplayAdapter

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
        assert (a.input_tokens, a.cached_input_tokens, a.output_tokens, a.llm_calls) == \
            (b.input_tokens, b.cached_input_tokens, b.output_tokens, b.llm_calls)
        assert a.cost_usd == pytest.approx(b.cost_usd) and a.complete == b.complete == "cassette_exhausted"
    assert zipfile.is_zipfile(paths["archive"])


def test_every_example_experiment_file_is_valid():
    for path in sorted(EXAMPLE.parent.glob("*.yaml")):
        exp = Experiment.load(path)
        assert exp.arms and exp.budget_usd > 0, path
