"""`wildhold bench hardening`: the served match under abuse, on a real `wildhold serve` process on loopback.

Five figures. Crash durability: SIGKILLs of `serve` at seeded random moments (some while it starts)
while agents act over HTTP and MCP and a program runs, restarting on the same data folder each time;
no action the server answered as accepted may be lost or duplicated, and the final archive must
replay. A full disk (wildhold.bench.diskfull): the same, while the disk fills and frees, every refusal
coded and shown. Fuzzing (wildhold.bench.fuzz): no 5xx, and replay afterwards. Load: p50/p99 per face at a stated
offered load (agents x calls a second each), beside a lone call's time and the closed-loop saturation
throughput, with the CPU per call of the server, of the generator and of the rest of the machine. Soak: the
server's memory over a long realtime run.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Awaitable, Callable

import orjson
from rich.console import Console

from wildhold.bench import PASS, figures_table, publish
from wildhold.bench.served import (CALL_TIMEOUT_S, Answer, HttpAgent, McpAgent, Serve, WireMcpAgent, agent_for,
                                   end_match, failure, machine_cpu, percentile, replay_verifies)

MEASUREMENTS = ("crash", "diskfull", "fuzz", "load", "soak")
FULL = {"kills": 100, "fills": 5, "requests": 100_000, "agents": 256, "soak_minutes": 60.0}
QUICK = {"kills": 3, "fills": 1, "requests": 400, "agents": 16, "soak_minutes": 1.0}
TARGET_P99_MS = 50.0
TARGET_GROWTH = 0.10

# A program that speaks and waits a tick, forever: it runs across every restart.
PROGRAM = 'n = 0\nwhile True:\n    say(text="program " + str(n))\n    n += 1\n    wait(ticks=1)\n'
CRASH_OPTIONS = ["--scenario", "season", "--clock", "realtime", "--tick-seconds", "0.05", "--rate", "0"]
CRASH_FACES = ("http", "mcp") * 3
PROGRAM_ALIVE = ("running", "waiting")  # a program between its calls waits (on `wait(ticks=1)`): both are alive
STARTUP_KILL_SHARE = 0.1  # of the kills land while the server starts (resumes), before it answers
ACTIVE_S = (0.0, 2.0)  # how long agents act after the first accepted action before a kill, drawn uniformly
STORAGE_PAUSE_S = 0.25  # an agent refused with storage_unavailable tries again this much later
PACED_OPTIONS = ["--scenario", "default", "--clock", "realtime", "--tick-seconds", "1", "--rate", "0",
                 "--idle-after", "100000"]
LOAD_SECONDS, QUICK_LOAD_SECONDS = 30.0, 4.0
LOAD_PERIOD_S = 1.0  # each load agent observes and acts once a tick (1 s): 2 calls a second
LONE_PERIOD_S, LONE_SECONDS = 0.25, 10.0  # the lone-call phase: one agent a face, four turns a second
SATURATION_AGENTS, SATURATION_SECONDS = 32, 10.0  # the closed-loop phase: no pause between an agent's turns
RAMP_S = 5.0  # the agents open their sessions spread over this long
WARMUP_S = 2.0  # after every agent's session is open and its first observation made
SOAK_AGENTS = 50
RSS_SAMPLES = 120
ACTIONS = (("wait", {"ticks": 120}), ("cancel", {}))  # always accepted: each act is a full recorded action


# ---- crash durability --------------------------------------------------------------------------------


class Ledger:
    """What the agents were told: each accepted `say` by its unique text, with the operation it started."""

    def __init__(self, names: list[str]):
        self.names = names
        self.next = Counter[str]()
        self.acked: dict[str, str] = {}  # text -> op
        self.errors: list[str] = []  # failures while the server was up (after a kill they are expected)
        self.answered = asyncio.Event()  # an action was accepted since the last restart
        self.refusals = Counter[str]()  # refused actions by code
        self.full = False  # the server's disk is full (bench diskfull): actions accepted now are counted apart
        self.acked_while_full = 0

    def nonce(self, name: str) -> str:
        self.next[name] += 1
        return f"{name} says {self.next[name]}"


async def _act_until(agent_face: str, base: str, token: str, name: str, ledger: Ledger, dead: asyncio.Event) -> None:
    """One agent's turns until the server dies (or `dead` is set): say a unique text, wait for it, again; a refusal
    is counted by its code."""
    try:
        async with agent_for(agent_face, base, token) as agent:
            while not dead.is_set():
                text = ledger.nonce(name)
                said = await agent.act("say", {"text": text})
                if said.ok:
                    ledger.acked[text] = said.body["op"]
                    ledger.acked_while_full += ledger.full
                    ledger.answered.set()
                    await agent.read("wait_operation", {"op": said.body["op"], "timeout_s": 2})
                    continue
                ledger.refusals[said.code or "?"] += 1
                if said.code == "storage_unavailable":
                    await asyncio.sleep(STORAGE_PAUSE_S)  # nothing to cancel: the action was not taken
                else:
                    await agent.act("cancel", {})
    except Exception as exc:  # noqa: BLE001 - the server is killed under it; only failures before count
        if not dead.is_set():
            ledger.errors.append(failure(name, exc))


async def _cycle(serve: Serve, tokens: list[str], ledger: Ledger, active_s: float) -> None:
    """Agents act over both faces; `active_s` after the first accepted action the server is SIGKILLed under them."""
    dead = asyncio.Event()
    ledger.answered.clear()
    tasks = [asyncio.create_task(_act_until(face, serve.base, tokens[i], ledger.names[i], ledger, dead))
             for i, face in enumerate(CRASH_FACES)]
    try:
        await asyncio.wait_for(ledger.answered.wait(), CALL_TIMEOUT_S)
    except TimeoutError:
        ledger.errors.append("no action was accepted within the call timeout")
    await asyncio.sleep(active_s)
    dead.set()
    serve.kill()
    _, late = await asyncio.wait(tasks, timeout=CALL_TIMEOUT_S + 10)
    for task in late:
        task.cancel()


def _tally(db: Path, acked: dict[str, str]) -> dict[str, Any]:
    """Acknowledged texts missing from the store (or started under another operation), and texts stored twice."""
    from wildhold.store.sqlite import MatchStore

    store = MatchStore(db)
    try:
        said = Counter(inp.args.get("text") for inp in store.inputs() if inp.kind == "action" and inp.name == "say")
        started = {}
        for _, _, kind, payload, _ in store.events(0):
            if kind == "operation_started":
                data = orjson.loads(payload)["data"]
                if data["action"] == "say":
                    started[data["op"]] = data["args"]["text"]
    finally:
        store.close()
    agents = {t: n for t, n in said.items() if t and not t.startswith("program ")}
    return {
        "acknowledged": len(acked),
        "lost": sum(1 for text, op in acked.items() if said[text] == 0 or started.get(op) != text),
        "duplicated": sum(1 for n in agents.values() if n > 1),
        "program_actions": sum(n for t, n in said.items() if t and t.startswith("program ")),
        "program_actions_repeated": sum(1 for t, n in said.items() if t and t.startswith("program ") and n > 1),
    }


async def crash(kills: int, seed: int, work: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    serve = Serve(work / "crash", CRASH_OPTIONS)
    names = [f"{face}-agent-{i}" for i, face in enumerate(CRASH_FACES)]
    ledger = Ledger(names)
    serve.start()
    startup = await serve.ready()
    tokens = await serve.register([*names, "programmer"])
    async with HttpAgent(serve.base, tokens[-1]) as programmer:
        if not (await programmer.program("sayer", PROGRAM)).ok:
            raise RuntimeError("the program did not start")
    startup_kills = 0
    t0 = time.perf_counter()
    for k in range(kills):
        if k > 0:
            serve.start()
            if rng.random() < STARTUP_KILL_SHARE:
                await asyncio.sleep(rng.uniform(0, startup))
                serve.kill()
                startup_kills += 1
                continue
            startup = await serve.ready()
        await _cycle(serve, tokens, ledger, rng.uniform(*ACTIVE_S))
    serve.start()
    await serve.ready()
    async with HttpAgent(serve.base, tokens[-1]) as programmer:
        program = await programmer.program_status("sayer")
    archive, exit_code = await end_match(serve)
    figures = _tally(serve.data / "match.sqlite", ledger.acked)
    return {"kills": kills, "kills_while_starting": startup_kills, **figures, "errors": ledger.errors[:10],
            "error_count": len(ledger.errors), "program_state_after": program.get("state"),
            "program_error": program.get("error"), "sigterm_exit_code": exit_code,
            "replay_verifies": replay_verifies(archive), "seconds": round(time.perf_counter() - t0, 1)}


# ---- load and soak: agents that observe and act at a stated pace ------------------------------------


class Pace:
    """The latencies of every call by face, how late each turn started against its schedule, and the failures,
    of the agents of one run; their common span starts once every agent has opened its session and made its
    first (full) observation."""

    def __init__(self, agents: int, seconds: float) -> None:
        self.ms: dict[str, list[float]] = {"http": [], "mcp": []}
        self.late_ms: list[float] = []
        self.errors: list[str] = []
        self.waiting, self.seconds = agents, seconds
        self.started = asyncio.Event()
        self.span = (0.0, 0.0)  # (timed from, until): the warm-up, then `seconds` timed

    def arrive(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            now = time.monotonic()
            self.span = (now + WARMUP_S, now + WARMUP_S + self.seconds)
            self.started.set()

    def calls(self) -> int:
        return sum(len(v) for v in self.ms.values())

    def summary(self, face: str) -> dict[str, Any]:
        ms = self.ms[face]
        return {"requests": len(ms), "p50_ms": round(percentile(ms, 0.5), 2), "p99_ms": round(percentile(ms, 0.99), 2)}


def _freed(action: str, answer: Answer) -> bool:
    """A `cancel` refused because nothing was running did what the generator wanted: the character is free (its wait
    ended on its own, or a collapse or a knockdown ended it)."""
    return action == "cancel" and answer.code == "nothing_to_cancel"


async def _paced(agent: HttpAgent | McpAgent | WireMcpAgent, period: float, phase: float, pace: Pace, name: str) -> None:
    """Open a session at the agent's place in the ramp; then observe (the memory's changes since the last look)
    and act, a period after its previous turn began (at once when `period` is 0: a closed loop), through the pace's
    span; the calls after its warm-up are timed, and how late each turn started (a turn that overran its period
    makes the next one late by as much)."""
    lat = pace.ms[agent.face]
    arrived = False
    await asyncio.sleep(phase * RAMP_S)  # a fleet connects over a few seconds, not in one instant
    try:
        async with agent:
            seen = await agent.read("observe", {})
            since = seen.body["time"]["tick"]
            arrived = True
            pace.arrive()
            await pace.started.wait()
            timed_from, until = pace.span
            due = time.monotonic() + phase * period  # each turn is due a period after the previous one began
            i = 0
            while True:
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                began = time.monotonic()
                if began >= until:
                    if i % 2:  # its last act was a wait: cancel it, so the next phase finds the character free
                        await agent.act("cancel", {})
                    return
                seen = await agent.read("observe", {"memory_since": since})
                action, args = ACTIONS[i % 2]
                acted = await agent.act(action, args)
                if not (seen.ok and (acted.ok or _freed(action, acted))):
                    raise RuntimeError(f"refused: {seen.body if not seen.ok else acted.body}")
                since = seen.body["time"]["tick"]
                if began >= timed_from:
                    lat += (seen.ms, acted.ms)
                    if period > 0:
                        pace.late_ms.append((began - due) * 1000)
                i += 1
                due = began + period
    except Exception as exc:  # noqa: BLE001 - counted and shown: the figure's invariant is none
        pace.errors.append(failure(name, exc))
        if not arrived:
            pace.arrive()


async def _paced_run(serve: Serve, names: list[str], tokens: list[str], seconds: float, period: float = 1.0,
                     wire: bool = False, beside: Callable[[Pace], Awaitable[Any]] | None = None) -> tuple[Pace, Any]:
    """The named agents, HTTP and MCP alternately, each observing and acting once a `period` (0: a closed loop)
    through a warm-up and then `seconds`; `wire` puts the MCP agents on the wire client; `beside` runs alongside."""
    pace = Pace(len(names), seconds)
    tasks = [_paced(agent_for(("http", "mcp")[i % 2], serve.base, token, wire), period, i / len(names), pace, name)
             for i, (name, token) in enumerate(zip(names, tokens))]
    results = await asyncio.gather(*tasks, beside(pace) if beside else asyncio.sleep(0))
    return pace, results[-1]


async def _span_cpu(serve: Serve, pace: Pace) -> dict[str, Any]:
    """What the server, this generator and the whole machine spent in CPU over the pace's timed span."""
    await pace.started.wait()
    timed_from, until = pace.span
    await asyncio.sleep(max(0.0, timed_from - time.monotonic()))
    s0, g0, m0, load0 = serve.cpu_seconds(), time.process_time(), machine_cpu(), os.getloadavg()[0]
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    s1, g1, m1, load1 = serve.cpu_seconds(), time.process_time(), machine_cpu(), os.getloadavg()[0]
    wall = until - timed_from
    return {"server_cpu_s": s1 - s0, "generator_cpu_s": g1 - g0, "machine_busy_s": m1[0] - m0[0],
            "machine_cores": (m1[1] - m0[1]) / wall if wall > 0 else float(os.cpu_count() or 1),
            "wall_s": wall, "load_avg_1m": [round(load0, 2), round(load1, 2)]}


