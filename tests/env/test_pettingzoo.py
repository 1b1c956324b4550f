"""The PettingZoo faces: PettingZoo's own API and seed tests over every multi-agent scenario, in both forms."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from wildhold.env.parallel import MULTI_AGENT_SCENARIOS, WildholdParallelEnv, aec_env, parallel_env

TICKS = 40  # enough steps for the tests' random play; the scenarios run for days


@pytest.mark.parametrize("scenario", MULTI_AGENT_SCENARIOS)
def test_parallel_api(scenario: str):
    parallel_api_test(parallel_env(scenario, max_ticks=TICKS), num_cycles=TICKS + 5)


@pytest.mark.parametrize("scenario", MULTI_AGENT_SCENARIOS)
def test_parallel_seed(scenario: str):
    parallel_seed_test(lambda: parallel_env(scenario, max_ticks=TICKS, action_mask=False))


# PettingZoo's AEC test warns for any observation that is a Dict of arrays rather than one array, and for agent
# names other than <descriptor>_<number>: the agents are named by their characters' ids (a1, a2, ...), as every
# other face names them.
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named:UserWarning")
@pytest.mark.parametrize("scenario", MULTI_AGENT_SCENARIOS)
def test_aec_api(scenario: str):
    api_test(aec_env(scenario, max_ticks=TICKS, action_mask=False), num_cycles=TICKS + 5)


def test_agents_are_the_characters_and_act_at_once_each_tick():
    env = WildholdParallelEnv("famine", max_ticks=30)
    obs, infos = env.reset(seed=2)
    assert env.agents == env.possible_agents == [f"a{i}" for i in range(1, 7)]
    tick = env.match.world.tick
    rng = np.random.default_rng(2)
    accepted = 0
    while env.agents:
        actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        tick += 1
        assert env.match.world.tick == tick
        accepted += sum(1 for a, i in infos.items() if not i["refused"] and actions[a] != 0)
    assert all(truncs.values()) and not any(terms.values()) and accepted > 30
