"""Programs are durable and replayable: a farming program works its field for days with its agent
silent, survives a restart (a clean one, or a killed process) without changing the match, and the
archive replays to the same chain head while every program run re-simulates from its transcript."""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
import time
import zipfile
from functools import lru_cache
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from programs_support import (FARM_SCENARIO, FARM_SEED, farm_until, inputs, log_texts, open_host, start_farm,
                              state)
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.programs.replay import check_archive, check_store
from wildhold.store.archive import Archive
from paths_support import TESTS


def play_farm(data: Path, restart_at: tuple[int, ...] = ()):
    host = open_host(data, FARM_SCENARIO, FARM_SEED)
    start_farm(host)
    return farm_until(host, data, restart_at)


@lru_cache(maxsize=1)
def uninterrupted() -> tuple[str, int, list[str]]:
    """The farm match played straight through: chain head, final tick, program log."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        host = play_farm(Path(tmp) / "m")
        try:
            return host.world.events.head, host.world.tick, log_texts(host, "a1", "farm")
        finally:
            host.close()


def test_a_farming_program_works_its_field_for_days_across_a_restart_and_replays(tmp_path):
    data = tmp_path / "m"
    host = play_farm(data, restart_at=(2000,))
    try:
        agent = "a1"
        status = host.programs.status(agent, "farm")
        assert status["state"] == "finished" and status["error"] is None
        assert host.world.chars[agent].inventory.get("turnip", 0) >= 1
        texts = log_texts(host, agent, "farm")
        assert texts[0].startswith("day 1 watered True") and texts[-1].startswith("harvested True")
        assert host.world.tick - status["started_tick"] > 3 * 1440  # days of ticks, one restart in the middle
        actions = [i for i in inputs(host, "action") if i.agent == agent]
        assert len(actions) >= 10 and {i.issuer for i in actions} == {"program:farm@1"}  # the agent never acted
        assert {"till", "plant", "water", "harvest"} <= {i.name for i in actions}
        assert all(check.ok for check in check_store(host.match.store, host.content))
        head, tick, logs = uninterrupted()
        assert (host.world.events.head, host.world.tick, texts) == (head, tick, logs)  # the restart changed nothing
        archive = Path(host.stop()["archive"])
    finally:
        host.close()
    result = CliRunner().invoke(app, ["replay", str(archive)])
    assert result.exit_code == 0, result.output
    assert "program runs re-simulate" in result.output and "replay matches the archive" in result.output
    with Archive(archive) as arc:
        assert arc.has_programs and [c.ok for c in check_archive(arc, host.content)] == [True]
        run = next(arc.program_runs())
        assert run["state"] == "finished" and run["host_calls"] == sum(1 for _ in arc.program_calls())


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(restart=st.integers(min_value=362, max_value=4600))
def test_the_same_match_with_the_same_program_gives_the_same_chain_head_wherever_it_restarts(tmp_path_factory, restart):
    data = tmp_path_factory.mktemp("again") / "m"
    host = play_farm(data, restart_at=(restart,))
    try:
        assert (host.world.events.head, host.world.tick) == uninterrupted()[:2]
    finally:
        host.close()


def test_re_simulation_catches_a_transcript_that_does_not_explain_the_program(tmp_path):
    host = play_farm(tmp_path / "m")
    archive = Path(host.stop()["archive"])
    host.close()
    tampered = tmp_path / "tampered.wildhold.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "programs/calls.jsonl":
                rows = [orjson.loads(line) for line in io.BytesIO(data)]
                rows[0]["result"]["value"]["ok"] = False  # "equip hoe" said to have failed
                data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
            dst.writestr(item, data)
    result = CliRunner().invoke(app, ["replay", str(tampered)])
    assert result.exit_code == 1
    assert "program run 1" in result.output and "call 2" in result.output


CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
from programs_support import FARM_SCENARIO, FARM_SEED, open_host, start_farm
host = open_host({data!r}, FARM_SCENARIO, FARM_SEED)
start_farm(host)
host.clock.step()
print("runner", host.programs.client.proc.pid, flush=True)
while True:
    host.clock.step()
    print("tick", host.world.tick, flush=True)
    time.sleep(0.0005)
"""


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_killed_server_resumes_its_programs_and_replays(tmp_path):
    data = tmp_path / "m"
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(TESTS), data=str(data))],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    runner, deadline = None, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([child.stdout], [], [], deadline - time.monotonic())
            line = child.stdout.readline() if ready else ""
            if line.startswith("runner"):
                runner = int(line.split()[1])
            elif line.startswith("tick") and int(line.split()[1]) >= 2500:
                break
        else:
            raise AssertionError("the served match never reached tick 2500")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()
    assert runner is not None
    for _ in range(100):  # the orphaned runner reads end of input and exits
        if gone(runner):
            break
        time.sleep(0.05)
    else:
        os.kill(runner, signal.SIGKILL)
        raise AssertionError("the runner outlived its server")
    host = open_host(data, FARM_SCENARIO, FARM_SEED)
    try:
        assert state(host, "a1", "farm") in ("running", "waiting") and host.world.tick >= 2500
        host = farm_until(host, data)
        assert state(host, "a1", "farm") == "finished"
        assert log_texts(host, "a1", "farm")[-1].startswith("harvested True")
        archive = Path(host.stop()["archive"])
    finally:
        host.close()
    result = CliRunner().invoke(app, ["replay", str(archive)])
    assert result.exit_code == 0, result.output


HOG = "big = ['x' * 1000 for _ in range(20000)]\nwait(ticks=1)\nlog(len(big))\n"


def test_a_program_whose_heap_is_too_large_to_keep_at_a_blocking_call_fails_the_same_way_in_replay(tmp_path):
    from programs_support import join, steps

    host = open_host(tmp_path / "m")
    try:
        agent = join(host, "hog")
        host.programs.save(agent, "hog", HOG)
        host.programs.start(agent, "hog")
        steps(host, 3)
        error = host.programs.status(agent, "hog")["error"]
        assert (error["type"], error["reason"]) == ("MemoryError", "limit")
        assert all(check.ok for check in check_store(host.match.store, host.content))
        archive = Path(host.stop()["archive"])
    finally:
        host.close()
    with Archive(archive) as arc:
        run = next(arc.program_runs())
        assert run["error"]["at"] == "snapshot" and run["error"]["call"]["fn"] == "wait"
    result = CliRunner().invoke(app, ["replay", str(archive)])
    assert result.exit_code == 0, result.output
    assert "program runs re-simulate" in result.output


def test_a_failure_recorded_at_a_snapshot_that_the_program_does_not_reproduce_is_caught():
    from wildhold.content import default_content
    from wildhold.programs.replay import resimulate

    small = "big = ['x' * 10 for _ in range(20)]\nwait(ticks=1)\nlog(len(big))\n"
    call = {"kind": "function", "fn": "wait", "args": [], "kwargs": {"ticks": 1}}
    run = {"run": 1, "agent": "a1", "name": "hog", "revision": 1, "seed": 7, "state": "failed", "pending": None,
           "error": {"type": "MemoryError", "message": "", "line": None, "reason": "limit", "at": "snapshot", "call": call}}
    source = {"agent": "a1", "name": "hog", "revision": 1, "source": small}
    [check] = resimulate(default_content(), [source], [run], [])
    assert not check.ok and "snapshot" in check.problem
    [check] = resimulate(default_content(), [{**source, "source": HOG}], [run], [])
    assert check.ok, check.problem
