"""One cell of a sweep, run in a worker (a pool process or a Ray task): its own folder, archive and run folder,
and `result.json` written last, whole, so a folder with it is a finished cell and one without is started afresh.

A model arm's cell is `wildhold run` of a one-arm experiment (written beside it as experiment.yaml, its cassette
copied); a scripted arm plays a scenario as `wildhold demo` does, for the protocol's ticks; a task is one attempt
of the task suite; a fork point is `wildhold fork` of the parent with the arm in the seat (a model arm's as its
one-arm experiment). Measures, spend included, are read back from the verified archive, and every reader of a
sweep's results (`compare`, `export`, a resumed sweep) holds each cell's result to its archives again
(`verify_cell`): result.json is a note of what the archives say, never a source of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import yaml

from wildhold.agents.scaffold.adapters import Limiter
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.eval.identity import identity_key
from wildhold.runner.spec import Cell, Sweep, cell_experiment, identity

RESULT = "result.json"
DIMENSIONS = ("survival", "economy", "social", "adaptation", "competitiveness")


def cell_dir(out: Path, cell: Cell) -> Path:
    return Path(out) / "cells" / cell.key


def finished(out: Path, cell: Cell) -> dict[str, Any] | None:
    """The cell's result when it finished (in this session or an earlier one) and still follows from its archives
    (`verify_cell`), else None: a cell whose result was edited, or whose archive no longer verifies, runs again."""
    from wildhold.store.archive import ArchiveError

    path = cell_dir(out, cell) / RESULT
    if not path.exists():
        return None
    try:
        result = json.loads(path.read_text())
        verify_cell(result, cell_dir(out, cell))
    except (ValueError, KeyError, TypeError, OSError, ArchiveError):
        return None
    return result


def run_cell(sweep_path: str, out: str, cell: dict[str, Any], limiter: Limiter | None = None) -> dict[str, Any]:
    """Run one cell from scratch (a partial folder from an interrupted try is cleared first) and return its result."""
    sweep = Sweep.load(Path(sweep_path))
    base = Path(sweep_path).resolve().parent
    c = Cell(**cell)
    folder = cell_dir(Path(out), c)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    arm = next(a for a in sweep.arms if a.name == c.arm)
    protocol = next(p for p in sweep.protocols if p.name == c.protocol)
    started = time.monotonic()
    if c.task is not None:
        measures, archives, cost, tokens, character = _task(c, arm.policy or "producer", folder / "run")
    elif protocol.fork is not None:
        measures, archives, cost, tokens, character = _fork(sweep, protocol, c, base, folder, limiter)
    elif arm.provider == "scripted":
        measures, archives, cost, tokens, character = _scripted(c, arm.name, arm.policy or "producer",
                                                                protocol.scenario, protocol.ticks, folder / "run")
    else:
        measures, archives, cost, tokens, character = _model(sweep, c, base, folder, limiter)
    ident = identity(sweep, arm, base)
    result = {"cell": c.key, **c.as_dict(), "scenario": protocol.scenario or _scenario(archives[0]), "status": "done",
              "identity": ident, **({"character": character} if character else {}),
              "config": identity_key(ident), "archives": [str(p.relative_to(folder)) for p in archives],
              "chain_heads": [_head(p) for p in archives], "cost_usd": cost, "tokens": tokens,
              "wall_s": round(time.monotonic() - started, 3), "measures": measures, "worker_pid": os.getpid()}
    tmp = folder / f"{RESULT}.tmp"
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    tmp.replace(folder / RESULT)
    return result


def _scenario(path: Path) -> str:
    from wildhold.store.archive import Archive

    with Archive(path) as a:
        return a.manifest["scenario"]


def _head(path: Path) -> str:
    from wildhold.store.archive import Archive

    with Archive(path) as a:
        return a.manifest["chain_head"]


def _experiment(sweep: Sweep, cell: Cell, base: Path, folder: Path) -> Experiment:
    """The model cell's one-arm experiment, written into its folder as experiment.yaml beside its cassette's copy."""
    exp = cell_experiment(sweep, cell)
    arm = next(a for a in sweep.arms if a.name == cell.arm)
    if arm.cassette:
        (folder / "cassettes").mkdir()
        shutil.copyfile(base / arm.cassette, folder / "cassettes" / Path(arm.cassette).name)
    unset = {"scenario", "seed"} - exp.model_fields_set  # a fork's: it plays its parent's
    (folder / "experiment.yaml").write_text(yaml.safe_dump(exp.model_dump(mode="json", exclude_none=True, exclude=unset),
                                                           sort_keys=False))
    return exp


def _model(sweep: Sweep, cell: Cell, base: Path, folder: Path, limiter: Limiter | None):
    paths = Run(_experiment(sweep, cell, base, folder), folder / "run", folder, limiter).play_through()
    archive = Path(paths["archive"])
    measures = _match_measures(archive, cell.arm)
    return measures, [archive], measures["spend_usd"], measures["tokens"], cell.arm


def _scripted(cell: Cell, name: str, policy: str, scenario: str | None, ticks: int | None, run_dir: Path):
    from wildhold.agents.runner import ScriptedRun
    from wildhold.agents.scripted import make_policy
    from wildhold.content import default_content
    from wildhold.service.match import Match

    content = default_content()
    run_dir.mkdir(parents=True)
    match = Match.create(scenario or "default", cell.seed, run_dir / "match.sqlite", content)
    agent = match.join(name, policy=policy)
    match.flush(snapshot=True)
    run = ScriptedRun(match, {agent: make_policy(policy, content)})
    run.run(until=None if ticks is None else match.world.start_tick + ticks)
    match.end("season over" if match.world.finished else "protocol ticks played")
    archive = match.export(run_dir / "match.wildhold.zip")
    match.close()
    return _match_measures(archive, name), [archive], 0.0, 0, name


def _fork(sweep: Sweep, protocol: Any, cell: Cell, base: Path, folder: Path, limiter: Limiter | None):
    from wildhold.runner.fork import fork
    from wildhold.runner.spec import fork_parents

    point = protocol.fork
    parent = fork_parents(protocol, sweep._base)[cell.seed]
    arm = next(a for a in sweep.arms if a.name == cell.arm)
    if arm.provider == "scripted":
        made = fork(parent, point.at, folder / "run", replace={point.seat: arm.policy or "producer"}, ticks=protocol.ticks)
        return _match_measures(made["archive"], point.seat), [made["archive"]], 0.0, 0, point.seat
    made = fork(parent, point.at, folder / "run", ticks=protocol.ticks, experiment=_experiment(sweep, cell, base, folder),
                base=folder, limiter=limiter)
    measures = _match_measures(made["archive"], point.seat)
    return measures, [made["archive"]], measures["spend_usd"], measures["tokens"], point.seat


def _task(cell: Cell, policy: str, run_dir: Path):
    from wildhold.content import default_content
    from wildhold.tasks.attempt import attempt_name, run_attempt
    from wildhold.tasks.catalog import default_suite
    from wildhold.tasks.suite import policy_for

    content = default_content()
    task = default_suite().get(cell.task)
    result = run_attempt(task, policy_for(policy, task, content), policy, cell.seed, run_dir, content)
    if result["status"] == "error":
        raise RuntimeError(f"task {cell.task}: {result['error']}")
    archive = run_dir / f"{attempt_name(task, cell.seed)}.wha"
    return _task_measures(archive), [archive], 0.0, 0, None


def _match_measures(archive: Path, name: str) -> dict[str, Any]:
    """The measures of the character `name` from its verified archive: fitness index, the five dimensions,
    composite score, trial stages (cumulative rule), quests, final wealth, and its spend (dollars and tokens)
    from the archive's spend records (zero when it had no model session)."""
    from wildhold.eval.metrics import load_match
    from wildhold.eval.report import score_archive
    from wildhold.eval.spend import spend_totals
    from wildhold.eval.summary import summarize

    report = score_archive(archive)
    card = next(c for c in report["agents"] if c["name"] == name)
    agent = card["agent"]
    composite = next((r["score"] for r in report.get("composite", {}).get("rows", []) if r["agent"] == agent), None)
    trial = next((r["native"] for r in report.get("trial", {}).get("rows", []) if r["agent"] == agent), None)
    quests = summarize(load_match(archive))[agent].cells["quests"]
    spent = (spend_totals(report) or {}).get(agent, {"dollars": 0.0, "tokens": 0})
    return {"index": card["fitness_index"], **{d: card["scores"][d] for d in DIMENSIONS}, "composite": composite,
            "trial": trial, "quests": quests, "wealth": card["wealth_cents"] / 100, "spend_usd": spent["dollars"],
            "tokens": spent["tokens"]}


