"""Curves across runs: each run's value at a budget is its last point at or under it; the line is the mean over
seeds and the band the lowest to the highest; JSON, and SVG with every string escaped."""

from __future__ import annotations

import json
from pathlib import Path

from wildhold.runner.curves import curves, step_at, svg


def _points(*pairs: tuple[float, int]) -> list[dict]:
    return [{"session": i + 1, "cost_usd": c, "tokens": int(c * 1000), "elapsed_s": c * 10, "quests": q,
             "trial_stages": q, "wealth_cents": 100 * q} for i, (c, q) in enumerate(pairs)]


def _cell(out: Path, arm: str, seed: int, points: list[dict], label: str = "m") -> dict:
    key = f"{arm}__p__s{seed}__r0"
    run = out / "cells" / key / "run"
    run.mkdir(parents=True)
    (run / "spend_curve.json").write_text(json.dumps({"arms": {arm: {"points": points}}}))
    return {"cell": key, "arm": arm, "protocol": "p", "seed": seed, "config": f"k-{arm}", "identity": {"model": label}}


def test_a_runs_value_at_a_budget_is_its_last_point_at_or_under_it():
    pts = _points((0.1, 1), (0.3, 2), (0.6, 5))
    assert step_at(pts, "cost_usd", "quests", 0.05) is None
    assert step_at(pts, "cost_usd", "quests", 0.3) == 2.0
    assert step_at(pts, "cost_usd", "quests", 0.59) == 2.0
    assert step_at(pts, "cost_usd", "quests", 9.0) == 5.0  # a run that ended keeps its last value


def test_the_line_is_the_mean_over_seeds_and_the_band_spans_them(tmp_path):
    results = [_cell(tmp_path, "a", 1, _points((0.5, 2), (1.0, 4))), _cell(tmp_path, "a", 2, _points((0.5, 0), (1.0, 2))),
               {"cell": "scripted", "arm": "s", "protocol": "p", "seed": 1, "config": "k-s", "identity": {"policy": "x"}}]
    data = curves(tmp_path, results, grid=4)
    assert len(data["lines"]) == 1  # a scripted cell spends nothing and draws no curve
    line = data["lines"][0]
    assert line["seeds"] == [1, 2] and line["by"]["cost_usd"]["x"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    last = line["by"]["cost_usd"]["quests"][-1]
    assert (last["mean"], last["min"], last["max"], last["n"]) == (3.0, 2.0, 4.0, 2)
    assert line["by"]["cost_usd"]["quests"][0] is None
    assert set(line["by"]) == {"cost_usd", "tokens", "elapsed_s"}


def test_the_svg_draws_a_band_and_a_line_per_configuration_and_escapes_labels(tmp_path):
    results = [_cell(tmp_path, "a", s, _points((0.5, s), (1.0, s + 1)), label="<b>evil</b>") for s in (1, 2)]
    chart = svg(curves(tmp_path, results), "p", "cost_usd", "quests")
    assert chart.count("<polygon") == 1 and chart.count("<polyline") == 1
    assert "<b>" not in chart and "&lt;b&gt;evil&lt;/b&gt; (n=2)" in chart
