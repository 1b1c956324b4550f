"""`wildhold bench sweep`: cells per minute of the packaged smoke sweep (2 recorded-turn arms and 1 scripted arm x
3 seeds x 2 protocols = 18 cells) on the local process pool and on a local Ray, side by side, each into a fresh
folder. A figure covers the whole sweep as `wildhold sweep` runs it: starting the pool (or Ray) and the limits
process, every cell's run, its verification and scoring, and the summary. The archives of the two executors
are compared by chain head, and the figures say whether they were equal (None with one executor: nothing to
compare). `quick` runs the smoke sweep at its first seed on its first protocol (3 cells): a rough figure, fast.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from wildhold.bench import publish
from wildhold.runner.sweep import run_sweep
from wildhold.terminal import Col, FitTable

COLUMNS = (Col("executor", "left", key=True), Col("workers"), Col("cells"), Col("seconds"), Col("cells/min"),
           Col("vs local"))


def smoke_sweep(examples: Path, quick: bool) -> Path:
    """The packaged smoke sweep in `examples`, or, quick, a copy of it cut to its first seed and first protocol."""
    path = examples / "sweep-smoke.yaml"
    if not quick:
        return path
    data = yaml.safe_load(path.read_text())
    data.update(name=f"{data['name']}-quick", seeds=data["seeds"][:1], protocols=data["protocols"][:1])
    quick_path = examples / "sweep-smoke-quick.yaml"
    quick_path.write_text(yaml.safe_dump(data, sort_keys=False))
    return quick_path


def archives_equal(heads: dict[str, dict[str, list[str]]]) -> bool | None:
    """Whether every executor's cells ended in the same chain heads (None with fewer than two executors)."""
    if len(heads) < 2:
        return None
    return len({json.dumps(h, sort_keys=True) for h in heads.values()}) == 1


def bench_sweep(as_json: bool = False, workers: int = 2, executors: tuple[str, ...] = ("local", "ray"),
                console: Console | None = None, quick: bool = False) -> dict[str, Any]:
    console = console or Console()
    runs: dict[str, dict[str, Any]] = {}
    heads: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="wildhold-bench-sweep-") as tmp, as_file(files("wildhold") / "examples") as ex:
        examples = Path(tmp) / "examples"
        shutil.copytree(ex, examples)
        for executor in executors:
            t0 = time.perf_counter()
            outcome = run_sweep(smoke_sweep(examples, quick), Path(tmp) / executor, executor=executor, workers=workers)
            seconds = time.perf_counter() - t0
            runs[executor] = {"cells": outcome["finished"], "failed": len(outcome["failed"]), "seconds": round(seconds, 2),
                              "cells_per_min": round(60 * outcome["finished"] / seconds, 2)}
            heads[executor] = {r["cell"]: r["chain_heads"] for r in outcome["results"]}
    same = archives_equal(heads)
    base = runs.get("local", {}).get("cells_per_min")
    figures = {"workers": workers, "cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
               "quick": quick, "runs": runs, "archives_equal": same}
    sweep = "the smoke sweep (quick)" if quick else "the smoke sweep"
    table = FitTable(COLUMNS, title=f"wildhold bench sweep: {sweep} on {workers} workers "
                                    f"({os.cpu_count()} cores, 1-minute load {figures['load_1min']})")
    for executor, r in runs.items():
        ratio = "-" if not base else f"{r['cells_per_min'] / base:.2f}x"
        table.add_row(executor, str(workers), f"{r['cells']}" + (f" ({r['failed']} failed)" if r["failed"] else ""),
                      f"{r['seconds']:.1f}", f"{r['cells_per_min']:.1f}", ratio)
    compared = ("one executor: archives not compared" if same is None
                else f"chain heads {'equal' if same else 'NOT equal'} across executors")
    table.caption = f"each figure: the whole sweep, executor start-up included; {compared}"
    return publish(figures, table, as_json, console)