def _figures(pace: Pace, cpu: dict[str, Any], agents: int, period: float) -> dict[str, Any]:
    """One phase's figures: per face p50/p99, the calls achieved against those offered, CPU per call by whom."""
    calls = pace.calls()
    per_call = (lambda s: round(s * 1000 / calls, 3) if calls else None)
    cores = cpu["machine_cores"]
    others = max(0.0, cpu["machine_busy_s"] - cpu["server_cpu_s"] - cpu["generator_cpu_s"])
    return {
        "agents": agents, "period_s": period,
        "offered_calls_per_s": round(agents * 2 / period, 1) if period > 0 else None,
        "achieved_calls_per_s": round(calls / cpu["wall_s"], 1),
        "faces": {face: pace.summary(face) for face in ("http", "mcp")},
        "late_start_p50_ms": round(percentile(pace.late_ms, 0.5), 2) if pace.late_ms else None,
        "late_start_p99_ms": round(percentile(pace.late_ms, 0.99), 2) if pace.late_ms else None,
        "server_cpu_ms_per_call": per_call(cpu["server_cpu_s"]),
        "server_cores_used": round(cpu["server_cpu_s"] / cpu["wall_s"], 3),
        "generator_cpu_ms_per_call": per_call(cpu["generator_cpu_s"]),
        "machine": {"cores": round(cores), "busy_share": round(cpu["machine_busy_s"] / (cpu["wall_s"] * cores), 3),
                    "others_cores_used": round(others / cpu["wall_s"], 2), "load_avg_1m": cpu["load_avg_1m"]},
    }


