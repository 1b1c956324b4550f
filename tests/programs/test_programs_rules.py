"""How programs share the world: who acts first (the character's one operation), the order of turns,
issuers in events, the agent's rate limit, waiting, stopping, the end of the match, recorded events."""

from __future__ import annotations

import orjson
import pytest
from programs_support import events, inputs, join, log_texts, open_host, state, step_until, steps, with_programs

from wildhold.service.access import RateLimiter
from wildhold.service.match import replay
from wildhold.world.errors import Rejected
from wildhold.world.events import validate_event

RETRY = """
while True:
    r = wait(ticks=2)
    log(now(), r["status"], r["code"])
    if r["ok"]:
        break
    sleep_until(now() + 1)
"""


@pytest.fixture
def host(tmp_path):
    h = open_host(tmp_path / "m")
    yield h
    h.close()


def test_a_direct_action_between_ticks_precedes_the_programs_turn(host):
    agent = join(host, "ann")
    host.programs.save(agent, "retry", RETRY)
    host.programs.start(agent, "retry")
    t = host.world.tick
    direct = host.submit(agent, "wait", {"ticks": 4})  # during tick t, before the program's first turn
    assert not isinstance(direct, Rejected) and direct["ends"] == t + 4
    step_until(host, lambda: state(host, agent, "retry") == "finished", 12)
    assert log_texts(host, agent, "retry") == [f"{t + k} rejected busy" for k in (1, 2, 3)] + [f"{t + 6} completed None"]
    started = [e["data"] for e in events(host, "operation_started") if e["data"]["agent"] == agent]
    assert [(s["action"], s["issuer"]) for s in started] == [("wait", "direct"), ("wait", "program:retry@1")]
    rejected = [e["data"] for e in events(host, "action_rejected") if e["data"]["agent"] == agent]
    assert [(r["code"], r["issuer"]) for r in rejected] == [("busy", "program:retry@1")] * 3


def test_while_the_programs_operation_runs_a_direct_action_is_refused_busy(host):
    agent = join(host, "ann")
    host.programs.save(agent, "long", "r = wait(ticks=5)\nlog(r['status'])\n")
    host.programs.start(agent, "long")
    steps(host, 1)
    assert host.programs.status(agent, "long")["waiting_on"]["kind"] == "operation"
    refused = host.submit(agent, "move", {"direction": "n"})
    assert isinstance(refused, Rejected) and refused.code == "busy"
    step_until(host, lambda: state(host, agent, "long") == "finished", 8)
    assert log_texts(host, agent, "long") == ["completed"]


def test_turns_go_in_character_then_name_order_and_each_action_names_its_program(host):
    first, second = join(host, "ann"), join(host, "bob")
    for agent, name in ((second, "alpha"), (first, "zeta"), (first, "beta")):
        host.programs.save(agent, name, "wait(ticks=1)\n")
        host.programs.start(agent, name)
    steps(host, 1)
    tick = host.world.tick
    order = [(i.agent, i.issuer) for i in inputs(host, "action") if i.tick == tick]
    assert order == [(first, "program:beta@1"), (first, "program:zeta@1"), (second, "program:alpha@1")]
    assert host.programs.status(first, "zeta")["actions"] == 1  # refused busy, still one of its actions


def test_program_actions_spend_the_agents_rate_limit(tmp_path):
    host = open_host(tmp_path / "m", rate_per_s=1.0, rate_burst=2)
    try:
        token, rec = host.register("ann")
        agent = rec.agent
        host.access.limiter = RateLimiter(1.0, 2, now=lambda: 0.0)  # a stopped clock: no token comes back
        host.access.throttle(host.access.authenticate(token))  # one direct request
        host.programs.save(agent, "chatty", 'for i in range(3):\n    r = say(text="hello")\n    log(r["ok"], r["code"])\n')
        host.programs.start(agent, "chatty")
        step_until(host, lambda: state(host, agent, "chatty") == "finished", 10)
        assert log_texts(host, agent, "chatty") == ["True None", "False rate_limited", "False rate_limited"]
        assert [i.name for i in inputs(host, "action") if i.agent == agent] == ["say"]
        assert host.programs.status(agent, "chatty")["actions"] == 3
    finally:
        host.close()


