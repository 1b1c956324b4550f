"""`wildhold report`, `leaderboard`, `export` and `bench report` from the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.eval.report import report_json
from wildhold.eval.rubric import PUBLISHED_RUBRIC
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
# The committed archives were played under earlier content files: scoring them takes --trust (verification is
# tested on archives played now, in test_archive_trust.py); their scores are pinned by the goldens.
runner = CliRunner()


def test_report_json_prints_one_document_with_each_agents_headline():
    result = runner.invoke(app, ["report", str(FIXTURES / "ties_seed5.wildhold.zip"), "--format", "json", "--trust"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["rubric_version"] == PUBLISHED_RUBRIC
    assert [(c["name"], c["rank"]) for c in doc["agents"]] == [("second", 1), ("third", 1), ("first", 3)]
    for card in doc["agents"]:
        assert isinstance(card["fitness_index"], float) and card["grade"] and card["archetype"]
    assert doc.pop("verification")["status"] == "trusted"
    assert report_json(doc) == (FIXTURES / f"ties_seed5.report-{PUBLISHED_RUBRIC}.json").read_bytes()


def test_report_under_an_old_rubric_and_one_agents_card():
    result = runner.invoke(app, ["report", str(FIXTURES / "ties_seed5.wildhold.zip"), "--format", "json", "--rubric", "1.0", "--agent", "third", "--trust"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["rubric_version"] == "1.0" and doc["card"]["name"] == "third" and doc["card"]["rank"] == 2


def test_report_html_and_markdown_to_files(tmp_path):
    archive = str(FIXTURES / "delve_seed11.wildhold.zip")
    assert runner.invoke(app, ["report", archive, "--format", "html", "--out", str(tmp_path / "r.html"), "--trust"]).exit_code == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert "not verified" in (tmp_path / "r.html").read_text()
    md = runner.invoke(app, ["report", archive, "--trust"])
    assert md.exit_code == 0 and md.stdout.startswith("# Wildhold report: tiny, seed 11")


def test_report_refuses_a_bad_rubric_a_bad_format_and_a_broken_archive(tmp_path):
    archive = str(FIXTURES / "ties_seed5.wildhold.zip")
    bad = runner.invoke(app, ["report", archive, "--rubric", "3.0", "--trust"])
    assert bad.exit_code == 1 and "no rubric '3.0'" in bad.output
    assert runner.invoke(app, ["report", archive, "--format", "pdf"]).exit_code == 2
    broken = tmp_path / "broken.wildhold.zip"
    broken.write_bytes(b"not a zip")
    out = runner.invoke(app, ["report", str(broken)])
    assert out.exit_code == 1 and "not a Wildhold archive" in out.output


def test_leaderboard_table_and_json():
    archives = [str(FIXTURES / f"{n}.wildhold.zip") for n in ("ties_seed5", "delve_seed11")]
    table = runner.invoke(app, ["leaderboard", *archives, "--trust"])  # one scenario
    assert table.exit_code == 0 and "Leaderboard over 2 matches" in table.output
    doc = json.loads(runner.invoke(app, ["leaderboard", *archives, "--json", "--trust"]).stdout)
    assert doc["rubric_version"] == PUBLISHED_RUBRIC and {r["config"] for r in doc["rows"]} >= {"second", "producer"}


def test_the_leaderboard_refuses_to_pool_scenarios_unless_asked_and_says_what_it_pooled():
    archives = [str(FIXTURES / f"{n}.wildhold.zip") for n in ("tiny_seed3", "famine_seed2")]
    refused = runner.invoke(app, ["leaderboard", *archives, "--trust"])
    assert refused.exit_code == 1 and "(refused: leaderboard_pools_scenarios)" in refused.output
    table = runner.invoke(app, ["leaderboard", *archives, "--trust", "--pool-scenarios"], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "famine, tiny (pooled, as asked)" in table.output


def test_export_writes_the_six_files(tmp_path):
    result = runner.invoke(app, ["export", str(FIXTURES / "ties_seed5.wildhold.zip"), "--out", str(tmp_path / "x"), "--trust"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["agents.jsonl", "agents.parquet", "events.jsonl", "events.parquet",
                                                                  "spend.jsonl", "spend.parquet"]


def test_bench_report_prints_events_per_second_in_json(tmp_path):
    archive = tmp_path / "a.wildhold.zip"
    shutil.copy(FIXTURES / "tiny_seed3.wildhold.zip", archive)
    result = runner.invoke(app, ["bench", "report", "--json", "--quick", "--archive", str(archive)])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["events_per_s"] > 0 and figures["events"] > 0 and figures["target_events_per_s"] == 200_000
    assert set(figures["seconds"]) == {"read_verify_s", "metrics_s", "report_s", "total_s"}
