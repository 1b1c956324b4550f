"""Runs attempts of a suite in worker processes (resumable: a finished attempt's archive is kept and
re-read), writes `results.json`, and prints the table of seed 002's Table 3 from results alone."""

from __future__ import annotations

import json
import statistics
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable

from wildhold.agents.base import Policy
from wildhold.agents.scripted import make_policy
from wildhold.content import Content, default_content
from wildhold.tasks.attempt import attempt_name, run_attempt, score_archive
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.oracle import Oracle
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES, Task


def policy_for(name: str, task: Task, content: Content) -> Policy:
    """`oracle` is told the task's goal; every other policy is a scripted one (`idle`, `random`, ...)."""
    return Oracle(content, task.evaluator, task.params) if name == "oracle" else make_policy(name, content)


def _one(job: tuple[str, int, str, str]) -> dict[str, Any]:
    task_id, repeat, policy, out = job
    content, task = default_content(), default_suite().get(task_id)
    archive = Path(out) / f"{attempt_name(task, repeat)}.wha"
    if archive.exists():
        return score_archive(archive, content)
    return run_attempt(task, policy_for(policy, task, content), policy, repeat, Path(out), content)


def run_suite(tasks: Iterable[Task], policy: str, repeats: int, workers: int, out: Path,
              on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(t.id, r, policy, str(out)) for t in tasks for r in range(repeats)]
    results: list[dict[str, Any]] = []
    if workers <= 1:
        mapped: Iterable[dict[str, Any]] = map(_one, jobs)
        pool = None
    else:
        pool = get_context("spawn").Pool(workers)
        mapped = pool.imap_unordered(_one, jobs)
    try:
        for result in mapped:
            results.append(result)
            if on_result:
                on_result(result)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    results.sort(key=lambda r: (r["task"], r["repeat"]))
    write_results(out, results)
    return results


def score_dir(out: Path) -> list[dict[str, Any]]:
    """Every attempt's result from the archives in `out` alone."""
    content = default_content()
    results = [score_archive(p, content) for p in sorted(out.glob("*.wha"))]
    return sorted(results, key=lambda r: (r["task"], r["repeat"]))


def results_text(results: list[dict[str, Any]]) -> str:
    return json.dumps({"results": results, "table": table(results)}, indent=1, sort_keys=True) + "\n"


def write_results(out: Path, results: list[dict[str, Any]]) -> None:
    (out / "results.json").write_text(results_text(results))


def _cell(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Success % (mean ± std over repeats of the per-repeat success rate), attempts, errors, mean steps."""
    played = [r for r in rows if r["status"] != "error"]
    by_repeat: dict[int, list[int]] = {}
    for r in played:
        by_repeat.setdefault(r["repeat"], []).append(r["status"] == "success")
    rates = [100 * sum(v) / len(v) for _, v in sorted(by_repeat.items())]
    return {
        "attempts": len(rows), "errors": len(rows) - len(played),
        "success": round(statistics.fmean(rates), 1) if rates else None,
        "std": round(statistics.pstdev(rates), 1) if rates else None,
        "steps": round(statistics.fmean(r["turns"] for r in played), 1) if played else None,
    }


def table(results: list[dict[str, Any]]) -> dict[str, Any]:
    cells = {}
    for cat in CATEGORIES:
        for diff in DIFFICULTIES:
            rows = [r for r in results if r["category"] == cat and r["difficulty"] == diff]
            if rows:
                cells[f"{cat}/{diff}"] = _cell(rows)
    for diff in DIFFICULTIES:
        rows = [r for r in results if r["difficulty"] == diff]
        if rows:
            cells[f"total/{diff}"] = _cell(rows)
    cells["total/all"] = _cell(results) if results else {}
    return cells


def markdown(results: list[dict[str, Any]]) -> str:
    """The Table-3-like grid: success % ± std per category x difficulty, totals, mean steps."""
    t = table(results)
    policies = sorted({r["policy"] for r in results})
    clocks = sorted({r["clock"] for r in results})
    lines = [f"Tasks: {', '.join(policies)} ({', '.join(clocks)} clock)", "",
             "| category | " + " | ".join(DIFFICULTIES) + " | all steps |", "|---|" + "---|" * (len(DIFFICULTIES) + 1)]

    def show(c: dict[str, Any] | None) -> str:
        if not c or c.get("success") is None:
            return "-"
        return f"{c['success']:.1f} ± {c['std']:.1f} (n={c['attempts']})"

    for cat in [*CATEGORIES, "total"]:
        if not any(k.startswith(f"{cat}/") for k in t):
            continue
        rows = [r for r in results if r["category"] == cat or cat == "total"]
        steps = _cell(rows)["steps"] if rows else None
        lines.append(f"| {cat} | " + " | ".join(show(t.get(f"{cat}/{d}")) for d in DIFFICULTIES) + f" | {steps} |")
    return "\n".join(lines) + "\n"
