"""Ratings across matches: shared ranks are draws, the order archives are named in does not matter,
and each configuration's mean fitness carries a 95% interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from wildhold.eval.leaderboard import PoolingRefused, leaderboard
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
# The committed archives were played under earlier content files: scoring them takes trust (verification is
# tested on archives played now, in test_archive_trust.py); their scores are pinned by the goldens.
ALL = [FIXTURES / f"{n}.wildhold.zip" for n in ("tiny_seed3", "famine_seed2", "delve_seed11", "ties_seed5")]


def test_a_shared_rank_is_a_draw():
    board = leaderboard([FIXTURES / "ties_seed5.wildhold.zip"], trust=True)
    rows = {r["config"]: r for r in board["rows"]}
    assert rows["second"]["rating"] == rows["third"]["rating"]
    assert rows["second"]["rank"] == rows["third"]["rank"] == 1
    assert rows["first"]["rating"]["mu"] < rows["second"]["rating"]["mu"]


def test_under_a_stable_tie_rubric_the_earlier_agent_wins_the_tie():
    rows = {r["config"]: r for r in leaderboard([FIXTURES / "ties_seed5.wildhold.zip"], "2.0", trust=True)["rows"]}
    assert rows["second"]["rating"]["mu"] > rows["third"]["rating"]["mu"]


def test_the_board_does_not_depend_on_the_order_of_the_archives():
    assert leaderboard(ALL, trust=True, pool_scenarios=True) == leaderboard(list(reversed(ALL)), trust=True, pool_scenarios=True)


def test_archives_of_several_scenarios_are_pooled_only_when_asked_and_the_board_says_so():
    with pytest.raises(PoolingRefused) as refused:
        leaderboard(ALL, trust=True)
    assert refused.value.code == "leaderboard_pools_scenarios" and "--pool-scenarios" in str(refused.value)
    board = leaderboard(ALL, trust=True, pool_scenarios=True)
    assert board["pooled"]["scenarios"] == sorted({m["scenario"] for m in board["matches"]})
    assert "pooled, as asked" in board["pooled"]["statement"] and board["rubric_version"] in board["pooled"]["statement"]


def test_configurations_pool_their_agents_and_seeds():
    board = leaderboard(ALL, trust=True, pool_scenarios=True)
    rows = {r["config"]: r for r in board["rows"]}
    assert rows["producer"]["matches"] == 3 and rows["producer"]["agents"] == 4  # tiny, famine (two), delve
    assert rows["producer"]["fitness"]["n"] == 3 and rows["producer"]["fitness"]["ci95"] is not None
    assert rows["producer"]["identity"] == {"harness": "direct", "provider": "scripted", "policy": "producer"}
    lo, hi = rows["producer"]["fitness"]["ci95"]
    assert lo <= rows["producer"]["fitness"]["mean"] <= hi
    assert set(rows["producer"]["measures"]) >= {"index", "survival", "composite", "trial", "quests", "spend_usd"}
    assert [r["rank"] for r in board["rows"]] == sorted(r["rank"] for r in board["rows"])
    assert len(board["matches"]) == 4


def test_every_measure_and_the_composite_carry_the_t_interval_over_seeds():
    board = leaderboard(ALL, trust=True, pool_scenarios=True)
    producer = next(r for r in board["rows"] if r["config"] == "producer")
    per_match = [[p["fitness_index"] for p in m["placements"] if p["config"] == "producer"] for m in board["matches"]]
    per_seed = [sum(v) / len(v) for v in per_match if v]  # one match per (scenario, seed) here
    ref = stats.ttest_1samp(per_seed, 0.0).confidence_interval(0.95)
    assert producer["fitness"]["method"] == "t" and producer["fitness"]["ci95"] == pytest.approx([ref.low, ref.high], abs=1e-3)
    assert producer["fitness"]["std"] == pytest.approx(stats.tstd(per_seed), abs=1e-3)
    for name, m in producer["measures"].items():
        assert m["n"] == 3 and m["method"] == "t" and m["ci95"][0] <= m["mean"] <= m["ci95"][1], name
    assert "Student-t" in board["statistic"] and "bootstrap" not in board["pooled"]["statement"]
