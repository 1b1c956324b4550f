"""A sweep's exports for analysis, beside each archive's own (`wildhold export ARCHIVE`): JSONL and Parquet.

- cells: one row per finished cell: its configuration (key, label, identity as JSON), protocol, task, seed,
  repeat, chain head, spend, tokens, wall-clock seconds and every measure (`m_<measure>`).
- telemetry: every scaffold telemetry record of every model cell (sessions, model turns, tool calls, workspace
  writes, wakes, progress points), with its cell's keys; the record's other fields are one JSON string (`data`).
- curve_points: every spend-curve point (one per session): the cell's keys and session, tick, elapsed_s, tokens,
  cached_input_tokens, cost_usd, quests, trial_stages, wealth_cents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from wildhold.eval.identity import labels
from wildhold.extras import require
from wildhold.runner.cells import verify_cell
from wildhold.runner.curves import cell_points
from wildhold.runner.summary import MEASURES

CURVE_FIELDS = ("session", "tick", "elapsed_s", "tokens", "cached_input_tokens", "cost_usd", "quests", "trial_stages",
                "wealth_cents")
FILES = ("cells", "telemetry", "curve_points")


class NotASweep(ValueError):
    code = "export_not_a_sweep"


def _keys(r: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {"cell": r["cell"], "config": r["config"], "label": names[r["config"]], "arm": r["arm"],
            "protocol": r["protocol"], "task": r.get("task"), "seed": r["seed"], "repeat": r["repeat"]}


def export_sweep(sweep_dir: Path | str, out: Path | str) -> dict[str, Path]:
    """Write the three tables of the finished cells of `sweep_dir` into `out`, as JSONL and Parquet."""
    pa = require("parquet", "exporting to Parquet")
    import pyarrow.parquet as pq

    sweep_dir = Path(sweep_dir)
    if not (sweep_dir / "results.json").is_file():
        raise NotASweep(f"{sweep_dir} holds no results.json: give a folder `wildhold sweep` wrote")
    results = json.loads((sweep_dir / "results.json").read_text())["results"]
    for r in results:  # every cell held to its archives first (ArchiveError or CellUnverified refuses the export)
        verify_cell(r, sweep_dir / "cells" / r["cell"])
    names = labels({r["config"]: r["identity"] for r in results})
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in FILES}
    for r in results:
        keys = _keys(r, names)
        tables["cells"].append({**keys, "identity": json.dumps(r["identity"], sort_keys=True), "status": r["status"],
                                "chain_head": r["chain_heads"][0] if r["chain_heads"] else None,
                                "cost_usd": float(r["cost_usd"]), "tokens": int(r["tokens"]), "wall_s": float(r["wall_s"]),
                                **{f"m_{m}": _number(r["measures"].get(m)) for m in MEASURES}})
        telemetry = sweep_dir / "cells" / r["cell"] / "run" / "telemetry.jsonl"
        if telemetry.is_file():
            for line in telemetry.read_text().splitlines():
                rec = json.loads(line)
                rest = {k: v for k, v in rec.items() if k not in ("kind", "arm", "t", "session")}
                tables["telemetry"].append({**keys, "kind": rec["kind"], "record_arm": rec.get("arm"), "t": rec.get("t"),
                                            "session": rec.get("session"),
                                            "data": orjson.dumps(rest, option=orjson.OPT_SORT_KEYS).decode()})
        for point in cell_points(sweep_dir, r):
            tables["curve_points"].append({**keys, **{k: _number(point.get(k)) for k in CURVE_FIELDS}})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, rows in tables.items():
        paths[f"{name}.jsonl"] = out / f"{name}.jsonl"
        with paths[f"{name}.jsonl"].open("wb") as f:
            for row in rows:
                f.write(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
        paths[f"{name}.parquet"] = out / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=_schema(pa, rows)), paths[f"{name}.parquet"])
    return paths


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _schema(pa: Any, rows: list[dict[str, Any]]) -> Any:
    """Columns typed from their values: numbers as float64 (ints as int64), everything else as strings; a column
    with no value at all stays a string column, so every sweep's files have the same shape."""
    columns: dict[str, Any] = {}
    for row in rows:
        for key, value in row.items():
            if value is None:
                columns.setdefault(key, None)
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                columns[key] = pa.string()
            elif isinstance(value, float):
                columns[key] = pa.float64() if columns.get(key) != pa.string() else columns[key]
            elif columns.get(key) is None:
                columns[key] = pa.int64()
    return pa.schema([(k, v if v is not None else pa.string()) for k, v in columns.items()])