async def _phase(serve: Serve, names: list[str], tokens: list[str], seconds: float, period: float,
                 wire: bool) -> tuple[dict[str, Any], Pace]:
    pace, cpu = await _paced_run(serve, names, tokens, seconds, period, wire=wire,
                                 beside=lambda pace: _span_cpu(serve, pace))
    return _figures(pace, cpu, len(names), period), pace


async def load(agents: int, seconds: float, work: Path, period: float = LOAD_PERIOD_S,
               saturation_agents: int = SATURATION_AGENTS, wire: bool = True) -> dict[str, Any]:
    """Three phases on one served match holding `agents` characters: two agents alone (a lone call's time), every
    agent once a `period` (the offered load, stated), then `saturation_agents` in a closed loop (the most calls a
    second the server answers here). MCP agents write the wire (`WireMcpAgent`) unless `wire` is off."""
    serve = Serve(work / "load", [*PACED_OPTIONS, "--max-agents", str(agents)])
    serve.start()
    errors: list[str] = []
    try:
        await serve.ready()
        names = [f"load-{i}" for i in range(agents)]
        tokens = await serve.register(names)
        lone, pace = await _phase(serve, names[:2], tokens[:2], min(seconds, LONE_SECONDS), LONE_PERIOD_S, wire)
        errors += pace.errors
        paced, pace = await _phase(serve, names, tokens, seconds, period, wire)
        errors += pace.errors
        k = min(saturation_agents, agents)
        saturation, pace = await _phase(serve, names[:k], tokens[:k], min(seconds, SATURATION_SECONDS), 0.0, wire)
        errors += pace.errors
    finally:
        serve.stop()
    worst = max(f["p99_ms"] for f in paced["faces"].values())
    return {**paced, "seconds": seconds, "mcp_client": "wire" if wire else "official", "p99_ms": worst, "lone": lone, "saturation": saturation,
            "errors": errors[:10], "error_count": len(errors), "target_p99_ms": TARGET_P99_MS,
            "pass": worst < TARGET_P99_MS}


