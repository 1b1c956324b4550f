"""`wildhold bench tasks`: the oracle over Lite x 3 repeats with 2 workers, as `wildhold tasks run` plays it
(wall time, target under 10 minutes), and each attempt's overhead besides play, by phase (target under
200 ms): set-up (the match created, the character joined, the task set up), archive (the match ended, its
archive written, the working store removed) and scoring (the result rebuilt from the archive).

Beside it, in this process, a few attempts with the working store on disk (the attempts' out folder) and
in memory-backed space, alternating: the ratio is the point on a loaded machine. No figure is asserted in tests.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from wildhold.bench import PASS, figures_table, publish
from wildhold.content import default_content
from wildhold.tasks.attempt import run_attempt, scratch_folder
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.suite import policy_for, run_suite

WALL_TARGET_S = 600.0
OVERHEAD_TARGET_MS = 200.0
PHASES = ("setup", "archive", "scoring")


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"mean": round(1000 * statistics.fmean(ordered), 1),
            "p90": round(1000 * ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1),
            "max": round(1000 * ordered[-1], 1)}


def _stores_side_by_side(tasks: list[Any], rounds: int, tmp: Path) -> dict[str, Any] | None:
    """Overhead per attempt with the working store on disk and in memory-backed space, alternating."""
    memory = scratch_folder(tmp)
    if memory == tmp:
        return None
    content = default_content()
    spent: dict[str, list[float]] = {"disk": [], "memory": []}
    for i in range(rounds):
        for label, scratch in (("disk", tmp / "disk"), ("memory", memory)):
            scratch.mkdir(exist_ok=True)
            task = tasks[i % len(tasks)]
            timings: dict[str, float] = {}
            run_attempt(task, policy_for("oracle", task, content), "oracle", 0, tmp / label, content, timings=timings,
                        scratch=scratch)
            spent[label].append(sum(timings[p] for p in PHASES))
    disk, mem = _ms(spent["disk"]), _ms(spent["memory"])
    return {"disk_ms": disk, "memory_ms": mem, "ratio": round(disk["mean"] / mem["mean"], 2) if mem["mean"] else None,
            "attempts_each": rounds}


def bench_tasks(as_json: bool = False, quick: bool = False, workers: int = 2, repeats: int | None = None,
                console: Console | None = None) -> dict[str, Any]:
    """Run the oracle over Lite (3 repeats, or 1 with `quick`), print the figures (and with `as_json` one
    JSON object last), return them."""
    console = console or Console()
    repeats = repeats or (1 if quick else 3)
    suite = default_suite()
    tasks = suite.select(["lite"])
    timings: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="wildhold-bench-tasks-") as tmp:
        started = time.perf_counter()
        results = run_suite(tasks, "oracle", repeats, workers, Path(tmp) / "run", timings=timings)
        wall = time.perf_counter() - started
        side = _stores_side_by_side(tasks, 3 if quick else 10, Path(tmp))
    overhead = [sum(t[p] for p in PHASES) for t in timings]
    inside = sum(sum(t.values()) for t in timings)
    figures: dict[str, Any] = {
        "wall_s": round(wall, 1), "attempts": len(results), "tasks": len(tasks), "repeats": repeats, "workers": workers,
        "solved": sum(r["status"] == "success" for r in results),
        "errors": sum(r["status"] == "error" for r in results),
        "overhead_ms": _ms(overhead),
        "phases_ms": {p: _ms([t[p] for t in timings]) for p in (*PHASES, "play")},
        "outside_attempts_s": round(wall - inside / workers, 1),
        "stores_side_by_side": side,
        "quick": quick,
    }
    table = figures_table(f"wildhold bench tasks ({'quick' if quick else 'full'}: the oracle over Lite, "
                          f"{len(tasks)} tasks x {repeats} repeats, {workers} workers)",
                          "overhead = set-up + archive + scoring per attempt (mean); outside attempts = wall time less "
                          "the attempts' time per worker (worker start-up, content and suite loading, results files)")
    full = len(tasks) * repeats
    wall_note = f"{wall:.1f} s" + ("" if quick else "")
    table.add_row(f"wall time ({full} attempts)", wall_note, f"< {WALL_TARGET_S:.0f} s", PASS[wall < WALL_TARGET_S])
    table.add_row("solved", f"{figures['solved']}/{len(results)}", "", "")
    o = figures["overhead_ms"]
    table.add_row("overhead per attempt (mean / p90 / max)", f"{o['mean']:.1f} / {o['p90']:.1f} / {o['max']:.1f} ms",
                  f"< {OVERHEAD_TARGET_MS:.0f} ms", PASS[o["mean"] < OVERHEAD_TARGET_MS])
    for p in (*PHASES, "play"):
        v = figures["phases_ms"][p]
        table.add_row(f"  {p} (mean / p90)", f"{v['mean']:.1f} / {v['p90']:.1f} ms", "", "")
    table.add_row("outside attempts", f"{figures['outside_attempts_s']:.1f} s", "", "")
    if side is not None:
        table.add_row(f"overhead, store on disk ({side['attempts_each']} attempts, alternating)",
                      f"{side['disk_ms']['mean']:.1f} ms", "", "")
        table.add_row("overhead, store in memory-backed space", f"{side['memory_ms']['mean']:.1f} ms",
                      f"ratio {side['ratio']}", "")
    return publish(figures, table, as_json, console)
