"""Evaluators count what the character did: every act of a task of several, in order when it says so, a
villager's day only when it says today, things it came by itself only when it says so, and no time passing."""

from __future__ import annotations

from wildhold.eval.events import ItemMoved, Knockdown, Talked, Tended, Tilled
from wildhold.eval.fold import MatchInfo
from wildhold.tasks.evaluators import EVALUATORS


def _evaluator(content, name: str, params: dict, start_tick: int = 0):
    sc = content.scenario("tiny")
    cls = EVALUATORS[name]
    return cls(MatchInfo(content, "tiny", 0, start_tick, start_tick, sc.width, sc.height), "a1", cls.params_model.model_validate(params))


def _feed(ev, tick: int, kind: str, view) -> None:
    ev.handlers()[kind](tick, view)


WATER_TWO = {"terms": [{"evaluator": "till", "params": {"qty": 2}}, {"evaluator": "plant", "params": {"crop": "wheat", "qty": 2}},
                       {"evaluator": "water", "params": {"crop": "wheat", "qty": 2}}]}


def test_a_task_of_several_acts_is_done_only_when_each_is(content):
    ev = _evaluator(content, "all", WATER_TWO)
    for t in (1, 2):  # what the oracle did for farming/water-wheat-v2: till and plant twice, no watering
        _feed(ev, t, "plot_tilled", Tilled("a1", t, 0))
        _feed(ev, t, "crop_planted", Tended("a1", "wheat"))
    assert not ev.done and round(ev.progress, 3) == 0.667
    _feed(ev, 3, "crop_watered", Tended("a2", "wheat"))  # another character's watering counts for nothing
    _feed(ev, 4, "crop_watered", Tended("a1", "wheat"))
    assert not ev.done
    _feed(ev, 5, "crop_watered", Tended("a1", "wheat"))
    assert ev.done and ev.progress == 1.0


def test_ordered_acts_count_only_after_the_one_before_is_done(content):
    ev = _evaluator(content, "all", {"ordered": True, "terms": [
        {"evaluator": "obtain", "params": {"item": "stone_pickaxe", "via": "craft"}},
        {"evaluator": "obtain", "params": {"item": "stone", "qty": 2, "via": "gather"}}]})
    _feed(ev, 1, "item_gained", ItemMoved("a1", "stone", 2, "gather:loose_stones"))  # before the pickaxe: too early
    _feed(ev, 2, "item_gained", ItemMoved("a1", "stone_pickaxe", 1, "craft:stone_pickaxe"))
    assert ev.progress == 0.5 and not ev.done
    _feed(ev, 3, "item_gained", ItemMoved("a1", "stone", 2, "gather:rock"))
    assert ev.done


def test_today_counts_only_what_happens_before_the_day_the_task_began_ends(content):
    day = content.calendar.ticks_per_day
    ev = _evaluator(content, "befriend", {"npc": "mara", "qty": 40, "today": True}, start_tick=10 * 60)
    _feed(ev, day - 1, "talked", Talked("a1", "mara", 25))
    _feed(ev, day, "talked", Talked("a1", "mara", 25))  # past midnight: tomorrow's talk
    assert not ev.done
    any_day = _evaluator(content, "befriend", {"npc": "mara", "qty": 40}, start_tick=10 * 60)
    for t in (day - 1, day):
        _feed(any_day, t, "talked", Talked("a1", "mara", 25))
    assert any_day.done


def test_own_counts_what_the_character_gathers_or_makes_not_what_it_buys(content):
    ev = _evaluator(content, "obtain", {"item": "berries", "via": "own", "qty": 3})
    _feed(ev, 1, "item_gained", ItemMoved("a1", "berries", 5, "shop:mara"))
    _feed(ev, 2, "item_gained", ItemMoved("a1", "berries", 5, "setup"))
    assert ev.progress == 0.0
    _feed(ev, 3, "item_gained", ItemMoved("a1", "berries", 2, "gather:berry_bush"))
    assert not ev.done
    _feed(ev, 5, "item_gained", ItemMoved("a1", "berries", 1, "craft:berries_from_nowhere"))
    assert ev.done


def test_living_through_earns_nothing_until_it_is_done(content):
    ev = _evaluator(content, "survive", {"ticks": 420})
    for t in range(0, 420, 30):
        ev.tick(t)
        assert ev.progress == 0.0  # before: the idle agent climbed to 0.68 by time passing alone
    ev.tick(420)
    assert ev.done and ev.progress == 1.0
    fallen = _evaluator(content, "survive", {"ticks": 420})
    fallen.tick(0)
    _feed(fallen, 10, "knockdown", Knockdown("a1", [0, 0]))
    fallen.tick(500)
    assert not fallen.done and fallen.progress == 0.0
