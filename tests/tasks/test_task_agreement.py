"""A task's description and its evaluator agree, for every task of the suite: what the text asks for is scored,
what is scored is asked for, and what the text says the set-up gives (or leaves out) it does."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

import wildhold.tasks.catalog as catalog
from wildhold.cli import app
from wildhold.content import default_content
from wildhold.tasks.agreement import disagreements
from wildhold.tasks.attempt import play_in_memory
from wildhold.tasks.catalog import TASKS_DIR, default_suite, load_suite
from wildhold.tasks.spec import Task


def _task(**change) -> Task:
    base = default_suite().get(change.pop("like")).model_dump()
    return Task.model_validate({**base, **change})


def _setup(task_id: str, drop: str) -> list[dict]:
    return [s.model_dump() for s in default_suite().get(task_id).setup if s.command != drop]


def test_every_tasks_description_agrees_with_its_evaluator_and_set_up():
    assert default_suite().disagreements(default_content()) == []


def test_watering_asked_for_but_not_scored_is_found():
    # farming/water-<crop>-v2 as published: "Plant ... in two plots you till, and water both", scored on planting alone
    v2 = _task(like="farming/water-wheat-v3", id="farming/water-wheat-v2", evaluator="plant", params={"crop": "wheat", "qty": 2})
    found = disagreements(v2, default_content())
    assert any("'water'" in p for p in found) and any("'you till'" in p for p in found)


def test_a_term_the_text_does_not_ask_for_is_found():
    more = _task(like="farming/plant-wheat-v1", description="Plant wheat_seed in a plot; you carry a hoe.")
    assert any("asks for 'till'" in p for p in disagreements(more, default_content()))


def test_from_scratch_with_the_starting_items_still_in_the_pack_is_found():
    # without emptying the pack the tiny scenario's 4 starting berries make three of the gathering needless
    kept = _task(like="crafting/cook-berry_jam-from-scratch-v2",
                 setup=_setup("crafting/cook-berry_jam-from-scratch-v2", drop="empty_pack"))
    assert disagreements(kept, default_content()) == [
        "asks for berries the character comes by itself, but the set-up leaves it 4 in its pack"]


def test_from_scratch_scored_on_the_last_act_alone_is_found():
    # crafting/cook-berry_jam-from-scratch-v1: one cook, whatever the berries' source
    v1 = _task(like="crafting/cook-berry_jam-from-scratch-v2", evaluator="obtain",
               params={"item": "berry_jam", "via": "cook"})
    assert any("no term of its evaluator is a gather" in p for p in disagreements(v1, default_content()))


@pytest.mark.parametrize("like,description,found", [
    ("exploration/gather-wood-many-v1", "Gather 5 wood from the land.", "states the numbers [5]"),
    ("exploration/gather-wood-v1", "Gather 2 wood from the land quickly.", "'quickly'"),
    ("exploration/gather-wood-v1", "Gather 2 stone from the land.", "names 'stone'"),
    ("social/talk-mara-evening-v2", "Talk with mara.", "count only today"),
    ("social/talk-mara-v1", "Talk with mara today.", "says 'today'"),
    ("crafting/craft-chair-making-plank-v2", "Craft 2 plank from what you carry and a chair with them, at the stations beside you.",
     "count in order"),
    ("construction/place-bed-v1", "Put a bed on the ground; you carry 2 beds.", "carries 2 bed"),
    ("construction/make-and-place-scarecrow-from-scratch-v2",
     "Make a scarecrow from 3 wood and 2 fiber you gather yourself and put it on the ground.", "states 3 wood"),
    ("crafting/craft-wooden_axe-own-workbench-v2", "Craft a wooden_axe, then put down the workbench you carry.",
     "in another order"),
    ("crafting/cook-berry_stew-v1", "Cook berry_stew at the workbench beside you.", "names 'workbench'"),
])
def test_a_description_that_says_what_the_task_does_not_hold_is_found(like, description, found):
    assert any(found in p for p in disagreements(_task(like=like, description=description), default_content()))


def test_validate_lists_every_disagreement_and_exits_1(tmp_path, monkeypatch):
    root = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR, root)
    templates = root / "templates.yaml"
    templates.write_text(templates.read_text().replace('"Gather 2 {item} from the land."', '"Gather 3 {item} from the land."'))
    monkeypatch.setattr(catalog, "default_suite", lambda: load_suite(root))
    ran = CliRunner().invoke(app, ["tasks", "validate"])
    assert ran.exit_code == 1
    lines = [line for line in ran.output.splitlines() if line.startswith("disagrees: ")]
    assert "disagrees: exploration/gather-wood-v1: states the numbers [3] where its evaluator asks for [2] (ones go unsaid)" in lines
    assert len({line.split(": ")[1] for line in lines}) == sum(  # the template's first level: gather 2
        1 for t in default_suite().tasks.values() if t.source.endswith(":gather_by_hand") and "-many-" not in t.id)
    monkeypatch.undo()
    assert CliRunner().invoke(app, ["tasks", "validate"]).exit_code == 0


class CookOnly:
    """Cooks berry jam every turn, from whatever it carries."""

    name = "cook-only"

    def decide(self, view):
        return "cook", {"recipe": "berry_jam"}


def test_cooking_the_starting_berries_no_longer_solves_a_from_scratch_task():
    content = default_content()
    scratch = default_suite().get("crafting/cook-berry_jam-from-scratch-v2")
    # as published (v1): one cook, from the tiny scenario's 4 starting berries, with the stove beside
    v1 = _task(like=scratch.id, id="crafting/cook-berry_jam-from-scratch-v1", evaluator="obtain",
               params={"item": "berry_jam", "via": "cook"}, setup=_setup(scratch.id, drop="empty_pack"))
    assert play_in_memory(v1, content, CookOnly()).done
    tracker = play_in_memory(scratch, content, CookOnly())
    assert not tracker.done and tracker.trace[-1][1] == 0.0
