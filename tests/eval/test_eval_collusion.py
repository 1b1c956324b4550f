"""Wash trading: two characters handing one berry back and forth all morning, played for real through a
Match. Up to 2.2 the exchange count rewards each hand-over, and those versions keep what they published;
from 2.3 exchanges count once per pair of characters per day, so the 128 hand-overs score exactly what
one hand-over and back scores, and a real exchange still counts."""

from __future__ import annotations

import pytest

from eval_support import collusion_archive
from wildhold.content import default_content
from wildhold.eval.metrics import MatchRecord, compute_metrics, load_match
from wildhold.eval.report import build_report

HANDINGS = {"none": 0, "once": 2, "wash": 128}


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, MatchRecord]:
    folder = tmp_path_factory.mktemp("collusion")
    return {play: load_match(collusion_archive(folder / f"{play}.wildhold.zip", n)) for play, n in HANDINGS.items()}


def cards(record: MatchRecord, version: str) -> dict[str, dict]:
    return {c["name"]: c for c in build_report(record, compute_metrics(record), version)["agents"]}


def test_the_colluders_handed_the_berry_over_as_often_as_they_played_it(played):
    for play, n in HANDINGS.items():
        agents = compute_metrics(played[play]).agents.values()
        assert [(am.name, am.trades, am.exchanges) for am in agents] == [("ann", n, n), ("bob", n, n)]


def test_up_to_2_2_handing_one_berry_back_and_forth_maxes_the_exchanges(played):
    wash, once, none = (cards(played[p], "2.2") for p in ("wash", "once", "none"))
    for name in ("ann", "bob"):
        assert wash[name]["components"]["social"]["exchanges"] == 1.0
        assert wash[name]["scores"]["social"] > once[name]["scores"]["social"] + 25 > none[name]["scores"]["social"] + 25
        assert wash[name]["fitness_index"] > once[name]["fitness_index"] + 5
        assert wash[name]["archetype"] == "Trader"


def test_from_2_3_the_same_partner_the_same_day_counts_once(played):
    wash, once, none = (cards(played[p], "2.3") for p in ("wash", "once", "none"))
    for name in ("ann", "bob"):
        assert wash[name]["scores"] == once[name]["scores"]
        assert wash[name]["components"] == once[name]["components"]
        assert (wash[name]["fitness_index"], wash[name]["archetype"]) == (once[name]["fitness_index"], once[name]["archetype"])
        assert once[name]["scores"]["social"] > none[name]["scores"]["social"]  # one real exchange still counts
        assert 0 < once[name]["components"]["social"]["exchanges"] < 1


def _traded(ticks_and_pairs: list[tuple[int, str, str]]) -> MatchRecord:
    """A log of trades alone between a1, a2 and a3 (spawned at tick 0), for the folds that read them."""
    events = [{"seq": i + 1, "tick": 0, "kind": "agent_spawned", "data": {"agent": a, "name": a, "x": 1, "y": 1}}
              for i, a in enumerate(("a1", "a2", "a3"))]
    for tick, a, b in ticks_and_pairs:
        events.append({"seq": len(events) + 1, "tick": tick, "kind": "trade_completed", "data": {"agent": a, "to": b}})
    manifest = {"scenario": "tiny", "seed": 3, "start_tick": 0, "final_tick": ticks_and_pairs[-1][0] + 1, "agents": []}
    return MatchRecord(manifest, events)


def test_exchanges_are_counted_by_pair_and_calendar_day():
    from wildhold.eval.fold import FOLDS

    day = default_content().calendar.ticks_per_day
    record = _traded([(10, "a1", "a2"), (11, "a2", "a1"), (day - 1, "a1", "a2"),  # a1 and a2, day 1: once
                      (day, "a1", "a2"),  # the next day: again
                      (day + 5, "a1", "a3"), (day + 6, "a3", "a1")])  # a1 and a3 that day
    agents = compute_metrics(record, folds=[FOLDS["exchange_days"]]).agents
    assert {a: am.measures["exchange_pair_days"] for a, am in agents.items()} == {"a1": 3, "a2": 2, "a3": 1}


def test_a_rubric_before_2_3_never_prints_the_pair_days(played):
    report = build_report(played["wash"], compute_metrics(played["wash"]), "2.2")
    assert all("measures" not in m for m in report["metrics"].values())
    report = build_report(played["wash"], compute_metrics(played["wash"]), "2.3")
    assert [m["measures"] for m in report["metrics"].values()] == [{"exchange_pair_days": 1}] * 2
