"""Runs attempts of a suite in worker processes (resumable: a finished attempt's archive is kept and
re-read), and writes `results.json`, `results.md` and `results.html`: seed 002's Table 3 per player,
computed from the results alone, so `score_dir` rebuilds every file byte for byte from the archives."""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from wildhold.agents.base import Policy
from wildhold.agents.scripted import make_policy
from wildhold.content import Content, default_content
from wildhold.eval.stats import describe
from wildhold.readable import DAMAGE, damaged
from wildhold.store.archive import ArchiveError
from wildhold.tasks.attempt import attempt_name, run_attempt, score_archive, sweep_scratch
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.graded import GradedOracle, parse_eps
from wildhold.tasks.oracle import Oracle
from wildhold.tasks.outside import AgentCommand
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES, Task

RESULT_FILES = ("results.json", "results.md", "results.html")


class SuiteError(Exception):
    """A run the out folder cannot take (it holds attempts of another player or clock)."""


@dataclass(frozen=True)
class Player:
    """Who attempts the tasks: a scripted `policy` (by name), the model arm `name` of an experiment file, or an
    outside agent run by its own command."""

    name: str
    policy: str | None = None  # scripted: the policy's name (`oracle`, `idle`, `random`, ...)
    experiment: str | None = None  # a model arm: the experiment file it is defined in
    command: AgentCommand | None = None  # an outside agent (tasks.outside)

    @classmethod
    def outside(cls, command: AgentCommand) -> Player:
        return cls(command.player, command=command)

    @property
    def model(self) -> bool:
        return self.experiment is not None


def players_of(experiment: Path) -> list[Player]:
    """Each arm of an experiment file: a model arm through the scaffold, a scripted arm as its policy. What
    would stop a model arm in every attempt (its provider's SDK missing, its key's variable unset, its
    cassette absent) is refused here, before any attempt starts."""
    import os

    from wildhold.agents.scaffold.experiment import SDK, Experiment
    from wildhold.extras import require

    exp = Experiment.load(experiment)
    path = str(Path(experiment).resolve())
    for a in exp.arms:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", a.name) or a.name.startswith("."):
            raise ValueError(f"arm {a.name!r}: a name the runner writes into file names takes letters, digits, "
                             "'_', '-' and '.' (not first), at most 64")
        if a.provider in ("openai", "anthropic", "google", "standin"):
            require(SDK.get(a.provider, a.provider), f"the {a.provider} arm {a.name!r}")
            if not a.model:
                raise ValueError(f"arm {a.name!r}: provider {a.provider!r} needs a model")
            if a.api_key_env and not os.environ.get(a.api_key_env):
                raise ValueError(f"arm {a.name!r}: the environment variable {a.api_key_env} is not set")
    exp.check_files(Path(experiment).resolve().parent)
    return [Player(a.name, policy=a.policy or "producer") if a.provider == "scripted" else Player(a.name, experiment=path)
            for a in exp.arms]


def policy_for(name: str, task: Task, content: Content) -> Policy:
    """`oracle` is told the task's goal, and so is the graded player `oracle-eps:E` (tasks.graded); every other
    policy is a scripted one (`idle`, `random`, ...)."""
    eps = parse_eps(name)
    if eps is not None:
        return GradedOracle(Oracle(content, task.evaluator, task.params), eps, content, task.id)
    return Oracle(content, task.evaluator, task.params) if name == "oracle" else make_policy(name, content)


def archive_name(task: Task, repeat: int, player: Player, several: bool) -> str:
    """An attempt's file name; the player is named in it when a run has several players."""
    if not several:
        return attempt_name(task, repeat)
    head, _, tail = attempt_name(task, repeat).rpartition("__r")  # a task id may hold "__r" too
    return f"{head}__{player.name}__r{tail}"


Job = tuple[str, int, Player, str, bool, "str | None", float]


