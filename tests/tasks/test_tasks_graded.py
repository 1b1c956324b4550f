"""The graded player `oracle-eps:E`: the oracle, except that with probability E a random legal action; E = 0 plays
as the oracle does, E = 1 never asks it; an attempt plays the same each time; a malformed name is refused."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.content import default_content
from wildhold.store.archive import Archive
from wildhold.tasks.attempt import run_attempt
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.graded import parse_eps
from wildhold.tasks.suite import policy_for

TASK = "crafting/craft-plank-v1"


def actions(path) -> list[tuple[int, str, dict]]:
    with Archive(path) as a:
        return [(i.tick, i.name, i.args) for i in a.inputs() if i.kind == "action"]


def play(name: str, out, repeat: int = 0) -> tuple[dict, list]:
    content, task = default_content(), default_suite().get(TASK)
    result = run_attempt(task, policy_for(name, task, content), name, repeat, out, content)
    return result, actions(out / f"{TASK.replace('/', '__')}__r{repeat}.wha")


def test_eps_zero_plays_the_oracles_actions_and_eps_one_never_asks_the_oracle(tmp_path, monkeypatch):
    oracle, oracle_actions = play("oracle", tmp_path / "o")
    zero, zero_actions = play("oracle-eps:0", tmp_path / "z")
    assert zero_actions == oracle_actions and zero["status"] == oracle["status"] == "success"
    from wildhold.tasks.oracle import Oracle

    def never(self, view):
        raise AssertionError("the oracle was asked")

    monkeypatch.setattr(Oracle, "decide", never)
    one, one_actions = play("oracle-eps:1", tmp_path / "r")
    assert "agent_error" not in one and one_actions  # it played, every action the random player's


def test_a_graded_attempt_plays_the_same_each_time(tmp_path):
    first = play("oracle-eps:0.5", tmp_path / "a", repeat=1)
    again = play("oracle-eps:0.5", tmp_path / "b", repeat=1)
    assert first[1] == again[1] and first[0]["status"] == again[0]["status"]


@pytest.mark.parametrize("name", ["oracle-eps:", "oracle-eps:1.5", "oracle-eps:-0.1", "oracle-eps:half"])
def test_a_malformed_graded_player_is_refused_in_one_line(name, tmp_path):
    with pytest.raises(ValueError, match="oracle-eps:E"):
        parse_eps(name)
    result = CliRunner().invoke(app, ["tasks", "run", "--suite", TASK, "--agent", name, "--out", str(tmp_path)])
    assert result.exit_code == 2 and "oracle-eps:E" in result.output and "Traceback" not in result.output
