"""Many worlds at once: Gymnasium's Sync and Async vector envs over the registered ids, and the native batched env,
which plays exactly what the same envs played one by one would."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import wildhold.env  # noqa: F401  (registers the ids)
from wildhold.env.vector import WildholdVectorEnv

ENV_ID = "Wildhold/exploration.gather-wood-v1"


def _legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


@pytest.mark.parametrize("vectorization_mode", ["sync", "async"])
def test_gymnasium_vector_envs_step_many_worlds(vectorization_mode: str):
    envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode=vectorization_mode,
                        vector_kwargs={"shared_memory": False} if vectorization_mode == "async" else {},
                        observation=("symbolic",))
    try:
        obs, infos = envs.reset(seed=7)
        assert obs["view"].shape == (2, 5, 9, 9) and infos["action_mask"].shape[0] == 2
        assert not np.array_equal(obs["memory"][0], obs["memory"][1]) or infos["world_seed"][0] != infos["world_seed"][1]
        rng = np.random.default_rng(7)
        for _ in range(10):
            obs, rewards, terms, truncs, infos = envs.step(_legal(infos["action_mask"], rng))
            assert rewards.shape == (2,) and obs["inventory"].shape[0] == 2
    finally:
        envs.close()


def test_the_native_batched_env_plays_what_single_envs_play():
    batched = WildholdVectorEnv(3, task="exploration/gather-wood-v1")
    singles = [gym.make(ENV_ID, observation=("symbolic",)) for _ in range(3)]
    obs, infos = batched.reset(seed=11)
    single = [env.reset(seed=11 + i) for i, env in enumerate(singles)]
    rng = np.random.default_rng(11)
    done = np.zeros(3, dtype=bool)
    for _ in range(25):
        for i, (o, _) in enumerate(single):
            assert all(np.array_equal(obs[k][i], o[k]) for k in o)
        actions = _legal(infos["action_mask"], rng)
        obs, rewards, terms, truncs, infos = batched.step(actions)
        for i, env in enumerate(singles):
            if done[i]:
                single[i] = env.reset()
                continue
            o, r, term, trunc, info = env.step(actions[i])
            single[i] = (o, info)
            assert rewards[i] == r and terms[i] == term and truncs[i] == trunc
        done = terms | truncs
    batched.close()


def test_the_native_batched_env_never_writes_arrays_it_handed_out():
    batched = WildholdVectorEnv(2, task="exploration/gather-wood-v1")
    obs, infos = batched.reset(seed=3)
    rng = np.random.default_rng(3)
    handed = [(obs, infos)]
    kept = [({k: v.copy() for k, v in obs.items()}, infos["action_mask"].copy())]
    for _ in range(6):
        obs, _, _, _, infos = batched.step(_legal(infos["action_mask"], rng))
        handed.append((obs, infos))
        kept.append(({k: v.copy() for k, v in obs.items()}, infos["action_mask"].copy()))
    for (obs, infos), (obs_then, mask_then) in zip(handed, kept):
        assert all(np.array_equal(obs[k], obs_then[k]) for k in obs) and np.array_equal(infos["action_mask"], mask_then)
    batched.close()
