"""`wildhold bench engine`: agent-ticks per second, worldgen time and memory, crafter side by side.

The headline is the honest load: every character builds its observation every tick, and the idle
ones submit legal actions (the `legal_random` policy, its candidates put to the world's check),
with observation, decision, submission and step timed apart; its rate is judged on the process's CPU time (wall
time beside it), and so is crafter's. The old load (random guesses the
world mostly refuses, no observation) stays as a named row. crafter runs in the same process,
interleaved with the honest runs, so both see the same machine. Targets are printed next to the
figures they bound; `as_json` adds one JSON object on the last line for scripts and CI.
"""

from __future__ import annotations

import gc
import hashlib
import statistics
import time
import tracemalloc
from typing import Any

import orjson
from rich.console import Console

from wildhold.agents.base import AgentView
from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.agents.scripted import RandomAgent
from wildhold.world.errors import Accepted
from wildhold.bench import PASS, Meter, figures_table, fmt, publish
from wildhold.content import Content, default_content
from wildhold.server.surface import action_tools
from wildhold.terminal import FitTable
from wildhold.world.observe import observe, status
from wildhold.world.parts import PARTS
from wildhold.world.world import World

# Issue 33's targets: worldgen at 384x384, memory of 100 characters who know the whole map, a tick of 10,000.
TARGET_WORLDGEN_MS = 200.0  # CPU ms to build a 384x384 world
TARGET_MB_FULL_MAPS = 10.0  # MB retained by 100 characters who walked the whole default map
TARGET_CROWD_TICK_S = 1.0  # CPU s of one tick of the honest load with 10,000 characters on a 384x384 map
BIG_SIDE, CROWD, QUICK_CROWD, CROWD_TICKS = 384, 10_000, 1_000, 4
FULL_MAP_AGENTS = 100

# Ticks per agent count, all within the default scenario's three days; each count runs
# REPEATS times and reports the median, to damp noise from other processes on the machine.
TICKS = {1: 4000, 100: 300, 1000: 60}  # the old load
QUICK_TICKS = {1: 200, 100: 20, 1000: 3}
HONEST_TICKS = {1: 1500, 100: 100}  # the honest load: an observation per character per tick
QUICK_HONEST_TICKS = {1: 60, 100: 5}
REPEATS, QUICK_REPEATS = 3, 1
SEED = 7
CRAFTER_STEPS, QUICK_CRAFTER_STEPS = 2000, 100
MEMORY_AGENTS, MEMORY_TICKS, QUICK_MEMORY_TICKS = 4, 300, 50  # the small world's memory, shown beside
MEMORY_SIZES = (0, 2000, 9000)  # remembered tiles at which one observation is timed
TARGET_OBSERVE_9K_US = 200.0  # an observation (memory as changes) at 9,000 remembered tiles
TARGET_HONEST_100 = 50_000.0  # agent-ticks/s (CPU) of the honest load at 100 agents: issue 33, the JSON observation for every agent
OBSERVE_CALLS, QUICK_OBSERVE_CALLS = 300, 40


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


def honest_figures(content: Content, n_agents: int, ticks: int, seed: int = SEED) -> dict[str, float]:
    """The honest load on the default world: each tick every character observes (its memory as the
    changes since its last observation), each idle one decides with `legal_random` and submits, then
    the world steps and its events are drained. Returns agent-ticks/s of the whole loop (per second of CPU time,
    and of wall time), the share of
    submissions accepted and of candidates the check passed, and microseconds per observation,
    decision, submission and step (per agent-tick)."""
    world = World(content, "default", seed)
    agents = [world.join(f"agent{i}") for i in range(n_agents)]
    world.events.drain()
    client, policy = LocalClient(world), LegalRandomAgent(content)
    clock = time.perf_counter
    spent = {"observe": 0.0, "decide": 0.0, "submit": 0.0, "step": 0.0}
    observations = decisions = accepted = 0
    meter = Meter()
    with meter:
        for _ in range(ticks):
            for a in agents:
                t0 = clock()
                view = client.view(a, policy)
                view.observation()
                t1 = clock()
                spent["observe"] += t1 - t0
                observations += 1
                if not client.idle(a):
                    continue
                action, args = policy.decide(view)
                t2 = clock()
                outcome = world.submit(a, action, args)
                t3 = clock()
                spent["decide"] += t2 - t1
                spent["submit"] += t3 - t2
                decisions += 1
                accepted += isinstance(outcome, Accepted)
            t4 = clock()
            world.step()
            world.events.drain()
            spent["step"] += clock() - t4
    agent_ticks = ticks * n_agents
    cpu_rate, wall_rate = meter.rates(agent_ticks)
    return {
        "cpu_agent_ticks_per_s": cpu_rate,
        "agent_ticks_per_s": wall_rate,
        "accepted_share": accepted / decisions if decisions else 0.0,
        "candidates_passed_share": policy.accepted_share,
        "observe_us": spent["observe"] / observations * 1e6,
        "decide_us": spent["decide"] / max(decisions, 1) * 1e6,
        "submit_us": spent["submit"] / max(decisions, 1) * 1e6,
        "step_us_per_agent_tick": spent["step"] / agent_ticks * 1e6,
        "decisions_per_agent_tick": decisions / agent_ticks,
    }


