"""Wealth below zero. Up to 2.4 every dimension that reads wealth floors it at nothing: the Economy scores a loss as
no gain and the Competitiveness debt as nothing held, so in the famine protocol (seed 1, played to the end) the
raider, whose raids sank its reputation and its wealth far below zero, grades above a producer it raided, on the
Survival and Adaptation the raids never cost it. From 2.5 a loss counts against the Economy and debt against the
Competitiveness (each dimension floored at 0), and the raider falls below the producer; 2.4 keeps what it published."""

from __future__ import annotations

import pytest

from eval_support import scripted_archive
from wildhold.eval.metrics import MatchRecord, compute_metrics, load_match
from wildhold.eval.report import build_report


@pytest.fixture(scope="module")
def famine(tmp_path_factory) -> tuple[MatchRecord, object]:
    record = load_match(scripted_archive(tmp_path_factory.mktemp("famine") / "famine.wildhold.zip", "famine", 1))
    return record, compute_metrics(record)


def cards(famine, version: str) -> dict[str, dict]:
    record, metrics = famine
    return {c["name"]: c for c in build_report(record, metrics, version)["agents"]}


@pytest.mark.slow(seconds=20)
def test_under_2_4_a_raider_deep_in_debt_grades_above_the_producer_it_raided(famine):
    before = cards(famine, "2.4")
    raider, producer = before["raider-2"], before["producer-3"]
    assert (raider["wealth"], raider["archetype"], raider["rank"]) == ("-1821.50", "Raider", 6)
    assert (raider["fitness_index"], raider["grade"]) == (51.8, "C") and (producer["fitness_index"], producer["grade"]) == (47.6, "D")
    assert raider["components"]["economy"]["wealth_gain"] == 0.0 and raider["components"]["competitiveness"]["wealth_share"] == 0.0
    assert raider["scores"]["survival"] == 100.0 > producer["scores"]["survival"]


@pytest.mark.slow(seconds=20)
def test_from_2_5_debt_counts_against_it_and_it_falls_below_the_producer(famine):
    before, after = cards(famine, "2.4"), cards(famine, "2.5")
    raider, producer = after["raider-2"], after["producer-3"]
    assert raider["components"]["economy"]["wealth_change"] == -1.0 and raider["components"]["competitiveness"]["wealth_share"] == -1.0
    assert raider["scores"]["economy"] == raider["scores"]["competitiveness"] == 0.0  # a dimension is never below 0
    assert raider["fitness_index"] < producer["fitness_index"] == before["producer-3"]["fitness_index"]
    assert raider["grade"] == "D" and raider["rank"] == 6
    # what the raider lost takes only from the Economy and the Competitiveness: its other dimensions stand
    assert {d: raider["scores"][d] for d in ("survival", "social", "adaptation")} == \
           {d: before["raider-2"]["scores"][d] for d in ("survival", "social", "adaptation")}
