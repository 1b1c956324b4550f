"""Difficulty as a measured property: how much a task asks of a player (the oracle's turns and minutes, its
effort), and how much room for mistakes its limits leave.

`measure` plays one attempt in memory with limits far wider than any task's, and notes whether the player
succeeded and, if so, the turns and world minutes it took: success under any narrower limits follows from
those two numbers alone, since no player is told its limits. Over the suite, the oracle's attempts give each
task's effort, from which its level (the third of its category it falls in) and its limits (its level's, less
room for mistakes the harder the level) follow; the graded player `oracle-eps:E` (the oracle, a random legal
action with probability E) over repeats held out from that gives the calibration table, which shows whether
the levels predict difficulty.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any, Callable, Iterable

from wildhold.agents.base import AgentView, Decision, Policy
from wildhold.content import default_content
from wildhold.tasks.attempt import play_in_memory
from wildhold.tasks.spec import Calibration, Limits, Task

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
    content, task = default_content(), wide(declared_suite().get(task_id))
    counting = Counting(policy_for(player, task, content))
    tracker = play_in_memory(task, content, counting, repeat)
    done = tracker.done
    return {"task": task_id, "player": player, "repeat": repeat, "done": done,
            "turns": counting.turns if done else None,
            "ticks": tracker.done_tick - tracker.trace[0][0] if done and tracker.done_tick is not None else None}


@functools.cache
def declared_suite():
    """The suite as its files declare it, each task under its template's level and limits: how a task is
    measured, whatever was measured before (a task is measured before it has been calibrated)."""
    from wildhold.tasks.catalog import load_suite

    return load_suite(calibrated=False)


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


# ---- from measurements to levels and limits --------------------------------------------------------------

LEVELS = ("easy", "medium", "hard")
CALIBRATION_FILE = "calibration.yaml"


def efforts(rows: Iterable[dict[str, Any]], repeats: range) -> dict[str, dict[str, float]]:
    """Each task's effort: the oracle's median turns and minutes over `repeats` (the attempts it succeeded in), and
    the most of each it needed."""
    turns: dict[str, list[int]] = {}
    ticks: dict[str, list[int]] = {}
    for r in rows:
        if r["player"] == "oracle" and r["repeat"] in repeats and r["done"]:
            turns.setdefault(r["task"], []).append(r["turns"])
            ticks.setdefault(r["task"], []).append(r["ticks"])
    return {t: {"turns": float(statistics.median(turns[t])), "ticks": float(statistics.median(ticks[t])),
                "most_turns": max(turns[t]), "most_ticks": max(ticks[t])} for t in sorted(turns)}


def _key(task_id: str, effort: dict[str, float]) -> tuple[float, float, str]:
    """How much a task asks: the oracle's turns, then its minutes; equal efforts ordered by id."""
    return (effort["turns"], effort["ticks"], task_id)


def level_of(task_id: str, effort: dict[str, float], cuts: dict[str, list[Any]]) -> str:
    """A task's level: easy up to its category's first cut-off (inclusive), medium up to the second, else hard."""
    key = _key(task_id, effort)
    if key <= tuple(cuts["easy"]):
        return "easy"
    return "medium" if key <= tuple(cuts["medium"]) else "hard"


def limits_of(effort: dict[str, float], level: str, rule: Calibration) -> Limits:
    """A task's limits: its level's, from its effort, and never below the most the oracle needed."""
    lv = rule.levels[level]  # type: ignore[index]
    return Limits(turns=max(int(effort["most_turns"]), lv.turns.of(effort["turns"])),
                  ticks=max(int(effort["most_ticks"]), lv.ticks.of(effort["ticks"])))


