"""A match survives being stopped or killed: nothing acknowledged is lost and it resumes exactly."""

import os
import signal
import subprocess
import sys

import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.service.match import Match
from wildhold.store.archive import Archive
from wildhold.store.sqlite import MatchStore, StoreError

SCENARIO, SEED = "tiny", 7


@pytest.fixture(scope="module")
def uninterrupted():
    run = ScriptedRun.start(SCENARIO, SEED)
    run.run()
    return run.world.events.head, run.world.tick


def test_a_stopped_match_resumes_to_the_same_chain_head(tmp_path, uninterrupted):
    db = tmp_path / "m.sqlite"
    run = ScriptedRun.start(SCENARIO, SEED, db)
    run.run(until=run.world.start_tick + 500)
    run.match.close()
    resumed = ScriptedRun.resume(db)
    assert resumed.world.tick == run.world.tick
    resumed.run()
    resumed.match.close()
    assert (resumed.world.events.head, resumed.world.tick) == uninterrupted


@pytest.mark.parametrize("kill_after_acks", [1, 150, 700])
def test_sigkill_loses_no_acknowledged_input_and_resumes_exactly(tmp_path, uninterrupted, kill_after_acks):
    out = tmp_path / "run"
    acked = []
    with subprocess.Popen(
        [sys.executable, "-m", "wildhold.cli", "demo", "--scenario", SCENARIO, "--seed", str(SEED), "--out", str(out), "--ack-stdout"],
        stdout=subprocess.PIPE, text=True,
    ) as proc:
        for line in proc.stdout:
            acked.append(int(line.split()[1]))
            if len(acked) >= kill_after_acks:
                os.kill(proc.pid, signal.SIGKILL)
                break
        rest = proc.stdout.read()
        proc.wait(timeout=30)
    acked += [int(line.split()[1]) for line in rest.splitlines() if line.startswith("ack ")]
    assert proc.returncode == -signal.SIGKILL, "the match ended before the kill; kill earlier"

    store = MatchStore(out / "match.sqlite")
    stored = {inp.seq for inp in store.inputs()}
    store.close()
    assert set(acked) <= stored

    resumed = ScriptedRun.resume(out / "match.sqlite")
    resumed.run()
    assert (resumed.world.events.head, resumed.world.tick) == uninterrupted
    archive = resumed.match.export(out / "after.wildhold.zip")
    resumed.match.close()
    with Archive(archive) as arc:
        assert arc.verify() == uninterrupted[0]


def test_resume_refuses_an_empty_database(tmp_path):
    MatchStore(tmp_path / "empty.sqlite").close()
    with pytest.raises(StoreError, match="holds no match"):
        Match.resume(tmp_path / "empty.sqlite")


def test_create_refuses_a_database_that_holds_a_match(tmp_path):
    Match.create(SCENARIO, SEED, tmp_path / "m.sqlite").close()
    with pytest.raises(StoreError, match="already holds a match"):
        Match.create(SCENARIO, SEED, tmp_path / "m.sqlite")
