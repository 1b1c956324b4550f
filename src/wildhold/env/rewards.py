"""Rewards of the RL faces, both read from the events a match flushes: a task's evaluator (its progress delta, as
`tasks run` scores it) and, for a scenario, achievements (+1 the first time each happens to a character in an
episode) plus a weight per point of health gained or lost."""

from __future__ import annotations

from typing import Any

import orjson

from wildhold.env.spec import AchievementsSpec
from wildhold.tasks.evaluate import Tracker


class TaskReward:
    """The task's evaluator followed live; the reward of a step is the progress it added."""

    def __init__(self, tracker: Tracker):
        self.tracker = tracker
        self.paid = 0.0

    def records(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        self.tracker.records(records)

    def take(self, agent: str) -> float:
        progress = self.tracker.trace[-1][1]
        reward, self.paid = progress - self.paid, progress
        return reward

    @property
    def done(self) -> bool:
        return self.tracker.done


class Achievements:
    """First-time achievements per character; `take` hands over what accrued since the last call."""

    def __init__(self, spec: AchievementsSpec, agents: list[str]):
        self.spec = spec
        self.by_kind = {k.event: k for k in spec.kinds}
        self.unlocked: dict[str, set[str]] = {a: set() for a in agents}
        self.new: dict[str, list[str]] = {a: [] for a in agents}

    def records(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        by_kind, unlocked = self.by_kind, self.unlocked
        for _, _, kind, payload, _ in records:
            spec = by_kind.get(kind)
            if spec is None:
                continue
            data: dict[str, Any] = orjson.loads(payload)["data"]
            who = data.get(spec.who)
            if who in unlocked and data.get(spec.key) is not None:
                label = spec.label.format(key=data[spec.key])
                if label not in unlocked[who]:
                    unlocked[who].add(label)
                    self.new[who].append(label)

    def take(self, agent: str) -> list[str]:
        got, self.new[agent] = self.new[agent], []
        return got
