"""The Gymnasium environment: one character in a match this process holds, driven the way a served agent is.

A step plays one action: an entry of the Discrete action table (`env.actions`) or, for language agents, a text
command (`gather {"x": 12, "y": 7}`). It is submitted as a served agent's would be; the world then runs until the
character is idle again (a refused action, an empty slot or `noop` lets one tick pass). A task env rewards the
task evaluator's progress, terminates on success and truncates at the task's limits (ticks, turns); a scenario
env rewards achievements and truncates at the scenario's end (or `max_steps`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from wildhold.content import Content, default_content
from wildhold.env.actions import NOOP, ActionTable, Context
from wildhold.env.observations import TEXT_CHARSET, Encoder, Seat, image
from wildhold.looks import Picture
from wildhold.env.rewards import Achievements, TaskReward
from wildhold.env.spec import EnvSpec, default_env_spec
from wildhold.service.match import Match
from wildhold.tasks.attempt import AGENT_NAME, SetupFailed, begin
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task
from wildhold.world.errors import Rejected

PLAYER = "player"
SEED_RANGE = 2**31 - 1
ACTION_FORMATS = ("discrete", "text")
TEXT_ACTION_MAX = 4096
SETUP_TRIES = 8  # repeats tried, from the seed's on, for a map the task's set-up can be placed on


@lru_cache(maxsize=1)
def action_table() -> ActionTable:
    return ActionTable(default_content(), default_env_spec())


def parse_text_action(text: str) -> tuple[str, dict[str, Any]] | None:
    """`name` or `name {json object}`; None when it is neither."""
    name, _, rest = text.strip().partition(" ")
    if not name:
        return None
    if not rest.strip():
        return name, {}
    try:
        args = json.loads(rest)
    except ValueError:
        return None
    return (name, args) if isinstance(args, dict) else None


class Driver:
    """One character's turns in a match: submit, then step the match until it is idle (or the episode ends)."""

    def __init__(self, match: Match, agent: str):
        self.match, self.agent = match, agent

    def play(self, action: str | None, args: dict[str, Any], stop: int, over: Callable[[], bool] | None) -> str | None:
        """Submit (unless `action` is None) and run; the refusal code, if the world refused it. `over`, when given,
        says the episode has ended (a task's success)."""
        code = None
        match = self.match
        if action is not None:
            got = match.submit(self.agent, action, args)
            if isinstance(got, Rejected):
                code = got.code
        w = match.world
        c = w.chars[self.agent]
        step = match.step
        while True:
            step()
            if c.op is None or w.tick >= stop or (over is not None and over()):
                return code


