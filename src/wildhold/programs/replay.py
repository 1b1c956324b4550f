"""Re-simulate recorded program runs: a fresh sandbox, fed the answers each run received, must make the
same calls in the same order and end the same way. The world's own replay needs none of this (a
program's actions are recorded inputs); this checks that the transcript explains the program. The
programs run in the runner process, isolated as `serve` runs them (programs.isolated), never here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

import orjson

from wildhold.content import Content
from wildhold.programs.isolated import RunnerSandbox
from wildhold.programs.sandbox import Settings

# Failures a fresh sandbox reproduces exactly; the others (wall clock, a dead runner, a refused frame,
# an oversized state) came from outside the program, so only the calls before them are compared.
REPRODUCIBLE = frozenset({"runtime_error", "limit"})


@dataclass(frozen=True)
class RunCheck:
    run: int
    agent: str
    name: str
    revision: int
    calls: int
    ok: bool
    problem: str | None = None


def _same(a: Any, b: Any) -> bool:
    return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)


def _check_run(sandbox: RunnerSandbox, run: dict[str, Any], source: str, rows: list[dict[str, Any]]) -> RunCheck:
    def verdict(problem: str | None, calls: int) -> RunCheck:
        return RunCheck(run["run"], run["agent"], run["name"], run["revision"], calls, problem is None, problem)

    if not rows and run["pending"] is None and run["state"] != "finished" and run["state"] != "failed":
        return verdict(None, 0)  # started, never took a turn
    key = f"resim{run['run']}"
    step = sandbox.start(key, source, run["seed"])
    try:
        for i, row in enumerate(rows):
            if row["seq"] != i + 1:
                return verdict(f"the transcript skips from call {i} to {row['seq']}", i)
            if i and row["tick"] != rows[i - 1]["tick"] and step["kind"] == "call":
                # a new turn: the live program was paused and restored here, so the re-simulation is too
                step = sandbox.restore(key, run["seed"])
            if step["kind"] != "call":
                return verdict(f"call {row['seq']}: the program ended ({step['kind']}) where it called {row['call']}", i)
            if not _same(step["call"], row["args"]):
                return verdict(f"call {row['seq']}: the program called {step['call']['fn']} "
                               f"{step['call']['kwargs'] or step['call']['args']}, the transcript has {row['call']} "
                               f"{row['args'].get('kwargs') or row['args'].get('args')}", i)
            step = sandbox.resume(key, row["result"])
        n = len(rows)
        state, error = run["state"], run["error"] or {}
        if state == "failed" and error.get("at") == "snapshot":
            return verdict(_snapshot_failure(sandbox, key, step, error), n)
        if state == "finished" and step["kind"] != "done":
            return verdict(f"the run finished after {n} calls; the re-simulation did not ({step['kind']})", n)
        if state == "failed" and error.get("reason") in REPRODUCIBLE:
            got = step.get("error") or {}
            if step["kind"] != "error" or (got.get("type"), got.get("line")) != (error.get("type"), error.get("line")):
                return verdict(f"the run failed with {error.get('type')} at line {error.get('line')}; the re-simulation "
                               f"gave {step['kind']} {got.get('type')} at line {got.get('line')}", n)
        if state in ("running", "waiting", "stopped") and run["pending"] is not None:
            if step["kind"] != "call" or not _same(step["call"], run["pending"]):
                return verdict(f"the run is paused in {run['pending']['fn']}; the re-simulation is not", n)
        return verdict(None, n)
    finally:
        sandbox.drop(key)


def _snapshot_failure(sandbox: RunnerSandbox, key: str, step: dict[str, Any], error: dict[str, Any]) -> str | None:
    """A run that failed while the runner kept its snapshot (paused in `error["call"]`): the re-simulation must be
    paused in that call and fail to keep its snapshot the same way (the problem, or None when it does)."""
    call = error.get("call") or {}
    if step["kind"] != "call" or not _same(step["call"], call):
        return (f"the run failed keeping its snapshot in {call.get('fn')}; the re-simulation is not paused there "
                f"({step['kind']} {(step.get('call') or {}).get('fn', '')})")
    got = sandbox.snapshot_error(key)
    if got is None:
        return f"the run failed keeping its snapshot with {error.get('type')}; the re-simulation kept it"
    if got.get("type") == error.get("type"):
        return None
    return f"the run failed keeping its snapshot with {error.get('type')}; the re-simulation met {got.get('type')}"


def resimulate(content: Content, sources: Iterable[dict[str, Any]], runs: Iterable[dict[str, Any]],
               calls: Iterable[dict[str, Any]]) -> list[RunCheck]:
    """Check every run against its transcript in a fresh runner; one verdict per run, in run order."""
    text = {(s["agent"], s["name"], s["revision"]): s["source"] for s in sources}
    by_run: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in calls:
        by_run[row["run"]].append(row)
    runs = sorted(runs, key=lambda r: r["run"])
    if not runs:
        return []
    sandbox = RunnerSandbox(Settings.from_spec(content.programs))
    try:
        out = []
        for run in runs:
            source = text.get((run["agent"], run["name"], run["revision"]))
            if source is None:
                out.append(RunCheck(run["run"], run["agent"], run["name"], run["revision"], 0, False,
                                    "the archive holds no source for this revision"))
                continue
            out.append(_check_run(sandbox, run, source, sorted(by_run.get(run["run"], []), key=lambda r: r["seq"])))
        return out
    finally:
        sandbox.close()


def check_archive(archive: Any, content: Content) -> list[RunCheck]:
    """Re-simulate every program run an archive holds (none when it holds no programs)."""
    if not archive.has_programs:
        return []
    return resimulate(content, archive.program_sources(), archive.program_runs(), archive.program_calls())


def check_store(store: Any, content: Content) -> list[RunCheck]:
    """The same check over a live match's store."""
    return resimulate(content, store.program_sources(), store.program_runs(), store.program_calls())
