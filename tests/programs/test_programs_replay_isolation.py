"""Re-simulation runs archived program code where `serve` runs it: in the runner process, as the unprivileged
user, under no-new-privileges and the runner's limits, with a clean environment. The verifying process (often
root, holding secrets in its environment) never runs a program, even one written to find out who it runs as."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from programs_support import join, open_host, state, step_until
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.content import default_content
from wildhold.programs import replay
from wildhold.programs.runner import unreachable_by_others
from wildhold.programs.sandbox import Sandbox
from wildhold.store.archive import Archive

SECRET = "WILDHOLD_TEST_SECRET"
# A program that asks who it runs as and reads what only root may read; it waits, so replay crosses a turn.
PROBE = ("import os\n"
         "for probe in ('os.getuid()', 'os.environ', 'open(\"{root_only}\").read()'):\n"
         "    try:\n"
         "        log(eval(probe))\n"
         "    except Exception as e:\n"
         "        log(type(e).__name__)\n"
         "wait(ticks=1)\n"
         "log('after', now())\n")


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("isolation")
    secret = root / "root-only.txt"
    secret.write_text("the verifier's secret")
    secret.chmod(0o600)
    host = open_host(root / "m")
    try:
        agent = join(host, "prober")
        host.programs.save(agent, "probe", PROBE.format(root_only=secret))
        host.programs.start(agent, "probe")
        step_until(host, lambda: state(host, agent, "probe") == "finished", 6)
        return Path(host.stop()["archive"])
    finally:
        host.close()


def descendants(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        for child in children:
            out += [int(child), *descendants(int(child))]
    return out


def program_processes() -> list[dict]:
    """Every process below this one that runs program code (an interpreter) or holds it (the runner): who it
    runs as, under what, with which environment."""
    out = []
    for pid in descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
            limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
            env = {item.split("=", 1)[0] for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if item}
        except FileNotFoundError:
            continue  # it ended meanwhile
        if Path(command[0].decode()).name != "monty" and b"wildhold.programs.runner" not in command:
            continue
        out.append({"pid": pid, "uids": status["Uid"].split(), "no_new_privs": status["NoNewPrivs"].strip(), "env": env,
                    "max_file_size": next(line for line in limits if line.startswith("Max file size")).split()[-3]})
    return out


def may_leave_root() -> bool:
    """Whether the runner can give up root here (runner.drop_privileges: the interpreter binary is open to others)."""
    binary = shutil.which("monty", path=str(Path(sys.executable).parent))
    return os.geteuid() == 0 and binary is not None and unreachable_by_others(Path(binary).resolve()) is None


def test_replay_runs_the_programs_of_an_archive_under_the_runners_isolation(archive, monkeypatch):
    monkeypatch.setenv(SECRET, "hunter2")
    seen: list[list[dict]] = []
    compare = replay._same

    def watching(a, b):  # at every re-simulated call: every process below the verifier, while the program is paused
        seen.append(program_processes())
        return compare(a, b)

    monkeypatch.setattr(replay, "_same", watching)
    with Archive(archive) as arc:
        checks = replay.check_archive(arc, default_content())
    assert [c.ok for c in checks] == [True] and checks[0].calls >= 5, checks
    assert len(seen) == checks[0].calls and all(seen)
    for procs in seen:
        for proc in procs:
            assert SECRET not in proc["env"], proc
            assert proc["no_new_privs"] == "1" and proc["max_file_size"] == str(1 << 20), proc
            if may_leave_root():
                assert "0" not in proc["uids"], proc


def test_replay_verifies_without_running_a_program_in_the_verifying_process(archive, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("program code ran in the verifying process")

    monkeypatch.setattr(Sandbox, "__init__", refuse)
    result = CliRunner().invoke(app, ["replay", str(archive)])
    assert result.exit_code == 0, result.output
    assert "program runs re-simulate" in result.output


def test_a_runner_that_cannot_answer_is_a_failed_step_of_the_program_not_a_crash_of_the_replay():
    from wildhold.programs.isolated import RunnerSandbox
    from wildhold.programs.sandbox import Settings

    sandbox = RunnerSandbox(Settings.from_spec(default_content().programs), [sys.executable, "-c", "pass"])
    try:
        step = sandbox.start("run1", "observe()\n", 1)
    finally:
        sandbox.close()
    assert (step["kind"], step["error"]["type"], step["error"]["reason"]) == ("error", "RunnerFailed", "runner_crash")