def _one(job: Job) -> tuple[dict[str, Any], dict[str, float]]:
    """One attempt (or, resuming, its archive re-read): its result and the seconds of its phases."""
    task_id, repeat, player, out, several, clock, tick_seconds = job
    content, task = default_content(), default_suite().get(task_id)
    name = archive_name(task, repeat, player, several)
    archive = Path(out) / f"{name}.wha"
    timings: dict[str, float] = {}
    if archive.exists():
        started = time.perf_counter()
        result = score_archive(archive, content)
        timings["resumed"] = time.perf_counter() - started
        want = clock or task.clock
        if result["policy"] != player.name or result["clock"] != want:
            raise SuiteError(f"{archive} is an attempt by {result['policy']} under the {result['clock']} clock, not by "
                             f"{player.name} under the {want} clock: use another --out, or the same settings to resume")
        return result, timings
    if player.command is not None:
        from wildhold.tasks.outside import run_outside_attempt

        started = time.perf_counter()
        result = run_outside_attempt(task, player.command, repeat, Path(out), content, name=name, clock=clock,
                                     tick_seconds=tick_seconds)
        return result, {"attempt": time.perf_counter() - started}
    if player.model:
        from wildhold.agents.scaffold.experiment import Experiment
        from wildhold.tasks.scaffolded import run_model_attempt

        assert player.experiment is not None
        exp = Experiment.load(Path(player.experiment))
        arm = next(a for a in exp.arms if a.name == player.name)
        started = time.perf_counter()
        result = run_model_attempt(task, exp, arm, repeat, Path(out), content, name=name,
                                   base=Path(player.experiment).parent, clock=clock)
        return result, {"attempt": time.perf_counter() - started}
    assert player.policy is not None
    result = run_attempt(task, policy_for(player.policy, task, content), player.name, repeat, Path(out), content,
                         clock=clock, tick_seconds=tick_seconds, name=name, timings=timings)
    return result, timings


