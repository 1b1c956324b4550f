"""The suite's table as Markdown and HTML: every string a player or a set-up brings is escaped."""

from __future__ import annotations

from wildhold.tasks.report import html, markdown


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


def test_success_is_the_mean_and_std_over_repeats_of_the_share_solved():
    rows = _results("oracle", "")
    rows[1] = {**rows[0], "repeat": 1, "status": "failure", "progress": 0.5}
    rows.append({**rows[0], "task": "exploration/gather-stone-v1", "repeat": 0})
    rows.append({**rows[0], "task": "exploration/gather-stone-v1", "repeat": 1})
    # repeat 0 solved 2 of 2, repeat 1 solved 1 of 2: 100 % and 50 %
    assert "| exploration | 75.0 ± 25.0 (n=4) |" in markdown(rows)