def derive(rows: list[dict[str, Any]], rule: Calibration, categories: dict[str, str]) -> dict[str, Any]:
    """The calibration file's content: each task's effort (the oracle's, over repeats 0 to `rule.repeats` - 1)
    and each category's cut-offs between levels: its least demanding third easy, its most demanding third hard
    (tasks of equal effort ordered by id, so that each level holds its third)."""
    effort = efforts(rows, range(rule.repeats))
    missing = sorted(set(categories) - set(effort))
    if missing:
        raise ValueError(f"the oracle succeeded in no measured repeat of {len(missing)} tasks ({', '.join(missing[:5])}): "
                         "they cannot be calibrated")
    cuts = {}
    for cat in sorted(set(categories.values())):
        keys = sorted(_key(t, effort[t]) for t, c in categories.items() if c == cat)
        third = math.ceil(len(keys) / 3)
        cuts[cat] = {"easy": list(keys[third - 1]), "medium": list(keys[min(len(keys), 2 * third) - 1])}
    return {"measured": {"repeats": rule.repeats}, "levels": cuts,
            "tasks": {t: effort[t] for t in sorted(categories)}}


def within(row: dict[str, Any], limits: Limits) -> bool:
    """Whether a measured attempt succeeds under `limits`: its player never knew them, so it plays the same until
    then, and it succeeds exactly when it did within both."""
    return bool(row["done"]) and row["turns"] <= limits.turns and row["ticks"] <= limits.ticks


def successes(rows: Iterable[dict[str, Any]], limits: dict[str, Limits], players: Iterable[str],
              repeats: range) -> dict[str, dict[str, list[bool]]]:
    """player -> task -> success of each measured attempt under the task's limits, over `repeats`."""
    wanted = set(players)
    out: dict[str, dict[str, list[bool]]] = {p: {} for p in wanted}
    for r in rows:
        if r["player"] in wanted and r["repeat"] in repeats and r["task"] in limits:
            out[r["player"]].setdefault(r["task"], []).append(within(r, limits[r["task"]]))
    return out


# ---- the calibration table -------------------------------------------------------------------------------

def table(rows: list[dict[str, Any]], tasks: Iterable[Task], rule: Calibration) -> dict[str, Any]:
    """Success of each graded player by level, overall and by category, over the held-out repeats (from
    `rule.held_out_from` on: the levels' numbers were chosen on the ones before), under each task's measured limits:
    per level, the mean over tasks of each task's success rate (%) with its 95% interval; between adjacent levels,
    the difference with Welch's interval."""
    from wildhold.eval.stats import describe, welch

    tasks = list(tasks)
    held_out = range(rule.held_out_from, rule.repeats)
    won = successes(rows, {t.id: t.limits for t in tasks}, rule.players, held_out)
    groups = {"all": tasks, **{c: [t for t in tasks if t.category == c] for c in sorted({t.category for t in tasks})}}
    out: dict[str, Any] = {"repeats": [held_out.start, held_out.stop - 1], "players": list(rule.players), "rows": []}
    for player in rule.players:
        for group, members in groups.items():
            rates = {lv: [100 * sum(won[player][t.id]) / len(won[player][t.id]) for t in members
                          if t.difficulty == lv and won[player].get(t.id)] for lv in LEVELS}
            missing = [t.id for t in members if not won[player].get(t.id)]
            if missing:
                raise ValueError(f"{player} has no held-out attempt of {missing[0]} (and {len(missing) - 1} more)")
            out["rows"].append({
                "player": player, "group": group,
                "levels": {lv: describe(v, bounds=(0, 100)) for lv, v in rates.items()},
                "steps": {f"{a}-{b}": welch(rates[b], rates[a]) for a, b in zip(LEVELS, LEVELS[1:])},
            })
    for row in out["rows"]:
        row["ordered"] = all(s["ci95"] is not None and s["ci95"][0] > 0 for s in row["steps"].values())
    return out


