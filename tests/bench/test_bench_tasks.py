"""`wildhold bench tasks` runs end to end and reports every figure; no timing is asserted."""

from __future__ import annotations

import json

from wildhold.bench.tasks import PHASES, bench_tasks


def test_quick_bench_tasks_prints_one_json_object_last_with_every_figure(capsys):
    figures = bench_tasks(as_json=True, quick=True, workers=1)
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == figures
    assert figures["attempts"] == figures["tasks"] and figures["errors"] == 0
    assert set(figures["phases_ms"]) == {*PHASES, "play"}
    assert figures["overhead_ms"]["mean"] > 0 and figures["wall_s"] > 0