def run_suite(tasks: Iterable[Task], players: str | Sequence[Player], repeats: int, workers: int, out: Path,
              on_result: Callable[[dict[str, Any]], None] | None = None, *, clock: str | None = None,
              tick_seconds: float = 1.0, timings: list[dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """Every task x repeat x player as an attempt; `players` may be a policy's name. `clock` overrides each
    task's own; `tick_seconds` is realtime's wall-clock seconds per world minute for scripted policies and outside
    agents (a model arm's is its experiment's). `timings`, when given, gets each attempt's phases in seconds."""
    if isinstance(players, str):
        players = [Player(players, policy=players)]
    several = len(players) > 1
    out.mkdir(parents=True, exist_ok=True)
    sweep_scratch(out)
    jobs: list[Job] = [(t.id, r, p, str(out), several, clock, tick_seconds)
                       for t in tasks for p in players for r in range(repeats)]
    results: list[dict[str, Any]] = []
    if workers <= 1:
        mapped: Iterable[tuple[dict[str, Any], dict[str, float]]] = map(_one, jobs)
        pool = None
    else:
        pool = _context().Pool(workers)
        mapped = pool.imap_unordered(_one, jobs)
    try:
        for result, spent in mapped:
            results.append(result)
            if timings is not None:
                timings.append(spent)
            if on_result:
                on_result(result)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    results.sort(key=_order)
    write_results(out, results)
    return results


def _context() -> BaseContext:
    """Workers forked from a server process that has imported the runner once (no worker imports it again),
    where the system has one; else started fresh. Never forked from this process, whose threads (a progress
    bar's) a fork would copy mid-step."""
    if "forkserver" not in get_all_start_methods():
        return get_context("spawn")
    ctx = get_context("forkserver")
    ctx.set_forkserver_preload(["wildhold.tasks.suite"])
    return ctx


def _order(r: dict[str, Any]) -> tuple[str, str, int]:
    return (r["policy"], r["task"], r["repeat"])


@dataclass(frozen=True)
class Scored:
    """A folder's attempts scored from their archives: one result per distinct play, and each archive left out
    because it holds the same log (the same chain head) as one counted: (counted, left out)."""

    results: list[dict[str, Any]]
    duplicates: list[tuple[str, str]]


def score_dir(out: Path, *, verify: bool = False) -> Scored:
    """Every attempt's result from the archives in `out` alone, each log counted once; with `verify`, each archive
    is first verified by re-simulation and as an attempt (`service.verify`, `attempt.check_attempt`: one that does
    not verify raises ArchiveError naming it and what failed)."""
    from wildhold.service.verify import verify_archive
    from wildhold.tasks.attempt import check_attempt

    content = default_content()
    kept: dict[str, tuple[Path, dict[str, Any]]] = {}
    duplicates: list[tuple[str, str]] = []
    for path in sorted(out.glob("*.wha")):
        try:
            if verify:
                verify_archive(path, content)
                check_attempt(path, content)
            result = score_archive(path, content)
        except DAMAGE as exc:
            raise ArchiveError(damaged(path, exc), "archive_damaged") from None
        first = kept.setdefault(result["chain_head"], (path, result))
        if first[0] != path:
            duplicates.append((first[0].name, path.name))
    return Scored(sorted((r for _, r in kept.values()), key=_order), duplicates)


# ---- the table ---------------------------------------------------------------------------------


def _mean(values: list[float], digits: int) -> float | None:
    return round(statistics.fmean(values), digits) if values else None


def _tenths(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _cell(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Success % over repeats of the per-repeat success rate: mean, sample std (n-1) and the 95% interval of the
    mean clipped to 0-100 (wildhold.eval.stats; none from one repeat); attempts, errors, mean steps, and for a
    model arm its mean tokens and dollars per attempt."""
    played = [r for r in rows if r["status"] != "error"]
    by_repeat: dict[int, list[int]] = {}
    for r in played:
        by_repeat.setdefault(r["repeat"], []).append(r["status"] == "success")
    rates = describe([100 * sum(v) / len(v) for _, v in sorted(by_repeat.items())], bounds=(0.0, 100.0))
    cell: dict[str, Any] = {
        "attempts": len(rows), "errors": len(rows) - len(played), "repeats": rates["n"],
        "success": _tenths(rates["mean"]), "std": _tenths(rates["std"]),
        "ci95": None if rates["ci95"] is None else [_tenths(v) for v in rates["ci95"]], "method": rates["method"],
        "steps": _mean([r["turns"] for r in played], 1),
    }
    if any("tokens" in r for r in rows):
        cell["tokens"] = _mean([r["tokens"] for r in played], 1)
        cell["dollars"] = _mean([r["dollars"] for r in played], 6)
    return cell


def table(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One player's cells: `category/difficulty`, `total/difficulty` and `total/all`."""
    cells = {}
    for cat in CATEGORIES:
        for diff in DIFFICULTIES:
            rows = [r for r in results if r["category"] == cat and r["difficulty"] == diff]
            if rows:
                cells[f"{cat}/{diff}"] = _cell(rows)
        rows = [r for r in results if r["category"] == cat]
        if rows:
            cells[f"{cat}/all"] = _cell(rows)
    for diff in DIFFICULTIES:
        rows = [r for r in results if r["difficulty"] == diff]
        if rows:
            cells[f"total/{diff}"] = _cell(rows)
    cells["total/all"] = _cell(results) if results else {}
    return cells


def tables(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each player's table, with what its title states: clock, tasks, repeats, and whether it is a model arm."""
    out = {}
    for policy in sorted({r["policy"] for r in results}):
        rows = [r for r in results if r["policy"] == policy]
        out[policy] = {"clock": ", ".join(sorted({r["clock"] for r in rows})), "tasks": len({r["task"] for r in rows}),
                       "repeats": len({r["repeat"] for r in rows}), "model": any("tokens" in r for r in rows),
                       "cells": table(rows)}
    return out


def results_text(results: list[dict[str, Any]], duplicates: Sequence[tuple[str, str]] = ()) -> str:
    doc: dict[str, Any] = {"results": results, "tables": tables(results)}
    if duplicates:
        doc["duplicates_counted_once"] = [list(d) for d in duplicates]
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def write_results(out: Path, results: list[dict[str, Any]], duplicates: Sequence[tuple[str, str]] = ()) -> dict[str, Path]:
    """results.json, results.md and results.html, each a function of the results (and the duplicates left out)."""
    from wildhold.tasks.report import html, markdown

    texts = {"results.json": results_text(results, duplicates), "results.md": markdown(results),
             "results.html": html(results)}
    paths = {}
    for name, text in texts.items():
        paths[name] = out / name
        paths[name].write_text(text, encoding="utf-8")
    return paths


def markdown(results: list[dict[str, Any]]) -> str:
    from wildhold.tasks.report import markdown as render

    return render(results)
