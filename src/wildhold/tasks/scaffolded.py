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
from wildhold.tasks.attempt import SetupFailed, score_archive, set_up
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task


class AttemptRun(Run):
    """`Run` for one attempt: the task's set-up after the lobby, its evaluator followed live, its limits as the end."""

    def __init__(self, exp: Experiment, arm: ArmSpec, task: Task, repeat: int, clock: str, folder: Path, base: Path,
                 content: Content):
        self.task, self.content = task, content
        self.seed = task.seeds.seed(repeat)
        one = exp.model_copy(update={"scenario": task.scenario, "seed": self.seed, "clock": clock, "arms": [arm],
                                     "objective": task.description, "cohort": None})
        super().__init__(one, folder, base)
        self.arm = arm
        self.tracker: Tracker | None = None
        self.agent = ""
        self.stop_tick = 0
        self.host.archives.manifest_extra.update(
            task=task.id, policy=arm.name, repeat=repeat, experiment=exp.name, objective=task.description,
            budget_usd=exp.budget(arm), ceiling_s=exp.ceiling(arm), caps=asdict(exp.caps),
            arm=arm.model_dump(mode="json", exclude_none=True))

    def started(self) -> None:
        host = self.host
        match = host.match
        self.agent = next(iter(match.joins()))
        error = None
        try:
            set_up(match, self.agent, self.task)
        except SetupFailed as exc:
            error = str(exc)
        match.flush()
        w = host.world
        extra: dict[str, Any] = {"task_start_seq": w.events.seq, "task_start_tick": w.tick}
        if error is not None:
            extra["task_error"] = error
        host.archives.manifest_extra.update(extra)
        if error is not None:  # the task's fault: the match ends before the arm plays, nothing is spent
            host.stop("task error")
            return
        tracker = self.tracker = Tracker(self.task, self.content, self.seed, self.agent, w.events.seq, w.tick)
        self.stop_tick = w.tick + self.task.limits.ticks
        follow = match.on_events

        def both(records: list[tuple[int, int, str, bytes, str]]) -> None:
            if follow is not None:
                follow(records)
            tracker.records(records)

        match.on_events = both
        host.ends_when = self.over

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

    The attempt plays in `out/NAME.work/`, which is removed once the archive is in place: an attempt cut
    short leaves no archive, and a rerun plays it again from the start."""
    work = out / f"{name}.work"
    shutil.rmtree(work, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    run = AttemptRun(exp, arm, task, repeat, clock or task.clock, work, base, content)
    try:
        asyncio.run(run.play())
    finally:
        run.host.close()
    archive = run.host.archives.path
    assert archive is not None, "the attempt's match ended without its archive"
    os.replace(run.telemetry.path, out / f"{name}.telemetry.jsonl")
    path = out / f"{name}.wha"
    os.replace(archive, path)
    shutil.rmtree(work, ignore_errors=True)
    return score_archive(path, content, live=run.tracker)
