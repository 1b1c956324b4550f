"""The suite's breadth: 1,000+ tasks, 20+ in every cell, few that differ only in a quantity; the content pack
that feeds it stays out of the scripted scenarios; the distance evaluators count from the first step."""

from __future__ import annotations

from collections import Counter

from wildhold.agents.scripted import RandomAgent
from wildhold.content import default_content
from wildhold.eval.events import Moved
from wildhold.eval.fold import MatchInfo
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.evaluators import EVALUATORS
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES
from wildhold.world.worldgen import generate


def test_the_suite_has_a_thousand_tasks_and_twenty_in_every_cell():
    suite = default_suite()
    cells = Counter((t.category, t.difficulty) for t in suite.tasks.values())
    assert len(suite.tasks) >= 1000
    assert min(cells[(c, d)] for c in CATEGORIES for d in DIFFICULTIES) >= 20
    suite.check_breadth()  # at most 30% differ from another only in a quantity


def test_a_random_agent_draws_only_from_content_outside_packs(content):
    agent = RandomAgent(content)
    assert "carrot_soup" in content.recipes and "carrot_soup" not in agent.recipes
    assert "tent" in content.items and "tent" not in agent.items
    assert "wood" in agent.items and "plank" in agent.recipes


def _reach(content, away: int, terrain: str):
    sc = content.scenario("tiny")
    match = MatchInfo(content, "tiny", 0, 0, 0, sc.width, sc.height)
    cls = EVALUATORS["reach"]
    return cls(match, "a1", cls.params_model.model_validate({"terrain": terrain, "away": away}))


def test_reach_counts_a_tile_of_the_terrain_far_enough_from_the_first_step(content):
    g = generate(content, "tiny", 0)
    hills = [(p % g.width, p // g.width) for p in range(g.width * g.height) if g.terrain_names[g.terrain[p]] == "hills"]
    start = (g.spawns[0] % g.width, g.spawns[0] // g.width)
    near = min(hills, key=lambda xy: max(abs(xy[0] - start[0]), abs(xy[1] - start[1])))
    far = max(hills, key=lambda xy: max(abs(xy[0] - start[0]), abs(xy[1] - start[1])))
    gap = max(abs(far[0] - start[0]), abs(far[1] - start[1]))
    ev = _reach(content, gap, "hills")
    ev.moved(1, Moved("a1", list(start)))  # the first step only sets where distances count from
    assert max(abs(near[0] - start[0]), abs(near[1] - start[1])) < gap
    ev.moved(2, Moved("a1", list(near)))  # the terrain, but too close
    assert not ev.done
    ev.moved(3, Moved("a2", list(far)))  # another character's step counts for nothing
    assert not ev.done and ev.progress == 0.0
    ev.moved(4, Moved("a1", list(far)))
    assert ev.done and ev.progress == 1.0


def test_gather_all_counts_each_item_up_to_its_share(content):
    from wildhold.eval.events import ItemMoved

    sc = content.scenario("tiny")
    cls = EVALUATORS["gather_all"]
    ev = cls(MatchInfo(content, "tiny", 0, 0, 0, sc.width, sc.height), "a1",
             cls.params_model.model_validate({"items": {"wood": 2, "stone": 2}}))
    def gained(item, qty, source):
        return ItemMoved("a1", item, qty, source)
    ev.gained(1, gained("wood", 5, "gather:tree"))
    assert ev.progress == 0.5 and not ev.done
    ev.gained(2, gained("stone", 2, "craft:x"))  # made, not gathered
    assert ev.progress == 0.5
    ev.gained(3, gained("stone", 2, "gather:rock"))
    assert ev.done
