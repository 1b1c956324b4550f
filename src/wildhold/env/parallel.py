"""The PettingZoo faces: a ParallelEnv over a multi-agent scenario (famine, season, frontier), its agents the
characters, one world tick per step; and the AEC form through PettingZoo's own `parallel_to_aec`.

Agents are named as PettingZoo asks (`agent_1`, `agent_2`, ..., in joining order: also the characters' names);
`character(agent)` gives the character's id in the world (`a1`, ...), as the other faces and the events name it.

Each step, every idle character's action (an entry of the same Discrete table as the Gymnasium env) is submitted
in the agents' order, then the world steps one tick; a busy character's action is not submitted (its info says
`busy`). Rewards are the scenario's achievements and health, as the Gymnasium scenario env pays them; every agent
is truncated when the scenario ends (or after `max_ticks`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from wildhold.content import Content, default_content
from wildhold.env.actions import NOOP, Context
from wildhold.env.gym_env import SEED_RANGE, action_table
from wildhold.env.observations import Encoder, Seat, image
from wildhold.looks import Picture
from wildhold.env.rewards import Achievements
from wildhold.env.spec import EnvSpec, default_env_spec
from wildhold.service.match import Match
from wildhold.world.errors import Rejected

MULTI_AGENT_SCENARIOS = ("famine", "season", "frontier")


class WildholdParallelEnv(ParallelEnv):
    metadata = {"name": "wildhold_v1", "render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(self, scenario: str = "famine", *, agents: int | None = None,
                 observation: tuple[str, ...] | list[str] = ("symbolic",), action_mask: bool = True,
                 max_ticks: int | None = None, render_mode: str | None = None, content: Content | None = None,
                 spec: EnvSpec | None = None):
        self.content = content or default_content()
        self.env_spec = spec or default_env_spec()
        sc = self.content.scenario(scenario)
        self.scenario, self.n = scenario, agents if agents is not None else sc.agents
        if self.n < 1:
            raise ValueError("a match needs at least one agent")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError("render_mode is 'rgb_array' or None")
        self.render_mode, self.action_mask, self.max_ticks = render_mode, action_mask, max_ticks
        keys = tuple(observation)
        self.encoder = Encoder(self.content, self.env_spec, scenario, keys)
        self._picture = Picture(self.content) if render_mode == "rgb_array" else None
        self.table = action_table()
        self.possible_agents = [f"agent_{i + 1}" for i in range(self.n)]
        self.agents: list[str] = []
        self._ids: dict[str, str] = {}  # agent -> its character's id in the world
        self._action_space = spaces.Discrete(len(self.table))
        self.match: Match | None = None
        self._np_random: np.random.Generator | None = None
        self._ctx: dict[str, Context] = {}  # agent -> what its entries resolve against, read when first needed

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> spaces.Space:
        return self.encoder.space

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
        world_seed = seed if seed is not None else int(self._np_random.integers(0, SEED_RANGE))
        if self.match is not None:
            self.match.close()
        self.match = Match.create(self.scenario, world_seed, None, self.content)
        self._ids = {name: self.match.join(name) for name in self.possible_agents}
        self.match.flush()
        self.agents = list(self.possible_agents)
        self.achievements = Achievements(self.env_spec.achievements, list(self._ids.values()))
        self.match.on_events = self.achievements.records
        w = self.match.world
        self.stop = w.end_tick if self.max_ticks is None else min(w.end_tick, w.tick + self.max_ticks)
        self.seats = {a: Seat(self.encoder, self._ids[a]) for a in self.agents}
        self.health = {a: w.chars[self._ids[a]].health for a in self.agents}
        self.world_seed = world_seed
        obs, infos = {}, {}
        for a in self.agents:
            obs[a], infos[a] = self._observe(a, "", [])
        return obs, infos

    def character(self, agent: str) -> str:
        """The world's id of the agent's character (`a1`, ...), as the events and the other faces name it."""
        return self._ids[agent]

    def _observe(self, agent: str, code: str, got: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        assert self.match is not None
        w, seat, me = self.match.world, self.seats[agent], self._ids[agent]
        raw = seat.observe(w)
        self._ctx.pop(agent, None)
        info: dict[str, Any] = {"tick": w.tick, "refused": code, "achievements": got, "busy": w.chars[me].op is not None}
        if self.action_mask:
            info["action_mask"] = self.table.mask(w, me, self.context(agent))
        return seat.encode(raw, w), info

    def context(self, agent: str) -> Context:
        """What the agent's table entries resolve against, read from its latest observation when first asked."""
        ctx = self._ctx.get(agent)
        if ctx is None:
            seat = self.seats[agent]
            assert seat.last is not None
            ctx = self._ctx[agent] = self.table.context(seat.last, seat.whole)
        return ctx

    def step(self, actions: dict[str, Any]):
        if self.match is None:
            raise RuntimeError("call reset before step")
        w = self.match.world
        codes: dict[str, str] = {}
        chosen: list[tuple[str, str, dict[str, Any]]] = []
        for agent in self.agents:  # every entry resolves against the world each agent observed, before any submits
            codes[agent] = ""
            if agent not in actions or w.chars[self._ids[agent]].op is not None:
                continue
            index = int(actions[agent])
            if not 0 <= index < len(self.table):
                raise ValueError(f"{agent}'s action {index} is outside the table's 0..{len(self.table) - 1}")
            if self.table.entries[index].action == NOOP:
                continue
            got = self.table.resolve(index, self.context(agent))
            if got is None:
                codes[agent] = "empty_slot"
                continue
            chosen.append((agent, *got))
        for agent, action, args in chosen:
            me = self._ids[agent]
            if w.chars[me].op is None:
                answer = self.match.submit(me, action, args)
                codes[agent] = answer.code if isinstance(answer, Rejected) else ""
        self.match.step()
        over = w.tick >= self.stop
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        weight = self.env_spec.achievements.health_weight
        for agent in self.agents:
            me = self._ids[agent]
            got = self.achievements.take(me)
            health = w.chars[me].health
            rewards[agent] = len(got) + weight * (health - self.health[agent])
            self.health[agent] = health
            obs[agent], infos[agent] = self._observe(agent, codes[agent], got)
            terms[agent], truncs[agent] = False, over
        if over:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def render(self) -> Any:
        if self.render_mode != "rgb_array" or self.match is None or not self.possible_agents:
            return None
        seat = self.seats[self.possible_agents[0]]
        if seat.last is None:
            return None
        assert self._picture is not None
        return image(self._picture, seat.last)

    def state(self) -> np.ndarray:
        """The characters' positions and needs, in agent order (what a centralised critic may read)."""
        assert self.match is not None
        w = self.match.world
        chars = [w.chars[self._ids[a]] for a in self.possible_agents]
        return np.array([[*w.xy(c.pos), c.health, c.energy, c.satiety] for c in chars], dtype=np.int32)

    def close(self) -> None:
        if self.match is not None:
            self.match.close()
            self.match = None


def parallel_env(scenario: str = "famine", **kwargs: Any) -> WildholdParallelEnv:
    """The ParallelEnv (also `wildhold.env.parallel_env`)."""
    return WildholdParallelEnv(scenario, **kwargs)


def aec_env(scenario: str = "famine", **kwargs: Any):
    """The AEC form, through PettingZoo's own wrapper (also `wildhold.env.env`)."""
    return parallel_to_aec(WildholdParallelEnv(scenario, **kwargs))
