"""`wildhold bench sweep --quick`: the smoke sweep cut to 3 cells on the local pool and on a local Ray prints each
executor's cells per minute and whether their archives were equal; no timing is asserted."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from wildhold.bench.sweep import archives_equal
from wildhold.cli import app

pytestmark = pytest.mark.slow(seconds=30)


def test_the_quick_bench_prints_both_executors_cells_per_minute_and_equal_archives():
    pytest.importorskip("ray")
    result = CliRunner().invoke(app, ["bench", "sweep", "--quick", "--json"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    assert figures["quick"] is True and figures["workers"] == 2
    assert set(figures["runs"]) == {"local", "ray"}
    for run in figures["runs"].values():  # the first seed of the first protocol: 2 recorded-turn arms, 1 scripted
        assert (run["cells"], run["failed"]) == (3, 0) and run["cells_per_min"] > 0 and run["seconds"] > 0
    assert figures["archives_equal"] is True
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.split("│")[1:-1]]
                                          for line in result.output.splitlines() if line.count("│") == 7)}
    for executor, run in figures["runs"].items():  # executor, workers, cells, seconds, cells/min, vs local
        assert rows[executor][2] == "3" and rows[executor][4] == f"{run['cells_per_min']:.1f}"
    assert rows["local"][5] == "1.00x"
    words = " ".join(result.output.split())  # the table's title and caption wrap at the terminal's width
    assert "chain heads equal across executors" in words and "the smoke sweep (quick) on 2 workers" in words


def test_archives_are_compared_by_every_cells_chain_heads_and_one_executor_compares_nothing():
    local = {"a__tiny__s1__r0": ["h1"], "b__tiny__s1__r0": ["h2"]}
    assert archives_equal({"local": local, "ray": dict(local)}) is True
    assert archives_equal({"local": local, "ray": {**local, "b__tiny__s1__r0": ["other"]}}) is False
    assert archives_equal({"local": local, "ray": {"a__tiny__s1__r0": ["h1"]}}) is False  # a cell missing
    assert archives_equal({"local": local}) is None
