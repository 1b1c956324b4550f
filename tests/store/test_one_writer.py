"""One writer per match, across processes: while one process writes a match, `serve`, `resume` and `demo --out` on
the same folder refuse in one line naming the holder, and touch nothing; `resume` takes up only a stored log that
verifies, and refuses a damaged one naming its first bad event."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.service.match import Match
from wildhold.store.errors import StoreError, StoreLocked
from wildhold.store.sqlite import MatchStore

HOLD = """
import sys
from wildhold.service.match import Match
match = Match.create("tiny", 1, sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
match.close()
"""


def wildhold(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wildhold.cli", *args], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "300", "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)})


@pytest.fixture
def held(tmp_path):
    """A folder whose match another process is writing: (folder, that process)."""
    folder = tmp_path / "serve"
    folder.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder / "match.sqlite")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"
        yield folder, holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
        holder.stdout.close()


@pytest.mark.slow(seconds=15)
def test_serve_resume_and_demo_refuse_a_match_another_process_writes(held):
    folder, holder = held
    with pytest.raises(StoreLocked, match=f"by pid {holder.pid} "):
        Match.resume(folder / "match.sqlite")
    before = (folder / "match.sqlite").stat().st_size
    for args in (["serve", "--data", str(folder), "--scenario", "tiny", "--seed", "1", "--port", "1"],
                 ["resume", str(folder / "match.sqlite")],
                 ["demo", "--out", str(folder), "--scenario", "tiny"]):
        done = wildhold(*args)
        lines = done.stdout.strip().splitlines()
        assert done.returncode != 0 and len(lines) == 1 and "Traceback" not in done.stderr, (args, done.stdout, done.stderr)
        assert f"is open for writing by pid {holder.pid} (" in lines[0] and "since" in lines[0], lines[0]
    assert (folder / "match.sqlite").stat().st_size == before and not (folder / "match.wildhold.zip").exists()


def test_the_lock_goes_with_its_holder(held):
    folder, holder = held
    holder.stdin.close()
    holder.wait(timeout=60)
    Match.resume(folder / "match.sqlite").close()


def stored(tmp_path: Path, ticks: int = 200) -> Path:
    db = tmp_path / "run" / "match.sqlite"
    db.parent.mkdir()
    run = ScriptedRun.start("tiny", 5, db)
    run.run(until=run.world.start_tick + ticks)
    run.match.close()
    return db


def damage(db: Path, sql: str, *params) -> None:
    store = MatchStore(db)
    store.db.execute(sql, params)
    store.close()


@pytest.mark.parametrize("sql, params, says", [
    ("UPDATE events SET payload = CAST(? AS BLOB) WHERE seq = 25", ('{"forged": true}',), "event 25 does not match its hash"),
    ("UPDATE events SET hash = ? WHERE seq = 40", ("0" * 32,), "event 40 does not match its hash"),
    ("DELETE FROM events WHERE seq = 31", (), "event 31 is missing"),
])
def test_resume_refuses_a_damaged_store_naming_its_first_bad_event(tmp_path, sql, params, says):
    db = stored(tmp_path)
    damage(db, sql, *params)
    with pytest.raises(StoreError, match=says):
        Match.resume(db)
    with pytest.raises(StoreError, match=says):  # the refusal let the store go: a second try is refused alike
        ScriptedRun.resume(db)


@pytest.mark.slow(seconds=8)
def test_the_resume_command_refuses_a_damaged_store_in_one_line_and_archives_nothing(tmp_path):
    db = stored(tmp_path)
    damage(db, "UPDATE events SET payload = CAST(? AS BLOB) WHERE seq = 25", '{"forged": true}')
    done = wildhold("resume", str(db), "--quiet")
    lines = done.stdout.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    assert "event 25 does not match its hash" in lines[0] and "cannot be resumed" in lines[0]
    assert not (db.parent / "match.wildhold.zip").exists()


def test_a_store_that_verifies_resumes(tmp_path):
    db = stored(tmp_path)
    match = Match.resume(db)
    try:
        assert match.world.tick == match.world.start_tick + 200
    finally:
        match.close()
