"""Lite-100 proves itself once per CI run: the oracle solves every Lite task except those listed with a
reason in oracle_failures.yaml, a do-nothing agent solves none, and the random agent's rate is what it is
(its attempts must run to the end without a task error)."""

from __future__ import annotations

import pytest

from wildhold.content import default_content
from wildhold.tasks.attempt import play_in_memory, run_attempt
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES
from wildhold.tasks.suite import policy_for


def _run(policy: str, tmp_path) -> dict[str, str]:
    content, suite = default_content(), default_suite()
    return {task.id: run_attempt(task, policy_for(policy, task, content), policy, 0, tmp_path, content)["status"]
            for task in suite.select(["lite"])}


def test_lite_is_a_fixed_list_of_100_covering_every_cell():
    suite = default_suite()
    lite = suite.select(["lite"])
    assert len(lite) == 100 == len({t.id for t in lite})
    cells = {(t.category, t.difficulty) for t in lite}
    assert cells == {(c, d) for c in CATEGORIES for d in DIFFICULTIES}


@pytest.mark.slow(seconds=15)
def test_the_oracle_solves_exactly_lite_less_its_listed_failures(tmp_path):
    status = _run("oracle", tmp_path)
    listed = set(default_suite().oracle_failures)
    assert "error" not in status.values()
    assert {t for t, s in status.items() if s != "success"} == listed & set(status)


@pytest.mark.slow(seconds=15)
def test_idle_solves_no_lite_task(tmp_path):
    status = _run("idle", tmp_path)
    assert set(status.values()) == {"failure"}


@pytest.mark.slow(seconds=15)
def test_random_plays_every_lite_task_to_its_end(tmp_path):
    status = _run("random", tmp_path)
    assert "error" not in status.values()
    assert sum(s == "success" for s in status.values()) < len(status) // 2  # a task random solves often is too easy


# Where the oracle failed (or, for the first, the set-up) at seeds 1-9 before: each it solves now.
ONCE_FAILED = [
    ("farming/harvest-cabbage-v1", 3),  # no soil within six tiles of the spawn: the set-up found no room
    ("farming/plant-strawberry-v1", 5), ("farming/plant-corn-three-v1", 5),  # soil far from the spawn
    ("farming/fertilise-cabbage-made-v2", 5),  # the crop left behind while it gathered
    ("combat/enter-inner_temple-v1", 9),  # the entrance in the last corner it looked into
    ("exploration/find-iron_vein-farther-v2", 3), ("exploration/find-coal_seam-v2", 1),  # none on the map
    ("exploration/visit-two-regions-v1", 9),
    ("economy/buy-cow-from-mara-earned-v2", 3),  # the best ware's nodes gathered out
    ("combat/clear-royal_tomb-lightly-armed-v1", 8), ("combat/defeat-tomb_knight-lightly-armed-v2", 2),
    ("combat/defeat-three-cultist-lightly-armed-v1", 4), ("combat/defeat-two-wraith-v1", 9),  # out of turns
]


@pytest.mark.slow(seconds=30)
def test_the_oracle_solves_lite_at_three_more_seeds_and_every_attempt_it_once_failed():
    content, suite = default_content(), default_suite()
    attempts = [(t.id, r) for r in (3, 5, 9) for t in suite.select(["lite"])] + ONCE_FAILED
    failed = [(task_id, r) for task_id, r in attempts
              if not play_in_memory(task := suite.get(task_id), content, policy_for("oracle", task, content), r).done]
    assert failed == []
