"""`wildhold bench hardening --only diskfull`: a real `wildhold serve` whose disk fills while agents act, then frees.

The disk is made full by the server's own file-size limit (RLIMIT_FSIZE, set from outside with prlimit) far below its
store's size: every write past it fails (EFBIG, where a full disk gives ENOSPC), with no special filesystem. A limit at
the files' own sizes would not do: SQLite reuses the space its files hold, as it would on a real full disk. Agents act
over HTTP and MCP and a program runs throughout. Nothing the server acknowledged may be lost or applied twice; every
refusal carries the stable code `storage_unavailable`; `/api/health`, the admin metrics and the log say `degraded` with
the cause while the world pauses; once the limit is lifted the match goes on; after a SIGKILL and a restart it resumes,
and its archive replays.
"""

from __future__ import annotations

import asyncio
import resource
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx2

from wildhold.bench import PASS
from wildhold.bench.hardening import CRASH_FACES, CRASH_OPTIONS, PROGRAM, Ledger, _act_until, _tally
from wildhold.bench.served import ADMIN, CALL_TIMEOUT_S, HttpAgent, Serve, auth, end_match, replay_verifies

CAP_BYTES = 64 * 1024  # the file-size limit while full: under every store file, over the server's log
FULL_S = 4.0  # how long the disk stays full once the server says so
OPEN_S = 2.0  # how long agents act with room on the disk, before each fill and after the last
FILL_TIMEOUT_S = 90.0  # the longest a fill may take to be felt (the store's next write past the limit)
RECOVER_TIMEOUT_S = 60.0  # the longest the match may take to go on once space returns
SAMPLE_S = 0.1  # how often the health and the admin view are read
DEGRADED_LINE = "takes no writes"  # what the server's log says when a write fails


class Fill:
    """What one fill of the disk showed: the health and admin view while full, the ticks, the match going on after."""

    def __init__(self) -> None:
        self.degraded = False  # /api/health said degraded, naming the store
        self.admin_says = False  # the admin metrics said so too
        self.ticks: list[int] = []  # the world's tick in every degraded health answer
        self.acked_while_full = 0
        self.resumed = False  # health back to running, the world past its paused tick, an action accepted

    def row(self) -> dict[str, Any]:
        return {"degraded": self.degraded, "admin_says": self.admin_says, "resumed": self.resumed,
                "ticks_while_degraded": (max(self.ticks) - min(self.ticks)) if self.ticks else None,
                "acked_while_full": self.acked_while_full}


def _cap(pid: int, size: int | None) -> None:
    """The server's file-size limit: `size` bytes (its files may not grow past it), or none."""
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    if size is not None and hard != resource.RLIM_INFINITY:
        size = min(size, hard)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard if size is None else size, hard))


async def _watch(serve: Serve, fills: list[Fill], stop: asyncio.Event) -> None:
    """Read /api/health and the admin metrics every SAMPLE_S; a degraded answer counts for the fill under way."""
    async with httpx2.AsyncClient(base_url=serve.base, timeout=CALL_TIMEOUT_S) as http:
        while not stop.is_set():
            health = await http.get("/api/health")
            body = health.json()
            if fills and body.get("status") == "degraded" and "store" in (body.get("cause") or ""):
                fills[-1].degraded = health.status_code == 503
                fills[-1].ticks.append(body["tick"])
                metrics = (await http.get("/api/metrics", headers=auth(ADMIN))).json()
                fills[-1].admin_says |= bool(metrics["health"]["storage"])
            await asyncio.sleep(SAMPLE_S)


async def _health(serve: Serve) -> dict[str, Any]:
    async with httpx2.AsyncClient(base_url=serve.base, timeout=CALL_TIMEOUT_S) as http:
        return (await http.get("/api/health")).json()


async def _until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if await check():
            return True
        await asyncio.sleep(SAMPLE_S)
    return False


async def _fill_once(serve: Serve, fill: Fill, ledger: Ledger) -> None:
    """Cap the server's files until it says degraded and FULL_S more, then lift the cap and wait for
    the match to go on: healthy, past the tick it paused at, an action accepted since."""
    assert serve.proc is not None
    _cap(serve.proc.pid, CAP_BYTES)
    ledger.full, acked_before = True, ledger.acked_while_full

    async def felt() -> bool:
        return fill.degraded

    if await _until(felt, FILL_TIMEOUT_S):
        await asyncio.sleep(FULL_S)
    _cap(serve.proc.pid, None)
    ledger.full, fill.acked_while_full = False, ledger.acked_while_full - acked_before
    paused = max(fill.ticks, default=0)
    acked = len(ledger.acked)

    async def going_on() -> bool:
        health = await _health(serve)
        return health["status"] == "running" and health["tick"] > paused and len(ledger.acked) > acked

    fill.resumed = await _until(going_on, RECOVER_TIMEOUT_S)


