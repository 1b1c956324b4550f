"""The escape suite: hostile programs fail safely with a clear, recorded error, and the world keeps
ticking while another character's program keeps running. Floods are bounded by the turn budgets."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from escape_cases_support import CASES
from programs_support import code_of, events, inputs, join, log_texts, open_host, state, step_until, steps

from wildhold.content import default_content
from wildhold.programs.client import RunnerClient, RunnerFailed

LIMITS = default_content().programs
HEARTBEAT = "while True:\n    log('beat', now())\n    sleep_until(now() + 1)\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A served match where a keeper's heartbeat program logs every tick."""
    host = open_host(tmp_path_factory.mktemp("escape") / "m")
    keeper = join(host, "keeper")
    host.programs.save(keeper, "heartbeat", HEARTBEAT)
    host.programs.start(keeper, "heartbeat")
    steps(host, 1)
    yield host, keeper
    host.close()


def still_alive(host, keeper) -> None:
    """The world ticked on and the keeper's program logged at this very tick."""
    tick = host.world.tick
    steps(host, 1)
    assert host.world.tick == tick + 1
    assert state(host, keeper, "heartbeat") == "waiting"
    assert log_texts(host, keeper, "heartbeat")[-1] == f"beat {tick + 1}"


def launch(host, character: str, name: str, source: str) -> str:
    """A fresh character saves `source` as program `name` and starts it; the character's id."""
    agent = join(host, character)
    host.programs.save(agent, name, source)
    host.programs.start(agent, name)
    return agent


def run_hostile(host, name: str, source: str, limit: int = 6) -> tuple[str, dict]:
    """A fresh character saves and starts `source`; step until it fails. Its id and the status."""
    agent = launch(host, name, "hostile", source)
    step_until(host, lambda: state(host, agent, "hostile") == "failed", limit)
    return agent, host.programs.status(agent, "hostile")


