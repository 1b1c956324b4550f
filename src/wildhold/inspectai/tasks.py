"""Wildhold's Inspect AI tasks, registered as `wildhold/...`: `tasks` (any suite or task ids, the same benchmark
as `wildhold tasks run`) and its `lite` list, and the season, famine and frontier protocols."""

from __future__ import annotations

import time
from pathlib import Path

from inspect_ai import Epochs, Task, task

from wildhold.agents.scaffold.experiment import DEFAULT_OBJECTIVE
from wildhold.inspectai.attempts import attempt, attempt_score, samples
from wildhold.inspectai.matches import match_task


def _suite_task(suite: str, repeats: int, out: str | None, player: str | None, name: str | None, clock: str | None,
                tick_seconds: float, input_per_mtok: float, output_per_mtok: float, tools: str) -> Task:
    folder = out or str(Path("wildhold-tasks") / time.strftime("inspect-%Y%m%dT%H%M%S"))
    return Task(dataset=samples(suite), epochs=Epochs(repeats, "mean"),
                solver=attempt(folder, player, name, clock, tick_seconds, input_per_mtok, output_per_mtok, tools),
                scorer=attempt_score(), metadata={"wildhold_out": folder}, message_limit=None)


@task(name="tasks")
def task_suite(suite: str = "lite", repeats: int = 1, out: str | None = None, player: str | None = None,
               name: str | None = None, clock: str | None = None, tick_seconds: float = 1.0,
               input_per_mtok: float = 0.0, output_per_mtok: float = 0.0, tools: str = "full") -> Task:
    """The task suite as `wildhold tasks run --suite SUITE --repeats N --out OUT` plays it: `suite` is lite, full
    or task ids separated by commas; each task is a sample and each repeat an epoch (`--epochs` gives more). The
    archives go into `out` (default wildhold-tasks/inspect-TIME), for `wildhold tasks score OUT`. `player` (a
    scripted policy) plays instead of the model; `name` is the player's row in the table; `tools` is the MCP
    tool profile the model is handed (full or compact, as `serve --tools`)."""
    return _suite_task(suite, repeats, out, player, name, clock, tick_seconds, input_per_mtok, output_per_mtok, tools)


@task
def lite(repeats: int = 1, out: str | None = None, player: str | None = None, name: str | None = None,
         clock: str | None = None, tick_seconds: float = 1.0, input_per_mtok: float = 0.0,
         output_per_mtok: float = 0.0, tools: str = "full") -> Task:
    """The suite's Lite list (`wildhold/tasks` with suite=lite)."""
    return _suite_task("lite", repeats, out, player, name, clock, tick_seconds, input_per_mtok, output_per_mtok, tools)


@task
def season(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
           turn_deadline_s: float = 5.0) -> Task:
    """Seed 000's protocol: the season scenario (outfit and Shadow King, the trial); one sample per seed."""
    return match_task("season", seeds, objective, out, message_limit, turn_deadline_s)


@task
def famine(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
           turn_deadline_s: float = 5.0) -> Task:
    """Seed 003's protocol: the scarce famine scenario, scored by the report card; one sample per seed."""
    return match_task("famine", seeds, objective, out, message_limit, turn_deadline_s)


@task
def frontier(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
             turn_deadline_s: float = 5.0) -> Task:
    """Seed 001's protocol: the frontier scenario (open-ended quests); one sample per seed."""
    return match_task("frontier", seeds, objective, out, message_limit, turn_deadline_s)