async def diskfull(fills: int, work: Path) -> dict[str, Any]:
    serve = Serve(work / "diskfull", CRASH_OPTIONS)
    names = [f"{face}-agent-{i}" for i, face in enumerate(CRASH_FACES)]
    ledger, done = Ledger(names), []
    t0 = time.perf_counter()
    serve.start()
    try:
        await serve.ready()
        tokens = await serve.register([*names, "programmer"])
        async with HttpAgent(serve.base, tokens[-1]) as programmer:
            if not (await programmer.program("sayer", PROGRAM)).ok:
                raise RuntimeError("the program did not start")
        stop = asyncio.Event()
        tasks = [asyncio.create_task(_act_until(face, serve.base, tokens[i], names[i], ledger, stop))
                 for i, face in enumerate(CRASH_FACES)]
        watch = asyncio.create_task(_watch(serve, done, stop))
        await asyncio.wait_for(ledger.answered.wait(), CALL_TIMEOUT_S)
        for _ in range(fills):
            await asyncio.sleep(OPEN_S)
            done.append(Fill())
            await _fill_once(serve, done[-1], ledger)
        await asyncio.sleep(OPEN_S)
        stop.set()
        await asyncio.gather(*tasks, watch)
        logged = serve.log.read_text(errors="replace").count(DEGRADED_LINE)
        serve.kill()  # the match resumes after a restart with every acknowledged action
        serve.start()
        await serve.ready()
        async with HttpAgent(serve.base, tokens[-1]) as programmer:
            program = await programmer.program_status("sayer")
        archive, exit_code = await end_match(serve)
    finally:
        serve.kill()
    figures = _tally(serve.data / "match.sqlite", ledger.acked)
    rows = [f.row() for f in done]
    unshown = sum(1 for f in done if not (f.degraded and f.admin_says))
    return {"fills": fills, "full_s": FULL_S, "cap_kib": CAP_BYTES // 1024, **figures,
            "acked_while_full": sum(r["acked_while_full"] for r in rows),
            "refused": dict(ledger.refusals), "storage_refusals": ledger.refusals["storage_unavailable"],
            "silent_failures": len(ledger.errors) + unshown + max(0, fills - logged),
            "errors": ledger.errors[:10], "degraded_fills": sum(r["degraded"] for r in rows),
            "resumed_fills": sum(r["resumed"] for r in rows), "log_lines": logged,
            "ticks_while_degraded": max((r["ticks_while_degraded"] or 0 for r in rows), default=0), "per_fill": rows,
            "program_state_after": program.get("state"), "program_error": program.get("error"),
            "sigterm_exit_code": exit_code, "replay_verifies": replay_verifies(archive),
            "seconds": round(time.perf_counter() - t0, 1)}


def rows(table: Any, d: dict[str, Any]) -> None:
    """The measurement's rows in the hardening table."""
    n, yes = d["fills"], {True: "yes", False: "NO"}
    table.add_row(f"disk full {n} times ({d['full_s']:g} s each: the server's file-size limit at {d['cap_kib']} KiB), "
                  "agents acting over HTTP and MCP, a program running", str(n), "", "")
    table.add_row(f"acknowledged actions lost (of {d['acknowledged']:,}; {d['acked_while_full']} answered after the "
                  "cap)", str(d["lost"]), "0", PASS[d["lost"] == 0])
    repeated = (d["duplicated"], d["program_actions_repeated"])
    table.add_row(f"acknowledged actions duplicated; program lines repeated (of {d['program_actions']:,})",
                  f"{repeated[0]}; {repeated[1]}", "0; 0", PASS[repeated == (0, 0)])
    table.add_row("changes refused with storage_unavailable (503, retry_after_s)", f"{d['storage_refusals']:,}", "> 0",
                  PASS[d["storage_refusals"] > 0])
    table.add_row("silent failures (no stable code; a fill the health, admin view or log did not show)",
                  str(d["silent_failures"]), "0", PASS[d["silent_failures"] == 0])
    table.add_row("health degraded while full (fills); ticks the world advanced while degraded",
                  f"{d['degraded_fills']} of {n}; {d['ticks_while_degraded']}", f"{n} of {n}; 0",
                  PASS[d["degraded_fills"] == n and d["ticks_while_degraded"] == 0])
    table.add_row("the match went on after space returned (fills); the program after a SIGKILL and restart",
                  f"{d['resumed_fills']} of {n}; {d['program_state_after']}", f"{n} of {n}; running or waiting",
                  PASS[d["resumed_fills"] == n and d["program_state_after"] in ("running", "waiting")])
    table.add_row("SIGTERM exit code, then replay of the final archive verifies",
                  f"{d['sigterm_exit_code']}, {yes[d['replay_verifies']]}", "0, yes",
                  PASS[d["sigterm_exit_code"] == 0 and d["replay_verifies"]])
