"""A model arm's attempt at a task: the experiment's arm played through the reference scaffold, exactly as
`wildhold run` plays it (the world served on 127.0.0.1, the arm over MCP, hidden horizon, the experiment's
budget, ceiling and caps), in a match of the task's scenario and seed whose objective is the task's
description. The task is set up once the lobby closes; the match ends when the task is done or a limit is
reached (world minutes; turns, which for a model arm are its model calls). Each session's spend goes into
the attempt's archive, so the result (tokens and dollars included) is rebuilt from the archive alone."""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wildhold.agents.scaffold.experiment import ArmSpec, Experiment, Run
from wildhold.agents.scaffold.session import MCPTools
from wildhold.content import Content
from wildhold.service.host import DB_NAME
from wildhold.store.errors import StoreLocked
from wildhold.store.sqlite import StoreError
from wildhold.tasks.attempt import begin_task, score_archive
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task


class AttemptRun(Run):
    """`Run` for one attempt: the task's set-up after the lobby, its evaluator followed live, its limits as the end."""

    def __init__(self, exp: Experiment, arm: ArmSpec, task: Task, repeat: int, clock: str, folder: Path, base: Path,
                 content: Content):
        self.task, self.content = task, content
        self.seed, self.repeat = task.seeds.seed(repeat), repeat
        one = exp.model_copy(update={"scenario": task.scenario, "seed": self.seed, "clock": clock, "arms": [arm],
                                     "objective": task.description, "cohort": None})
        super().__init__(one, folder, base)
        self.arm = arm
        self.tracker: Tracker | None = None
        self.agent = ""
        self.stop_tick = 0
        self.host.season_ends = False  # a set-up may start past the season's end: only the task's limits end it
        self.host.archives.manifest_extra.update(
            task=task.id, policy=arm.name, repeat=repeat, experiment=exp.name, objective=task.description,
            budget_usd=exp.budget(arm), ceiling_s=exp.ceiling(arm), caps=asdict(exp.caps),
            arm=arm.model_dump(mode="json", exclude_none=True))
        if self.host.state != "lobby":
            try:
                self.resume()
            except StoreError:
                self.host.close()
                raise

    def started(self) -> None:
        host = self.host
        match = host.match
        self.agent = next(iter(match.joins()))
        begun = begin_task(match, self.agent, self.task, self.repeat, self.arm.name)
        start = begun.start
        assert match.store is not None
        match.store.set_meta({"task_start": start})  # where a resumed attempt picks the task up again
        host.archives.manifest_extra.update(start)
        if "task_error" in start:  # the task's fault: the match ends before the arm plays, nothing is spent
            host.stop("task error")
            return
        self.follow(start["task_start_seq"], start["task_start_tick"]).records(begun.events)

    def resume(self) -> None:
        """A match this folder already holds, past its set-up: the task as its start left it, its evaluator fed
        the events stored since, and the end it may have reached while the attempt was down."""
        host = self.host
        store = host.match.store
        assert store is not None
        start = store.meta().get("task_start")
        if start is None:
            raise StoreError(f"{self.out} holds an attempt stopped before its task was set up")
        self.agent = next(iter(host.match.joins()))
        host.archives.manifest_extra.update(start)
        if "task_error" in start:
            return
        # every stored event: the set-up's are read for what it put on the map, the task's for progress
        self.follow(start["task_start_seq"], start["task_start_tick"]).records(list(store.events(0)))
        host.end_if_due()

    def follow(self, start_seq: int, start_tick: int) -> Tracker:
        """The task's evaluator over the events after `start_seq`, and its limits as the match's end."""
        host, match = self.host, self.host.match
        tracker = self.tracker = Tracker(self.task, self.content, self.seed, self.agent, start_seq, start_tick)
        self.stop_tick = start_tick + self.task.limits.ticks
        follow = match.on_events

        def both(records: list[tuple[int, int, str, bytes, str]]) -> None:
            if follow is not None:
                follow(records)
            tracker.records(records)

        match.on_events = both
        host.ends_when = self.over
        return tracker

    def over(self) -> str | None:
        """Why the attempt is over as far as the world goes (the task done, its minutes spent), or None."""
        if self.tracker is not None and self.tracker.done:
            return "task done"
        if self.host.world.tick >= self.stop_tick:
            return "tick limit"
        return None

    def turns_spent(self) -> bool:
        return self.ledger.arm(self.arm.name).llm_calls >= self.task.limits.turns

    def session_stop(self) -> str:
        if self.host.state == "over":
            return "task_over"
        return "turn_limit" if self.turns_spent() else ""

    async def sleep(self, arm: str, world: MCPTools, session: int, minutes: int) -> None:
        """Out of turns: what the character is doing finishes, then the match ends (no sleep is played out)."""
        if self.host.state == "running" and self.turns_spent():
            char = self.host.world.chars[self.agent]
            while self.host.state == "running" and char.op is not None:
                await asyncio.sleep(0.01)
            self.host.stop("turn limit")
            return
        await super().sleep(arm, world, session, minutes)


def run_model_attempt(task: Task, exp: Experiment, arm: ArmSpec, repeat: int, out: Path, content: Content, *,
                      name: str, base: Path, clock: str | None = None) -> dict[str, Any]:
    """Play one attempt of `arm` and write `out/NAME.wha` (and its telemetry beside it); the live result.

    The attempt plays in `out/NAME.work/`, removed once the archive is in place. An attempt cut short after
    its set-up resumes there, as `wildhold run` resumes (its spend so far counted once, a recorded model's
    turns taken up where they stopped); one cut short before, or under other settings, starts again."""
    work = out / f"{name}.work"
    out.mkdir(parents=True, exist_ok=True)
    clock = clock or task.clock
    if not (work / "world" / DB_NAME).exists():
        shutil.rmtree(work, ignore_errors=True)
    try:
        run = AttemptRun(exp, arm, task, repeat, clock, work, base, content)
    except StoreLocked:
        raise  # another process plays this attempt: its folder is not this one's to remove
    except StoreError:
        shutil.rmtree(work, ignore_errors=True)
        run = AttemptRun(exp, arm, task, repeat, clock, work, base, content)
    try:
        asyncio.run(run.play())
        archive = run.host.archives.path or run.host.archives.export()
    finally:
        run.host.close()
    os.replace(run.telemetry.path, out / f"{name}.telemetry.jsonl")
    path = out / f"{name}.wha"
    os.replace(archive, path)
    shutil.rmtree(work, ignore_errors=True)
    return score_archive(path, content, live=run.tracker)