async def _sample_rss(serve: Serve, pace: Pace, seconds: float) -> list[tuple[float, int]]:
    """The server's RSS through the pace's span (warm-up included), RSS_SAMPLES times or every half second."""
    await pace.started.wait()
    seconds += WARMUP_S
    every = max(seconds / RSS_SAMPLES, 0.5)
    t0, samples = time.monotonic(), []
    while (t := time.monotonic() - t0) < seconds:
        samples.append((round(t, 1), serve.rss_bytes()))
        await asyncio.sleep(min(every, max(seconds - t, 0.01)))
    samples.append((round(time.monotonic() - t0, 1), serve.rss_bytes()))
    return samples


async def soak(minutes: float, work: Path) -> dict[str, Any]:
    seconds = minutes * 60
    serve = Serve(work / "soak", [*PACED_OPTIONS, "--max-agents", str(SOAK_AGENTS + 1)])
    serve.start()
    try:
        await serve.ready()
        (token,) = await serve.register(["soak-programmer"])
        async with HttpAgent(serve.base, token) as programmer:
            await programmer.program("sayer", PROGRAM)
        names = [f"soak-{i}" for i in range(SOAK_AGENTS)]
        tokens = await serve.register(names)
        pace, samples = await _paced_run(serve, names, tokens, seconds, beside=lambda pace: _sample_rss(serve, pace, seconds))
    finally:
        serve.stop()
    base = next(rss for t, rss in samples if t >= WARMUP_S + seconds * 0.1)
    end = samples[-1][1]
    growth = (end - base) / base
    return {"minutes": minutes, "agents": SOAK_AGENTS, "rss_mb_at_10pct": round(base / 2**20, 1),
            "rss_mb_end": round(end / 2**20, 1), "rss_mb_peak": round(max(r for _, r in samples) / 2**20, 1),
            "growth": round(growth, 4), "samples": samples, "requests": sum(len(v) for v in pace.ms.values()),
            "errors": pace.errors[:10], "error_count": len(pace.errors), "target_growth": TARGET_GROWTH,
            "pass": growth < TARGET_GROWTH}


