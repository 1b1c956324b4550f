"""Charts a reader can read: round ticks on both axes with their numbers written out (thousands separated, never
an exponent), an empty series on [0, 1], labels kept inside the picture, and one unit per quantity wherever it is
shown: wealth in coins in the sweep's table and in its charts alike."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from wildhold.eval.chart import COINS, COUNT, DOLLARS, QUANTITIES, STEPS, TOKENS, axis, nice_ticks
from wildhold.eval.html import spend_chart
from wildhold.runner.curves import curves, svg
from wildhold.runner.summary import render_html, summarize


def labels(chart: str) -> list[str]:
    """The tick labels of a chart, in the order drawn: the y axis's, then the x axis's."""
    return re.findall(r'font-size="11" text-anchor="(?:end|middle)" fill="#555">([^<]*)</text>', chart)


def step_of(ticks: list[float]) -> float:
    return ticks[1] - ticks[0]


@pytest.mark.parametrize("lo,hi", [(0, 417), (-1903.5, 290.5), (0, 46930), (0, 0.1447), (0, 2.311), (3, 7),
                                   (0, 1e6 + 1), (-0.004, 0.0), (1300, 1400), (0, 599_870)])
def test_ticks_are_round_steps_that_cover_the_range(lo, hi):
    ticks = nice_ticks(lo, hi)
    step = step_of(ticks)
    assert ticks[0] <= lo and ticks[-1] >= hi and 4 <= len(ticks) <= 8
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(abs(mantissa - m) < 1e-9 for m in STEPS)
    assert all(abs((b - a) - step) < 1e-9 * max(1, step) for a, b in zip(ticks, ticks[1:]))


def test_labels_write_every_number_out_with_thousands_separated():
    assert [s for _, s in axis(0, 46930, TOKENS)] == ["0", "10,000", "20,000", "30,000", "40,000", "50,000"]
    assert [s for _, s in axis(0, 0.1447, DOLLARS)] == ["$0.00", "$0.05", "$0.10", "$0.15"]
    assert [s for _, s in axis(0, 0.0123, DOLLARS)][-1] == "$0.0125"
    assert [s for _, s in axis(-182150, 29300, COINS)] == ["-2,000", "-1,500", "-1,000", "-500", "0", "500"]
    for hi in (0.00042, 3.5, 46930, 1.2e6, 7.5e8):
        assert not any("e" in s for _, s in axis(0, hi, DOLLARS)), hi


def test_counts_tick_at_whole_numbers_and_an_all_zero_series_sits_on_zero_to_one():
    assert axis(0, 0, COUNT) == [(0, "0"), (1, "1")]
    assert [s for _, s in axis(0, 3, COUNT)] == ["0", "1", "2", "3"]
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]  # a measured quantity may take any value


def _cell(out: Path, seed: int, points: list[dict]) -> dict:
    key = f"m__p__s{seed}__r0"
    run = out / "cells" / key / "run"
    run.mkdir(parents=True)
    (run / "spend_curve.json").write_text(json.dumps({"arms": {"m": {"points": points}}}))
    return {"cell": key, "arm": "m", "protocol": "p", "seed": seed, "config": "k-m", "identity": {"model": "m"},
            "scenario": "famine", "measures": {"wealth": points[-1]["wealth_cents"] / 100, "quests": 0,
                                                "spend_usd": points[-1]["cost_usd"], "tokens": points[-1]["tokens"]}}


def test_the_sweeps_table_and_charts_show_wealth_in_coins_and_a_flat_zero_on_zero_to_one(tmp_path):
    pts = [{"session": 1, "cost_usd": 0.09, "tokens": 29_000, "elapsed_s": 1.1, "quests": 0, "trial_stages": 0, "wealth_cents": 1400},
           {"session": 2, "cost_usd": 0.1447, "tokens": 46_930, "elapsed_s": 2.311, "quests": 0, "trial_stages": 0, "wealth_cents": 1300}]
    results = [_cell(tmp_path, s, pts) for s in (1, 2, 3)]
    data = curves(tmp_path, results)
    page = render_html(summarize(results), data, "sweep")
    assert "<th>wealth (coins)</th>" in page and "<td>13.00 ± 0.00 [13.00, 13.00] n=3</td>" in page
    assert "<td>46,930 ± 0 [46,930, 46,930] n=3</td>" in page
    wealth = svg(data, "p", "tokens", "wealth_cents")
    assert "wealth (coins)" in wealth and "cents" not in wealth
    assert labels(wealth) == ["0", "5", "10", "15", "0", "10,000", "20,000", "30,000", "40,000", "50,000"]
    quests = svg(data, "p", "cost_usd", "quests")
    assert labels(quests) == ["0", "1", "$0.00", "$0.05", "$0.10", "$0.15"]  # all zero: never a [-1, 1] axis
    for x in QUANTITIES["cost_usd"], QUANTITIES["elapsed_s"]:
        assert x.title in page


def test_the_last_tick_label_of_a_spend_axis_is_drawn_whole_inside_the_chart():
    chart = spend_chart([("scout", "#000", [[0, 0], [301_000, 1], [599_870, 2]])], QUANTITIES["tokens"], QUANTITIES["quests"])
    width = int(re.search(r'<svg [^>]*width="(\d+)"', chart).group(1))
    x, text = re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="11" text-anchor="middle" fill="#555">([^<]*)</text>', chart)[-1]
    assert text == "600,000"
    assert float(x) + len(text) * 6.4 / 2 <= width  # the label's right half fits
