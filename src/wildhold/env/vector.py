"""A native batched env: N worlds of one task or scenario stepped in one call, their observations written straight
into batched arrays and their masks into one (N, entries) array, without a wrapper per world.

It follows Gymnasium's vector API (`gymnasium.vector.VectorEnv`, next-step autoreset): an env that ended on a step
is reset by the next call, whose action for it is ignored. Infos are batched as Gymnasium batches them, with the
legal-action masks as `infos['action_mask']` of shape (N, entries).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from wildhold.env.gym_env import WildholdEnv

SCALAR_INFO = ("tick", "world_seed", "refused", "progress")


class WildholdVectorEnv(VectorEnv):
    def __init__(self, num_envs: int, task: str | None = None, scenario: str | None = None, **kwargs: Any):
        if num_envs < 1:
            raise ValueError("num_envs is at least 1")
        observation = tuple(kwargs.pop("observation", ("symbolic",)))
        if "text" in observation:
            raise ValueError("the batched env carries arrays only: observation is some of symbolic, image")
        self.envs = [WildholdEnv(task, scenario, observation=observation, **kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": "NextStep"}
        self._entries = len(first.table) if first.action_mask else None
        self._done = np.zeros(num_envs, dtype=bool)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terms = np.zeros(num_envs, dtype=bool)
        self._truncs = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        seeds = ([None if seed is None else seed + i for i in range(self.num_envs)] if not isinstance(seed, list)
                 else seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"give {self.num_envs} seeds, not {len(seeds)}")
        infos: list[dict[str, Any]] = []
        batch, masks = self._fresh()
        for i, (env, s) in enumerate(zip(self.envs, seeds)):
            obs, info = env.reset(seed=s)
            self._write(batch, masks, i, obs, info)
            infos.append(info)
        self._done[:] = False
        return batch, self._infos(infos, masks)

    def step(self, actions: Any):
        infos: list[dict[str, Any]] = []
        batch, masks = self._fresh()
        for i, env in enumerate(self.envs):
            if self._done[i]:
                obs, info = env.reset()
                self._rewards[i], self._terms[i], self._truncs[i] = 0.0, False, False
            else:
                obs, reward, term, trunc, info = env.step(actions[i])
                self._rewards[i], self._terms[i], self._truncs[i] = reward, term, trunc
            self._write(batch, masks, i, obs, info)
            infos.append(info)
        self._done = self._terms | self._truncs
        return batch, self._rewards.copy(), self._terms.copy(), self._truncs.copy(), self._infos(infos, masks)

    def _fresh(self) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """Arrays for one call's observations and masks, handed to the caller and never written again."""
        batch = {k: np.empty((self.num_envs, *s.shape), dtype=s.dtype) for k, s in self.single_observation_space.items()}
        masks = None if self._entries is None else np.empty((self.num_envs, self._entries), dtype=np.int8)
        return batch, masks

    @staticmethod
    def _write(batch: dict[str, np.ndarray], masks: np.ndarray | None, i: int, obs: dict[str, Any],
               info: dict[str, Any]) -> None:
        for k, arr in batch.items():
            arr[i] = obs[k]
        if masks is not None:
            masks[i] = info["action_mask"]

    def _infos(self, infos: list[dict[str, Any]], masks: np.ndarray | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in SCALAR_INFO:
            if key in infos[0]:
                out[key] = np.array([info[key] for info in infos])
                out[f"_{key}"] = np.ones(self.num_envs, dtype=bool)
        out["achievements"] = np.array([tuple(info["achievements"]) for info in infos] + [None], dtype=object)[:-1]
        out["_achievements"] = np.ones(self.num_envs, dtype=bool)
        if masks is not None:
            out["action_mask"] = masks
            out["_action_mask"] = np.ones(self.num_envs, dtype=bool)
        return out

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
