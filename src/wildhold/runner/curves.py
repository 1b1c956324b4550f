"""Curves across a sweep's runs (seed 001's primary artefact): quests, trial stages and wealth against cumulative
dollars, tokens and wall-clock seconds, one line per configuration and protocol (the mean over seeds) with a band
(the lowest to the highest seed), read at any budget on a common grid. JSON, and SVG for the sweep's HTML page.

Each model cell's points come from its run's spend curve (one point per session). A run's value at budget x is
what it had reached at its last point at or under x: a step, never interpolated; a run that ended under x keeps
its last value. Scripted and task cells spend nothing and draw no curve.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from wildhold.eval.chart import QUANTITIES, band_chart
from wildhold.eval.identity import labels
from wildhold.looks import palette

X = ("cost_usd", "tokens", "elapsed_s")
Y = ("quests", "trial_stages", "wealth_cents")
GRID = 24


def cell_points(out: Path, result: dict[str, Any]) -> list[dict[str, Any]]:
    """A model cell's spend-curve points (none for a scripted or task cell)."""
    path = Path(out) / "cells" / result["cell"] / "run" / "spend_curve.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())["arms"].get(result["arm"], {}).get("points", [])


def step_at(points: list[dict[str, Any]], x_key: str, y_key: str, x: float) -> float | None:
    """What the run had reached at budget x: its last point at or under x (None before its first)."""
    value = None
    for p in points:
        if p.get(x_key) is None or p[x_key] > x + 1e-12:
            break
        if p.get(y_key) is not None:
            value = float(p[y_key])
    return value


def curves(out: Path, results: list[dict[str, Any]], grid: int = GRID) -> dict[str, Any]:
    runs: dict[tuple[str, str], dict[int, list[list[dict[str, Any]]]]] = {}
    identities = {r["config"]: r["identity"] for r in results}
    for r in results:
        points = cell_points(out, r)
        if points:
            runs.setdefault((r["config"], r["protocol"]), {}).setdefault(r["seed"], []).append(points)
    names = labels(identities)
    lines = []
    for (config, protocol), by_seed in sorted(runs.items()):
        by_x = {}
        for x_key in X:
            top = max((pts[-1].get(x_key) or 0.0) for reps in by_seed.values() for pts in reps)
            xs = [round(float(v), 6) for v in np.linspace(0.0, float(top), grid + 1)]
            series = {}
            for y_key in Y:
                band = []
                for x in xs:
                    per_seed = []
                    for reps in by_seed.values():
                        got = [v for v in (step_at(pts, x_key, y_key, x) for pts in reps) if v is not None]
                        if got:
                            per_seed.append(sum(got) / len(got))
                    if per_seed:
                        arr = np.asarray(per_seed)
                        band.append({"n": len(per_seed), "mean": round(float(arr.mean()), 4),
                                     "std": round(float(arr.std(ddof=1)), 4) if len(per_seed) > 1 else None,
                                     "min": round(float(arr.min()), 4), "max": round(float(arr.max()), 4)})
                    else:
                        band.append(None)
                series[y_key] = band
            by_x[x_key] = {"x": xs, **series}
        lines.append({"config": config, "label": names[config], "protocol": protocol, "seeds": sorted(by_seed), "by": by_x})
    return {"x": list(X), "y": list(Y), "grid": grid,
            "reading": "line: mean over seeds of each run's value at or under the budget (a step, not interpolated); "
                       "band: lowest to highest seed; a run that ended under the budget keeps its last value",
            "lines": lines}


def svg(data: dict[str, Any], protocol: str, x_key: str, y_key: str, width: int = 460, height: int = 300) -> str:
    """One chart: every configuration's line and band on `protocol`, y against x, in the quantities' units
    (eval.chart: wealth in coins, spend in dollars); every string escaped."""
    lines = [ln for ln in data["lines"] if ln["protocol"] == protocol]
    x, y = QUANTITIES[x_key], QUANTITIES[y_key]
    colour = palette.colours(sorted({ln["label"] for ln in data["lines"]}))  # one per configuration on every chart
    series = []
    for ln in lines:
        by = ln["by"][x_key]
        pts = [(a, b["mean"], b["min"], b["max"]) for a, b in zip(by["x"], by[y_key]) if b]
        series.append((f"{ln['label']} (n={len(ln['seeds'])})", colour[ln["label"]], pts))
    return str(band_chart(series, x, y, f"{y.title} against {x.title} on {protocol}", width, height))
