"""The sweep's summary: one row per configuration (its full arm identity's key) and protocol, each measure as n,
mean, std and a 95% bootstrap interval over seeds (repeats of a seed averaged first); JSON and Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wildhold.eval.identity import labels
from wildhold.eval.stats import describe, per_seed, show

MEASURES = ("index", "survival", "economy", "social", "adaptation", "competitiveness", "composite", "trial",
            "task_success", "quests", "wealth", "spend_usd", "tokens")

DIGITS = {"spend_usd": 4, "tokens": 0}


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
    return {"statistic": "mean over seeds; std (n-1); 95% percentile bootstrap interval over seeds, seeded",
            "identities": identities, "rows": rows}


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"Sweep summary ({summary['statistic']})", ""]
    for row in summary["rows"]:
        lines.append(f"## {row['label']} on {row['protocol']} ({row['cells']} cells, seeds "
                     f"{', '.join(map(str, row['seeds']))}; config {row['config']})")
        lines += ["", "| measure | mean ± std [95% CI] n |", "|---|---|"]
        lines += [f"| {m} | {show(v, DIGITS.get(m, 2))} |" for m, v in row["measures"].items()]
        lines.append("")
    return "\n".join(lines)


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "summary.md").write_text(markdown(summary))
