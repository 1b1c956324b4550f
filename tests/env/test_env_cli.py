"""`wildhold rules --env` documents the generated action table, entry by entry in JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.server.surface import action_tools

runner = CliRunner()


def test_rules_env_lists_every_action_and_how_its_arguments_are_filled():
    result = runner.invoke(app, ["rules", "--env"])
    assert result.exit_code == 0, result.output
    assert "noop" in result.output and "your x, y plus an offset" in result.output
    assert all(f"`{name}`" in result.output for name in action_tools())


def test_rules_env_json_names_each_entry():
    result = runner.invoke(app, ["rules", "--env", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert len(doc["table"]) == doc["entries"] and doc["table"][0] == "noop()"
    gather = next(a for a in doc["actions"] if a["action"] == "gather")
    assert doc["table"][gather["first"]] == "gather(x,y=self-1,-1)" and gather["count"] == 9
