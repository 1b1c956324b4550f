"""The HTML report: every section present with real data, static (no script, nothing fetched), and
readable when a browser draws it (headless Chromium, when installed)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.eval.chart import nice_ticks
from wildhold.eval.html import render_html
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report, score_archive
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
SECTIONS = ("standings", "scorecards", "activity", "curves", "dungeon", "table3", "trial", "epilogues", "manifest")


def page(name: str) -> str:
    record = load_match(FIXTURES / f"{name}.wildhold.zip", unbound=True)  # format 1: its epilogues are unbound
    return render_html(build_report(record, compute_metrics(record)))


def test_every_section_is_on_the_page_with_its_charts():
    html = page("delve_seed11")
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    titles = re.findall(r"<svg [^>]*aria-label=\"([^\"]+)\"", html)
    for chart in ("Activity composition by category", "Wealth over time", "Quests and achievements over time",
                  "Clear rate by level", "Damage per clear by level"):
        assert chart in titles
    assert titles.count("dimension scores") == 4
    assert "I waited for each telegraphed strike" in html and "No epilogue recorded for this agent." in html
    assert "Went dark: 203 ticks of silence" in html
    assert "Shadow King" in html and "Not recorded: this archive carries no model usage" in html


def test_sections_without_data_say_not_recorded_rather_than_show_numbers():
    html = page("famine_seed2")
    assert "Not recorded: no character entered the dungeon in this match" in html
    assert "Clear rate by level" not in html


def test_the_page_is_static_and_fetches_nothing():
    html = page("famine_seed2")
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html


def test_agent_names_are_escaped():
    record = load_match(FIXTURES / "ties_seed5.wildhold.zip")
    metrics = compute_metrics(record)
    metrics.agents["a1"].name = "<b>x</b>"
    html = render_html(build_report(record, metrics))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_axis_ticks_are_round_and_cover_the_range():
    assert nice_ticks(0, 417) == [0, 100, 200, 300, 400, 500]
    assert nice_ticks(-1903.5, 290.5) == [-2000, -1500, -1000, -500, 0, 500]
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


REPORT_BYTES_MAX = 400_000  # light enough to mail: a five-day famine's page, spend curves and all


@pytest.mark.slow(seconds=20)
def test_a_five_day_famines_report_is_light_enough_to_mail_and_still_shows_everything(tmp_path):
    """Six scripted characters for the whole famine, two of them with a model session recorded every hour: about
    two thousand incidents and 120 sessions an arm, drawn as merged marks and a table by kind and parties."""
    run = ScriptedRun.start("famine", 1, tmp_path / "m.sqlite")
    arms, session = list(run.world.chars)[:2], 0
    while not run.match.ended and run.world.tick < run.world.end_tick:
        run.run(until=run.world.tick + 60)
        session += 1
        for agent in arms:
            run.match.record_spend(agent, {"session": session, "model": "m", "llm_calls": 3, "input_tokens": 4000 + 37 * session,
                                           "cached_input_tokens": 0, "output_tokens": 300, "cost_usd": 0.004,
                                           "price": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}, "price_table": "ab" * 32})
    if not run.match.ended:
        run.match.end("done")
    report = score_archive(run.match.export(tmp_path / "famine.wildhold.zip"), trust=True)
    run.match.close()
    log = report["study"]["incidents"]["log"]
    assert report["match"]["days"] >= 5 and len(log) > 1000 and session >= 100
    html = render_html(report)
    assert len(html.encode()) < REPORT_BYTES_MAX, f"{len(html.encode()):,} bytes"
    for section in (*SECTIONS, "incidents"):
        assert f'<section id="{section}">' in html
    assert f"{len(log)} incidents, tabled here by kind and parties" in html
    assert len(re.findall(r"<svg ", html)) >= 14 and "Wealth against cumulative tokens" in html


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_the_report_renders_in_headless_chromium(tmp_path):
    html = tmp_path / "report.html"
    html.write_text(page("delve_seed11"))
    png = tmp_path / "report.png"
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
         "--window-size=1400,4000", html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    assert _png_size(png) == (1400, 4000)
    try:
        from PIL import Image
    except ImportError:
        return
    image = Image.open(png).convert("RGB")
    colours = image.resize((140, 400)).getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 50  # charts and text drawn, not a blank page