def observe_by_part(content: Content, n_agents: int = 100, ticks: int = HONEST_TICKS[100], seed: int = SEED) -> dict[str, Any]:
    """The honest load again, each part's `observe` timed: microseconds per observation spent in each part's
    sections (less the timer's own cost), a digest of every observation's JSON and the event chain's head. Two trees
    that build the same observations and play the same events print the same digest and head. Run apart from the
    headline figures, which the timers would weigh on."""
    clock = time.perf_counter
    spent = dict.fromkeys([p.name for p in PARTS], 0.0)
    timer = [0.0]
    for part in PARTS:
        def timed(w: World, c: Any, obs: dict[str, Any], inner=part.observe, name=part.name) -> None:
            t0 = clock()
            inner(w, c, obs)
            t1 = clock()
            spent[name] += t1 - t0
            timer[0] += clock() - t1  # one more reading of the clock: what the two above cost beside the part
        part.observe = timed  # type: ignore[method-assign]
    try:
        world = World(content, "default", seed)
        agents = [world.join(f"agent{i}") for i in range(n_agents)]
        world.events.drain()
        client, policy = LocalClient(world), LegalRandomAgent(content)
        digest, observations = hashlib.sha256(), 0
        for _ in range(ticks):
            for a in agents:
                view = client.view(a, policy)
                digest.update(orjson.dumps(view.observation()))
                observations += 1
                if client.idle(a):
                    world.submit(a, *policy.decide(view))
            world.step()
            world.events.drain()
    finally:
        for part in PARTS:
            del part.observe  # the class's own again
    per_call = timer[0] / (observations * len(PARTS))
    by_part = {name: max(0.0, s / observations - per_call) * 1e6 for name, s in spent.items()}
    return {"us": dict(sorted(by_part.items(), key=lambda kv: -kv[1])), "total_us": sum(by_part.values()),
            "observations": observations, "observations_sha256": digest.hexdigest(), "chain_head": world.events.head}


def observe_by_memory(content: Content, sizes: tuple[int, ...] = MEMORY_SIZES, calls: int = 200) -> dict[str, dict[str, float]]:
    """Microseconds per observation of one character that has remembered about `size` tiles (it walked
    the map to remember them), with its memory as the changes since its previous observation (as an agent
    observing every tick takes it) and, for comparison, whole. Between observations it steps one tile and
    back, so its view square and its memory change each time (the steps are not timed)."""
    world = World(content, "default", SEED)
    agent = world.join("walker")
    c = world.chars[agent]
    path = iter(_serpentine(world))
    out: dict[str, dict[str, float]] = {}
    for size in sizes:
        while len(c.memory) < size:
            world.relocate(c, next(path))
        home = c.pos
        beside = home + 1 if (home + 1) % world.width else home - 1
        spent = {"changes": 0.0, "whole": 0.0}
        for i in range(calls):
            world.relocate(c, beside if i % 2 == 0 else home)
            world.step()
            since = world.tick - 1
            t0 = time.perf_counter()
            observe(world, agent, memory_since=since)
            t1 = time.perf_counter()
            observe(world, agent)
            spent["changes"] += t1 - t0
            spent["whole"] += time.perf_counter() - t1
        world.events.drain()
        out[str(size)] = {"remembered": len(c.memory), "changes_us": spent["changes"] / calls * 1e6,
                          "whole_us": spent["whole"] / calls * 1e6}
    return out