def test_sleep_until_waits_for_the_tick_and_refuses_what_it_cannot_do(host):
    agent = join(host, "ann")
    host.programs.save(agent, "nap", "t = now()\nlog(sleep_until(t - 5) == t)\nlog(sleep_until(t + 3) - t)\n"
                                     "sleep_until(t + 100000)\n")
    host.programs.start(agent, "nap")
    steps(host, 1)
    assert host.programs.status(agent, "nap")["waiting_on"] == {"kind": "tick", "tick": host.world.tick + 3}
    step_until(host, lambda: state(host, agent, "nap") == "failed", 4)
    status = host.programs.status(agent, "nap")
    assert log_texts(host, agent, "nap") == ["True", "3"]
    assert (status["error"]["type"], status["error"]["line"]) == ("ValueError", 4) and "at most" in status["error"]["message"]


def test_a_call_over_the_turn_budget_waits_for_the_next_tick(host):
    agent = join(host, "ann")
    calls = host.content.programs.host_calls_per_turn
    host.programs.save(agent, "busy", f"for i in range({calls + 5}):\n    now()\nlog('done', now())\n")
    host.programs.start(agent, "busy")
    steps(host, 1)
    assert host.programs.status(agent, "busy")["host_calls"] == calls and state(host, agent, "busy") == "running"
    steps(host, 1)
    assert log_texts(host, agent, "busy") == [f"done {host.world.tick}"] and state(host, agent, "busy") == "finished"
    finished = events(host, "program_finished")[-1]["data"]
    assert (finished["actions"], finished["host_calls"]) == (0, calls + 7)  # the loop, now() and log()


def test_stopping_a_program_leaves_its_running_operation_alone(host):
    agent = join(host, "ann")
    host.programs.save(agent, "walker", "wait(ticks=10)\n")
    host.programs.start(agent, "walker")
    steps(host, 1)
    op = host.operations.current_operation(agent)
    host.programs.stop(agent, "walker")
    steps(host, 2)
    assert host.operations.current_operation(agent) == op and state(host, agent, "walker") == "stopped"


def test_logs_read_in_pages_after_a_sequence_number(host):
    agent = join(host, "ann")
    host.programs.save(agent, "count", "for i in range(5):\n    log('line', i)\nprint('one\\ntwo')\n")
    host.programs.start(agent, "count")
    steps(host, 1)
    page = host.programs.logs(agent, "count", after=0, limit=3)
    assert [line["text"] for line in page["lines"]] == ["line 0", "line 1", "line 2"] and page["next"] == 3
    rest = host.programs.logs(agent, "count", after=page["next"])
    assert [line["text"] for line in rest["lines"]] == ["line 3", "line 4", "one", "two"] and rest["dropped"] == 0
    assert host.programs.logs(agent, "count", after=rest["next"]) == {"name": "count", "lines": [], "next": 7, "dropped": 0}


def test_the_end_of_the_match_stops_running_programs_first(host):
    agent = join(host, "ann")
    host.programs.save(agent, "forever", "while True:\n    sleep_until(now() + 5)\n")
    host.programs.start(agent, "forever")
    steps(host, 1)
    host.stop("test over")
    kinds = [e["kind"] for e in events(host)]
    assert kinds[-2:] == ["program_stopped", "match_ended"]
    assert events(host, "program_stopped")[-1]["data"]["reason"] == "the match ended"
    assert state(host, agent, "forever") == "stopped"
    with pytest.raises(Exception) as exc:
        host.programs.start(agent, "forever")
    assert exc.value.code == "match_over"


def test_lockstep_counts_a_character_whose_program_runs_as_ready(host):
    agent = join(host, "ann")
    assert not host.clock.turn_ready()
    host.programs.save(agent, "sleeper", "sleep_until(now() + 50)\n")
    host.programs.start(agent, "sleeper")
    assert host.clock.turn_ready()


