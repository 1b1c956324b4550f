"""`wildhold bench report`: events per second for rescoring an archive from scratch: reading and
verifying the hash-chained log, folding the metrics (trial assessment, map coverage and wealth
curve included) and building the report's canonical JSON, on one core.

The archive is a full famine match (six scripted agents, five days, about 50,000 events) played
once and kept under runs/bench/ for the content it was played with, or any archive given.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any


from wildhold.bench import PASS, figures_table, publish
from wildhold.content import default_content
from wildhold.terminal import FitTable

TARGET_EVENTS_PER_S = 200_000
SCENARIO, SEED = "famine", 1
QUICK_SCENARIO = "tiny"
REPEATS, QUICK_REPEATS = 5, 1
CACHE = Path("runs/bench")


def bench_archive(scenario: str, seed: int, cache: Path = CACHE) -> Path:
    """A finished scripted match of the scenario, played once per content version and kept."""
    from wildhold.agents.runner import ScriptedRun

    content = default_content()
    path = cache / f"report-{scenario}-{seed}-{content.digest[:12]}.wildhold.zip"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    db = path.with_suffix(".sqlite")
    for stale in cache.glob(db.name + "*"):
        stale.unlink()
    run = ScriptedRun.start(scenario, seed, db, content=content)
    run.run()
    run.match.export(path)
    run.match.close()
    for stale in cache.glob(db.name + "*"):
        stale.unlink()
    return path


def rescore(path: Path) -> tuple[int, dict[str, float]]:
    """Score an archive once; return its event count and the seconds each stage took."""
    from wildhold.eval.metrics import compute_metrics, load_match
    from wildhold.eval.report import build_report, report_json

    t0 = time.perf_counter()
    record = load_match(path)
    t1 = time.perf_counter()
    metrics = compute_metrics(record)
    t2 = time.perf_counter()
    report_json(build_report(record, metrics))
    t3 = time.perf_counter()
    return len(record.events), {"read_verify_s": t1 - t0, "metrics_s": t2 - t1, "report_s": t3 - t2, "total_s": t3 - t0}


def bench_report(as_json: bool = False, quick: bool = False, archive: Path | None = None) -> dict[str, Any]:
    if archive is None:
        archive = bench_archive(QUICK_SCENARIO if quick else SCENARIO, SEED)
    repeats = QUICK_REPEATS if quick else REPEATS
    rescore(archive)  # warm: imports, content, worldgen code paths
    runs = [rescore(archive) for _ in range(repeats)]
    events = runs[0][0]
    stages = {k: statistics.median(r[1][k] for r in runs) for k in runs[0][1]}
    rate = events / stages["total_s"]
    result = {
        "archive": str(archive),
        "events": events,
        "repeats": repeats,
        "events_per_s": round(rate, 1),
        "seconds": {k: round(v, 4) for k, v in stages.items()},
        "target_events_per_s": TARGET_EVENTS_PER_S,
        "pass": rate >= TARGET_EVENTS_PER_S,
        "quick": quick,
    }
    return publish(result, _table(result), as_json)


def _table(r: dict[str, Any]) -> FitTable:
    table = figures_table("wildhold report benchmark: rescoring an archive" + (" (quick: rough figures)" if r["quick"] else ""),
                          f"{r['events']:,} events in {r['archive']}; median of {r['repeats']} run(s), one process.")
    table.add_row("events/s, verify + metrics + report", f"{r['events_per_s']:,.0f}", f"{r['target_events_per_s']:,}", PASS[r["pass"]])
    for key, label in (("read_verify_s", "read and verify the log"), ("metrics_s", "fold the metrics"), ("report_s", "build the report JSON"),
                       ("total_s", "total")):
        table.add_row(f"seconds: {label}", f"{r['seconds'][key]:.3f}", "", "")
    return table
