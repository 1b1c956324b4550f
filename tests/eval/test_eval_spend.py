"""The report's spend, from the archive alone: tokens and dollars per arm and progress against them when the
match recorded its sessions, "not recorded" when it recorded none."""

from __future__ import annotations

from pathlib import Path

import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.eval.html import render_html
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import report_markdown, score_archive
from wildhold.eval.spend import read_spend, spend_curves
from wildhold.world.wealth import wealth_cents
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
NOT_RECORDED = "Not recorded: this archive carries no model usage"


def session(n: int, cost: float) -> dict:
    return {"session": n, "model": "replay/test", "llm_calls": n, "input_tokens": 1000 * n, "cached_input_tokens": 10 * n,
            "output_tokens": 100 * n, "cost_usd": cost, "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
            "price_table": "cd" * 32}


@pytest.fixture(scope="module")
def spent(tmp_path_factory) -> tuple[Path, str, list[int], list[int]]:
    """The tiny scripted match with three sessions recorded for its first character: their ticks, and the character's
    wealth the live world showed as each was recorded (what a run's own spend curve reads)."""
    run = ScriptedRun.start("tiny", 3, tmp_path_factory.mktemp("spent") / "m.sqlite")
    agent, ticks, wealth = next(iter(run.world.chars)), [], []
    for n, cost in enumerate((0.01, 0.02, 0.04), start=1):
        run.run(until=run.world.tick + 400)
        run.act()  # the tick's own actions are in when the session is recorded, then the world moves on
        ticks.append(run.world.tick)
        wealth.append(wealth_cents(run.world, agent))
        run.match.record_spend(agent, session(n, cost))
        run.step()
    run.match.end("done")
    return run.match.export(run.match.store.path.with_name("spent.wildhold.zip")), agent, ticks, wealth


def test_an_archive_without_model_usage_says_not_recorded():
    archive = FIXTURES / "tiny_seed3.wildhold.zip"
    assert read_spend(archive) is None
    report = score_archive(archive, trust=True)  # played under older content: scored as it is
    assert report["curves"]["tokens"] is None and report["curves"]["dollars"] is None
    assert NOT_RECORDED in render_html(report)
    assert "Tokens and dollars: not recorded in this archive." in report_markdown(report)


def test_recorded_sessions_give_totals_and_a_point_per_session(spent):
    archive, agent, ticks, wealth = spent
    report = score_archive(archive, cache=archive.parent / "cache")
    tokens, dollars = report["curves"]["tokens"], report["curves"]["dollars"]
    assert set(tokens) == set(dollars) == {agent}  # the other character spent nothing: it is no arm
    t, d = tokens[agent], dollars[agent]
    assert (t["sessions"], t["llm_calls"], t["input_tokens"], t["cached_input_tokens"], t["output_tokens"]) == \
        (3, 6, 6000, 60, 600)
    assert t["tokens"] == 6600 and d["dollars"] == pytest.approx(0.07)
    assert d["price"] == {"input_per_mtok": 3.0, "output_per_mtok": 15.0} and d["price_table"] == "cd" * 32
    assert [p["tick"] for p in t["points"]] == ticks
    assert [p["tokens"] for p in t["points"]] == [1100, 3300, 6600]
    assert [p["dollars"] for p in d["points"]] == pytest.approx([0.01, 0.03, 0.07])
    am = compute_metrics(load_match(archive)).agents[agent]
    for p in d["points"]:
        assert p["quests"] == sum(1 for q in am.quest_ticks if q <= p["tick"])
        assert p["trial_stages"] == sum(1 for s in am.trial_native_ticks.values() if s <= p["tick"])
    assert [p["wealth_cents"] for p in d["points"]] == [p["wealth_cents"] for p in t["points"]] == wealth


def test_probed_wealth_is_the_live_worlds_once_each_ticks_events_are_in(tmp_path):
    """Each tick's probe holds what the world showed once that tick's own events were in (a berry eaten at tick 395
    counts at 395), where the wealth curve's sample at a tick holds the value before them; probing leaves the curve
    as it was."""
    run = ScriptedRun.start("tiny", 3, tmp_path / "m.sqlite")
    live: dict[int, dict[str, int]] = {}
    while run.world.tick < run.world.start_tick + 300:
        run.act()
        live[run.world.tick] = {a: wealth_cents(run.world, a) for a in run.world.chars}
        run.step()
    run.match.end("done")
    record = load_match(run.match.export(tmp_path / "probed.wildhold.zip"))
    plain, probed = compute_metrics(record), compute_metrics(record, probes=live)
    assert {a: am.wealth_curve for a, am in probed.agents.items()} == {a: am.wealth_curve for a, am in plain.agents.items()}
    assert {t: {a: am.wealth_at[t] for a, am in probed.agents.items()} for t in live} == live
    changed = [t for t in live if t - 1 in live and live[t] != live[t - 1]]
    assert changed, "wealth changed during the ticks probed: the probes were put to the test"


def test_the_html_report_shows_the_spend_table_and_progress_against_dollars_and_tokens(spent):
    archive, agent, *_ = spent
    report = score_archive(archive, cache=archive.parent / "cache")
    html = render_html(report)
    assert NOT_RECORDED not in html
    assert 'id="spend"' in html and "$0.0700" in html and "6,600" in html
    for title in ("Quests completed against cumulative dollars", "Trial stages against cumulative tokens",
                  "Wealth against cumulative dollars"):
        assert title in html, title
    name = report["metrics"][agent]["name"]
    assert f"| {name} | 3 | 6 | 6,000 | 60 | 600 | 0.0700 |" in report_markdown(report)


def test_spend_curves_of_nothing_are_null():
    record = load_match(FIXTURES / "tiny_seed3.wildhold.zip")
    assert spend_curves(None, compute_metrics(record)) == (None, None)
    assert spend_curves([], compute_metrics(record)) == (None, None)
