"""Curves across a sweep's runs (seed 001's primary artefact): quests, trial stages and wealth against cumulative
dollars, tokens and wall-clock seconds, one line per configuration and protocol (the mean over seeds) with a band
(the lowest to the highest seed), read at any budget on a common grid. JSON, and SVG for the sweep's HTML page.

Each model cell's points come from its run's spend curve (one point per session). A run's value at budget x is
what it had reached at its last point at or under x: a step, never interpolated; a run that ended under x keeps
its last value. Scripted and task cells spend nothing and draw no curve.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from wildhold.eval.identity import labels

X = ("cost_usd", "tokens", "elapsed_s")
Y = ("quests", "trial_stages", "wealth_cents")
GRID = 24
X_NAMES = {"cost_usd": "cumulative dollars", "tokens": "cumulative tokens", "elapsed_s": "wall-clock seconds"}
Y_NAMES = {"quests": "quests", "trial_stages": "trial stages (cumulative rule)", "wealth_cents": "wealth (cents)"}
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


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


def svg(data: dict[str, Any], protocol: str, x_key: str, y_key: str, width: int = 440, height: int = 260) -> str:
    """One chart: every configuration's line and band on `protocol`, y against x; every string escaped."""
    e = html.escape
    lines = [ln for ln in data["lines"] if ln["protocol"] == protocol]
    left, right, top, bottom = 56, 12, 24, 30 + 12 * len(lines)
    height += 12 * len(lines)
    pw, ph = width - left - right, height - top - bottom
    xmax = max((ln["by"][x_key]["x"][-1] for ln in lines), default=0.0) or 1.0
    ys = [b[k] for ln in lines for b in ln["by"][x_key][y_key] if b for k in ("min", "max")]
    ymin, ymax = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if ymax == ymin:
        ymin, ymax = ymin - 1.0, ymax + 1.0

    def sx(v: float) -> float:
        return round(left + pw * v / xmax, 2)

    def sy(v: float) -> float:
        return round(top + ph * (1 - (v - ymin) / (ymax - ymin)), 2)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{e(Y_NAMES[y_key])} against {e(X_NAMES[x_key])} on {e(protocol)}">',
             f'<text x="{left}" y="14" font-size="12">{e(Y_NAMES[y_key])} against {e(X_NAMES[x_key])}</text>',
             f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#444"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#444"/>',
             f'<text x="{left}" y="{top + ph + 12}" font-size="10">0</text>',
             f'<text x="{left + pw}" y="{top + ph + 12}" font-size="10" text-anchor="end">{e(f"{xmax:.4g}")}</text>',
             f'<text x="{left - 4}" y="{top + ph}" font-size="10" text-anchor="end">{e(f"{ymin:.4g}")}</text>',
             f'<text x="{left - 4}" y="{top + 10}" font-size="10" text-anchor="end">{e(f"{ymax:.4g}")}</text>']
    for i, ln in enumerate(lines):
        colour = COLOURS[i % len(COLOURS)]
        xs, band = ln["by"][x_key]["x"], ln["by"][x_key][y_key]
        pts = [(x, b) for x, b in zip(xs, band) if b]
        if not pts:
            continue
        upper = " ".join(f"{sx(x)},{sy(b['max'])}" for x, b in pts)
        lower = " ".join(f"{sx(x)},{sy(b['min'])}" for x, b in reversed(pts))
        parts.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.18" stroke="none"/>')
        mean = " ".join(f"{sx(x)},{sy(b['mean'])}" for x, b in pts)
        parts.append(f'<polyline points="{mean}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + 6}" y="{top + ph + 26 + 12 * i}" font-size="10" fill="{colour}">'
                     f'{e(ln["label"])} (n={len(ln["seeds"])})</text>')
    parts.append("</svg>")
    return "".join(parts)