def _serpentine(world: World):
    """Tiles along rows one view apart, east then west, covering the map: a walk that remembers all of it."""
    step = 2 * world.needs.view_radius + 1
    for i, y in enumerate(range(world.needs.view_radius, world.height + step, step)):
        y = min(y, world.height - 1)
        xs = range(world.width) if i % 2 == 0 else range(world.width - 1, -1, -1)
        for x in xs:
            yield y * world.width + x


def guessed_acceptance(content: Content, n_agents: int = 100, ticks: int = 20, seed: int = SEED) -> float:
    """The share of the old load's submissions the world accepts (its random guesses are mostly refused)."""
    world = World(content, "default", seed)
    agents = [world.join(f"agent{i}") for i in range(n_agents)]
    policy, submitted, accepted = RandomAgent(content), 0, 0
    for _ in range(ticks):
        for a in agents:
            if world.chars[a].op is None and (decision := policy.decide(_view(world, a, seed))) is not None:
                submitted += 1
                accepted += isinstance(world.submit(a, *decision), Accepted)
        world.step()
        world.events.drain()
    return accepted / submitted if submitted else 0.0


def agent_ticks_per_s(content: Content, n_agents: int, ticks: int, seed: int = SEED) -> float:
    """The old load: ticks x characters per second of wall time with random guesses, `submit`, `step`
    and draining events, and no observation unless the guess needs the character's status.

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


def big(content: Content) -> Content:
    """The content with `big`: the default scenario on a 384x384 map."""
    default = content.scenario("default")
    scaled = default.model_copy(update={"width": BIG_SIDE, "height": BIG_SIDE})
    return content.model_copy(update={"scenarios": {**content.scenarios, "big": scaled}})


def worldgen_ms(content: Content, repeats: int, scenario: str = "default") -> tuple[float, float]:
    """Median CPU and wall ms of building a world of `scenario`, one seed per repeat."""
    cpu, wall = [], []
    for seed in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        World(content, scenario, seed)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu) * 1000, statistics.median(wall) * 1000


def mb_full_maps(content: Content, agents: int = FULL_MAP_AGENTS) -> tuple[float, int]:
    """(MB retained, tiles each remembers) once `agents` characters have joined the default world and each walked
    it end to end (`_serpentine`), remembering every tile: traced from before they join."""
    world = World(content, "default", SEED)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ids = [world.join(f"agent{i}") for i in range(agents)]
        path = list(_serpentine(world))
        for agent in ids:
            c = world.chars[agent]
            for p in path:
                world.relocate(c, p, event=False)
            world.step()
            world.events.drain()
        gc.collect()
        current = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (current - before) / 2**20, min(len(world.chars[a].memory) for a in ids)


def crowd_tick(content: Content, agents: int, ticks: int = CROWD_TICKS) -> dict[str, float]:
    """The honest load with `agents` characters on a 384x384 map (they join at the settlement: a crowd): after a
    first tick untimed, the CPU seconds of a tick (every character observes, the idle ones decide with
    `legal_random` and submit, the world steps), of its observations alone and of the garbage collector's passes
    within it, as the mean over `ticks` ticks: a full collection comes every few ticks in such a crowd (half a
    second at 10,000), and the mean counts its share where a median of a few would count it in full or not at all;
    and the MB its memories of the map hold after those ticks."""
    world = World(big(content), "big", SEED)
    ids = [world.join(f"agent{i}") for i in range(agents)]
    world.events.drain()
    client, policy = LocalClient(world), LegalRandomAgent(content)
    whole = observing = 0.0
    collecting = _Collecting()
    try:
        for tick in range(ticks + 1):
            if tick == 1:  # the first builds what every later one keeps
                gc.callbacks.append(collecting)
            t0 = time.process_time()
            seen = 0.0
            for a in ids:
                o0 = time.process_time()
                view = client.view(a, policy)
                view.observation()
                seen += time.process_time() - o0
                if client.idle(a):
                    world.submit(a, *policy.decide(view))
            world.step()
            world.events.drain()
            if tick:
                whole += time.process_time() - t0
                observing += seen
    finally:
        if collecting in gc.callbacks:
            gc.callbacks.remove(collecting)
    held = sum(world.chars[a].memory.nbytes() for a in ids) / 2**20
    return {"agents": agents, "tick_cpu_s": whole / ticks, "observe_cpu_s": observing / ticks,
            "gc_cpu_s": collecting.spent / ticks, "memory_mb": held}


class _Collecting:
    """A `gc.callbacks` entry that adds up the CPU seconds the garbage collector's passes take."""

    def __init__(self) -> None:
        self.spent, self.began = 0.0, 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.began = time.process_time()
        else:
            self.spent += time.process_time() - self.began


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


