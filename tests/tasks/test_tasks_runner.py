"""The task runner: model arms through the scaffold offline (spend per attempt), the clock, the results files
rebuilt from the archives byte for byte, resuming, and a refused set-up reported as a task error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.content import default_content
from wildhold.store.archive import Archive
from wildhold.tasks.attempt import run_attempt
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.scaffolded import run_model_attempt
from wildhold.tasks.spec import Limits, SetupStep
from wildhold.tasks.suite import RESULT_FILES, Player, SuiteError, players_of, run_suite, score_dir, write_results

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "wildhold" / "examples"
SMOKE = EXAMPLES / "tasks-smoke.yaml"
LITE_SAMPLE = ["exploration/gather-wood-v1", "crafting/craft-plank-v1", "social/talk-oskar-v1"]  # easy: room for every turn
CASSETTE_TOKENS = 64_515  # the tasker cassette: every turn's input + output tokens
CASSETTE_DOLLARS = 0.197325  # at its pinned price, 3 $ / 15 $ per million input / output tokens
runner = CliRunner()


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in RESULT_FILES}


def _smoke():
    from wildhold.agents.scaffold.experiment import Experiment

    exp = Experiment.load(SMOKE)
    return exp, exp.arms[0]


def test_a_model_arm_attempts_lite_tasks_offline_with_its_spend_and_score_rebuilds_every_file(tmp_path):
    tasks = [default_suite().get(t) for t in LITE_SAMPLE]
    results = run_suite(tasks, players_of(SMOKE), 1, 1, tmp_path)
    assert [r["task"] for r in results] == sorted(LITE_SAMPLE)
    for r in results:
        assert r["policy"] == "tasker" and r["clock"] == "lockstep" and r["status"] in ("success", "failure")
        assert r["tokens"] == CASSETTE_TOKENS and r["dollars"] == pytest.approx(CASSETTE_DOLLARS)
        assert r["turns"] == r["llm_calls"] == 8
    with Archive(tmp_path / "exploration__gather-wood-v1__r0.wha") as a:
        m = a.manifest
        assert m["objective"] == "Gather 2 wood from the land." and m["horizon"] == "hidden"
        assert m["caps"]["max_tool_calls"] == 40 and m["budget_usd"] == 1.0
    md = (tmp_path / "results.md").read_text()
    assert "tasker: 3 tasks x 1 repeat, lockstep clock" in md and "tokens / task" in md and "$ / task" in md
    assert "64,515" in md and "0.1973" in md
    written = _files(tmp_path)
    for name in RESULT_FILES:
        (tmp_path / name).unlink()
    write_results(tmp_path, score_dir(tmp_path).results)
    assert _files(tmp_path) == written


def test_the_cli_runs_the_smoke_experiment_and_tasks_score_reproduces_its_files(tmp_path):
    out = tmp_path / "run"
    ran = runner.invoke(app, ["tasks", "run", "--suite", "exploration/gather-wood-v1", "--experiment", str(SMOKE),
                              "--repeats", "2", "--workers", "1", "--out", str(out), "--quiet"])
    assert ran.exit_code == 0, ran.output
    assert "Tasks: tasker: 1 task x 2 repeats, lockstep clock" in ran.output
    assert "64,515" in ran.output and "0.1973" in ran.output
    written = _files(out)
    scored = runner.invoke(app, ["tasks", "score", str(out), "--layout", "seed002"])
    assert scored.exit_code == 0, scored.output
    assert _files(out) == written  # the layout changes what the terminal shows, never the files
    shown = " ".join(scored.output.split())  # the terminal wraps the caption
    assert "as seed 002's Table 3" in shown and "mean ± sample std (n-1) over repeats" in shown
    html = (out / "results.html").read_text()
    assert "<h2>tasker: 1 task x 2 repeats, lockstep clock</h2>" in html


def test_the_clock_is_recorded_in_every_result_and_titled(tmp_path):
    tasks = [default_suite().get("exploration/gather-wood-v1")]
    scripted = run_suite(tasks, "oracle", 2, 1, tmp_path / "s", clock="realtime")
    assert {r["clock"] for r in scripted} == {"realtime"}
    assert "oracle: 1 task x 2 repeats, realtime clock" in (tmp_path / "s" / "results.md").read_text()
    model = run_suite(tasks, players_of(SMOKE), 1, 1, tmp_path / "m", clock="realtime")
    assert model[0]["clock"] == "realtime" and model[0]["tokens"] > 0  # how far it got depends on the machine
    with Archive(tmp_path / "m" / "exploration__gather-wood-v1__r0.wha") as a:
        assert a.manifest["clock"] == "realtime" and a.manifest["server"]["tick_seconds"] == 0.05
    default = run_suite(tasks, "idle", 1, 1, tmp_path / "d")
    assert default[0]["clock"] == tasks[0].clock == "lockstep"


def test_a_rerun_resumes_and_refuses_another_clock_or_player_in_the_same_folder(tmp_path):
    tasks = [default_suite().get("exploration/gather-wood-v1")]
    first = run_suite(tasks, players_of(SMOKE), 1, 1, tmp_path)
    telemetry = tmp_path / "exploration__gather-wood-v1__r0.telemetry.jsonl"
    before = telemetry.stat().st_mtime_ns
    assert run_suite(tasks, players_of(SMOKE), 1, 1, tmp_path) == first
    assert telemetry.stat().st_mtime_ns == before  # nothing played again
    with pytest.raises(SuiteError, match="realtime"):
        run_suite(tasks, players_of(SMOKE), 1, 1, tmp_path, clock="realtime")
    with pytest.raises(SuiteError, match="oracle"):
        run_suite(tasks, [Player("oracle", policy="oracle")], 1, 1, tmp_path)


def test_an_attempt_cut_short_is_played_again(tmp_path):
    tasks = [default_suite().get("exploration/gather-wood-v1")]
    (tmp_path / "exploration__gather-wood-v1__r0.wha.part").write_bytes(b"torn")
    (tmp_path / "exploration__gather-wood-v1__r0.work").mkdir()
    results = run_suite(tasks, "oracle", 1, 1, tmp_path)
    assert results[0]["status"] == "success"


def _refused(task_id: str):
    task = default_suite().get(task_id)
    return task.model_copy(update={"setup": (SetupStep(command="give_items", args={"item": "wood", "qty": -5}),)})


def test_a_refused_set_up_is_a_task_error_for_a_scripted_policy_and_a_model_arm_with_nothing_spent(tmp_path):
    content = default_content()
    task = _refused("exploration/gather-wood-v1")
    from wildhold.tasks.suite import policy_for

    scripted = run_attempt(task, policy_for("oracle", task, content), "oracle", 0, tmp_path / "s", content)
    assert scripted["status"] == "error" and "give_items" in scripted["error"]
    exp, arm = _smoke()
    model = run_model_attempt(task, exp, arm, 0, tmp_path / "m", content, name="refused", base=EXAMPLES)
    assert model["status"] == "error" and "give_items" in model["error"]
    assert model["llm_calls"] == 0 and model["tokens"] == 0 and model["dollars"] == 0
    write_results(tmp_path / "m", score_dir(tmp_path / "m").results)
    md = (tmp_path / "m" / "results.md").read_text()
    assert "error (n=1)" in md and "Task errors" in md


def test_a_model_arm_stops_at_the_tasks_turn_limit(tmp_path):
    content = default_content()
    task = default_suite().get("exploration/gather-wood-v1")
    task = task.model_copy(update={"limits": Limits(ticks=task.limits.ticks, turns=3)})
    exp, arm = _smoke()
    result = run_model_attempt(task, exp, arm, 0, tmp_path, content, name="short", base=EXAMPLES)
    assert result["turns"] == 3 and result["tokens"] < CASSETTE_TOKENS
    ends = [json.loads(line) for line in (tmp_path / "short.telemetry.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in ends if r["kind"] == "session_end"] == ["turn_limit"]


def test_a_model_arm_stops_at_the_tasks_tick_limit(tmp_path):
    content = default_content()
    task = default_suite().get("exploration/gather-wood-v1")
    task = task.model_copy(update={"limits": Limits(ticks=5, turns=task.limits.turns)})
    exp, arm = _smoke()
    result = run_model_attempt(task, exp, arm, 0, tmp_path, content, name="brief", base=EXAMPLES)
    assert result["status"] == "failure" and result["ticks"] == 5
    assert result["turns"] < 8  # the match ended during the first sleep: the second session never began


def test_a_killed_workers_working_store_is_swept_and_a_live_ones_kept(tmp_path):
    import os
    import subprocess

    from wildhold.tasks.attempt import scratch_folder, sweep_scratch

    dead = subprocess.Popen(["true"])  # a process that has exited: nothing alive has its pid
    dead.wait()
    folder = scratch_folder(tmp_path)
    left = folder / f"wildhold-attempt-{dead.pid}-x__r0.db"
    mine = folder / f"wildhold-attempt-{os.getpid()}-x__r0.db"
    left.write_bytes(b"")
    mine.write_bytes(b"")
    try:
        assert sweep_scratch(tmp_path) >= 1
        assert not left.exists() and mine.exists()
    finally:
        left.unlink(missing_ok=True)
        mine.unlink(missing_ok=True)


def test_an_experiment_whose_arm_could_never_play_is_refused_before_any_attempt(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SMOKE.read_text().replace("cassettes/tasker.json", "cassettes/missing.json"))
    ran = runner.invoke(app, ["tasks", "run", "--suite", "lite", "--experiment", str(bad), "--out", str(tmp_path / "o")])
    assert ran.exit_code == 2 and "cassette" in ran.output and not (tmp_path / "o").exists()
    keyless = tmp_path / "keyless.yaml"
    keyless.write_text(SMOKE.read_text().replace("provider: replay", "provider: openai\n    model: m\n    api_key_env: "
                                                 "WILDHOLD_TEST_UNSET_KEY"))
    ran = runner.invoke(app, ["tasks", "run", "--suite", "lite", "--experiment", str(keyless), "--out", str(tmp_path / "o")])
    assert ran.exit_code == 2 and "WILDHOLD_TEST_UNSET_KEY" in ran.output
    odd = tmp_path / "odd.yaml"
    odd.write_text(SMOKE.read_text().replace("name: tasker", "name: ../tasker"))
    ran = runner.invoke(app, ["tasks", "run", "--suite", "lite", "--experiment", str(odd), "--out", str(tmp_path / "o")])
    assert ran.exit_code == 2 and "file names" in ran.output
    both = runner.invoke(app, ["tasks", "run", "--suite", "lite", "--agent", "idle", "--experiment", str(SMOKE),
                               "--out", str(tmp_path / "o")])
    assert both.exit_code == 2 and "pass one of --agent, --experiment and --agent-cmd" in both.output


def test_an_attempt_on_a_restored_copy_of_a_generated_world_writes_the_same_log(tmp_path):
    from wildhold.tasks import attempt
    from wildhold.tasks.suite import policy_for

    content = default_content()
    task = default_suite().get("crafting/craft-plank-v1")
    attempt._GENERATED.clear()
    heads = []
    for label in ("generated", "restored"):
        result = run_attempt(task, policy_for("oracle", task, content), "oracle", 1, tmp_path / label, content)
        assert result["status"] == "success"
        with Archive(tmp_path / label / "crafting__craft-plank-v1__r1.wha") as a:
            m = a.manifest
            heads.append((m["chain_head"], m["state_hash"], m["event_count"], m["records_digest"]))
            events = [e for e in a.events()]
        assert events[0]["seq"] == 1  # the world's first events are in the log
    assert heads[0] == heads[1]


def test_the_cli_takes_task_ids_separated_by_commas_and_names_the_closest_to_an_unknown_one(tmp_path):
    ran = runner.invoke(app, ["tasks", "run", "--suite", "exploration/gather-wood-v1,crafting/craft-plank-v1",
                              "--agent", "idle", "--repeats", "1", "--workers", "2", "--out", str(tmp_path), "--quiet"])
    assert ran.exit_code == 0, ran.output
    assert "idle: 2 tasks x 1 repeat, lockstep clock" in (tmp_path / "results.md").read_text()
    unknown = runner.invoke(app, ["tasks", "run", "--suite", "exploration/gather-wod-v1", "--out", str(tmp_path / "u")])
    assert unknown.exit_code == 2 and "exploration/gather-wood-v1" in unknown.output
    policy = runner.invoke(app, ["tasks", "run", "--suite", "lite", "--agent", "idel", "--out", str(tmp_path / "p")])
    assert policy.exit_code == 2 and "unknown agent 'idel'" in policy.output and "idle" in policy.output


def test_tasks_score_verifies_every_archive_by_re_simulation_and_refuses_a_forged_one(tmp_path):
    from archive_support import forge

    tasks = [default_suite().get("exploration/gather-wood-v1")]
    run_suite(tasks, "idle", 1, 1, tmp_path)
    scored = runner.invoke(app, ["tasks", "score", str(tmp_path)])
    assert scored.exit_code == 0 and "1 archives verified by re-simulation and as attempts" in scored.output
    archive = tmp_path / "exploration__gather-wood-v1__r0.wha"
    forged = forge(archive, tmp_path / "forged.zip",
                   event=lambda e: {**e, "data": {**e["data"], "x": e["data"]["x"] + 1}} if e["kind"] == "agent_spawned" else e)
    forged.replace(archive)
    refused = runner.invoke(app, ["tasks", "score", str(tmp_path)])
    assert refused.exit_code == 1 and "refused" in refused.output
    trusted = runner.invoke(app, ["tasks", "score", str(tmp_path), "--trust"])
    assert trusted.exit_code == 0 and "not verified" in trusted.output


def test_tasks_score_verifies_an_attempt_whose_set_up_moves_the_clock(tmp_path):
    # harvest-cabbage's set-up sets the season (the clock jumps ahead): verifying replays the log to where the set-up
    # began, not to where it left the clock, and plays the set-up again from there
    tasks = [default_suite().get("farming/harvest-cabbage-v1")]
    played = run_suite(tasks, "oracle", 1, 1, tmp_path)
    assert played[0]["trace"][0][0] > 360  # the attempt began past its join's tick
    assert score_dir(tmp_path, verify=True).results == played


def test_several_players_archives_are_named_after_the_player_before_the_repeat(tmp_path):
    from wildhold.tasks.suite import archive_name

    task = default_suite().get("construction/repair-door-v1")  # its id holds "__r" once made a file name
    assert archive_name(task, 2, Player("oracle", policy="oracle"), True) == "construction__repair-door-v1__oracle__r2"
    assert archive_name(task, 2, Player("oracle", policy="oracle"), False) == "construction__repair-door-v1__r2"


def test_a_model_arm_plays_on_when_its_task_s_set_up_passes_the_season_s_end(tmp_path):
    exp, arm = _smoke()
    task = default_suite().get("farming/harvest-cabbage-v1")  # sets the season: past the tiny season's end
    result = run_model_attempt(task, exp, arm, 0, tmp_path, default_content(), name="hc", base=EXAMPLES)
    with Archive(tmp_path / "hc.wha") as a:
        ended = [i.args["reason"] for i in a.inputs() if i.kind == "end"]
    assert ended != ["season over"] and result["ticks"] > 0 and result["llm_calls"] > 1


def test_a_model_attempt_cut_short_resumes_where_it_stopped_and_spends_each_turn_once(tmp_path, monkeypatch):
    from wildhold.agents.scaffold.adapters import ReplayAdapter
    from wildhold.service.verify import verify_archive

    content = default_content()
    task = default_suite().get("exploration/gather-wood-v1")
    exp, arm = _smoke()
    complete = ReplayAdapter.complete

    async def crash_at_the_sixth_turn(self, system, messages, tools):
        if self.position == 5:
            raise RuntimeError("the process died")
        return await complete(self, system, messages, tools)

    monkeypatch.setattr(ReplayAdapter, "complete", crash_at_the_sixth_turn)
    with pytest.raises(Exception):  # as the arm's task group hands it on
        run_model_attempt(task, exp, arm, 0, tmp_path, content, name="cut", base=EXAMPLES)
    assert (tmp_path / "cut.work").is_dir() and not (tmp_path / "cut.wha").exists()
    monkeypatch.setattr(ReplayAdapter, "complete", complete)
    result = run_model_attempt(task, exp, arm, 0, tmp_path, content, name="cut", base=EXAMPLES)
    assert result["llm_calls"] == 8 and result["tokens"] == CASSETTE_TOKENS
    assert result["dollars"] == pytest.approx(CASSETTE_DOLLARS)
    records = [json.loads(line) for line in (tmp_path / "cut.telemetry.jsonl").read_text().splitlines()]
    assert [r.get("resumed") for r in records if r["kind"] == "run_start" and r["arm"] == "tasker"] == [False, True]
    assert verify_archive(tmp_path / "cut.wha", content).status == "verified"
    assert not (tmp_path / "cut.work").exists()


class _Broken:
    """A policy that breaks on its first decision."""

    def decide(self, view):
        raise IndexError("list index out of range")


def test_a_player_that_breaks_fails_its_own_attempt_and_the_archive_says_why(tmp_path):
    from wildhold.tasks.attempt import score_archive

    content = default_content()
    task = default_suite().get("exploration/gather-wood-v1")
    live = run_attempt(task, _Broken(), "broken", 0, tmp_path, content)
    assert live["status"] == "failure" and live["agent_error"] == "IndexError: list index out of range"
    assert score_archive(next(tmp_path.glob("*.wha")), content) == live