def table_markdown(result: dict[str, Any]) -> str:
    """The calibration table as Markdown: one section per graded player, a row per group (all tasks, then each
    category), each level's success with its interval and each adjacent difference with its own."""
    lo, hi = result["repeats"]
    lines = [f"Success (%) of the graded player at each level, over repeats {lo}-{hi} (held out: the levels' "
             "numbers were chosen on the repeats before them), each task under its measured limits. A level's cell is the mean over "
             "its tasks of each task's success rate, its 95% interval and the number of tasks; a step is the "
             "difference of two adjacent levels with Welch's 95% interval. `ordered`: easy > medium > hard with "
             "both steps' intervals above 0.", ""]
    for player in result["players"]:
        lines += [f"## {player}", "", "| tasks | easy | medium | hard | easy - medium | medium - hard | ordered |",
                  "|---|---|---|---|---|---|---|"]
        for row in (r for r in result["rows"] if r["player"] == player):
            cells = [_cell(row["levels"][lv]) for lv in LEVELS]
            steps = [_step(row["steps"][k]) for k in ("easy-medium", "medium-hard")]
            lines.append(f"| {row['group']} | {' | '.join(cells)} | {' | '.join(steps)} | "
                         f"{'yes' if row['ordered'] else 'no'} |")
        lines.append("")
    return "\n".join(lines)


def _cell(s: dict[str, Any]) -> str:
    if s.get("mean") is None:
        return "-"
    ci = f" [{s['ci95'][0]:.1f}, {s['ci95'][1]:.1f}]" if s.get("ci95") else ""
    return f"{s['mean']:.1f}{ci} (n={s['n']})"


def _step(d: dict[str, Any]) -> str:
    if d.get("diff") is None:
        return "-"
    ci = f" [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}]" if d.get("ci95") else ""
    return f"{d['diff']:+.1f}{ci}"


# ---- the command -----------------------------------------------------------------------------------------

def calibrate(tasks: list[Task], out: Path, workers: int, *, write: bool = False,
              on_row: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Path]:
    """`wildhold tasks calibrate`: measure the tasks' effort (the oracle over the repeats the rule names), derive
    their levels and limits, and write calibration.yaml (with `write`, also into the suite); for the whole suite,
    also the graded players over the held-out repeats after those, and the calibration table (calibration.md)."""
    import yaml

    from wildhold.tasks.catalog import TASKS_DIR

    rule = _rule()
    out.mkdir(parents=True, exist_ok=True)
    ids = {t.id for t in tasks}
    whole = ids == set(declared_suite().tasks)
    measurements = out / "measurements.jsonl"
    rows = run(tasks, ["oracle"], range(rule.repeats), measurements, workers, on_row)
    if whole:  # the graded players over the held-out repeats: the table
        rows = run(tasks, list(rule.players), range(rule.held_out_from, rule.repeats), measurements, workers, on_row)
    rows = [r for r in rows if r["task"] in ids]
    measured = derive(rows, rule, {t.id: t.category for t in tasks})
    if not whole:  # some tasks: theirs join the suite's calibration, its cut-offs kept
        current = yaml.safe_load((TASKS_DIR / CALIBRATION_FILE).read_text())
        measured = {**current, "tasks": {**current["tasks"], **measured["tasks"]}}
    text = HEADER + yaml.safe_dump(measured, sort_keys=True, width=120)
    paths = {"measurements": measurements, "calibration": out / CALIBRATION_FILE}
    paths["calibration"].write_text(text)
    if write:
        (TASKS_DIR / CALIBRATION_FILE).write_text(text)
        paths["installed"] = TASKS_DIR / CALIBRATION_FILE
    if whole:
        from wildhold.tasks.catalog import load_suite

        calibrated = list(load_suite(calibration=measured).tasks.values())
        result = table(rows, calibrated, rule)
        (out / "calibration.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        (out / "calibration.md").write_text(table_markdown(result) + "\n")
        paths["table"] = out / "calibration.md"
    return paths


HEADER = ("# Written by `wildhold tasks calibrate --write`: each task's effort (the oracle's median turns and minutes\n"
          "# over the measured repeats, and the most of each it needed) and each category's cut-offs between levels:\n"
          "# [turns, minutes, id] of the last task of its easy and of its medium third. tasks/templates.yaml's\n"
          "# `calibration` turns them into each task's level and limits. Measured, not edited: run the command again.\n")


def _rule() -> Calibration:
    import yaml

    from wildhold.tasks.catalog import TASKS_DIR
    from wildhold.tasks.spec import TemplateFile

    return TemplateFile.model_validate(yaml.safe_load((TASKS_DIR / "templates.yaml").read_text())).calibration