def crafter_figures(steps: int) -> tuple[float | None, float | None, float | None]:
    """(steps/s of wall time, reset ms, steps/s of CPU time) of `crafter.Env` without its image observation, or
    Nones without crafter."""
    try:
        import crafter
        import numpy as np
    except ImportError as exc:
        Console(highlight=False).print(f"crafter is not importable ({exc}); its figures are null. It comes with the dev extras.")
        return None, None, None
    env = crafter.Env(seed=SEED)
    env._obs = lambda: None  # skip the rendered image; the step's simulation and semantic view stay
    rng = np.random.default_rng(SEED)
    actions = rng.integers(0, env.action_space.n, size=steps).tolist()
    resets: list[float] = []
    stepping = Meter()
    done = True
    for action in actions:
        if done:  # a random player dies often: its resets are timed apart from its steps
            start = time.perf_counter()
            env.reset()
            resets.append(time.perf_counter() - start)
        with stepping:
            _, _, done, _ = env.step(action)
    cpu_rate, wall_rate = stepping.rates(steps)
    return wall_rate, statistics.median(resets) * 1000, cpu_rate


def _median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def bench_engine(as_json: bool = False, quick: bool = False) -> dict[str, Any]:
    """Measure the engine and crafter, print a table, and return the figures (also as JSON on request)."""
    content = default_content()
    ticks = QUICK_TICKS if quick else TICKS
    repeats = QUICK_REPEATS if quick else REPEATS
    memory_ticks = QUICK_MEMORY_TICKS if quick else MEMORY_TICKS
    warm_up(content)
    honest_ticks = QUICK_HONEST_TICKS if quick else HONEST_TICKS
    crafter_steps = QUICK_CRAFTER_STEPS if quick else CRAFTER_STEPS
    honest_runs: dict[str, list[dict[str, float]]] = {str(n): [] for n in honest_ticks}
    crafter_runs: list[tuple[float | None, float | None, float | None]] = []
    for _ in range(repeats):  # crafter between the honest runs: both meet the same load on the machine
        for n, t in honest_ticks.items():
            honest_runs[str(n)].append(honest_figures(content, n, t))
        crafter_runs.append(crafter_figures(crafter_steps))
    honest = {n: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for n, runs in honest_runs.items()}
    c_steps = _median_or_none([c[0] for c in crafter_runs])
    c_reset_ms = _median_or_none([c[1] for c in crafter_runs])
    c_cpu_steps = _median_or_none([c[2] for c in crafter_runs])
    rates = {
        str(n): statistics.median(agent_ticks_per_s(content, n, t) for _ in range(repeats))
        for n, t in ticks.items()
    }
    guessed = guessed_acceptance(content)
    by_memory = observe_by_memory(content, calls=QUICK_OBSERVE_CALLS if quick else OBSERVE_CALLS)
    by_part = observe_by_part(content, 100, honest_ticks[100])
    at_most = by_memory[str(MEMORY_SIZES[-1])]["changes_us"]
    gen_ms, gen_wall_ms = worldgen_ms(content, 3 if quick else 7)
    big_ms, big_wall_ms = worldgen_ms(big(content), 3 if quick else 5, "big")
    mb, peak_mb = mb_per_world(content, memory_ticks)
    full_mb, full_tiles = mb_full_maps(content)
    crowd = crowd_tick(content, QUICK_CROWD if quick else CROWD)

    result: dict[str, Any] = {
        "honest": honest,
        "honest_ticks": {str(n): t for n, t in honest_ticks.items()},
        "agent_ticks_per_s": rates,
        "guessed_accepted_share": guessed,
        "observe_by_memory": by_memory,
        "observe_by_part": by_part,
        "ticks": {str(n): t for n, t in ticks.items()},
        "repeats": repeats,
        "worldgen_ms": gen_ms,
        "worldgen_wall_ms": gen_wall_ms,
        "worldgen_384_ms": big_ms,
        "worldgen_384_wall_ms": big_wall_ms,
        "mb_full_maps": full_mb,
        "full_map_tiles": full_tiles,
        "crowd": crowd,
        "mb_per_world": mb,
        "mb_per_world_peak": peak_mb,
        "memory_method": memory_method(memory_ticks),
        "crafter_steps_per_s": c_steps,
        "crafter_cpu_steps_per_s": c_cpu_steps,
        "crafter_reset_ms": c_reset_ms,
        "ratio_1_agent_vs_crafter": _ratio(honest["1"]["cpu_agent_ticks_per_s"], c_cpu_steps),
        "ratio_100_agents_vs_crafter": _ratio(honest["100"]["cpu_agent_ticks_per_s"], c_cpu_steps),
        "ratio_crafter_reset_vs_worldgen": _ratio(c_reset_ms, gen_ms),
        "targets": {
            "worldgen_384_ms": TARGET_WORLDGEN_MS,
            "mb_full_maps": TARGET_MB_FULL_MAPS,
            "crowd_tick_s": TARGET_CROWD_TICK_S,
            "observe_9k_us": TARGET_OBSERVE_9K_US,
            "honest_100_agent_ticks_per_s": TARGET_HONEST_100,
        },
        "pass": {
            "worldgen_384_ms": big_ms <= TARGET_WORLDGEN_MS,
            "mb_full_maps": full_mb <= TARGET_MB_FULL_MAPS,
            # judged only at its size: the quick run's crowd is a tenth of it
            "crowd_tick_s": crowd["agents"] == CROWD and crowd["tick_cpu_s"] <= TARGET_CROWD_TICK_S,
            "observe_9k_us": at_most < TARGET_OBSERVE_9K_US,
            "honest_100_agent_ticks_per_s": honest["100"]["cpu_agent_ticks_per_s"] >= TARGET_HONEST_100,
        },
        "quick": quick,
    }
    return publish(result, _table(result), as_json)


