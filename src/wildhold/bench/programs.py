"""`wildhold bench programs`: program actions per second and the cost of one host call, at 1 and 100 programs.

Everything is measured side by side on served hosts stepped by hand (no clock, no network), one
program per character:
- actions: each program loops on `wait(ticks=1)`, so it submits one action a tick; beside it the
  same actions submitted directly with `Host.submit` before each step.
- host calls: each program calls `observe()` a fixed number of times and ends. Its cost per call is
  the stepping time less the stepping time of the same ticks with no program running; the overhead
  is that less the cost of the same number of direct `Host.observe` calls.
The runner process, its sandbox and the recorded transcript are all inside the program figures.
Nothing here is asserted in tests beyond the keys being present.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from wildhold.bench import publish
from wildhold.service import reads
from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from wildhold.terminal import Col, FitTable

LEVELS = (1, 100)
SCENARIO, SEED = "default", 1
ACTIONS, QUICK_ACTIONS = {1: 400, 100: 40}, {1: 40, 100: 4}  # actions per program
CALLS, QUICK_CALLS = {1: 2000, 100: 100}, {1: 100, 100: 10}  # observe() calls per program
MAX_TICKS_PER_RUN = 100_000
SIGNUP, ADMIN = "bench-signup-token", "bench-admin-token"

ACT_SOURCE = "for i in range({n}):\n    wait(ticks=1)\n"
OBSERVE_SOURCE = "for i in range({n}):\n    observe()\n"


def _open(data: Path, agents: int) -> tuple[Host, list[str]]:
    """A served match with `agents` characters in it, stepped by the caller."""
    config = HostConfig(signup_token=SIGNUP, admin_token=ADMIN, clock="fast", rate_per_s=0,
                        max_agents=max(agents, 1), idle_after_ticks=MAX_TICKS_PER_RUN)
    host = Host.open(data, config, SCENARIO, SEED)
    names = [host.register(f"bench{i}")[1].agent for i in range(agents)]
    return host, [n for n in names if n is not None]


def _run_programs(host: Host, agents: list[str], name: str, source: str) -> tuple[float, int]:
    """Save and start one program per character, step until every one has ended; (seconds, ticks)."""
    for agent in agents:
        host.programs.save(agent, name, source)
    for agent in agents:
        host.programs.start(agent, name)
    ticks = 0
    t0 = time.perf_counter()
    while any(host.programs.status(a, name)["state"] in ("running", "waiting") for a in agents):
        host.clock.step()
        ticks += 1
        if ticks > MAX_TICKS_PER_RUN:
            raise RuntimeError(f"programs {name!r} still running after {ticks} ticks")
    seconds = time.perf_counter() - t0
    failed = [s for a in agents if (s := host.programs.status(a, name))["state"] != "finished"]
    if failed:
        raise RuntimeError(f"program {name!r} did not finish: {failed[0]}")
    return seconds, ticks


def _step_seconds(host: Host, ticks: int) -> float:
    t0 = time.perf_counter()
    for _ in range(ticks):
        host.clock.step()
    return time.perf_counter() - t0


def _level(tmp: Path, n: int, actions: int, calls: int) -> dict[str, Any]:
    """Every figure for `n` concurrent programs."""
    # Program actions, then the same actions submitted directly on a twin match.
    host, agents = _open(tmp / f"act-programs-{n}", n)
    try:
        program_s, _ = _run_programs(host, agents, "act", ACT_SOURCE.format(n=actions))
        program_actions = sum(host.programs.status(a, "act")["actions"] for a in agents)
    finally:
        host.close()
    host, agents = _open(tmp / f"act-direct-{n}", n)
    try:
        t0 = time.perf_counter()
        for _ in range(actions):
            for agent in agents:
                host.submit(agent, "wait", {"ticks": 1})
            host.clock.step()
        direct_s = time.perf_counter() - t0
    finally:
        host.close()

    # Host calls: programs calling observe(), the same ticks with nothing running, direct observe calls.
    host, agents = _open(tmp / f"observe-{n}", n)
    try:
        with_programs_s, ticks = _run_programs(host, agents, "look", OBSERVE_SOURCE.format(n=calls))
        host_calls = sum(host.programs.status(a, "look")["host_calls"] for a in agents)
        world_only_s = _step_seconds(host, ticks)
        t0 = time.perf_counter()
        for _ in range(calls):
            for agent in agents:
                reads.observe(host, agent, False)
        direct_calls_s = time.perf_counter() - t0
    finally:
        host.close()
    total_calls = calls * n
    program_call_ms = max(with_programs_s - world_only_s, 0.0) * 1000 / total_calls
    direct_call_ms = direct_calls_s * 1000 / total_calls
    return {
        "programs": n,
        "program_actions": program_actions,
        "program_actions_per_s": round(program_actions / program_s, 1),
        "direct_actions_per_s": round(actions * n / direct_s, 1),
        "host_calls": host_calls,
        "ticks_for_calls": ticks,
        "program_call_ms": round(program_call_ms, 4),
        "direct_observe_ms": round(direct_call_ms, 4),
        "host_call_overhead_ms": round(program_call_ms - direct_call_ms, 4),
    }


PROGRAM_COLUMNS = (Col("programs", key=True), Col("program actions/s", short="prog act/s"),
                   Col("direct actions/s", short="direct act/s"), Col("ms per program observe()", short="prog ms"),
                   Col("ms per direct observe", short="direct ms"), Col("overhead ms per host call", short="overhead ms"))


def bench_programs(as_json: bool = False, quick: bool = False, levels: tuple[int, ...] = LEVELS,
                   actions: int | None = None, calls: int | None = None, console: Console | None = None) -> dict[str, Any]:
    """Run every level, print a table (and with `as_json` one JSON object last), return the figures.

    `actions` and `calls` (per program) override the defaults, for a tiny run.
    """
    console = console or Console()
    t0 = time.perf_counter()
    per_actions, per_calls = (QUICK_ACTIONS, QUICK_CALLS) if quick else (ACTIONS, CALLS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="wildhold-bench-programs-") as tmp:
        for n in levels:
            rows.append(_level(Path(tmp), n, actions or per_actions.get(n, per_actions[1]),
                               calls or per_calls.get(n, per_calls[1])))
    figures: dict[str, Any] = {
        "program_actions_per_s": {str(r["programs"]): r["program_actions_per_s"] for r in rows},
        "direct_actions_per_s": {str(r["programs"]): r["direct_actions_per_s"] for r in rows},
        "host_call_overhead_ms": {str(r["programs"]): r["host_call_overhead_ms"] for r in rows},
        "program_call_ms": {str(r["programs"]): r["program_call_ms"] for r in rows},
        "direct_observe_ms": {str(r["programs"]): r["direct_observe_ms"] for r in rows},
        "runs": rows,
        "scenario": SCENARIO,
        "quick": quick,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    table = FitTable(PROGRAM_COLUMNS, title=f"wildhold bench programs ({'quick' if quick else 'full'}: scenario {SCENARIO}, "
                                            "one program per character, stepped by hand)")
    for r in rows:
        table.add_row(str(r["programs"]), f"{r['program_actions_per_s']:.0f}", f"{r['direct_actions_per_s']:.0f}",
                      f"{r['program_call_ms']:.3f}", f"{r['direct_observe_ms']:.3f}", f"{r['host_call_overhead_ms']:.3f}")
    table.caption = ("Program figures include the world's step, the runner process round trip, the sandbox and the "
                     "recorded transcript; overhead = program call - direct call.")
    return publish(figures, table, as_json, console)