class WildholdEnv(gym.Env):
    """A task (`task="farming/plant-wheat-v1"`) or a scenario (`scenario="default"`) for one character.

    The observation is a Dict of Boxes (`symbolic`); `observation=("symbolic", "text")` adds the JSON observation a
    language agent reads, `"image"` the view drawn.

    `reset(seed=s)` plays repeat s of a task (the world seed `tasks run` gives its repeat s; a map its set-up cannot
    be placed on passes to the next repeat) or world seed s of a scenario; `info["world_seed"]` says which.
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 8}

    def __init__(self, task: str | None = None, scenario: str | None = None, *,
                 observation: tuple[str, ...] | list[str] = ("symbolic",), action_format: str = "discrete",
                 action_mask: bool = True, render_mode: str | None = None, max_steps: int | None = None,
                 content: Content | None = None, spec: EnvSpec | None = None):
        if (task is None) == (scenario is None):
            raise ValueError("give a task id or a scenario name, not both")
        if action_format not in ACTION_FORMATS:
            raise ValueError(f"action_format is one of {', '.join(ACTION_FORMATS)}, not {action_format!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode is one of {', '.join(self.metadata['render_modes'])} or None")
        self.content = content or default_content()
        self.env_spec = spec or default_env_spec()
        self.task: Task | None = default_suite().get(task) if task is not None else None
        if self.task is None:
            self.content.scenario(scenario or "")  # an unknown name is refused here, with the names there are
        self.scenario: str = self.task.scenario if self.task is not None else scenario  # type: ignore[assignment]
        self.action_format, self.action_mask, self.render_mode, self.max_steps = action_format, action_mask, render_mode, max_steps
        keys = tuple(observation)
        self.encoder = Encoder(self.content, self.env_spec, self.scenario, keys)
        self._picture = Picture(self.content) if render_mode == "rgb_array" else None
        self.table = action_table()
        self.observation_space = self.encoder.space
        self.action_space = (spaces.Discrete(len(self.table)) if action_format == "discrete"
                             else spaces.Text(TEXT_ACTION_MAX, min_length=1, charset=TEXT_CHARSET))
        self.match: Match | None = None
        self._context: Context | None = None

    # ---- episode ----------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        draw = seed if seed is not None else int(self.np_random.integers(0, SEED_RANGE))
        if self.match is not None:
            self.match.close()
        if self.task is not None:
            world_seed, tracker = self._set_up(draw)
            self.reward: TaskReward | Achievements = TaskReward(tracker)
            self.stop = self.match.world.tick + self.task.limits.ticks
        else:
            world_seed = draw
            self.match = Match.create(self.scenario, world_seed, None, self.content)
            self.agent = self.match.join(PLAYER)
            self.match.flush()
            self.reward = Achievements(self.env_spec.achievements, [self.agent])
            self.stop = self.match.world.end_tick
        self.match.on_events = self.reward.records
        self._task = isinstance(self.reward, TaskReward)
        reward = self.reward
        self._over = (lambda: reward.done) if self._task else None  # type: ignore[union-attr]
        self.world_seed, self.turns, self.steps = world_seed, 0, 0
        self.driver = Driver(self.match, self.agent)
        self.seat = Seat(self.encoder, self.agent)
        self.health = self.match.world.chars[self.agent].health
        return self._observe(None, [])

    def _set_up(self, draw: int) -> tuple[int, Tracker]:
        """A match with the task set up on the world seed of repeat `draw`, or of the next repeats when the set-up
        cannot be placed on that map (as `tasks run` would report an error there); the world seed used and the
        task's tracker."""
        assert self.task is not None
        tried = []
        for k in range(SETUP_TRIES):
            world_seed = self.task.seeds.seed(draw + k)
            if world_seed in tried:
                break
            tried.append(world_seed)
            self.match = Match.create(self.task.scenario, world_seed, None, self.content, clock=self.task.clock)
            self.agent = self.match.join(AGENT_NAME)
            try:
                tracker = begin(self.match, self.agent, self.task, self.content, world_seed)
            except SetupFailed as exc:
                self.match.close()
                why = str(exc)
                continue
            return world_seed, tracker
        self.match = None
        raise RuntimeError(f"{self.task.id} cannot be set up on world seeds {tried}: {why}")

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        if self.match is None:
            raise RuntimeError("call reset before step")
        name, args, code = self._decode(action)
        if name is not None:
            self.turns += 1
        reward, task = self.reward, self._task
        refused = self.driver.play(name, args, self.stop, self._over)
        code = code or refused
        self.steps += 1
        w = self.match.world
        if task:
            gained = reward.take(self.agent)
            terminated = reward.done  # type: ignore[union-attr]
            truncated = not terminated and (w.tick >= self.stop or self.turns >= self.task.limits.turns)  # type: ignore[union-attr]
            got: list[str] = []
        else:
            got = reward.take(self.agent)  # type: ignore[assignment]
            health = w.chars[self.agent].health
            gained = len(got) + self.env_spec.achievements.health_weight * (health - self.health)
            self.health = health
            terminated = False
            truncated = w.tick >= self.stop or (self.max_steps is not None and self.steps >= self.max_steps)
        obs, info = self._observe(code, got)
        return obs, float(gained), terminated, truncated, info

    def _decode(self, action: Any) -> tuple[str | None, dict[str, Any], str | None]:
        """(action, arguments, a code when nothing can be submitted: `empty_slot`, `bad_text`)."""
        if self.action_format == "text":
            parsed = parse_text_action(str(action))
            return (None, {}, "bad_text") if parsed is None else (parsed[0], parsed[1], None)
        index = int(action)
        table = self.table
        if not 0 <= index < len(table.entries):
            raise ValueError(f"action {index} is outside the table's 0..{len(table) - 1}")
        if table.entries[index].action == NOOP:
            return None, {}, None
        got = table.resolve(index, self.context)
        return (None, {}, "empty_slot") if got is None else (got[0], got[1], None)

    def _observe(self, code: str | None, got: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        assert self.match is not None
        w = self.match.world
        seat = self.seat
        raw = seat.observe(w)
        self._context = None
        info: dict[str, Any] = {"tick": w.tick, "world_seed": self.world_seed, "refused": code or "", "achievements": got}
        if self._task:
            info["progress"] = self.reward.tracker.trace[-1][1]  # type: ignore[union-attr]
        if self.action_format == "discrete" and self.action_mask:
            info["action_mask"] = self.table.mask(w, self.agent, self.context)
        return seat.encode(raw, w), info

    def legal_actions(self) -> np.ndarray:
        """The mask for the current state (what `info['action_mask']` holds), whether or not info carries it."""
        assert self.match is not None
        return self.table.mask(self.match.world, self.agent, self.context)

    @property
    def context(self) -> Context:
        """What the table's slots resolve against now, read from the latest observation when first asked."""
        if self._context is None:
            assert self.seat.last is not None
            self._context = self.table.context(self.seat.last, self.seat.whole)
        return self._context

    def render(self) -> Any:
        if self.match is None or self.seat.last is None:
            return None
        if self.render_mode == "rgb_array":
            assert self._picture is not None
            return image(self._picture, self.seat.last)
        if self.render_mode == "ansi":
            return "\n".join(self.seat.last["view"]["rows"]) + "\n"
        return None

    def close(self) -> None:
        if self.match is not None:
            self.match.close()
            self.match = None