@pytest.mark.parametrize("case, source, kind, reason, line, words", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_program_fails_safely_with_a_recorded_error(world, case, source, kind, reason, line, words):
    host, keeper = world
    agent, status = run_hostile(host, case, source)
    error = status["error"]
    assert (error["type"], error["reason"], error["line"]) == (kind, reason, line), error
    assert words in error["message"]
    failed = [e["data"] for e in events(host, "program_failed") if e["data"]["agent"] == agent]
    assert failed == [{"agent": agent, "name": "hostile", "revision": 1, "run": status["run"], "reason": reason,
                       "error_type": kind, "message": error["message"], "line": line}]
    still_alive(host, keeper)


def test_writing_a_file_fails_and_writes_nothing(world, tmp_path):
    host, keeper = world
    target = tmp_path / "escaped.txt"
    _, status = run_hostile(host, "write-file", f'eval(\'open("{target}", "w").write("x")\')\n')
    assert status["error"]["type"] == "PermissionError" and not target.exists()
    still_alive(host, keeper)


def test_plain_file_and_introspection_calls_are_refused_at_save(world):
    host, _ = world
    agent = join(host, "plain")
    for source, words in (('open("/etc/passwd")\n', "open"), ("import sys\nsys.modules\n", "modules"),
                          ("globals()\n", "globals"), ("x = __import__('os')\n", "__import__")):
        with pytest.raises(Exception) as exc:
            host.programs.save(agent, "plain", source)
        assert exc.value.code == "program_invalid" and words in exc.value.message and "line" in exc.value.message


SAFE_SYS = {"argv", "executable", "stdout", "stderr", "platform", "version", "version_info", "maxsize", "flags",
            "byteorder", "prefix", "base_prefix", "exec_prefix", "builtin_module_names", "float_info", "hexversion",
            "api_version", "copyright", "platlibdir", "pycache_prefix", "dont_write_bytecode"}
DANGEROUS_SYS = ["modules", "path", "environ", "stdin", "exit", "settrace", "setprofile", "setrecursionlimit",
                 "_getframe", "meta_path", "path_hooks", "orig_argv", "audit", "addaudithook", "exc_info", "gettrace"]


def test_sys_imports_but_exposes_nothing_dangerous(world):
    host, keeper = world
    names = sorted(SAFE_SYS) + DANGEROUS_SYS
    source = ("import sys\nfound = []\n"
              f"for n in {names!r}:\n"
              "    try:\n        eval('sys.' + n)\n        found.append(n)\n    except AttributeError:\n        pass\n"
              "log(','.join(found))\n"
              "log(repr([sys.argv, sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.platform]))\n")
    agent = launch(host, "sys-prober", "probe", source)
    step_until(host, lambda: state(host, agent, "probe") == "finished", 3)
    exposed, values = log_texts(host, agent, "probe")
    assert set(exposed.split(",")) <= SAFE_SYS and not set(exposed.split(",")) & set(DANGEROUS_SYS)
    assert values == "[['program.py'], '', '', '', '', 'monty']"  # no host paths, no environment
    still_alive(host, keeper)


# ---- floods ---------------------------------------------------------------------------------------


def test_flooding_actions_is_bounded_by_the_turn_budget(world):
    host, keeper = world
    agent = launch(host, "flooder", "flood", 'while True:\n    eat(item="nothing")\n')
    first = host.world.tick + 1
    steps(host, 3)
    issued = [i for i in inputs(host, "action") if i.agent == agent]
    per_tick = {t: sum(1 for i in issued if i.tick == t) for t in range(first, first + 3)}
    assert per_tick == {t: LIMITS.actions_per_tick for t in per_tick}
    assert {i.issuer for i in issued} == {"program:flood@1"}
    assert state(host, agent, "flood") == "running"  # not failed: it just continues next tick
    host.programs.stop(agent, "flood")
    still_alive(host, keeper)


def test_two_programs_of_one_character_share_its_one_operation(world):
    host, keeper = world
    agent = join(host, "twins")
    for name in ("alpha", "beta"):
        host.programs.save(agent, name, 'while True:\n    r = wait(ticks=3)\n    log(r["status"], r["code"])\n')
        host.programs.start(agent, name)
    steps(host, 7)
    starts = [e["data"] for e in events(host, "operation_started") if e["data"]["agent"] == agent]
    assert starts and {s["issuer"] for s in starts} == {"program:alpha@1"}  # alpha goes first, by name
    assert all(b["tick"] >= a["tick"] + 3 for a, b in zip(
        [e for e in events(host, "operation_started") if e["data"]["agent"] == agent],
        [e for e in events(host, "operation_started") if e["data"]["agent"] == agent][1:]))
    assert "rejected busy" in log_texts(host, agent, "beta")
    for name in ("alpha", "beta"):
        host.programs.stop(agent, name)
    still_alive(host, keeper)


def test_flooding_the_log_keeps_a_bounded_ring_of_cut_lines(world):
    host, keeper = world
    agent = launch(host, "logger", "noisy", 'n = 0\nwhile True:\n    n += 1\n    log(n, "x" * 10000)\n')
    ticks = LIMITS.log_lines // LIMITS.host_calls_per_turn + 2
    steps(host, ticks)
    logs = host.programs.logs(agent, "noisy", limit=10_000)
    written = ticks * LIMITS.host_calls_per_turn
    assert len(logs["lines"]) == LIMITS.log_lines and logs["dropped"] == written - LIMITS.log_lines
    assert all(len(line["text"]) == LIMITS.log_line_chars for line in logs["lines"])
    assert logs["lines"][-1]["text"].startswith(f"{written} xxx") and logs["next"] == written
    stored = list(host.match.store.program_logs())
    assert sum(1 for row in stored if row["agent"] == agent) == LIMITS.log_lines
    assert state(host, agent, "noisy") == "running"
    host.programs.stop(agent, "noisy")
    still_alive(host, keeper)


def test_flooding_print_is_cut_off_by_the_wall_clock_net_with_a_bounded_log(world):
    host, keeper = world
    agent, status = run_hostile(host, "printer", 'while True:\n    print("y" * 5000)\n')
    assert (status["error"]["type"], status["error"]["reason"]) == ("TimeoutError", "wall_clock")
    logs = host.programs.logs(agent, "hostile", limit=10_000)
    assert len(logs["lines"]) == LIMITS.log_lines and logs["dropped"] > 0
    assert all(len(line["text"]) == LIMITS.log_line_chars for line in logs["lines"])
    still_alive(host, keeper)


# ---- acting as another character ------------------------------------------------------------------


def test_a_program_cannot_name_another_character(world):
    host, keeper = world
    agent = join(host, "impostor")
    with pytest.raises(Exception) as exc:
        host.programs.save(agent, "impostor", f'move(direction="n", agent="{keeper}")\n')
    assert exc.value.code == "program_invalid" and "agent" in exc.value.message and "line 1" in exc.value.message
    where = host.world.chars[keeper].pos
    source = f'kw: dict = {{"direction": "n", "agent": "{keeper}"}}\nr = move(**kw)\nlog(r["ok"], r["code"])\n'
    host.programs.save(agent, "impostor", source)
    host.programs.start(agent, "impostor")
    step_until(host, lambda: state(host, agent, "impostor") == "finished", 3)
    assert log_texts(host, agent, "impostor") == ["False bad_arguments"]
    tried = [i for i in inputs(host, "action") if i.issuer == "program:impostor@1"]
    assert [(i.agent, i.name) for i in tried] == [(agent, "move")]  # recorded as its own character's action
    assert host.world.chars[keeper].pos == where
    still_alive(host, keeper)


# A compromised runner: it relays every frame to a real runner, except those about one program,
# whose replies it forges (another capability, an action), or only those letting it go, or at which it dies.
RELAY = """
import subprocess, sys
from wildhold.programs.protocol import read_frame, write_frame
real = subprocess.Popen([sys.executable, "-m", "wildhold.programs.runner"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
while True:
    request = read_frame(stdin)
    if request is None or (MODE == "exit" and request.get("program") == TARGET):
        break
    write_frame(real.stdin, request)
    reply = read_frame(real.stdout)
    if MODE == "forge" and request.get("program") == TARGET:
        reply.update(cap="forged-capability", kind="call",
                     call={"kind": "function", "fn": "move", "args": [], "kwargs": {"direction": "n"}})
    if MODE == "forge-drop" and request.get("program") == TARGET and request.get("op") == "drop":
        reply.update(cap="forged-capability")
    write_frame(stdout, reply)
"""


def compromised(host, tmp_path: Path, mode: str, agent: str, name: str) -> RunnerClient:
    script = tmp_path / f"relay_{mode}.py"
    target = f"run{host.programs.status(agent, name)['run']}"
    script.write_text(f"MODE, TARGET = {mode!r}, {target!r}\n" + RELAY)
    return RunnerClient(host.programs.settings, [sys.executable, str(script)])


def tick_through(host, tmp_path: Path, mode: str, agent: str, name: str, ticks: int = 1) -> tuple[dict, int]:
    """Step with the runner replaced by a compromised one (`mode`) for this program: its status then, and how
    many runners were spawned."""
    real = host.programs.client
    client = host.programs.client = compromised(host, tmp_path, mode, agent, name)
    try:
        steps(host, ticks)
    finally:
        client.close()
        host.programs.client = real
    return host.programs.status(agent, name), client.spawns


def test_a_frame_with_a_forged_capability_is_refused(world, tmp_path):
    host, keeper = world
    agent = launch(host, "victim", "forged", "while True:\n    sleep_until(now() + 1)\n")
    where = host.world.chars[agent].pos  # it has not run yet: its first turn comes at the next tick
    steps(host, 1)
    status, _ = tick_through(host, tmp_path, "forge", agent, "forged")
    assert status["state"] == "failed" and status["error"]["reason"] == "capability"
    assert "refused" in status["error"]["message"]
    assert not [i for i in inputs(host, "action") if i.agent == agent]
    assert host.world.chars[agent].pos == where
    still_alive(host, keeper)


def test_a_forged_reply_to_a_posted_request_replaces_the_runner_and_fails_no_program(world, tmp_path):
    host, keeper = world
    agent = launch(host, "lulled", "lull", "while True:\n    sleep_until(now() + 1)\n")
    steps(host, 1)
    # Its turn ends by letting it go (posted); the forged reply is read before the next tick's first request.
    status, spawns = tick_through(host, tmp_path, "forge-drop", agent, "lull", ticks=2)
    assert spawns == 2  # refused: the runner was replaced
    assert status["state"] == "waiting" and status["error"] is None
    assert log_texts(host, keeper, "heartbeat")[-1] == f"beat {host.world.tick}"
    still_alive(host, keeper)


def test_the_runner_refuses_a_request_for_a_held_program_under_another_capability(world):
    host, _ = world
    client = RunnerClient(host.programs.settings)
    try:
        step = client.request({"op": "start", "program": "run-x", "cap": "right", "source": "observe()\n", "seed": 1})
        assert step["kind"] == "call" and step["call"]["fn"] == "observe"
        with pytest.raises(RunnerFailed) as exc:
            client.request({"op": "resume", "program": "run-x", "cap": "wrong", "answer": {"value": {}}})
        assert exc.value.reason == "capability"
    finally:
        client.close()


def test_a_runner_that_dies_mid_turn_fails_only_the_program_in_flight_and_is_replaced(world, tmp_path):
    host, keeper = world
    agent = launch(host, "crashed", "doomed", "while True:\n    sleep_until(now() + 1)\n")
    steps(host, 1)  # paused with a stored snapshot: the next turn loads it
    status, _ = tick_through(host, tmp_path, "exit", agent, "doomed")
    assert (status["state"], status["error"]["reason"]) == ("failed", "runner_crash")
    assert log_texts(host, keeper, "heartbeat")[-1] == f"beat {host.world.tick}"  # its turn came first, through the relay
    still_alive(host, keeper)


def test_a_runner_killed_between_turns_is_respawned_and_programs_resume_from_their_snapshots(world):
    host, keeper = world
    before = host.programs.client.spawns
    host.programs.client.proc.kill()
    host.programs.client.proc.wait(timeout=10)
    still_alive(host, keeper)
    assert host.programs.client.spawns == before + 1


def test_the_match_still_refuses_lifecycle_calls_for_unknown_characters(world):
    host, _ = world
    assert code_of(lambda: host.programs.save("a999", "x", "x = 1\n")) == "invalid_arguments"


def test_the_runner_process_holds_no_secrets_and_runs_under_limits(world, monkeypatch):
    host, _ = world
    monkeypatch.setenv("WILDHOLD_TEST_SECRET", "hunter2")
    client = RunnerClient(host.programs.settings)
    try:
        client.request({"op": "start", "program": "probe", "cap": "c", "source": "observe()\n", "seed": 1})
        pid = client.proc.pid
        workers = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        assert workers
        for proc in [pid, *workers]:
            env = dict(item.split("=", 1) for item in Path(f"/proc/{proc}/environ").read_text().split("\0") if item)
            assert set(env) <= {"PATH", "PYTHONPATH", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED"}, env
            status = Path(f"/proc/{proc}/status").read_text()
            uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
            if client.identity["still_root"] is None:
                assert "0" not in uids, "the runner and its interpreters do not run as root"
            else:  # started as root where the interpreter binary is closed to other users: it says so, truly
                blocked = Path(client.identity["still_root"].split("(")[1].split(" is closed")[0])
                assert os.geteuid() == 0 and not blocked.stat().st_mode & stat.S_IXOTH
            assert next(line for line in status.splitlines() if line.startswith("NoNewPrivs:")).split()[1] == "1"
            limits = Path(f"/proc/{proc}/limits").read_text()
            for label, value in (("Max core file size", "0"), ("Max file size", str(1 << 20)), ("Max open files", "256")):
                assert next(line for line in limits.splitlines() if line.startswith(label)).split()[-3] == value
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        assert cwd.name.startswith("wildhold-runner-") and list(cwd.iterdir()) == []
    finally:
        client.close()
    assert not cwd.exists()


def test_the_runner_stays_root_only_where_the_interpreter_binary_is_closed_to_other_users():
    import shutil
    import tempfile

    from wildhold.programs.runner import unreachable_by_others

    base = Path(tempfile.mkdtemp())  # directly in the temp folder, which every user may pass
    try:
        base.chmod(0o755)
        assert unreachable_by_others(base) is None
        binary = base / "open" / "bin" / "monty"
        binary.parent.mkdir(parents=True)
        binary.write_text("")
        for mode, path in ((0o755, base / "open"), (0o755, binary.parent), (0o755, binary)):
            path.chmod(mode)
        assert unreachable_by_others(binary) is None
        (base / "open").chmod(0o700)
        assert unreachable_by_others(binary) == base / "open"
        (base / "open").chmod(0o755)
        binary.chmod(0o744)
        assert unreachable_by_others(binary) == binary
    finally:
        shutil.rmtree(base)