# ---- the command ---------------------------------------------------------------------------------------


async def _measure(which: tuple[str, ...], sizes: dict[str, Any], seed: int, quick: bool, work: Path,
                   period: float = LOAD_PERIOD_S, wire: bool = True) -> dict[str, Any]:
    from wildhold.bench.diskfull import diskfull
    from wildhold.bench.fuzz import fuzz

    out: dict[str, Any] = {}
    if "crash" in which:
        out["crash"] = await crash(sizes["kills"], seed, work)
    if "diskfull" in which:
        out["diskfull"] = await diskfull(sizes["fills"], work)
    if "fuzz" in which:
        out["fuzz"] = await asyncio.to_thread(fuzz, sizes["requests"], seed, work)
    if "load" in which:
        out["load"] = await load(sizes["agents"], QUICK_LOAD_SECONDS if quick else LOAD_SECONDS, work, period, wire=wire)
    if "soak" in which:
        out["soak"] = await soak(sizes["soak_minutes"], work)
    return out


def bench_hardening(as_json: bool = False, quick: bool = False, only: tuple[str, ...] = MEASUREMENTS, seed: int = 1,
                    kills: int | None = None, requests: int | None = None, agents: int | None = None,
                    soak_minutes: float | None = None, period: float = LOAD_PERIOD_S, wire: bool = True,
                    console: Console | None = None, fills: int | None = None) -> dict[str, Any]:
    """Run the measurements asked for, print their table (and with `as_json` one JSON line last), return the figures;
    the load's agents take a turn every `period` seconds, its MCP agents on the wire client unless `wire` is off."""
    unknown = set(only) - set(MEASUREMENTS)
    if unknown:
        raise ValueError(f"no measurement {', '.join(sorted(unknown))}; there are {', '.join(MEASUREMENTS)}")
    sizes = dict(QUICK if quick else FULL)
    given = {"kills": kills, "fills": fills, "requests": requests, "agents": agents, "soak_minutes": soak_minutes}
    sizes.update({k: v for k, v in given.items() if v is not None})
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wildhold-hardening-") as tmp:
        figures = asyncio.run(_measure(tuple(m for m in MEASUREMENTS if m in only), sizes, seed, quick, Path(tmp),
                                       period, wire))
    figures.update(quick=quick, seed=seed, seconds=round(time.perf_counter() - t0, 1))
    return publish(figures, _table(figures), as_json, console)


