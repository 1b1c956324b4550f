"""The action table's mask over random states: it passes over entries without putting them to the world only where
the world would refuse them anyway, so it always equals the world's check of every entry."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wildhold.env.parallel import WildholdParallelEnv


@settings(max_examples=20, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(scenario=st.sampled_from(["famine", "season", "tiny"]), seed=st.integers(0, 2**16), ticks=st.integers(0, 30),
       legal_share=st.floats(0.0, 1.0))
def test_the_mask_equals_the_worlds_check_of_every_entry(scenario: str, seed: int, ticks: int, legal_share: float):
    env = WildholdParallelEnv(scenario, agents=4, max_ticks=ticks + 2)
    _, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    table = env.table
    for _ in range(ticks):  # some legal actions (characters get busy, carry things), some drawn from the whole table
        _, _, _, _, infos = env.step({a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"])))
                                      if rng.random() < legal_share else int(rng.integers(len(table)))
                                      for a in env.agents})
    world = env.match.world
    for agent in env.agents:
        ctx = env.context(agent)
        resolved = [table.resolve(i, ctx) for i in range(len(table))]
        assert table.resolvable(ctx).tolist() == [got is not None for got in resolved]
        me = env.character(agent)
        brute = [1] + [int(got is not None and world.check(me, *got) is None) for got in resolved[1:]]
        assert infos[agent]["action_mask"].tolist() == brute
    env.close()


def _materials(content) -> list[dict[str, int]]:
    """What each recipe and each structure built in place needs carried."""
    return ([dict(r.inputs) for r in content.recipes.values()]
            + [dict(s.build.materials) for s in content.structures.values() if s.build is not None])


@settings(max_examples=15, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(scenario=st.sampled_from(["default", "famine", "season"]), seed=st.integers(0, 2**16), ticks=st.integers(0, 6),
       short=st.floats(0.0, 0.6))
def test_the_mask_equals_the_worlds_check_with_materials_and_stations_at_hand(scenario: str, seed: int, ticks: int,
                                                                               short: float):
    """Characters given the materials of recipes and buildings (some exactly, some one short) with stations placed
    beside them: the entries an action's `sift` passes over are exactly those the world refuses."""
    _legal_sifted_entries(scenario, seed, ticks, short)


def test_materials_at_hand_make_sifted_entries_legal():
    """The check above is not vacuous: with whole materials and stations at hand, crafting and building entries are
    legal, and the mask keeps them."""
    assert _legal_sifted_entries("default", 0, 0, 0.0) > 0


def _legal_sifted_entries(scenario: str, seed: int, ticks: int, short: float) -> int:
    """Sets the state up, compares every agent's mask with the world's check of every entry, and counts the legal
    entries of actions the table sifts."""
    env = WildholdParallelEnv(scenario, agents=3, max_ticks=ticks + 2)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    match, world, table = env.match, env.match.world, env.table
    wanted = _materials(world.content)
    stations = sorted({r.station for r in world.content.recipes.values() if r.station})
    for agent in env.agents:
        me = env.character(agent)
        for k in rng.choice(len(wanted), size=6, replace=False).tolist():
            for item, qty in wanted[k].items():
                qty -= int(rng.random() < short)
                if qty > 0:
                    match.setup("give_items", {"agent": me, "item": item, "qty": qty})
        x, y = world.xy(world.chars[me].pos)
        for (dx, dy), station in zip(((1, 0), (0, 1), (-1, 0), (0, -1)), rng.permutation(stations).tolist()):
            p = world.pos(x + dx, y + dy)
            if p is not None and world.is_walkable(p) and p not in world.nodes and p not in world.occupants:
                match.setup("place_structure", {"x": x + dx, "y": y + dy, "structure": station})
    infos = {a: env._observe(a, "", [])[1] for a in env.agents}
    for _ in range(ticks):
        _, _, _, _, infos = env.step({a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents})
    legal = 0
    for agent in env.agents:
        ctx, me = env.context(agent), env.character(agent)
        brute = [1] + [int(got is not None and world.check(me, *got) is None)
                       for got in (table.resolve(i, ctx) for i in range(1, len(table)))]
        assert infos[agent]["action_mask"].tolist() == brute
        legal += sum(brute[first:last + 1].count(1) for action, (first, last) in table.ranges.items() if action in table.sifted)
    env.close()
    return legal
