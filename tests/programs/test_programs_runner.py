"""The runner channel carries a program's turn in as few requests as the turn needs: a waking program is
restored and answered in one request, the snapshot of a call that may end the turn comes with the call,
and letting the program go is posted, not waited for. None of this changes what a program does."""

from __future__ import annotations

from pathlib import Path

import pytest
from programs_support import join, open_host, state, steps

from wildhold.content import default_content
from wildhold.programs.api import blocking_functions
from wildhold.programs.client import RunnerClient
from wildhold.programs.sandbox import Settings


class Counting(RunnerClient):
    """A runner client that notes the op of every request and posted request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requested: list[str] = []
        self.posted: list[str] = []

    def request(self, message, timeout=None):
        self.requested.append(message["op"])
        return super().request(message, timeout)

    def post(self, message):
        self.posted.append(message["op"])
        super().post(message)


@pytest.fixture
def host(tmp_path):
    h = open_host(tmp_path / "m")
    h.programs.client.close()
    h.programs.client = Counting(h.programs.settings)
    yield h
    h.close()


def test_a_program_that_wakes_acts_and_waits_again_takes_one_request_a_turn(host):
    agent = join(host, "ann")
    host.programs.save(agent, "pace", "while True:\n    wait(ticks=1)\n")
    host.programs.start(agent, "pace")
    client = host.programs.client
    client.requested.clear()
    steps(host, 6)
    status = host.programs.status(agent, "pace")
    assert status["state"] == "waiting" and status["actions"] >= 5
    turns = host.programs.counters["turns"]
    assert client.requested == ["start"] + ["load"] * (turns - 1)  # each load also answers the wait it woke from
    assert client.posted == ["drop"] * turns  # the snapshot came with the call: the program is let go unawaited
    rows = list(host.match.store.program_calls())
    assert len(rows) == status["host_calls"] and [r["seq"] for r in rows] == list(range(1, len(rows) + 1))


def test_a_program_stopped_by_the_call_budget_needs_no_park_request(host):
    agent = join(host, "ann")
    calls = host.content.programs.host_calls_per_turn
    host.programs.save(agent, "busy", "while True:\n    now()\n")
    host.programs.start(agent, "busy")
    steps(host, 3)
    client = host.programs.client
    assert state(host, agent, "busy") == "running" and host.programs.status(agent, "busy")["host_calls"] == 3 * calls
    assert "park" not in client.requested and client.posted == ["drop"] * 3
    # A read changes nothing in the world: after the first turn, the call a turn begins with is answered at the restore.
    assert client.requested.count("resume") == 3 * calls - 2 and client.requested.count("load") == 2


@pytest.fixture
def runner():
    client = RunnerClient(Settings.from_spec(default_content().programs, blocking_functions()))
    yield client
    client.close()


def test_the_snapshot_comes_with_a_call_that_may_end_the_turn(runner):
    def ask(message):
        return runner.request({**message, "program": "p", "cap": "c"})

    step = ask({"op": "start", "source": "observe()\nnow()\nwait(ticks=1)\nobserve()\n", "seed": 1, "snapshot": "blocking"})
    assert step["call"]["fn"] == "observe" and "dump" not in step  # a read never pauses the program
    step = ask({"op": "resume", "answer": {"value": {}}, "snapshot": "any"})
    assert step["call"]["fn"] == "now" and "dump" in step  # once the turn's budget is spent, any call may
    step = ask({"op": "resume", "answer": {"value": 1}, "snapshot": "blocking"})
    assert step["call"]["fn"] == "wait" and "dump" in step
    # The attached snapshot restores the program paused in that very call, as a park's would, and it runs on.
    restored = ask({"op": "load", "dump": step["dump"], "seed": 1, "expect": step["call"]})
    assert restored["kind"] == "call" and restored["call"] == step["call"] and "answered" not in restored
    assert ask({"op": "resume", "answer": {"value": {}}})["call"]["fn"] == "observe"


def test_a_restore_with_an_answer_resumes_at_once_and_one_paused_elsewhere_is_let_go(runner):
    def ask(message):
        return runner.request({**message, "program": "p", "cap": "c"})

    wait = ask({"op": "start", "source": "r = wait(ticks=1)\nlog(r['status'])\n", "seed": 1, "snapshot": "blocking"})
    dump, call = wait["dump"], wait["call"]
    ask({"op": "drop"})
    step = ask({"op": "load", "dump": dump, "seed": 1, "expect": call, "answer": {"value": {"status": "completed"}}})
    assert step["answered"] and step["call"] == {"kind": "function", "fn": "log", "args": ["completed"], "kwargs": {}}
    wrong = ask({"op": "load", "dump": dump, "seed": 1, "expect": {**call, "fn": "move"}, "answer": {"value": None}})
    assert wrong["kind"] == "mismatch" and "answered" not in wrong
    assert ask({"op": "resume", "answer": {"value": None}})["kind"] == "refused"  # it is no longer held


def test_runner_folders_whose_process_is_gone_are_removed_when_a_runner_client_starts(tmp_path, monkeypatch):
    """`serve` killed outright leaves its runner's folder behind; the next start removes it, and no folder of a
    process still running (this one's), nor one that names no process."""
    import os
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    left = tmp_path / f"wildhold-runner-{gone}-k1ll3d"
    left.mkdir()
    (left / "scratch").write_text("left by a killed server")
    running = tmp_path / f"wildhold-runner-{os.getpid()}-l1ve"
    running.mkdir()
    unnamed = tmp_path / "wildhold-runner-x7q2"
    unnamed.mkdir()
    client = RunnerClient(Settings.from_spec(default_content().programs, blocking_functions()))
    try:
        assert not left.exists() and running.exists() and unnamed.exists()
        client.request({"op": "check", "source": "x = 1\n", "stubs": ""}, 30)
        assert client.workdir is not None and Path(client.workdir).name.startswith(f"wildhold-runner-{os.getpid()}-")
    finally:
        client.close()
