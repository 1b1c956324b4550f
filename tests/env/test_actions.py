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
