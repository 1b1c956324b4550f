"""`wildhold bench hardening` at small sizes, on a real `wildhold serve`: the figures' invariants (nothing
acknowledged lost or duplicated across SIGKILLs, no 5xx under fuzzing, replay verifies, no failed call
under load or in the soak), never their timings."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from typer.testing import CliRunner

from wildhold.bench.diskfull import diskfull
from wildhold.bench.fuzz import fuzz
from wildhold.bench.hardening import PACED_OPTIONS, _freed, bench_hardening, crash, soak
from wildhold.bench.served import Serve, agent_for
from wildhold.cli import app


@pytest.mark.slow(seconds=40)
def test_sigkills_while_agents_and_a_program_act_lose_and_duplicate_nothing_and_the_archive_replays(tmp_path):
    figures = asyncio.run(crash(kills=2, seed=3, work=tmp_path))
    assert figures["acknowledged"] > 0
    assert figures["lost"] == 0 and figures["duplicated"] == 0 and figures["program_actions_repeated"] == 0
    assert figures["errors"] == []
    # The program runs on across the kills; only the runner's wall-clock safety net (a machine too slow) may stop it.
    assert figures["program_state_after"] in ("running", "waiting") or figures["program_error"]["reason"] == "wall_clock"
    assert figures["sigterm_exit_code"] == 0 and figures["replay_verifies"] is True


@pytest.mark.slow(seconds=40)
def test_a_disk_that_fills_under_serve_loses_nothing_acknowledged_says_so_and_the_match_goes_on(tmp_path):
    figures = asyncio.run(diskfull(fills=1, work=tmp_path))
    assert figures["acknowledged"] > 0 and figures["storage_refusals"] > 0
    assert figures["lost"] == 0 and figures["duplicated"] == 0 and figures["program_actions_repeated"] == 0
    assert figures["silent_failures"] == 0 and figures["errors"] == [] and figures["log_lines"] == 1
    assert figures["degraded_fills"] == figures["resumed_fills"] == 1 and figures["ticks_while_degraded"] == 0
    assert figures["program_state_after"] in ("running", "waiting") or figures["program_error"]["reason"] == "wall_clock"
    assert figures["sigterm_exit_code"] == 0 and figures["replay_verifies"] is True


@pytest.mark.slow(seconds=40)
def test_fuzzed_http_and_mcp_requests_get_no_5xx_and_the_match_replays_afterwards(tmp_path):
    figures = fuzz(requests=400, seed=3, work=tmp_path)
    http, mcp, wire = figures["http"], figures["mcp"], figures["wire"]
    assert http["requests"] > 0 and http["stateful"] > 0 and mcp["requests"] > 0 and wire["requests"] >= 80
    assert (http["server_errors"], mcp["server_errors"], wire["server_errors"]) == (0, 0, 0), \
        http["examples"] + mcp["examples"] + wire["examples"]
    assert (http["transport_errors"], mcp["transport_errors"], wire["transport_errors"]) == (0, 0, 0)
    assert {"200", "400", "404"} <= set(wire["by_status"])  # answered, refused as unreadable, a closed session
    assert figures["sigterm_exit_code"] == 0 and figures["replay_verifies"] is True


@pytest.mark.slow(seconds=30)
def test_load_states_its_offered_load_times_both_faces_and_prints_one_json_line_last(capsys):
    returned = bench_hardening(as_json=True, quick=True, only=("load",), agents=6)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures == json.loads(json.dumps(returned))
    load = figures["load"]
    assert load["errors"] == [] and load["agents"] == 6
    assert load["offered_calls_per_s"] == 6 * 2 / load["period_s"]  # the offered load is stated
    assert load["saturation"]["period_s"] == 0 and load["saturation"]["offered_calls_per_s"] is None  # a closed loop
    assert load["lone"]["agents"] == 2
    for phase in (load, load["lone"], load["saturation"]):
        for face in ("http", "mcp"):
            assert phase["faces"][face]["requests"] > 0 and math.isfinite(phase["faces"][face]["p99_ms"])
        assert phase["achieved_calls_per_s"] > 0 and phase["server_cpu_ms_per_call"] > 0
        assert 0 <= phase["machine"]["busy_share"] <= 1.05 and phase["machine"]["cores"] >= 1
    assert load["pass"] is (load["p99_ms"] < load["target_p99_ms"])


@pytest.mark.slow(seconds=30)
def test_a_short_soak_samples_the_server_memory_with_no_failed_call(tmp_path):
    figures = asyncio.run(soak(minutes=0.2, work=tmp_path))
    assert figures["errors"] == [] and figures["requests"] > 0
    assert len(figures["samples"]) > 2 and all(rss > 0 for _, rss in figures["samples"])
    assert figures["pass"] is (figures["growth"] < figures["target_growth"])


@pytest.mark.slow(seconds=20)
def test_a_cancel_refused_because_the_wait_already_ended_is_no_failed_call_on_either_face(tmp_path):
    """A paced agent cancels its last wait; a wait that ended on its own (a collapse, a long stall) leaves nothing to
    cancel, which the generator counts as done rather than as a failed call (the hour-long soak's 20 "failures")."""

    async def refusals() -> list:
        serve = Serve(tmp_path / "serve", [*PACED_OPTIONS, "--max-agents", "2"])
        serve.start()
        try:
            await serve.ready()
            answers = []
            for face, token in zip(("http", "mcp"), await serve.register(["idle-http", "idle-mcp"])):
                async with agent_for(face, serve.base, token, wire=True) as agent:
                    answers.append(await agent.act("cancel", {}))
                    answers.append(await agent.act("wait", {"ticks": -1}))
            return answers
        finally:
            serve.stop()

    http_cancel, http_wait, mcp_cancel, mcp_wait = asyncio.run(refusals())
    assert http_cancel.code == mcp_cancel.code == "nothing_to_cancel"
    assert _freed("cancel", http_cancel) and _freed("cancel", mcp_cancel)
    assert http_wait.code == mcp_wait.code == "bad_arguments"  # any other refusal still fails the call
    assert not _freed("wait", http_wait) and not _freed("wait", mcp_wait)


def test_an_unknown_measurement_is_refused_with_the_names():
    result = CliRunner().invoke(app, ["bench", "hardening", "--only", "crahs"])
    assert result.exit_code == 2 and "crash, diskfull, fuzz, load, soak" in result.output


def test_the_crash_rows_show_repeated_program_actions_and_the_program_state_they_accept():
    """The figure `program_actions_repeated` was computed and never shown; the program row passed "waiting" under a
    target that said "running"."""
    from rich.console import Console

    from wildhold.bench.hardening import _table

    crash = {"kills": 3, "kills_while_starting": 0, "acknowledged": 40, "lost": 0, "duplicated": 0, "program_actions": 12,
             "program_actions_repeated": 2, "program_state_after": "waiting", "sigterm_exit_code": 0, "replay_verifies": True,
             "error_count": 0}
    console = Console(width=200, record=True)
    console.print(_table({"crash": crash, "quick": True, "seed": 1, "seconds": 1.0}))
    rows = {line.split("│")[1].strip(): line for line in console.export_text().splitlines() if line.count("│") >= 4}
    repeated = rows["program actions recorded twice across the kills"]
    assert " 2 " in repeated and "miss" in repeated
    program = rows["the program after the kills (12 actions)"]
    assert "running or waiting" in program and "pass" in program
