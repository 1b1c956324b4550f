"""Exports for analysis: events and per-agent metrics as JSONL and Parquet, the same rows in both."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq

from wildhold.eval.export import export_match
from wildhold.eval.metrics import load_match
from wildhold.eval.rubric import PUBLISHED_RUBRIC
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
# The committed archives were played under earlier content files: scoring them takes trust (verification is
# tested on archives played now, in test_archive_trust.py); their scores are pinned by the goldens.


def test_export_writes_events_and_agents_as_jsonl_and_parquet(tmp_path):
    archive = FIXTURES / "delve_seed11.wildhold.zip"
    paths = export_match(archive, tmp_path / "out", trust=True)
    assert sorted(p.name for p in paths.values()) == ["agents.jsonl", "agents.parquet", "events.jsonl", "events.parquet",
                                                     "spend.jsonl", "spend.parquet"]
    events = load_match(archive).events
    lines = [orjson.loads(x) for x in paths["events.jsonl"].read_bytes().splitlines()]
    assert [e["seq"] for e in lines] == [e["seq"] for e in events]
    table = pq.read_table(paths["events.parquet"])
    assert table.num_rows == len(events)
    assert table.column_names == ["seq", "tick", "kind", "agent", "data"]
    first_hit = next(i for i, e in enumerate(events) if e["kind"] == "tier_cleared")
    assert table.column("agent")[first_hit].as_py() == events[first_hit]["data"]["agent"]
    assert orjson.loads(table.column("data")[first_hit].as_py()) == events[first_hit]["data"]


def test_agent_rows_hold_the_card_and_the_metrics(tmp_path):
    paths = export_match(FIXTURES / "famine_seed2.wildhold.zip", tmp_path, trust=True)
    rows = [orjson.loads(x) for x in paths["agents.jsonl"].read_bytes().splitlines()]
    table = pq.read_table(paths["agents.parquet"]).to_pylist()
    assert len(rows) == len(table) == 6
    for row, flat in zip(rows, table):
        assert row["agent"] == flat["agent"] and row["fitness_index"] == flat["fitness_index"]
        assert row["rubric_version"] == PUBLISHED_RUBRIC and row["seed"] == 2 and row["scenario"] == "famine"
        assert orjson.loads(flat["by_category"]) == row["by_category"]
        assert {"score_survival", "score_economy", "score_social", "score_adaptation", "score_competitiveness"} <= set(row)
