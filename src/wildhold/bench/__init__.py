"""Benchmarks: engine throughput, world generation and memory, measured against crafter."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from wildhold.terminal import Col, FitTable

PASS = {True: "[green]pass[/]", False: "[red]miss[/]"}


def figures_table(title: str, caption: str) -> FitTable:
    """The measure / value / target / pass table of a benchmark; long measure names wrap at narrow widths."""
    return FitTable([Col("measure", "left", key=True, wrap=True), Col("value"), Col("target"), Col("", "center")],
                    title=title, caption=caption)


def fmt(value: float | None, spec: str = ",.0f") -> str:
    """A figure as a table shows it; n/a where it was not measured."""
    return "n/a" if value is None else format(value, spec)


def publish(result: dict[str, Any], table: FitTable, as_json: bool) -> dict[str, Any]:
    """Print a benchmark's table and, with `as_json`, its figures as one JSON object on the last line."""
    Console(highlight=False).print(table)
    if as_json:
        print(json.dumps(result, sort_keys=True))
    return result
