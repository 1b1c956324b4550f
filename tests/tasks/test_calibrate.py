"""A task's level and limits are measured: derived from the oracle's effort by the rule in tasks/templates.yaml,
recomputable from the committed measurements, and checked by the graded player on repeats that chose nothing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from wildhold.content import default_content
from wildhold.tasks.attempt import run_attempt
from wildhold.tasks.calibrate import (CALIBRATION_FILE, derive, level_of, limits_of, measure, table, table_markdown,
                                      _rule)
from wildhold.tasks.catalog import TASKS_DIR, default_suite, load_suite
from wildhold.tasks.spec import DIFFICULTIES, Limits
from wildhold.tasks.suite import policy_for

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "docs" / "calibration" / "measurements.jsonl.gz"
MARK = "<!-- the table below is generated: `wildhold tasks calibrate` writes it as calibration.md -->"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with gzip.open(MEASUREMENTS) as f:
        return [json.loads(line) for line in f]


def _row(task: str, repeat: int, turns: int, ticks: int, player: str = "oracle") -> dict:
    return {"task": task, "player": player, "repeat": repeat, "done": True, "turns": turns, "ticks": ticks}


def test_a_categorys_least_demanding_third_is_easy_and_limits_leave_less_room_the_harder_the_level():
    rule = _rule()
    rows = [_row(f"c/t{e}-v1", r, e + (r % 2), 10 * e) for e in range(1, 7) for r in range(rule.repeats)]
    measured = derive(rows, rule, {f"c/t{e}-v1": "c" for e in range(1, 7)})
    levels = [level_of(f"c/t{e}-v1", measured["tasks"][f"c/t{e}-v1"], measured["levels"]["c"]) for e in range(1, 7)]
    assert levels == ["easy", "easy", "medium", "medium", "hard", "hard"]
    effort = {"turns": 10.0, "ticks": 100.0, "most_turns": 11, "most_ticks": 120}
    turns = [limits_of(effort, lv, rule).turns for lv in DIFFICULTIES]
    assert turns[0] > turns[1] > turns[2] >= effort["most_turns"]  # the oracle's worst repeat always fits


def test_the_suites_levels_and_limits_are_those_its_measurements_give(rows):
    """calibration.yaml is what `tasks calibrate` derives from the committed measurements, and every task's limits
    hold the oracle's every measured attempt (its proof at repeats 0-9)."""
    rule = _rule()
    declared = load_suite(calibrated=False)
    measured = derive(rows, rule, {t.id: t.category for t in declared.tasks.values()})
    assert measured == yaml.safe_load((TASKS_DIR / CALIBRATION_FILE).read_text())
    suite = default_suite()
    for r in rows:
        if r["player"] == "oracle":
            limits = suite.get(r["task"]).limits
            assert r["done"] and r["turns"] <= limits.turns and r["ticks"] <= limits.ticks, r


def test_the_calibration_table_in_the_docs_is_recomputed_from_the_measurements(rows):
    result = table(rows, list(default_suite().tasks.values()), _rule())
    page = (ROOT / "docs" / "calibration.md").read_text()
    assert page.split(MARK, 1)[1].strip() == table_markdown(result).strip()
    overall = [r for r in result["rows"] if r["group"] == "all"]
    assert len(overall) == 3 and all(r["ordered"] for r in overall)  # easy > medium > hard at every eps


def test_a_measured_attempt_succeeds_within_limits_exactly_when_an_attempt_played_under_them_does(tmp_path):
    """The player never knows its limits: an attempt measured under wide ones succeeds under narrower ones exactly
    when it took no more turns and minutes, so the table needs no attempt played under each task's limits."""
    content, task = default_content(), default_suite().get("crafting/craft-chair-making-plank-v2")
    player = "oracle-eps:0.5"
    row = measure((task.id, player, 3))
    assert row["done"]
    for turns, succeeds in ((row["turns"], True), (row["turns"] - 1, False)):
        narrow = task.model_copy(update={"limits": Limits(turns=turns, ticks=row["ticks"])})
        result = run_attempt(narrow, policy_for(player, narrow, content), player, 3, tmp_path / str(turns), content)
        assert (result["status"] == "success") is succeeds, (turns, result["status"])


def test_tasks_calibrate_measures_the_tasks_it_is_given_as_the_suites_calibration_has_them(tmp_path):
    from typer.testing import CliRunner

    from wildhold.cli import app

    ids = ["crafting/craft-plank-v1", "exploration/gather-wood-v1"]
    result = CliRunner().invoke(app, ["tasks", "calibrate", "--suite", ",".join(ids), "--out", str(tmp_path), "--workers", "1",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    made = yaml.safe_load((tmp_path / CALIBRATION_FILE).read_text())
    committed = yaml.safe_load((TASKS_DIR / CALIBRATION_FILE).read_text())
    assert {t: made["tasks"][t] for t in ids} == {t: committed["tasks"][t] for t in ids}  # measured again, the same
    assert made["levels"] == committed["levels"]  # some tasks: the suite's cut-offs kept
    assert not (tmp_path / "calibration.md").exists()  # the table is the whole suite's
