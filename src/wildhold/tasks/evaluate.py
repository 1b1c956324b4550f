"""Follows one task's evaluator over an attempt's events, the same way live (as the match flushes them) and
offline (from the archive): events up to the end of the set-up count for nothing (an evaluator may read what
the set-up put on the map), time advances with the events."""

from __future__ import annotations

from typing import Any

import orjson

from wildhold.content import Content
from wildhold.eval.events import VIEWS, values
from wildhold.eval.fold import MatchInfo
from wildhold.tasks.evaluators import EVALUATORS, Evaluator
from wildhold.tasks.spec import Task


class Tracker:
    """The evaluator of `task` for `agent`, fed the events after `start_seq`; `trace` is its progress
    each time it changed, as (tick, progress), and `done_tick` the tick it was first done."""

    def __init__(self, task: Task, content: Content, scenario_seed: int, agent: str, start_seq: int, start_tick: int):
        sc = content.scenario(task.scenario)
        self.match = MatchInfo(content, task.scenario, scenario_seed, start_tick, start_tick, sc.width, sc.height)
        cls = EVALUATORS[task.evaluator]
        self.evaluator: Evaluator = cls(self.match, agent, cls.params_model.model_validate(task.params))
        self.start_seq, self.now = start_seq, start_tick
        self.trace: list[tuple[int, float]] = [(start_tick, 0.0)]
        self.done_tick: int | None = None
        self._routes = {kind: (VIEWS[kind], values(kind), handle) for kind, handle in self.evaluator.handlers().items()}
        self._setup = {kind: (VIEWS[kind], values(kind), handle) for kind, handle in self.evaluator.setup_handlers().items()}

    def feed(self, event: dict[str, Any]) -> None:
        if event["seq"] <= self.start_seq:  # the set-up's: only what it put on the map is read, never progress
            before = self._setup.get(event["kind"])
            if before is not None:
                before[2](event["tick"], tuple.__new__(before[0], before[1](event["data"])))
            return
        self.advance(event["tick"])
        route = self._routes.get(event["kind"])
        if route is not None:
            view, read, handle = route
            handle(event["tick"], tuple.__new__(view, read(event["data"])))
            self._note(event["tick"])

    def records(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        """Live: a batch of events as the match flushes them."""
        for _, _, _, payload, _ in records:
            self.feed(orjson.loads(payload))

    def advance(self, tick: int) -> None:
        if tick > self.now:
            self.now = tick
            self.evaluator.tick(tick)
            self._note(tick)

    def _note(self, tick: int) -> None:
        progress = round(self.evaluator.progress, 6)
        if progress != self.trace[-1][1]:
            self.trace.append((tick, progress))
        if self.done_tick is None and self.evaluator.done:
            self.done_tick = tick

    @property
    def done(self) -> bool:
        return self.done_tick is not None
