"""The sweep's coordinator: plans the cells, skips those already finished, launches the rest on an executor (a
local process pool or Ray tasks) while the sweep's budget lasts, retries each failure a bounded number of times
with its error recorded, and writes the ledger (sweep.jsonl), results.json and the summary.

Only this process writes the ledger and the summary; each worker writes only its own cell's folder.
"""

from __future__ import annotations

import json
import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable

from wildhold.runner.cells import finished, run_cell
from wildhold.runner.spec import Cell, Sweep, SweepError, cells

EXECUTORS = ("local", "ray")


class _Local:
    """A pool of spawned worker processes and, for the limits, a manager process every worker reaches."""

    def __init__(self, workers: int, limits: dict[str, int], rates: dict[str, float]):
        from wildhold.runner.limits import local_limits

        self.manager, self.limiter = local_limits(limits, rates)
        self.workers = workers
        self.pool = self._pool()

    def _pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("spawn"))

    def submit(self, sweep_path: str, out: str, cell: Cell) -> Future:
        try:
            return self.pool.submit(run_cell, sweep_path, out, cell.as_dict(), self.limiter)
        except BrokenProcessPool:  # a worker died (killed, out of memory): its cells were failed; a new pool goes on
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._pool()
            return self.pool.submit(run_cell, sweep_path, out, cell.as_dict(), self.limiter)

    def wait(self, handles: list[Any]) -> list[Any]:
        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Future) -> dict[str, Any]:
        return handle.result()

    def peaks(self) -> dict[str, int]:
        return self.limiter.peaks()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.manager.shutdown()


class _Ray:
    """The same cells as Ray tasks (one CPU each) on a cluster at `address`, or on a local Ray started here with
    `workers` CPUs, no dashboard, on 127.0.0.1, shut down at the end; the limits live in one actor."""

    def __init__(self, workers: int, limits: dict[str, int], rates: dict[str, float], address: str | None):
        from wildhold.extras import require

        ray = require("ray", "the Ray executor")
        from wildhold.runner.limits import ProviderLimits, RayLimiter

        self.ray, self.started = ray, False
        if not ray.is_initialized():
            env = {"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}} if os.environ.get("PYTHONPATH") else None
            if address:
                ray.init(address=address, runtime_env=env, log_to_driver=False, logging_level=logging.WARNING)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                         runtime_env=env, object_store_memory=80 * 1024 * 1024, logging_level=logging.WARNING)
            self.started = True
        self.actor = ray.remote(num_cpus=0, max_concurrency=256)(ProviderLimits).remote(limits, rates)
        self.limiter = RayLimiter(self.actor)
        self.task = ray.remote(num_cpus=1, max_retries=0)(run_cell)

    def submit(self, sweep_path: str, out: str, cell: Cell) -> Any:
        return self.task.remote(sweep_path, out, cell.as_dict(), self.limiter)

    def wait(self, handles: list[Any]) -> list[Any]:
        done, _ = self.ray.wait(handles, num_returns=1)
        return done

    def result(self, handle: Any) -> dict[str, Any]:
        try:
            return self.ray.get(handle)
        except self.ray.exceptions.RayTaskError as exc:
            raise exc.as_instanceof_cause() from None

    def peaks(self) -> dict[str, int]:
        return self.limiter.peaks()

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


class Ledger:
    """sweep.jsonl: every launch, error, finish and skip, appended and flushed by the coordinator."""

    def __init__(self, path: Path):
        self.path = path

    def emit(self, kind: str, **data: Any) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": kind, "t": round(time.time(), 3), **data}, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]