def _table(f: dict[str, Any]):
    table = figures_table(f"wildhold bench hardening ({'quick' if f['quick'] else 'full'}: a real `wildhold serve` on loopback)",
                          f"seed {f['seed']}; {f['seconds']:.0f} s in all")
    yes = {True: "yes", False: "NO"}
    if c := f.get("crash"):
        table.add_row(f"SIGKILLs of serve ({c['kills_while_starting']} while starting), agents acting over HTTP and MCP, "
                      "a program running", str(c["kills"]), "", "")
        table.add_row(f"acknowledged actions lost (of {c['acknowledged']:,})", str(c["lost"]), "0", PASS[c["lost"] == 0])
        table.add_row("acknowledged actions duplicated", str(c["duplicated"]), "0", PASS[c["duplicated"] == 0])
        alive = c["program_state_after"] in PROGRAM_ALIVE
        table.add_row(f"the program after the kills ({c['program_actions']:,} actions)", c["program_state_after"],
                      " or ".join(PROGRAM_ALIVE), PASS[alive])
        table.add_row("program actions recorded twice across the kills", str(c["program_actions_repeated"]), "0",
                      PASS[c["program_actions_repeated"] == 0])
        table.add_row("SIGTERM exit code, then replay of the final archive verifies",
                      f"{c['sigterm_exit_code']}, {yes[c['replay_verifies']]}", "0, yes",
                      PASS[c["sigterm_exit_code"] == 0 and c["replay_verifies"]])
    if d := f.get("diskfull"):
        from wildhold.bench.diskfull import rows

        rows(table, d)
    if z := f.get("fuzz"):
        w = z["wire"]
        table.add_row(f"fuzzed requests: HTTP (schemathesis, {z['http']['stateful']:,} stateful) + MCP (every tool) + "
                      f"raw MCP protocol ({w['closed_mid_call']:,} sessions closed mid-call)",
                      f"{z['http']['requests']:,} + {z['mcp']['requests']:,} + {w['requests']:,}", "", "")
        fives = z["http"]["server_errors"] + z["mcp"]["server_errors"] + w["server_errors"]
        table.add_row("5xx answers (MCP: internal errors too)", str(fives), "0", PASS[fives == 0])
        lost = sum(z[face]["transport_errors"] for face in ("http", "mcp", "wire"))
        table.add_row("requests the server dropped (no answer)", str(lost), "0", PASS[lost == 0])
        table.add_row("replay verifies afterwards", yes[z["replay_verifies"]], "yes", PASS[z["replay_verifies"]])
    if ld := f.get("load"):
        _load_rows(table, ld)
    if s := f.get("soak"):
        table.add_row(f"soak {s['minutes']:g} min, {s['agents']} agents: RSS MB at 10% / end (peak)",
                      f"{s['rss_mb_at_10pct']} / {s['rss_mb_end']} ({s['rss_mb_peak']})", "", "")
        table.add_row("memory growth after the first 10%", f"{s['growth']:.1%}", f"< {TARGET_GROWTH:.0%}", PASS[s["pass"]])
    for name in ("crash", "load", "soak"):
        if f.get(name, {}).get("error_count"):
            table.add_row(f"{name}: calls that failed while the server was up", str(f[name]["error_count"]), "0", PASS[False])
    return table


