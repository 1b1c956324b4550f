"""Difficulty as a measured property: how much a task asks of a player, and how much room for mistakes it leaves.

`measure` plays one attempt in memory with limits far wider than any task's, and notes whether the player
succeeded and, if so, the turns and world minutes it took: success under any narrower limits follows from
those two numbers alone, since no player is told its limits. Run over the suite for the oracle (its turns
and minutes are a task's effort) and for the graded player `oracle-eps:E` (the oracle, a random legal action
with probability E), it is what `tasks calibrate` writes and what the calibration table is computed from.
"""

from __future__ import annotations

import json
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any, Callable, Iterable

from wildhold.agents.base import AgentView, Decision, Policy
from wildhold.content import default_content
from wildhold.tasks.attempt import play_in_memory
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.spec import Limits, Task

WIDE_TURNS = 600  # far beyond any task's budget: a player that has not succeeded by then is counted as failing
WIDE_TICKS_FACTOR = 3  # and three times a task's own world minutes


class Counting:
    """A policy's decisions, counted: the turns an attempt took."""

    def __init__(self, policy: Policy):
        self.policy, self.name, self.turns = policy, getattr(policy, "name", "player"), 0

    def memory_since(self, agent: str) -> int | None:
        since = getattr(self.policy, "memory_since", None)
        return since(agent) if since is not None else None

    def decide(self, view: AgentView) -> Decision:
        decision = self.policy.decide(view)
        if decision is not None:
            self.turns += 1
        return decision


def wide(task: Task) -> Task:
    """The task with limits wide enough that only a player that would never succeed runs into them."""
    return task.model_copy(update={"limits": Limits(ticks=task.limits.ticks * WIDE_TICKS_FACTOR, turns=WIDE_TURNS)})


def measure(job: tuple[str, str, int]) -> dict[str, Any]:
    """One attempt of `player` at the task under wide limits, in memory: success, and the turns and world minutes
    it took when it succeeded."""
    from wildhold.tasks.suite import policy_for

    task_id, player, repeat = job
    content, task = default_content(), wide(default_suite().get(job[0]))
    counting = Counting(policy_for(player, task, content))
    tracker = play_in_memory(task, content, counting, repeat)
    done = tracker.done
    return {"task": task_id, "player": player, "repeat": repeat, "done": done,
            "turns": counting.turns if done else None,
            "ticks": tracker.done_tick - tracker.trace[0][0] if done and tracker.done_tick is not None else None}


def run(tasks: Iterable[Task], players: list[str], repeats: Iterable[int], out: Path, workers: int,
        on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every task x player x repeat measured (resumable: rows already in `out` are kept), appended to `out` as
    JSON lines; every row, in a fixed order."""
    rows = {}
    if out.exists():
        for line in out.read_text().splitlines():
            row = json.loads(line)
            rows[(row["task"], row["player"], row["repeat"])] = row
    jobs = [(t.id, p, r) for t in tasks for p in players for r in repeats if (t.id, p, r) not in rows]
    ctx = get_context("forkserver" if "forkserver" in get_all_start_methods() else "spawn")
    with out.open("a") as f, ctx.Pool(workers) as pool:
        for row in pool.imap_unordered(measure, jobs, chunksize=4):
            rows[(row["task"], row["player"], row["repeat"])] = row
            f.write(json.dumps(row, sort_keys=True) + "\n")
            f.flush()
            if on_row:
                on_row(row)
    return [rows[k] for k in sorted(rows)]
