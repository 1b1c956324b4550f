"""Wash trading: two characters handing one berry back and forth all morning, played for real through a
Match. Up to 2.2 the exchange count rewards each hand-over, and those versions keep what they published;
from 2.3 exchanges count once per pair of characters per day, so the 128 hand-overs score exactly what
one hand-over and back scores, and a real exchange still counts. Even so the pair-day still earned Social and
reputation, and reputation is wealth: beside the identical pair that never trades, the colluders ranked first.
From 2.5 exchanges that moved no net goods between their two characters earn nothing: the colluders score what
they score without a trade, and a hand-over that stays still counts."""

from __future__ import annotations

import pytest

from eval_support import collusion_archive, wash_field_archive
from wildhold.content import default_content
from wildhold.eval.metrics import MatchRecord, compute_metrics, load_match
from wildhold.eval.report import build_report, report_markdown

HANDINGS = {"none": 0, "gift": 1, "once": 2, "wash": 128}
COLLUDERS, BYSTANDERS = ("ann", "bob"), ("cat", "dan")


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, MatchRecord]:
    folder = tmp_path_factory.mktemp("collusion")
    return {play: load_match(collusion_archive(folder / f"{play}.wildhold.zip", n)) for play, n in HANDINGS.items()}


@pytest.fixture(scope="module")
def field(tmp_path_factory) -> dict[str, MatchRecord]:
    """Four characters in one world: ann and bob wash-trade (or, `quiet`, play the same without a trade), cat and
    dan never trade."""
    folder = tmp_path_factory.mktemp("field")
    return {play: load_match(wash_field_archive(folder / f"{play}.wildhold.zip", n)) for play, n in (("wash", 128), ("quiet", 0))}


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


# ---- 2.5: exchanges that moved nothing earn nothing -------------------------------------------------------------


def headline(card: dict) -> tuple:
    return card["rank"], card["fitness_index"], card["grade"], card["scores"]["social"]


def test_under_2_4_the_colluders_outrank_and_outscore_the_pair_that_never_trades_and_2_4_keeps_it(field):
    cards_ = cards(field["wash"], "2.4")
    assert {n: headline(cards_[n]) for n in COLLUDERS + BYSTANDERS} == {
        "ann": (1, 55.2, "C", 29.3), "bob": (1, 54.5, "C", 29.3), "cat": (3, 40.9, "D", 0.0), "dan": (3, 40.9, "D", 0.0)}
    assert (cards_["ann"]["wealth"], cards_["cat"]["wealth"]) == ("7.00", "5.00")  # a reputation point is 2.00 of wealth


def test_from_2_5_the_colluders_score_what_they_score_without_a_trade(field):
    wash, quiet = cards(field["wash"], "2.5"), cards(field["quiet"], "2.5")
    for name in COLLUDERS + BYSTANDERS:
        assert (wash[name]["rank"], wash[name]["scores"], wash[name]["components"]) == \
               (quiet[name]["rank"], quiet[name]["scores"], quiet[name]["components"]), name
        assert (wash[name]["fitness_index"], wash[name]["archetype"]) == (quiet[name]["fitness_index"], quiet[name]["archetype"])
    for colluder in COLLUDERS:  # beside the pair that never trades: no better on Social, rank or wealth
        assert wash[colluder]["scores"]["social"] == wash["cat"]["scores"]["social"] == 0.0
        assert wash[colluder]["rank"] == wash["cat"]["rank"] == 1
        assert (wash[colluder]["wealth"], wash[colluder]["wealth_scored"]) == ("7.00", wash["cat"]["wealth_scored"])
    assert wash["bob"]["fitness_index"] == wash["cat"]["fitness_index"]  # same spawn luck: no better on fitness either


def test_under_2_5_the_card_and_the_standings_say_what_was_struck(field):
    report = build_report(field["wash"], compute_metrics(field["wash"]), "2.5")
    ann = next(c for c in report["agents"] if c["name"] == "ann")
    assert any(line.startswith("128 exchanges with other characters moved no net goods") and "1 reputation" in line
               for line in ann["notable"])
    assert report["metrics"][ann["agent"]]["measures"]["void_actions"] == {"social": 128}
    assert "ann 7.00 -> 5.00, bob 7.00 -> 5.00." in report_markdown(report)
    assert report["rubric"]["void_exchanges"] == "struck" and "void_exchanges" not in build_report(
        field["wash"], compute_metrics(field["wash"]), "2.4")["rubric"]


