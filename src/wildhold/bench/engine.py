"""`wildhold bench engine`: agent-ticks per second, worldgen time and memory, crafter side by side.

Every figure comes from one process on one core; targets are printed next to the figures
with pass/miss, and `as_json` adds one JSON object on the last line for scripts and CI.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
import tracemalloc
from typing import Any

from rich.console import Console

from wildhold.agents.base import AgentView
from wildhold.agents.scripted import RandomAgent
from wildhold.bench import PASS, figures_table
from wildhold.content import Content, default_content
from wildhold.server.surface import action_tools
from wildhold.terminal import FitTable
from wildhold.world.observe import observe, status
from wildhold.world.world import World

TARGET_AGENT_TICKS_PER_S = 50_000  # at 100 agents
TARGET_WORLDGEN_MS = 100.0
TARGET_MB_PER_WORLD = 20.0

# Ticks per agent count, all within the default scenario's three days; each count runs
# REPEATS times and reports the median, to damp noise from other processes on the machine.
TICKS = {1: 4000, 100: 300, 1000: 60}
QUICK_TICKS = {1: 200, 100: 20, 1000: 3}
REPEATS, QUICK_REPEATS = 3, 1
SEED = 7
CRAFTER_STEPS, QUICK_CRAFTER_STEPS = 2000, 100
MEMORY_AGENTS, MEMORY_TICKS, QUICK_MEMORY_TICKS = 4, 300, 50


ACTIONS = tuple(sorted(action_tools()))


def _view(world: World, agent: str, seed: int) -> AgentView:
    return AgentView(
        agent,
        world.tick,
        seed,
        _observe=lambda since: observe(world, agent, memory_since=since),
        _status=lambda: status(world, world.chars[agent]),
        actions=ACTIONS,
    )


def _act_idle(world: World, agents: list[str], policy: RandomAgent, seed: int) -> None:
    """Every idle character submits the action the random policy picks for it."""
    chars = world.chars
    for a in agents:
        if chars[a].op is None:
            decision = policy.decide(_view(world, a, seed))
            if decision is not None:
                world.submit(a, *decision)


def _play(world: World, agents: list[str], policy: RandomAgent, ticks: int) -> None:
    """Run `ticks` ticks, draining the events each tick as the store would, so memory stays flat."""
    for _ in range(ticks):
        _act_idle(world, agents, policy, world.seed)
        world.step()
        world.events.drain()


def agent_ticks_per_s(content: Content, n_agents: int, ticks: int, seed: int = SEED) -> float:
    """Ticks x characters per second of wall time: policy, `submit`, `step` and draining events.

    Characters are never removed (a knockdown respawns them), so every one is live every tick.
    """
    world = World(content, "default", seed)
    agents = [world.join(f"agent{i}") for i in range(n_agents)]
    policy = RandomAgent(content)
    world.events.drain()
    start = time.perf_counter()
    _play(world, agents, policy, ticks)
    elapsed = time.perf_counter() - start
    return ticks * len(world.chars) / elapsed


def warm_up(content: Content) -> None:
    """Play a small world untimed, so one-off costs (first calls, process-wide tables) stay out of the figures."""
    world = World(content, "default", SEED + 1)
    agents = [world.join(f"agent{i}") for i in range(10)]
    _play(world, agents, RandomAgent(content), 100)


def worldgen_ms(content: Content, repeats: int) -> float:
    """Median wall time of building the default world, one seed per repeat."""
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        World(content, "default", seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def memory_method(ticks: int) -> str:
    return f"tracemalloc: bytes still allocated after building one world, joining {MEMORY_AGENTS} agents and playing {ticks} ticks"


def mb_per_world(content: Content, ticks: int = MEMORY_TICKS) -> tuple[float, float]:
    """(retained MB, peak MB) traced while one default world is built and played for `ticks`.

    Content is loaded before tracing starts: it is shared by every world of a process.
    """
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        world = World(content, "default", SEED)
        agents = [world.join(f"agent{i}") for i in range(MEMORY_AGENTS)]
        _play(world, agents, RandomAgent(content), ticks)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (current - before) / 2**20, (peak - before) / 2**20


def crafter_figures(steps: int) -> tuple[float | None, float | None]:
    """(steps/s, reset ms) of `crafter.Env` without its image observation, or Nones without crafter."""
    try:
        import crafter
        import numpy as np
    except ImportError as exc:
        Console(highlight=False).print(f"crafter is not importable ({exc}); its figures are null. It comes with the dev extras.")
        return None, None
    env = crafter.Env(seed=SEED)
    env._obs = lambda: None  # skip the rendered image; the step's simulation and semantic view stay
    rng = np.random.default_rng(SEED)
    actions = rng.integers(0, env.action_space.n, size=steps).tolist()
    resets: list[float] = []
    stepping = 0.0
    done = True
    for action in actions:
        if done:  # a random player dies often: its resets are timed apart from its steps
            start = time.perf_counter()
            env.reset()
            resets.append(time.perf_counter() - start)
        start = time.perf_counter()
        _, _, done, _ = env.step(action)
        stepping += time.perf_counter() - start
    return steps / stepping, statistics.median(resets) * 1000


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def bench_engine(as_json: bool = False, quick: bool = False) -> dict[str, Any]:
    """Measure the engine and crafter, print a table, and return the figures (also as JSON on request)."""
    content = default_content()
    ticks = QUICK_TICKS if quick else TICKS
    repeats = QUICK_REPEATS if quick else REPEATS
    memory_ticks = QUICK_MEMORY_TICKS if quick else MEMORY_TICKS
    warm_up(content)
    rates = {
        str(n): statistics.median(agent_ticks_per_s(content, n, t) for _ in range(repeats))
        for n, t in ticks.items()
    }
    gen_ms = worldgen_ms(content, 3 if quick else 7)
    mb, peak_mb = mb_per_world(content, memory_ticks)
    c_steps, c_reset_ms = crafter_figures(QUICK_CRAFTER_STEPS if quick else CRAFTER_STEPS)

    result: dict[str, Any] = {
        "agent_ticks_per_s": rates,
        "ticks": {str(n): t for n, t in ticks.items()},
        "repeats": repeats,
        "worldgen_ms": gen_ms,
        "mb_per_world": mb,
        "mb_per_world_peak": peak_mb,
        "memory_method": memory_method(memory_ticks),
        "crafter_steps_per_s": c_steps,
        "crafter_reset_ms": c_reset_ms,
        "ratio_1_agent_vs_crafter": _ratio(rates["1"], c_steps),
        "ratio_100_agents_vs_crafter": _ratio(rates["100"], c_steps),
        "ratio_crafter_reset_vs_worldgen": _ratio(c_reset_ms, gen_ms),
        "targets": {
            "agent_ticks_per_s_100": TARGET_AGENT_TICKS_PER_S,
            "worldgen_ms": TARGET_WORLDGEN_MS,
            "mb_per_world": TARGET_MB_PER_WORLD,
        },
        "pass": {
            "agent_ticks_per_s_100": rates["100"] >= TARGET_AGENT_TICKS_PER_S,
            "worldgen_ms": gen_ms < TARGET_WORLDGEN_MS,
            "mb_per_world": mb < TARGET_MB_PER_WORLD,
        },
        "quick": quick,
    }
    Console(highlight=False).print(_table(result))
    if as_json:
        print(json.dumps(result, sort_keys=True))
    return result


def _fmt(v: float | None, spec: str = ",.0f") -> str:
    return "n/a" if v is None else format(v, spec)


def _table(r: dict[str, Any]) -> FitTable:
    table = figures_table("wildhold engine benchmark" + (" (quick: rough figures)" if r["quick"] else ""),
                          f"agent-ticks/s: median of {r['repeats']} run(s), random policy included. MB per world: {r['memory_method']}.")
    for n, rate in r["agent_ticks_per_s"].items():
        label = f"agent-ticks/s, {n} agent{'s' if n != '1' else ''} ({r['ticks'][n]} ticks)"
        if n == "100":
            table.add_row(label, _fmt(rate), f">= {TARGET_AGENT_TICKS_PER_S:,}", PASS[r["pass"]["agent_ticks_per_s_100"]])
        else:
            table.add_row(label, _fmt(rate), "", "")
    table.add_row("worldgen ms, 96x96 default (median)", _fmt(r["worldgen_ms"], ".1f"), f"< {TARGET_WORLDGEN_MS:.0f}", PASS[r["pass"]["worldgen_ms"]])
    table.add_row("MB per world (tracemalloc, retained)", _fmt(r["mb_per_world"], ".2f"), f"< {TARGET_MB_PER_WORLD:.0f}", PASS[r["pass"]["mb_per_world"]])
    table.add_row("  peak MB while building and playing it", _fmt(r["mb_per_world_peak"], ".2f"), "", "")
    table.add_row("crafter steps/s (no image observation, random actions)", _fmt(r["crafter_steps_per_s"]), "", "")
    table.add_row("crafter reset ms (median)", _fmt(r["crafter_reset_ms"], ".1f"), "", "")
    table.add_row("ratio: 1-agent agent-ticks/s / crafter steps/s", _fmt(r["ratio_1_agent_vs_crafter"], ".2f"), "", "")
    table.add_row("ratio: 100-agent agent-ticks/s / crafter steps/s", _fmt(r["ratio_100_agents_vs_crafter"], ".2f"), "", "")
    table.add_row("ratio: crafter reset ms / our worldgen ms", _fmt(r["ratio_crafter_reset_vs_worldgen"], ".2f"), "", "")
    return table