def run_sweep(sweep_path: Path, out: Path, *, executor: str = "local", workers: int | None = None,
              address: str | None = None, on_cell: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run every unfinished cell of the sweep into `out`; return the outcome (written as results.json and summary)."""
    if executor not in EXECUTORS:
        raise SweepError(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}", "sweep_executor")
    sweep_path = Path(sweep_path).resolve()
    sweep = Sweep.load(sweep_path)
    workers = workers or os.cpu_count() or 1
    planned = cells(sweep)
    runner = (_Local(workers, sweep.limits, sweep.rates) if executor == "local"
              else _Ray(workers, sweep.limits, sweep.rates, address))
    try:
        return _run(sweep, sweep_path, Path(out), planned, runner, executor, workers, on_cell)
    finally:
        runner.close()


def _run(sweep: Sweep, sweep_path: Path, out: Path, planned: list[Cell], runner: Any, executor: str, workers: int,
         on_cell: Callable[[dict[str, Any]], None] | None) -> dict[str, Any]:
    from wildhold.runner.curves import curves
    from wildhold.runner.summary import summarize, write_summary

    out.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(out / "sweep.jsonl")
    results: dict[str, dict[str, Any]] = {}
    todo: list[Cell] = []
    for cell in planned:
        done = finished(out, cell)
        if done is not None:
            results[cell.key] = done
        else:
            todo.append(cell)
    spent = sum(r["cost_usd"] for r in results.values())
    ledger.emit("sweep_start", sweep=sweep.name, executor=executor, workers=workers, cells=len(planned),
                finished_before=len(results), spent_usd=spent, budget_usd=sweep.budget_usd)
    for key in results:
        if on_cell:
            on_cell({"cell": key, "status": "skipped"})
    attempts: dict[str, int] = {}
    errors: dict[str, list[str]] = {}
    unlaunched: list[str] = []
    started = time.monotonic()
    pending: dict[Any, Cell] = {}
    try:
        queue = list(todo)
        while queue or pending:
            while queue and len(pending) < workers:
                if spent >= sweep.budget_usd:
                    unlaunched = [c.key for c in queue]
                    ledger.emit("budget_spent", spent_usd=spent, budget_usd=sweep.budget_usd, unlaunched=unlaunched)
                    queue = []
                    break
                cell = queue.pop(0)
                attempts[cell.key] = attempts.get(cell.key, 0) + 1
                ledger.emit("cell_start", cell=cell.key, attempt=attempts[cell.key])
                pending[runner.submit(str(sweep_path), str(out), cell)] = cell
            if not pending:
                break
            for handle in runner.wait(list(pending)):
                cell = pending.pop(handle)
                try:
                    result = runner.result(handle)
                except Exception as exc:  # a cell's failure is recorded and retried; the sweep goes on
                    message = f"{type(exc).__name__}: {exc}"
                    errors.setdefault(cell.key, []).append(message)
                    retry = attempts[cell.key] <= sweep.retries
                    ledger.emit("cell_error", cell=cell.key, attempt=attempts[cell.key], error=message, retry=retry)
                    if retry:
                        queue.insert(0, cell)
                    elif on_cell:
                        on_cell({"cell": cell.key, "status": "failed", "error": message})
                    continue
                results[cell.key] = result
                spent += result["cost_usd"]
                ledger.emit("cell_done", cell=cell.key, attempt=attempts[cell.key], cost_usd=result["cost_usd"],
                            wall_s=result["wall_s"], chain_heads=result["chain_heads"])
                if on_cell:
                    on_cell(result)
        peaks = runner.peaks()
    finally:
        for cell in pending.values():
            ledger.emit("cell_interrupted", cell=cell.key)
    wall = time.monotonic() - started
    failed = {k: v for k, v in errors.items() if k not in results}
    outcome = {"sweep": sweep.name, "executor": executor, "workers": workers, "cells": len(planned),
               "finished": len(results), "ran_now": len(results) - (len(planned) - len(todo)),
               "skipped_finished": len(planned) - len(todo), "failed": failed, "unlaunched_for_budget": unlaunched,
               "spent_usd": round(spent, 6), "budget_usd": sweep.budget_usd, "wall_s": round(wall, 3),
               "peak_in_flight": peaks, "limits": sweep.limits, "rates": sweep.rates,
               "results": [results[c.key] for c in planned if c.key in results]}
    ledger.emit("sweep_end", finished=len(results), failed=sorted(failed), spent_usd=spent, wall_s=round(wall, 3))
    (out / "results.json").write_text(json.dumps(outcome, indent=1, sort_keys=True) + "\n")
    write_summary(out, summarize(outcome["results"]), curves(out, outcome["results"]), f"Sweep {sweep.name}")
    return outcome
