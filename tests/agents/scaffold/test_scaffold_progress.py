"""The live view of `wildhold run`: on a terminal it shows the world's ticks and each arm's sessions, spend
and state; off a terminal, or with --quiet, it prints nothing."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from wildhold.agents.scaffold.adapters import Usage
from wildhold.agents.scaffold.experiment import Experiment, Run, run_experiment
from wildhold.agents.scaffold.progress import LiveView
from wildhold.cli import app
from paths_support import ROOT

EXAMPLE = ROOT / "examples" / "offline-smoke.yaml"


def _terminal(width: int = 160) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=width, color_system=None), buffer


def test_the_view_shows_season_ticks_and_each_arms_sessions_spend_budget_and_state(tmp_path):
    data = Experiment.load(EXAMPLE).model_dump()
    data["arms"][1]["budget_usd"] = 2.5
    run = Run(Experiment.model_validate(data), tmp_path, EXAMPLE.parent)
    try:
        ledger = run.ledger.arm("explorer")
        ledger.add(Usage(120_000, 0, 10_000), 1.25)
        ledger.sessions = 3
        run.states.update(explorer="session 3", stumbler="asleep until tick 400", baseline="playing")
        console, buffer = _terminal()
        console.print(LiveView(run, console).renderable())
    finally:
        run.host.close()
    text = buffer.getvalue()
    season = run.host.world.end_tick - run.host.world.start_tick
    assert f"0/{season}" in text and "ticks" in text
    assert "125/500" in text and "0/250" in text  # spend bars in cents of each arm's own budget
    explorer = next(line for line in text.splitlines() if line.startswith("explorer ") and "spend" not in line)
    assert "session 3" in explorer and "130,000" in explorer and "$1.2500" in explorer and " 3 " in explorer
    assert "asleep until tick 400" in text and "playing (producer)" in text


@pytest.mark.slow
def test_a_run_on_a_terminal_draws_the_view_and_quiet_or_no_terminal_draws_nothing(tmp_path):
    example = tmp_path / "exp"
    shutil.copytree(EXAMPLE.parent, example)
    console, buffer = _terminal()
    run_experiment(example / "offline-smoke.yaml", tmp_path / "shown", console=console)
    shown = buffer.getvalue()
    assert "tiny, day 1 (over)" in shown and "explorer spend" in shown and "cassette_exhausted" in shown
    assert "ticks, ended early" in shown  # the arms ended the day early: the bar completes, beside the tick reached

    console, buffer = _terminal()
    run_experiment(example / "offline-smoke.yaml", tmp_path / "quiet", quiet=True, console=console)
    assert buffer.getvalue() == ""

    result = CliRunner().invoke(app, ["run", str(example / "offline-smoke.yaml"), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert "explorer spend" not in result.output and "ticks" not in result.output  # not a terminal: just the paths
    assert "spend_curve: " in result.output