def _faces(phase: dict[str, Any]) -> str:
    return "; ".join(f"{face} {phase['faces'][face]['p50_ms']:.1f} / {phase['faces'][face]['p99_ms']:.1f}"
                     for face in ("http", "mcp"))


def _cpu(phase: dict[str, Any]) -> str:
    """Server and generator CPU ms a call; the cores the server used; what the machine did meanwhile."""
    m = phase["machine"]
    return (f"{phase['server_cpu_ms_per_call']} / {phase['generator_cpu_ms_per_call']} ms; {phase['server_cores_used']:.2f} "
            f"cores; machine {m['busy_share']:.0%} busy, others {m['others_cores_used']:.1f} cores, load {m['load_avg_1m'][1]:g}")


def _load_rows(table: Any, ld: dict[str, Any]) -> None:
    lone, sat = ld["lone"], ld["saturation"]
    table.add_row("lone calls, 1 agent a face: p50 / p99 ms", _faces(lone), "", "")
    table.add_row("  CPU a call server / generator; server cores; machine", _cpu(lone), "", "")
    table.add_row(f"offered: {ld['agents']} agents x 2 calls every {ld['period_s']:g} s (MCP: {ld['mcp_client']} client); "
                  "calls/s offered, achieved",
                  f"{ld['offered_calls_per_s']:,.0f}, {ld['achieved_calls_per_s']:,.0f}", "", "")
    for face in ("http", "mcp"):
        f = ld["faces"][face]
        table.add_row(f"  {face} p50 / p99 ms ({f['requests']:,} calls)", f"{f['p50_ms']:.1f} / {f['p99_ms']:.1f}",
                      f"p99 < {TARGET_P99_MS:g}", PASS[f["p99_ms"] < TARGET_P99_MS])
    table.add_row("  turns started late (a period after the last) p50 / p99 ms", f"{ld['late_start_p50_ms']:.0f} / {ld['late_start_p99_ms']:.0f}", "", "")
    table.add_row("  CPU a call server / generator; server cores; machine", _cpu(ld), "", "")
    table.add_row(f"saturation: {sat['agents']} agents, closed loop: calls/s answered", f"{sat['achieved_calls_per_s']:,.0f}", "", "")
    table.add_row("  p50 / p99 ms", _faces(sat), "", "")
    table.add_row("  CPU a call server / generator; server cores; machine", _cpu(sat), "", "")
