"""The command line as a user runs it: demo, replay (and its refusal of a tampered archive), rules."""

import json
import zipfile

import pytest
from typer.testing import CliRunner

from wildhold.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    result = runner.invoke(app, ["demo", "--scenario", "tiny", "--seed", "3", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "producer-1" in result.output and "chain head" in result.output
    return out


def test_demo_writes_an_archive_that_replays(demo_dir):
    result = runner.invoke(app, ["replay", str(demo_dir / "match.wildhold.zip")])
    assert result.exit_code == 0, result.output
    assert "replay matches the archive" in result.output


def _rewrite(src, dst, member, edit):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, edit(data) if item.filename == member else data)


def test_replay_refuses_an_archive_with_an_edited_event(demo_dir, tmp_path):
    def edit(data: bytes) -> bytes:
        lines = data.splitlines()
        record = json.loads(lines[5])
        record["event"]["tick"] += 1
        lines[5] = json.dumps(record).encode()
        return b"\n".join(lines) + b"\n"

    bad = tmp_path / "tampered.wildhold.zip"
    _rewrite(demo_dir / "match.wildhold.zip", bad, "events.jsonl", edit)
    result = runner.invoke(app, ["replay", str(bad)])
    assert result.exit_code == 1
    assert "event 6 does not match its hash" in result.output


def test_replay_fails_when_an_input_was_changed(demo_dir, tmp_path):
    def edit(data: bytes) -> bytes:
        lines = data.splitlines()
        for i, line in enumerate(lines):
            record = json.loads(line)
            if record["kind"] == "action" and record["name"] == "move":
                record["args"] = {"direction": "n" if record["args"]["direction"] != "n" else "s"}
                lines[i] = json.dumps(record).encode()
                break
        return b"\n".join(lines) + b"\n"

    bad = tmp_path / "edited-input.wildhold.zip"
    _rewrite(demo_dir / "match.wildhold.zip", bad, "inputs.jsonl", edit)
    result = runner.invoke(app, ["replay", str(bad)])
    assert result.exit_code == 1
    assert "does not match" in result.output


def test_replay_of_a_missing_file_is_a_clear_error(tmp_path):
    result = runner.invoke(app, ["replay", str(tmp_path / "nope.zip")])
    assert result.exit_code == 1
    assert "not a Wildhold archive" in result.output


def test_demo_with_an_unknown_scenario_names_the_known_ones(tmp_path):
    result = runner.invoke(app, ["demo", "--scenario", "atlantis", "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 2
    assert "unknown scenario" in result.output and "default" in result.output
