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


# PettingZoo's AEC test warns for any observation that is a Dict of arrays rather than one array (the observation
# is a Dict of Boxes on purpose: what multi-input policies take); any other warning, the agents' names among them,
# fails the test.
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")
@pytest.mark.parametrize("scenario", MULTI_AGENT_SCENARIOS)
def test_aec_api(scenario: str):
    api_test(aec_env(scenario, max_ticks=TICKS, action_mask=False), num_cycles=TICKS + 5)


def test_the_package_gives_pettingzoos_two_factories_and_names_pettingzoo_accepts():
    import warnings

    import wildhold.env

    parallel, aec = wildhold.env.parallel_env("famine", max_ticks=5), wildhold.env.env("famine", max_ticks=5)
    assert isinstance(parallel, WildholdParallelEnv) and isinstance(aec.unwrapped, WildholdParallelEnv)
    parallel.reset(seed=1)
    assert parallel.agents == [f"agent_{i}" for i in range(1, 7)]
    assert [parallel.character(a) for a in parallel.agents] == [f"a{i}" for i in range(1, 7)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(wildhold.env.env("famine", max_ticks=5, action_mask=False), num_cycles=3)
    assert not [w for w in caught if "named" in str(w.message)]
    parallel.close()


def test_agents_are_the_characters_and_act_at_once_each_tick():
    env = WildholdParallelEnv("famine", max_ticks=30)
    obs, infos = env.reset(seed=2)
    assert env.agents == env.possible_agents == [f"agent_{i}" for i in range(1, 7)]
    assert [env.match.world.chars[env.character(a)].name for a in env.agents] == env.agents
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
