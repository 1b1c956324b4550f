"""Observations built from the pieces kept between calls equal observations built from nothing.

The observation builder keeps view squares, price lists and boards until the world changes under
them; these tests play worlds where characters move, gather, build, drop, post and trade, and compare
every observation with one built after forgetting everything kept.
"""

from __future__ import annotations

import pytest

from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.world.observe import observe
from wildhold.world.world import World

pytestmark = pytest.mark.slow(seconds=6)


def fresh(w: World, agent: str, **kwargs) -> dict:
    """The observation built with nothing kept (and the kept pieces left as they were)."""
    kept, w.caches = w.caches, {}
    try:
        return observe(w, agent, **kwargs)
    finally:
        w.caches = kept


@pytest.mark.parametrize(("scenario", "seed", "agents", "ticks"), [("default", 3, 12, 60), ("famine", 2, 6, 40)])
def test_every_observation_equals_one_built_from_nothing(content, scenario, seed, agents, ticks):
    w = World(content, scenario, seed)
    ids = [w.join(f"p{i}") for i in range(agents)]
    client, policy = LocalClient(w), LegalRandomAgent(content)
    compared = 0
    for _ in range(ticks):
        for a in ids:
            assert observe(w, a) == fresh(w, a), (a, w.tick)
            compared += 1
            if client.idle(a):
                client.decide(a, policy)
                # the world changed under the squares already built this tick: the next ones must see it
                other = ids[(ids.index(a) + 1) % len(ids)]
                assert observe(w, other, memory=False) == fresh(w, other, memory=False), (other, w.tick)
        w.step()
    assert compared == agents * ticks