def _table(r: dict[str, Any]) -> FitTable:
    table = figures_table("wildhold engine benchmark" + (" (quick: rough figures)" if r["quick"] else ""),
                          f"Medians of {r['repeats']} run(s). Honest load: every character observes every tick, idle ones submit "
                          f"legal actions (legal_random). Rates per second of the process's CPU time (judged), then of wall "
                          f"time. MB per world: {r['memory_method']}.")
    for n, h in r["honest"].items():
        agents = f"{n} agent{'s' if n != '1' else ''}"
        target, verdict = (f">= {TARGET_HONEST_100:,.0f}", PASS[r["pass"]["honest_100_agent_ticks_per_s"]]) if n == "100" else ("", "")
        table.add_row(f"agent-ticks/s, honest load, {agents} ({r['honest_ticks'][n]} ticks): CPU / wall",
                      f"{fmt(h['cpu_agent_ticks_per_s'])} / {fmt(h['agent_ticks_per_s'])}", target, verdict)
        table.add_row(f"  submissions accepted / candidates the check passed ({agents})",
                      f"{h['accepted_share']:.1%} / {h['candidates_passed_share']:.1%}", "", "")
        table.add_row(f"  us per observation / decision / submission ({agents}, wall)",
                      f"{h['observe_us']:,.0f} / {h['decide_us']:,.0f} / {h['submit_us']:,.0f}", "", "")
        table.add_row(f"  us of step per agent-tick; decisions per agent-tick ({agents})",
                      f"{h['step_us_per_agent_tick']:,.1f}; {h['decisions_per_agent_tick']:.2f}", "", "")
    parts = r["observe_by_part"]
    table.add_row(f"  us per observation in the parts' sections, 100 agents (a run apart: {parts['observations']:,} observations)",
                  fmt(parts["total_us"], ".1f"), "", "")
    for name, us in parts["us"].items():
        table.add_row(f"    {name}", fmt(us, ".1f"), "", "")
    table.add_row("  digest of those observations' JSON", parts["observations_sha256"][:16], "", "")
    table.add_row("  their event chain head", parts["chain_head"][:16], "", "")
    for n, rate in r["agent_ticks_per_s"].items():
        table.add_row(f"old load: agent-ticks/s, {n} agent{'s' if n != '1' else ''}, random guesses, no observation "
                      f"({r['ticks'][n]} ticks)", fmt(rate), "", "")
    table.add_row("  old load: submissions accepted (100 agents)", f"{r['guessed_accepted_share']:.1%}", "", "")
    last = str(MEMORY_SIZES[-1])
    for size, row in r["observe_by_memory"].items():
        target, verdict = (f"< {TARGET_OBSERVE_9K_US:.0f}", PASS[r["pass"]["observe_9k_us"]]) if size == last else ("", "")
        table.add_row(f"us per observation, {row['remembered']:,} tiles remembered: memory as changes / whole",
                      f"{row['changes_us']:,.0f} / {row['whole_us']:,.0f}", target, verdict)
    table.add_row(f"worldgen ms, {BIG_SIDE}x{BIG_SIDE} (median): CPU / wall",
                  f"{fmt(r['worldgen_384_ms'], '.1f')} / {fmt(r['worldgen_384_wall_ms'], '.1f')}",
                  f"<= {TARGET_WORLDGEN_MS:.0f}", PASS[r["pass"]["worldgen_384_ms"]])
    table.add_row("  worldgen ms, 96x96 default (median): CPU / wall",
                  f"{fmt(r['worldgen_ms'], '.1f')} / {fmt(r['worldgen_wall_ms'], '.1f')}", "", "")
    table.add_row(f"MB retained by {FULL_MAP_AGENTS} characters who walked the whole map ({r['full_map_tiles']:,} tiles each)",
                  fmt(r["mb_full_maps"], ".2f"), f"<= {TARGET_MB_FULL_MAPS:.0f}", PASS[r["pass"]["mb_full_maps"]])
    table.add_row(f"  MB per world, {MEMORY_AGENTS} agents (tracemalloc, retained / peak)",
                  f"{fmt(r['mb_per_world'], '.2f')} / {fmt(r['mb_per_world_peak'], '.2f')}", "", "")
    crowd = r["crowd"]
    judged = crowd["agents"] == CROWD
    table.add_row(f"CPU s of a tick (mean of {CROWD_TICKS}), honest load, {crowd['agents']:,} characters on {BIG_SIDE}x{BIG_SIDE}"
                  + ("" if judged else " (quick: not judged)"), fmt(crowd["tick_cpu_s"], ".2f"),
                  f"<= {TARGET_CROWD_TICK_S:.0f}" if judged else "", PASS[r["pass"]["crowd_tick_s"]] if judged else "")
    table.add_row("  of which their observations", fmt(crowd["observe_cpu_s"], ".2f"), "", "")
    table.add_row("  of which the garbage collector's passes", fmt(crowd["gc_cpu_s"], ".2f"), "", "")
    table.add_row("  MB their memories of the map hold then", fmt(crowd["memory_mb"], ".1f"), "", "")
    table.add_row("crafter steps/s (no image observation, random actions; between the honest runs): CPU / wall",
                  f"{fmt(r['crafter_cpu_steps_per_s'])} / {fmt(r['crafter_steps_per_s'])}", "", "")
    table.add_row("crafter reset ms (median)", fmt(r["crafter_reset_ms"], ".1f"), "", "")
    table.add_row("ratio: honest 1-agent agent-ticks/s / crafter steps/s (CPU)", fmt(r["ratio_1_agent_vs_crafter"], ".2f"), "", "")
    table.add_row("ratio: honest 100-agent agent-ticks/s / crafter steps/s (CPU)", fmt(r["ratio_100_agents_vs_crafter"], ".2f"), "", "")
    table.add_row("ratio: crafter reset ms / our worldgen ms", fmt(r["ratio_crafter_reset_vs_worldgen"], ".2f"), "", "")
    return table
