"""Analysis exports of one archive: its events and its per-agent metrics and card, as JSONL and Parquet.

- events.jsonl / events.parquet: seq, tick, kind, agent (the character the event is about, when
  it names one), data (the event's fields; a JSON string in Parquet).
- agents.jsonl / agents.parquet: one row per agent: the match (scenario, seed, chain head), the
  rubric version, rank, Fitness Index, grade, archetype, the five scores, and every metric; nested
  values are JSON strings in Parquet so the columns stay flat. Its spend columns (`spend_recorded`, then
  `spend_sessions`, `spend_llm_calls`, `spend_input_tokens`, `spend_cached_input_tokens`, `spend_output_tokens`,
  `spend_tokens`, `spend_dollars`) are null where the archive recorded no spend, zeros for an agent that had no
  model session in an archive that did.
- spend.jsonl / spend.parquet: one row per recorded model session (agent, name, config, tick, session, model,
  usage, cost, the agent's cumulative tokens and dollars after it, price, price table); empty when none was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report
from wildhold.eval.rubric import Rubric
from wildhold.eval.spend import TOTAL_FIELDS, USAGE_FIELDS, read_spend, session_rows, session_ticks, spend_totals
from wildhold.extras import require
from wildhold.service.verify import admit

_WHO = ("agent", "holder", "payer", "defaulter")


def _subject(data: dict[str, Any]) -> str | None:
    for key in _WHO:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return None


def agent_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-agent rows of a report: card headline, scores, spend (null when not recorded), and the metrics."""
    m = report["match"]
    spent = spend_totals(report)
    rows = []
    for card in report["agents"]:
        metrics = report["metrics"][card["agent"]]
        row: dict[str, Any] = {
            "scenario": m["scenario"], "seed": m["seed"], "chain_head": m["chain_head"],
            "rubric_version": report["rubric_version"], "agent": card["agent"], "name": card["name"],
            "config": card["config"], "rank": card["rank"], "wealth_cents": card["wealth_cents"],
            "fitness_index": card["fitness_index"], "grade": card["grade"], "archetype": card["archetype"],
            **{f"score_{k}": v for k, v in card["scores"].items()},
            "went_dark": card["idle"]["went_dark"], "dark_ticks": card["idle"]["dark_ticks"],
            "spend_recorded": spent is not None,
            **{f"spend_{k}": None if spent is None else spent[card["agent"]][k] for k in TOTAL_FIELDS},
        }
        for key, value in metrics.items():
            if key not in row:
                row[key] = value
        rows.append(row)
    return rows


def _flat(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: (orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode() if isinstance(v, (dict, list)) else v) for k, v in r.items()}
            for r in rows]


def export_match(archive: Path | str, out: Path | str, rubric: str | Rubric | None = None, *, trust: bool = False,
                 cache: Path | None = None) -> dict[str, Path]:
    """Write the six files into `out` (created if needed); return their paths by name.

    pyarrow (the `parquet` extra) is checked first and the archive verified next (unless `trust`), so a missing
    extra or an archive that does not verify writes nothing. Each agent row says which it was.
    """
    pa = require("parquet", "exporting to Parquet")
    import pyarrow.parquet as pq

    verdict = admit(archive, trust=trust, cache=cache)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    record = load_match(archive)
    sessions = read_spend(archive)
    report = build_report(record, compute_metrics(record, probes=session_ticks(sessions)), rubric, sessions)
    paths = {name: out / name for name in ("events.jsonl", "events.parquet", "agents.jsonl", "agents.parquet",
                                           "spend.jsonl", "spend.parquet")}
    events = [{"seq": e["seq"], "tick": e["tick"], "kind": e["kind"], "agent": _subject(e["data"]), "data": e["data"]}
              for e in record.events]
    with paths["events.jsonl"].open("wb") as f:
        for e in events:
            f.write(orjson.dumps(e, option=orjson.OPT_SORT_KEYS) + b"\n")
    schema = pa.schema([("seq", pa.int64()), ("tick", pa.int64()), ("kind", pa.string()), ("agent", pa.string()), ("data", pa.string())])
    table = pa.table({
        "seq": [e["seq"] for e in events], "tick": [e["tick"] for e in events], "kind": [e["kind"] for e in events],
        "agent": [e["agent"] for e in events],
        "data": [orjson.dumps(e["data"], option=orjson.OPT_SORT_KEYS).decode() for e in events],
    }, schema=schema)
    pq.write_table(table, paths["events.parquet"])
    rows = [{**row, "verification": verdict.status} for row in agent_rows(report)]
    with paths["agents.jsonl"].open("wb") as f:
        for r in rows:
            f.write(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n")
    pq.write_table(pa.Table.from_pylist(_flat(rows)), paths["agents.parquet"])
    spend = session_rows(report, sessions)
    with paths["spend.jsonl"].open("wb") as f:
        for r in spend:
            f.write(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n")
    pq.write_table(pa.Table.from_pylist(_flat(spend), schema=_spend_schema(pa)), paths["spend.parquet"])
    return paths


def _spend_schema(pa: Any) -> Any:
    """The spend table's columns, fixed so that an archive without spend still writes a typed, empty table."""
    return pa.schema([("agent", pa.string()), ("name", pa.string()), ("config", pa.string()), ("tick", pa.int64()),
                      ("session", pa.int64()), ("model", pa.string()), *((k, pa.int64()) for k in USAGE_FIELDS),
                      ("cost_usd", pa.float64()), ("cumulative_tokens", pa.int64()), ("cumulative_dollars", pa.float64()),
                      ("price", pa.string()), ("price_table", pa.string())])
