"""Spend beyond the report: the leaderboard's tokens and dollars per configuration and the export's spend
columns and session table, from the archives alone; "not recorded" (null) only where an archive recorded none."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from wildhold.agents.runner import ScriptedRun
from wildhold.cli import app
from wildhold.eval.export import export_match
from wildhold.eval.leaderboard import leaderboard

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
UNRECORDED = FIXTURES / "tiny_seed3.wildhold.zip"  # a committed archive with no model usage: trusted as it is


def session(n: int, cost: float) -> dict:
    return {"session": n, "model": "replay/test", "llm_calls": n, "input_tokens": 1000 * n, "cached_input_tokens": 10 * n,
            "output_tokens": 100 * n, "cost_usd": cost, "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
            "price_table": "cd" * 32}


@pytest.fixture(scope="module")
def spent(tmp_path_factory) -> tuple[Path, str]:
    """The tiny scripted match with three sessions recorded for its first character ($0.07, 6,600 tokens)."""
    run = ScriptedRun.start("tiny", 3, tmp_path_factory.mktemp("spent") / "m.sqlite")
    agent = next(iter(run.world.chars))
    for n, cost in enumerate((0.01, 0.02, 0.04), start=1):
        run.run(until=run.world.tick + 300)
        run.match.record_spend(agent, session(n, cost))
    run.match.end("done")
    return run.match.export(run.match.store.path.with_name("spent.wildhold.zip")), agent


def _configs(board: dict) -> dict[str, dict]:
    return {r["config"]: r for r in board["rows"]}


def test_the_leaderboard_shows_each_configurations_tokens_and_dollars(spent):
    archive, agent = spent
    board = leaderboard([archive], trust=True)
    placements = {p["agent"]: p for p in board["matches"][0]["placements"]}
    config = placements[agent]["config"]
    rows = _configs(board)
    assert rows[config]["spend"] == {"matches": 1, "sessions": 3, "llm_calls": 6, "input_tokens": 6000,
                                     "cached_input_tokens": 60, "output_tokens": 600, "tokens": 6600,
                                     "dollars": pytest.approx(0.07)}
    assert placements[agent]["spend"]["dollars"] == pytest.approx(0.07)
    for other, p in placements.items():  # recorded in this archive: an agent with no session spent nothing
        if p["config"] != config:
            assert rows[p["config"]]["spend"]["tokens"] == 0 and rows[p["config"]]["spend"]["dollars"] == 0
            assert p["spend"]["sessions"] == 0


def test_the_leaderboard_says_not_recorded_only_where_no_archive_recorded_spend(spent):
    archive, agent = spent
    alone = leaderboard([UNRECORDED], trust=True)
    assert all(r["spend"] is None for r in alone["rows"])
    assert all(p["spend"] is None for p in alone["matches"][0]["placements"])
    both = _configs(leaderboard([archive, UNRECORDED], trust=True))
    config = next(p["config"] for m in leaderboard([archive], trust=True)["matches"] for p in m["placements"]
                  if p["agent"] == agent)
    assert both[config]["matches"] == 2 and both[config]["spend"]["matches"] == 1
    assert both[config]["spend"]["tokens"] == 6600


def test_the_leaderboard_command_prints_tokens_and_dollars_or_not_recorded(spent):
    archive, _ = spent
    runner = CliRunner()
    recorded = runner.invoke(app, ["leaderboard", str(archive), "--trust"], env={"COLUMNS": "250"})
    assert recorded.exit_code == 0, recorded.output
    assert "6,600" in recorded.output and "0.0700" in recorded.output
    unrecorded = runner.invoke(app, ["leaderboard", str(UNRECORDED), "--trust"], env={"COLUMNS": "250"})
    assert unrecorded.exit_code == 0, unrecorded.output
    assert "not recorded" in unrecorded.output


def test_the_export_carries_spend_columns_and_a_session_table(spent, tmp_path):
    archive, agent = spent
    paths = export_match(archive, tmp_path / "out", trust=True)
    rows = {r["agent"]: r for r in (orjson.loads(x) for x in paths["agents.jsonl"].read_bytes().splitlines())}
    assert rows[agent]["spend_recorded"] is True
    assert (rows[agent]["spend_sessions"], rows[agent]["spend_tokens"], rows[agent]["spend_cached_input_tokens"]) == (3, 6600, 60)
    assert rows[agent]["spend_dollars"] == pytest.approx(0.07)
    assert all(r["spend_tokens"] == 0 for a, r in rows.items() if a != agent)
    flat = {r["agent"]: r for r in pq.read_table(paths["agents.parquet"]).to_pylist()}
    assert flat[agent]["spend_tokens"] == 6600
    sessions = [orjson.loads(x) for x in paths["spend.jsonl"].read_bytes().splitlines()]
    assert [s["session"] for s in sessions] == [1, 2, 3] and {s["agent"] for s in sessions} == {agent}
    assert [s["cumulative_tokens"] for s in sessions] == [1100, 3300, 6600]
    assert [s["cumulative_dollars"] for s in sessions] == pytest.approx([0.01, 0.03, 0.07])
    table = pq.read_table(paths["spend.parquet"]).to_pylist()
    assert [t["cumulative_tokens"] for t in table] == [1100, 3300, 6600]
    assert orjson.loads(table[0]["price"]) == {"input_per_mtok": 3.0, "output_per_mtok": 15.0}


def test_an_export_of_an_archive_without_spend_says_not_recorded(tmp_path):
    paths = export_match(UNRECORDED, tmp_path, trust=True)
    rows = [orjson.loads(x) for x in paths["agents.jsonl"].read_bytes().splitlines()]
    assert rows and all(r["spend_recorded"] is False and r["spend_dollars"] is None and r["spend_tokens"] is None
                        for r in rows)
    assert paths["spend.jsonl"].read_bytes() == b""
    table = pq.read_table(paths["spend.parquet"])
    assert table.num_rows == 0 and "cumulative_dollars" in table.column_names
