"""Benchmarks: engine throughput, world generation and memory, measured against crafter."""

from __future__ import annotations

from wildhold.terminal import Col, FitTable

PASS = {True: "[green]pass[/]", False: "[red]miss[/]"}


def figures_table(title: str, caption: str) -> FitTable:
    """The measure / value / target / pass table of a benchmark; long measure names wrap at narrow widths."""
    return FitTable([Col("measure", "left", key=True, wrap=True), Col("value"), Col("target"), Col("", "center")],
                    title=title, caption=caption)
