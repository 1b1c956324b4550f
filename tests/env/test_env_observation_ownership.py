"""The RL faces hand out observations and infos that are the receiver's own: writing into every array and list of
one agent's observation and info changes no other agent's, no later one, and not the world (twin envs, one of
them scribbled over, play the same actions and must stay equal)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ownership_support import scribble

from wildhold.env.gym_env import WildholdEnv
from wildhold.env.parallel import WildholdParallelEnv
from wildhold.world.serialize import state_hash

pytestmark = pytest.mark.slow(seconds=4)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def test_a_pettingzoo_agent_writing_into_what_it_received_changes_nothing_else():
    clean, dirty = (WildholdParallelEnv("famine", observation=("symbolic", "text"), max_ticks=40) for _ in range(2))
    seen, infos = clean.reset(seed=3)
    got, dirty_infos = dirty.reset(seed=3)
    rng = np.random.default_rng(3)
    try:
        while clean.agents:
            for agent in clean.agents:  # in order: a scribble over one agent's must not reach the next one's
                assert same(got[agent], seen[agent]) and same(dirty_infos[agent], infos[agent]), agent
                scribble(got[agent])
                scribble(dirty_infos[agent])
            actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in clean.agents}
            seen, _, _, _, infos = clean.step(actions)
            got, _, _, _, dirty_infos = dirty.step(actions)
        assert state_hash(dirty.match.world) == state_hash(clean.match.world)
    finally:
        clean.close()
        dirty.close()


def test_a_gymnasium_agent_writing_into_what_it_received_changes_nothing_later():
    clean, dirty = (WildholdEnv(scenario="default", observation=("symbolic", "text"), max_steps=60) for _ in range(2))
    seen, info = clean.reset(seed=5)
    got, dirty_info = dirty.reset(seed=5)
    rng = np.random.default_rng(5)
    try:
        for _ in range(60):
            assert same(got, seen) and same(dirty_info, info)
            scribble(got)
            scribble(dirty_info)
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            seen, _, _, trunc, info = clean.step(action)
            got, _, _, _, dirty_info = dirty.step(action)
            if trunc:
                break
        assert state_hash(dirty.match.world) == state_hash(clean.match.world)
    finally:
        clean.close()
        dirty.close()
