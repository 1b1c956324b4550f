"""The suite's table as Markdown and HTML: sample std and t-intervals over repeats checked against scipy, seed
002's Table 3 layout beside it, and every string a player or a set-up brings escaped."""

from __future__ import annotations

import pytest
from scipy import stats

from wildhold.tasks.report import html, markdown
from wildhold.tasks.suite import tables


def _results(policy: str, error: str) -> list[dict]:
    base = {"task": "exploration/gather-wood-v1", "category": "exploration", "difficulty": "easy", "policy": policy,
            "seed": 0, "clock": "lockstep"}
    return [{**base, "repeat": 0, "status": "success", "progress": 1.0, "turns": 4, "ticks": 9, "trace": [[0, 0.0], [9, 1.0]],
             "llm_calls": 4, "tokens": 1200, "cached_input_tokens": 0, "dollars": 0.0042},
            {**base, "repeat": 1, "status": "error", "error": error, "llm_calls": 0, "tokens": 0,
             "cached_input_tokens": 0, "dollars": 0.0}]


def test_html_escapes_player_names_and_errors():
    page = html(_results("<script>alert(1)</script>", "refused <b>x</b> & more"))
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "refused &lt;b&gt;x&lt;/b&gt; &amp; more" in page
    assert "1,200" in page and "0.0042" in page


def test_markdown_keeps_a_players_name_from_breaking_the_table():
    text = markdown(_results("a|b", "line one\nline two | cell"))
    assert "a\\|b" in text and "line one line two \\| cell" in text
    assert "| exploration | 100.0 (n=2, 1 error) |" in text  # one repeat played: no spread to show


def _attempts(category: str, difficulty: str, solved: list[list[bool]]) -> list[dict]:
    """One attempt per task per repeat: solved[repeat][task]."""
    return [{"task": f"{category}/{difficulty}-{t}-v1", "category": category, "difficulty": difficulty,
             "policy": "oracle", "seed": r, "clock": "lockstep", "repeat": r,
             "status": "success" if ok else "failure", "progress": float(ok), "turns": 3, "ticks": 5}
            for r, tasks in enumerate(solved) for t, ok in enumerate(tasks)]


def test_success_is_the_mean_sample_std_and_t_interval_over_repeats_of_the_share_solved():
    rows = _attempts("exploration", "easy", [[True, True], [True, False]])  # 100 % and 50 %
    ref = stats.ttest_1samp([100.0, 50.0], 0.0).confidence_interval(0.95)
    assert ref.low < 0 and ref.high > 100  # two repeats: a t-interval wider than a rate can be, so clipped
    cell = tables(rows)["oracle"]["cells"]["exploration/easy"]
    assert cell["std"] == pytest.approx(stats.tstd([100.0, 50.0]), abs=0.05) and cell["ci95"] == [0.0, 100.0]
    assert "| exploration | 75.0 ± 35.4 [0.0, 100.0] (n=4) |" in markdown(rows)


def test_seed_002s_convention_one_success_in_three_repeats_is_11_1_plus_minus_19_2():
    """Seed 002 Table 3 prints 11.1 ± 19.3-style cells: the sample std over three runs (pstdev would give 15.7)."""
    rows = _attempts("combat", "easy", [[True, False, False], [False] * 3, [False] * 3])  # 33.3 / 0 / 0
    rows += _attempts("farming", "medium", [[True, True], [True, False], [True, True]])
    cells = tables(rows)["oracle"]["cells"]
    rates = [100 / 3, 0.0, 0.0]
    ref = stats.ttest_1samp(rates, 0.0).confidence_interval(0.95)
    assert cells["combat/easy"]["std"] == round(stats.tstd(rates), 1) == 19.2
    assert cells["combat/easy"]["ci95"] == [0.0, round(ref.high, 1)] and cells["combat/easy"]["method"] == "t"
    total = [100 * 3 / 5, 100 * 1 / 5, 100 * 2 / 5]  # every task of a repeat: 3, 1 and 2 of 5 solved
    total_ref = stats.ttest_1samp(total, 0.0).confidence_interval(0.95)
    assert cells["total/all"]["ci95"] == pytest.approx([max(0.0, total_ref.low), total_ref.high], abs=0.05)

    text = markdown(rows)
    assert "### Tasks: oracle: 5 tasks x 3 repeats, lockstep clock, as seed 002's Table 3" in text
    assert "| difficulty | farming | combat | total |" in text  # seed 002's order: categories across, total last
    assert "| easy | - | 11.1 ± 19.2 | 11.1 ± 19.2 |" in text
    assert "| medium | 83.3 ± 28.9 | - | 83.3 ± 28.9 |" in text
    assert "| total | 83.3 ± 28.9 | 11.1 ± 19.2 | 40.0 ± 20.0 |" in text
    assert "mean ± sample std (n-1) over repeats" in text
    page = html(rows)
    assert "as seed 002&#39;s Table 3" in page and "<td>11.1 ± 19.2</td>" in page


def test_the_tables_are_the_same_bytes_whatever_order_the_attempts_come_in():
    rows = _attempts("combat", "easy", [[True, False, False], [False, True, True], [True, True, True]])
    assert markdown(rows) == markdown(list(reversed(rows)))
