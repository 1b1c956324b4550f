"""The sweep's summary: one row per configuration (its full arm identity's key) and protocol, each measure as n,
mean, std and a 95% interval over seeds (repeats of a seed averaged first; wildhold.eval.stats); JSON, Markdown,
and an HTML page with the curves across runs (wildhold.runner.curves) as SVG."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from wildhold.eval.chart import QUANTITIES
from wildhold.eval.identity import labels
from wildhold.eval.stats import INTERVAL, describe, per_seed, show
from wildhold.runner.curves import X, Y, svg

MEASURES = ("index", "survival", "economy", "social", "adaptation", "competitiveness", "composite", "trial",
            "task_success", "quests", "wealth", "spend_usd", "tokens")

DIGITS = {"spend_usd": 4, "tokens": 0}


UNITS_UNSAID = ("wealth", "spend_usd")  # measures whose name alone does not say their unit


def heading(measure: str) -> str:
    """A measure's column head, naming its unit where the name does not (wealth in coins, as the charts show it)."""
    return QUANTITIES[measure].title if measure in UNITS_UNSAID else measure


def seed_values(results: list[dict[str, Any]], measure: str) -> dict[int, float]:
    """One value of `measure` per seed over these cells (a task protocol's tasks and any repeats averaged)."""
    return per_seed((r["seed"], r["measures"][measure]) for r in results if r["measures"].get(measure) is not None)


def groups(results: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        out.setdefault((r["config"], r["protocol"]), []).append(r)
    return out


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    identities = {r["config"]: r["identity"] for r in results}
    names = labels(identities)
    rows = []
    for (config, protocol), rs in sorted(groups(results).items()):
        measures = {m: describe(seed_values(rs, m).values()) for m in MEASURES}
        rows.append({"config": config, "label": names[config], "arms": sorted({r["arm"] for r in rs}),
                     "protocol": protocol, "scenario": rs[0].get("scenario"), "cells": len(rs),
                     "seeds": sorted({r["seed"] for r in rs}),
                     "measures": {m: v for m, v in measures.items() if v["n"]}})
    return {"statistic": f"mean over seeds (repeats of a seed averaged first); std: sample std (n-1); {INTERVAL}",
            "identities": identities, "rows": rows}


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"Sweep summary ({summary['statistic']})", ""]
    for row in summary["rows"]:
        lines.append(f"## {row['label']} on {row['protocol']} ({row['cells']} cells, seeds "
                     f"{', '.join(map(str, row['seeds']))}; config {row['config']})")
        lines += ["", "| measure | mean ± std [95% CI] n |", "|---|---|"]
        lines += [f"| {heading(m)} | {show(v, DIGITS.get(m, 2))} |" for m, v in row["measures"].items()]
        lines.append("")
    return "\n".join(lines)


def render_html(summary: dict[str, Any], curve_data: dict[str, Any], title: str) -> str:
    """The summary's tables and, per protocol, every curve with its band over seeds as inline SVG."""
    e = html.escape
    parts = ["<!doctype html>", f"<html><head><meta charset=\"utf-8\"><title>{e(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1400px}table{border-collapse:collapse;margin-bottom:1em}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;font-size:13px}td:first-child{text-align:left}"
             ".charts{display:flex;flex-wrap:wrap;gap:8px}</style></head><body>",
             f"<h1>{e(title)}</h1>", f"<p>{e(summary['statistic'])}</p>"]
    for protocol in sorted({r["protocol"] for r in summary["rows"]}):
        rows = [r for r in summary["rows"] if r["protocol"] == protocol]
        shown = [m for m in MEASURES if any(m in r["measures"] for r in rows)]
        parts.append(f"<h2>{e(protocol)}</h2><table><tr><th>configuration</th><th>key</th>"
                     + "".join(f"<th>{e(heading(m))}</th>" for m in shown) + "</tr>")
        for r in rows:
            parts.append(f"<tr><td>{e(r['label'])}</td><td><code>{e(r['config'])}</code></td>"
                         + "".join(f"<td>{e(show(r['measures'].get(m, {}), DIGITS.get(m, 2)))}</td>" for m in shown)
                         + "</tr>")
        parts.append("</table>")
        if any(ln["protocol"] == protocol for ln in curve_data["lines"]):
            parts.append(f"<p>{e(curve_data['reading'])}</p><div class=\"charts\">")
            parts += [svg(curve_data, protocol, x, y) for x in X for y in Y]
            parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_summary(out: Path, summary: dict[str, Any], curve_data: dict[str, Any], title: str) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "summary.md").write_text(markdown(summary))
    (out / "curves.json").write_text(json.dumps(curve_data, indent=1, sort_keys=True) + "\n")
    (out / "summary.html").write_text(render_html(summary, curve_data, title))