def test_every_program_event_validates_and_every_program_input_replays(host):
    agent = join(host, "ann")
    host.programs.save(agent, "ok", "log('hi')\n")
    host.programs.save(agent, "bad", "x = 1 // 0\n")
    for name in ("ok", "bad"):
        host.programs.start(agent, name)
    steps(host, 2)
    kinds = {e["kind"] for e in events(host)}
    assert {"program_saved", "program_started", "program_finished", "program_failed"} <= kinds
    for e in events(host):
        validate_event(e["kind"], e["data"])
    program_inputs = inputs(host, "program")
    assert [i.name for i in program_inputs] == ["save", "save", "start", "start", "fail", "finish"]  # bad < ok
    assert {i.issuer for i in program_inputs if i.name in ("finish", "fail")} == {"service"}
    failed = events(host, "program_failed")[0]["data"]
    assert (failed["error_type"], failed["line"], failed["reason"]) == ("ZeroDivisionError", 1, "runtime_error")
    assert orjson.loads(orjson.dumps(host.programs.list(agent)))["programs"][0]["state"] == "failed"
    w = host.world
    again = replay(host.content, w.scenario_name, w.seed, inputs(host), w.tick)
    assert again.events.head == w.events.head


def test_a_turn_over_the_wall_clock_net_fails_the_program_and_is_recorded(tmp_path):
    host = open_host(tmp_path / "m", content=with_programs(call_wall_s=0.05, turn_wall_s=0.06))
    try:
        agent = join(host, "ann")
        host.programs.save(agent, "grind", "while True:\n    x = 0\n    for i in range(100000):\n        x += i\n    now()\n")
        host.programs.start(agent, "grind")
        step_until(host, lambda: state(host, agent, "grind") == "failed", 3)
        error = host.programs.status(agent, "grind")["error"]
        assert (error["type"], error["reason"]) == ("TimeoutError", "wall_clock")
        failed = events(host, "program_failed")[-1]["data"]
        assert (failed["agent"], failed["reason"], failed["message"]) == (agent, "wall_clock", error["message"])
        assert [i.name for i in inputs(host, "program")][-1] == "fail"  # an input: a replay needs no clock
    finally:
        host.close()


def test_a_program_whose_paused_state_outgrows_the_limit_fails(host):
    agent = join(host, "ann")
    host.programs.save(agent, "hoard", 'x = "a" * 3000000\nsleep_until(now() + 5)\n')
    host.programs.start(agent, "hoard")
    steps(host, 1)
    status = host.programs.status(agent, "hoard")
    assert (status["state"], status["error"]["reason"], status["error"]["type"]) == ("failed", "state_too_large", "MemoryError")
    row = next(r for r in host.match.store.program_runs() if r["run"] == status["run"])
    assert row["dump"] is None and row["state"] == "failed"


def test_a_restored_program_paused_elsewhere_than_recorded_is_refused(host):
    agent = join(host, "ann")
    host.programs.save(agent, "nap", "while True:\n    sleep_until(now() + 1)\n")
    host.programs.start(agent, "nap")
    steps(host, 1)
    run = host.programs.programs[(agent, "nap")].run
    run.pending = {**run.pending, "fn": "move"}  # as if the stored snapshot and its record disagreed
    steps(host, 1)
    assert host.programs.status(agent, "nap")["error"]["reason"] == "restore_mismatch"


def test_a_program_cannot_read_wall_time_and_its_random_numbers_are_seeded(host):
    agent = join(host, "ann")
    source = ("import datetime, time, random\nlog(datetime.datetime.now().isoformat(), time.time())\n"
              "log(random.randint(1, 10 ** 9))\n")
    for name in ("one", "two"):
        host.programs.save(agent, name, source)
        host.programs.start(agent, name)
    steps(host, 1)
    clock = host.content.programs.frozen_clock
    one, two = log_texts(host, agent, "one"), log_texts(host, agent, "two")
    assert one[0] == f"{clock.replace(tzinfo=None).isoformat()} {clock.timestamp()}" == two[0]
    assert one[1] != two[1]  # each run draws from its own seed (recorded with the run)
    seeds = {r["name"]: r["seed"] for r in host.match.store.program_runs()}
    assert seeds["one"] != seeds["two"]