def test_from_2_5_a_hand_over_that_stays_still_counts_and_one_handed_back_does_not(played):
    gift, once, none = (cards(played[p], "2.5") for p in ("gift", "once", "none"))
    for name in ("ann", "bob"):
        assert gift[name]["scores"]["social"] > none[name]["scores"]["social"]
        assert 0 < gift[name]["components"]["social"]["exchanges"] < 1
        assert once[name]["scores"] == none[name]["scores"]


def _exchanged(trades: list[tuple[int, str, str, dict, dict]], credits: list[tuple[int, str, str]] = ()) -> MatchRecord:
    """A log of a1, a2 and a3 (spawned at tick 0) and trades alone: (tick, offerer, acceptor, give, want), each
    with the items it moved, and reputation credits (tick, character, trade)."""
    events = [{"tick": 0, "kind": "agent_spawned", "data": {"agent": a, "name": a, "x": 1, "y": 1}} for a in ("a1", "a2", "a3")]
    rep: dict[str, int] = {}
    for n, (tick, a, b, give, want) in enumerate(trades, start=1):
        offer = f"trade{n}"
        for holder, items in ((b, give), (a, want)):
            events += [{"tick": tick, "kind": "item_gained", "data": {"holder": holder, "item": i, "qty": q, "source": f"trade:{offer}"}}
                       for i, q in items.items()]
        events.append({"tick": tick, "kind": "trade_completed", "data": {"agent": a, "to": b, "offer": offer}})
        for when, who, of in credits:
            if of == offer:
                rep[who] = rep.get(who, 0) + 1
                events.append({"tick": when, "kind": "reputation_changed",
                               "data": {"agent": who, "value": rep[who], "delta": 1, "reason": f"trade:{of}"}})
    events = [{**e, "seq": i + 1} for i, e in enumerate(events)]
    manifest = {"scenario": "tiny", "seed": 3, "start_tick": 0, "final_tick": trades[-1][0] + 1, "agents": []}
    return MatchRecord(manifest, events)


def _wash(record: MatchRecord) -> dict[str, dict]:
    from wildhold.eval.fold import FOLDS

    return {a: am.measures for a, am in compute_metrics(record, folds=[FOLDS["wash"]]).agents.items()}


def test_an_exchange_moved_nothing_when_every_unit_it_handed_over_comes_back_first_in_first_out():
    day = default_content().calendar.ticks_per_day
    measures = _wash(_exchanged([
        (10, "a1", "a2", {"berries": 2}, {}),  # a1 -> a2 two berries: one comes back, one stays
        (11, "a2", "a1", {"berries": 1}, {}),  # back: every unit it moved cancels one of the first
        (12, "a1", "a3", {"wood": 5}, {"coin": 10}),  # a sale ...
        (13, "a3", "a1", {"wood": 5}, {"coin": 10}),  # ... bought back at the same price: both moved nothing
        (day + 1, "a2", "a3", {"stone": 1}, {"wood": 1}),  # a swap of two goods moves both
    ]))
    assert {a: m["void_exchanges"] for a, m in measures.items()} == {"a1": 3, "a2": 1, "a3": 2}
    assert {a: m["net_exchange_pair_days"] for a, m in measures.items()} == {"a1": 1, "a2": 2, "a3": 1}
    assert {a: m["net_partners"] for a, m in measures.items()} == {"a1": 1, "a2": 2, "a3": 1}
    assert {a: m["void_actions"] for a, m in measures.items()} == {"a1": {"social": 3}, "a2": {"social": 1}, "a3": {"social": 2}}


def test_a_pairs_day_of_reputation_is_struck_only_when_none_of_its_trades_that_day_moved_anything():
    day = default_content().calendar.ticks_per_day
    record = _exchanged([(10, "a1", "a2", {"berries": 1}, {}), (11, "a2", "a1", {"berries": 1}, {}),  # day 1: a wash
                         (day + 1, "a1", "a2", {"berries": 1}, {}), (day + 2, "a2", "a1", {"berries": 1}, {}),  # day 2: one ...
                         (day + 3, "a1", "a2", {"wood": 1}, {})],  # ... and a real trade after it
                        credits=[(10, "a1", "trade1"), (10, "a2", "trade1"), (day + 1, "a1", "trade3"), (day + 1, "a2", "trade3")])
    assert {a: (m["void_reputation"], m["void_wealth_cents"]) for a, m in _wash(record).items()} == {
        "a1": (1, 200), "a2": (1, 200), "a3": (0, 0)}
