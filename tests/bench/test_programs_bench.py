"""`wildhold bench programs` runs end to end at a tiny size and reports every figure; no timing is asserted."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from wildhold.bench.programs import bench_programs
from wildhold.cli import app


def test_a_tiny_bench_prints_one_json_object_last_with_both_figures_per_level(capsys):
    returned = bench_programs(as_json=True, levels=(1, 3), actions=2, calls=3)
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures == json.loads(json.dumps(returned))
    for key in ("program_actions_per_s", "host_call_overhead_ms", "direct_actions_per_s", "program_call_ms"):
        assert set(figures[key]) == {"1", "3"}, key
        assert all(isinstance(v, float) for v in figures[key].values()), key
    assert [r["program_actions"] for r in figures["runs"]] == [2, 6]  # every program did all its actions
    assert [r["host_calls"] for r in figures["runs"]] == [3, 9]


def test_the_bench_is_a_cli_command():
    result = CliRunner().invoke(app, ["bench", "programs", "--help"])
    assert result.exit_code == 0 and "--json" in result.output
