"""A task played in a served match (a Host, its faces on loopback): set up and marked once the lobby closes, its
evaluator following the match's events, and its end (the task done, its minutes spent, or the player's own
limit) made the host's. A model arm's attempt (`tasks.scaffolded`) and an outside agent's (`tasks.outside`)
both play a task this way, so they start, follow and end a task alike."""

from __future__ import annotations

from typing import Any, Callable

from wildhold.content import Content
from wildhold.service.host import Host
from wildhold.store.sqlite import StoreError
from wildhold.tasks.attempt import begin_task
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task


class ServedTask:
    """One task in `host`'s match, played by `player` at `repeat`. `limit`, when given, is the player's own end
    (a turn limit: its reason, or None), looked at with the world's."""

    def __init__(self, host: Host, task: Task, content: Content, repeat: int, player: str,
                 limit: Callable[[], str | None] | None = None):
        self.host, self.task, self.content = host, task, content
        host.season_ends = False  # a set-up may start past the season's end: only the task's limits end it
        self.seed, self.repeat, self.player = task.seeds.seed(repeat), repeat, player
        self.limit = limit
        self.tracker: Tracker | None = None
        self.stop_tick = 0

    def begin(self, agent: str) -> dict[str, Any]:
        """Set the task up for `agent` and mark it (the lobby has just closed); its start, which the manifest gets.
        A set-up the world refuses (the task's fault) ends the match at once, before anyone plays."""
        host = self.host
        begun = begin_task(host.match, agent, self.task, self.repeat, self.player)
        start = begun.start
        assert host.match.store is not None
        host.match.store.set_meta({"task_start": start})  # where a resumed attempt picks the task up again
        host.archives.manifest_extra.update(start)
        if "task_error" in start:
            host.stop("task error")
            return start
        self.follow(agent, start["task_start_seq"], start["task_start_tick"]).records(begun.events)
        return start

    def resume(self, agent: str) -> dict[str, Any]:
        """A match past its set-up, taken up again: the task as its start left it, its evaluator fed every event
        stored (the set-up's for what it put on the map, the task's for progress), and the end it may have
        reached while the attempt was down."""
        host = self.host
        store = host.match.store
        assert store is not None
        start = store.meta().get("task_start")
        if start is None:
            raise StoreError(f"{host.archives.data_dir} holds an attempt stopped before its task was set up")
        host.archives.manifest_extra.update(start)
        if "task_error" not in start:
            self.follow(agent, start["task_start_seq"], start["task_start_tick"]).records(list(store.events(0)))
            host.end_if_due()
        return start

    def follow(self, agent: str, start_seq: int, start_tick: int) -> Tracker:
        """The task's evaluator over the events after `start_seq`, and the task's end as the match's."""
        host, match = self.host, self.host.match
        tracker = self.tracker = Tracker(self.task, self.content, self.seed, agent, start_seq, start_tick)
        self.stop_tick = start_tick + self.task.limits.ticks
        match.also_follow(tracker.records)
        host.ends_when = self.over
        return tracker

    def over(self) -> str | None:
        """Why the attempt is over (the task done, its minutes spent, the player's own limit), or None."""
        if self.tracker is not None and self.tracker.done:
            return "task done"
        if self.host.world.tick >= self.stop_tick:
            return "tick limit"
        return self.limit() if self.limit is not None else None
