"""Benchmarks: engine throughput, world generation and memory, measured against crafter.

Every bench prints the process's CPU time beside its wall time, and rates are judged on CPU time (`Meter`): on a
shared machine wall time measures the neighbours as much as the code."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from rich.console import Console

from wildhold.terminal import Col, FitTable

PASS = {True: "[green]pass[/]", False: "[red]miss[/]"}
_STARTED = (time.perf_counter(), os.times())  # when the bench began (its module is imported by the command)


class Meter:
    """Wall time and this process's CPU time spent inside `with meter:` blocks, added up."""

    __slots__ = ("wall", "cpu", "_wall0", "_cpu0")

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Meter:
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cpu += time.process_time() - self._cpu0
        self.wall += time.perf_counter() - self._wall0

    def rates(self, count: float) -> tuple[float, float]:
        """`count` per second of CPU time (what a verdict reads) and of wall time."""
        return count / max(self.cpu, 1e-9), count / max(self.wall, 1e-9)


def process_times() -> dict[str, float]:
    """Seconds since the bench began: wall, this process's CPU (user + system) and its children's."""
    now, then = os.times(), _STARTED[1]
    return {"wall_s": round(time.perf_counter() - _STARTED[0], 2),
            "cpu_s": round(now.user + now.system - then.user - then.system, 2),
            "children_cpu_s": round(now.children_user + now.children_system - then.children_user - then.children_system, 2)}


def figures_table(title: str, caption: str) -> FitTable:
    """The measure / value / target / pass table of a benchmark; long measure names wrap at narrow widths."""
    return FitTable([Col("measure", "left", key=True, wrap=True), Col("value"), Col("target"), Col("", "center")],
                    title=title, caption=caption)


def fmt(value: float | None, spec: str = ",.0f") -> str:
    """A figure as a table shows it; n/a where it was not measured."""
    return "n/a" if value is None else format(value, spec)


def publish(result: dict[str, Any], table: FitTable, as_json: bool, console: Console | None = None) -> dict[str, Any]:
    """Print a benchmark's table and the process's CPU time beside its wall time and, with `as_json`, its figures
    (with those times as `process`) as one JSON object on the last line."""
    spent = result["process"] = process_times()
    console = console or Console(highlight=False)
    console.print(table)
    console.print(f"process: {spent['cpu_s']:,.1f} s CPU (its children {spent['children_cpu_s']:,.1f} s) beside "
                  f"{spent['wall_s']:,.1f} s wall")
    if as_json:
        print(json.dumps(result, sort_keys=True))
    return result