def _task_measures(archive: Path) -> dict[str, Any]:
    """A task cell's measures from its archive: success, progress and its spend."""
    from wildhold.content import default_content
    from wildhold.tasks.attempt import score_archive

    result = score_archive(archive, default_content())
    return {"task_success": None if result["status"] == "error" else float(result["status"] == "success"),
            "task_progress": result.get("progress"), "spend_usd": result.get("dollars", 0.0),
            "tokens": result.get("tokens", 0)}


def measures_of(result: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A finished cell's measures, computed again from its first archive alone (the character its result names)."""
    archive = folder / result["archives"][0]
    return _task_measures(archive) if result.get("task") else _match_measures(archive, result["character"])


class CellUnverified(ValueError):
    """A cell's result.json that does not follow from its archives; one sentence naming the cell and what differs."""

    code = "cell_unverified"


def verify_cell(result: dict[str, Any], folder: Path) -> None:
    """Hold a cell's result to its archives: each lies in the cell's folder, verifies by re-simulation (a task
    attempt as an attempt too), has the chain head the result lists and the cell's seed, and gives the measures
    the result says. Raises ArchiveError or CellUnverified naming the first thing that fails."""
    from wildhold.content import default_content
    from wildhold.service.verify import verify_archive
    from wildhold.store.archive import Archive
    from wildhold.tasks.attempt import check_attempt

    cell = result.get("cell", "?")
    archives, heads = result.get("archives") or [], result.get("chain_heads") or []
    if not archives or len(archives) != len(heads) or "character" not in result and not result.get("task"):
        raise CellUnverified(f"cell {cell}: its result names no archive to check it against (a sweep of an older "
                             "Wildhold: run it again)")
    root = folder.resolve()
    for rel, head in zip(archives, heads):
        path = (folder / rel).resolve()
        if root not in path.parents:
            raise CellUnverified(f"cell {cell}: its archive {rel} is outside the cell's folder")
        verify_archive(path)
        if result.get("task"):
            check_attempt(path, default_content())
        with Archive(path) as a:
            if a.manifest["chain_head"] != head:
                raise CellUnverified(f"cell {cell}: {rel} has chain head {a.manifest['chain_head'][:12]}, its result "
                                     f"lists {str(head)[:12]}")
    got = measures_of(result, folder)
    said = result.get("measures") or {}
    for m in sorted(set(got) | set(said)):
        if got.get(m) != said.get(m):
            raise CellUnverified(f"cell {cell}: its result says {m} {said.get(m)!r}, its archive gives {got.get(m)!r}")
    if (result.get("cost_usd"), result.get("tokens")) != (got["spend_usd"], got["tokens"]):
        raise CellUnverified(f"cell {cell}: its result says ${result.get('cost_usd')} and {result.get('tokens')} "
                             f"tokens, its archive ${got['spend_usd']} and {got['tokens']}")
