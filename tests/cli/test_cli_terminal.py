"""What the command line prints, at a fixed terminal width: every table readable at 80 columns (nothing cut,
nothing wider) and one whole table when there is room; `--version`; listed choices; `wildhold examples`."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

import wildhold
from wildhold.agents.scaffold.accounting import Telemetry
from wildhold.agents.scaffold.progress import LiveView, summary_table
from wildhold.cli import DEMO_COLUMNS, Clock, _summary_table, app, season_table
from wildhold.revision import git_revision, version_text
from wildhold.eval.season import COLUMNS, SeasonRow
from wildhold.service.access import CLOCKS
from wildhold.terminal import Col, FitTable
from paths_support import FIXTURES as FIXTURE_ROOT

runner = CliRunner()
FIXTURES = FIXTURE_ROOT / "eval"
ELLIPSIS = "…"


def render(renderable, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, force_terminal=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def assert_fits(text: str, width: int) -> None:
    too_wide = [line for line in text.splitlines() if len(line) > width]
    assert not too_wide, f"lines wider than {width}: {too_wide}"
    assert ELLIPSIS not in text, text


def table_count(text: str) -> int:
    return sum(line.lstrip().startswith(("┏", "┌")) for line in text.splitlines())


# ---- the fitting itself ---------------------------------------------------------------------------


def test_a_fit_table_is_whole_when_it_fits_abbreviated_when_that_fits_else_stacked_without_cutting():
    table = FitTable([Col("name", "left", key=True), Col("first measure", short="m1"), Col("second measure", short="m2"),
                      Col("notes", "left", wrap=True)], title="t", caption="c")
    table.add_row("a-long-agent-name", "123456", "7", "several words that may wrap at spaces")
    whole = render(table, 120)
    assert table_count(whole) == 1 and "first measure" in whole and "legend" not in whole
    assert "several words that may wrap at spaces" in whole
    abbreviated = render(table, 70)
    assert_fits(abbreviated, 70)
    assert table_count(abbreviated) == 1 and "legend: m1 = first measure, m2 = second measure" in abbreviated
    stacked = render(table, 45)
    assert_fits(stacked, 45)
    assert table_count(stacked) == 2 and stacked.count("a-long-agent-name") == 2  # the key column in each part
    assert_fits(render(table, 30), 30)  # too narrow for any layout: cells fold onto more lines, never cut


# ---- wildhold demo --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_80(tmp_path_factory):
    """The default demo as a user runs it in an 80-column terminal (a few seconds)."""
    out = tmp_path_factory.mktemp("demo80")
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run([sys.executable, "-m", "wildhold.cli", "demo", "--quiet", "--out", str(out)],
                            capture_output=True, text=True, env=env, timeout=240)
    assert result.returncode == 0, result.stderr
    return result.stdout, out / "match.wildhold.zip"


def _agents(archive: Path) -> list[dict]:
    import zipfile

    with zipfile.ZipFile(archive) as z:
        return json.loads(z.read("manifest.json"))["agents"]


def test_the_demo_summary_at_80_columns_cuts_no_cell(demo_80):
    text, archive = demo_80
    assert_fits(text, 80)
    for agent in _agents(archive):
        rows = [line for line in text.splitlines() if f" {agent['name']} " in line]
        assert rows and f" {agent['policy']} " in rows[0]  # name and policy whole, on the agent's row
    assert "legend:" in text  # the abbreviated headers are explained


def test_the_demo_summary_uses_the_full_width_when_there_is_more(demo_80):
    _, archive = demo_80
    text = render(_summary_table(archive), 200)
    assert_fits(text, 200)
    assert table_count(text) == 1 and "legend" not in text
    header = next(line for line in text.splitlines() if "agent" in line)
    assert all(f" {c.header} " in header for c in DEMO_COLUMNS)
    assert max(len(line) for line in text.splitlines()) > 120


def test_the_season_table_fits_80_columns_and_is_whole_at_200():
    rows = [SeasonRow("a1", "expedition-long-name", outfit=True, depth=3, hero=True, kills=41, bosses=3, crafts=12,
                      coins=1250, trial=8, downs=2), SeasonRow("a2", "producer-2", kills=0, coins=0)]
    narrow = render(season_table(rows), 80)
    assert_fits(narrow, 80)
    assert "expedition-long-name" in narrow and "1250" in narrow and "8/8" in narrow
    wide = render(season_table(rows), 200)
    assert table_count(wide) == 1 and all(f" {c} " in wide for c in COLUMNS)


# ---- wildhold run: the live view and the closing summary -----------------------------------------------


LONG_ARM = "claude-sonnet-4-5-thinking-high"


def _fake_run(state: str, tick: int, end_tick: int = 1440):
    """What LiveView reads of a run, without a served world."""
    arms = [SimpleNamespace(name=LONG_ARM, provider="anthropic", policy=None),
            SimpleNamespace(name="baseline", provider="scripted", policy="producer")]
    ledger = SimpleNamespace(sessions=3, llm_calls=41, tokens=1_234_567, cost_usd=1.25)
    return SimpleNamespace(
        host=SimpleNamespace(world=SimpleNamespace(day=1, tick=tick, start_tick=0, end_tick=end_tick), state=state),
        exp=SimpleNamespace(scenario="tiny", arms=arms), states={LONG_ARM: "done: cassette_exhausted"},
        ledger=SimpleNamespace(arm=lambda name: ledger), budget=lambda arm: 5.0, ceiling=lambda arm: 600.0,
        elapsed=lambda name: 42.0)


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_live_view_names_the_scenario_and_cuts_no_arm_name(width):
    console = Console(width=width, record=True, color_system=None, force_terminal=True, file=io.StringIO())
    console.print(LiveView(_fake_run("running", 600), console).renderable())
    text = console.export_text()
    assert_fits(text, width)
    assert "tiny, day 1 (running)" in text and "season" not in text and "600/1440" in text
    assert LONG_ARM in text and "done: cassette_exhausted" in text and "1,234,567" in text
    headers = [line for line in text.splitlines() if line.startswith("arm ")]
    assert len(headers) == (1 if width >= 120 else 2)  # one table when there is room, else two stacked


def test_the_tick_bar_completes_when_the_arms_end_the_match_early():
    console = Console(width=120, record=True, color_system=None, force_terminal=True, file=io.StringIO())
    view = LiveView(_fake_run("over", 45), console)
    console.print(view.renderable())
    world = next(line for line in console.export_text().splitlines() if line.startswith("tiny, day 1 (over)"))
    assert "45/1440 ticks, ended early" in world
    assert next(t for t in view.bars.tasks if t.description.startswith("tiny")).finished  # the bar is full


def test_the_closing_summary_fits_80_columns(tmp_path):
    model = "claude-sonnet-4-5-20250929"
    (tmp_path / "manifest.json").write_text(json.dumps({"experiment": "smoke", "arms": [
        {"name": LONG_ARM, "provider": "anthropic", "model": model}, {"name": "baseline", "provider": "scripted",
                                                                     "policy": "producer"}]}))
    (tmp_path / "report.json").write_text(json.dumps({
        "match": {"scenario": "tiny", "seed": 1},
        "agents": [{"name": LONG_ARM, "wealth_cents": 123456, "rank": 1}, {"name": "baseline", "wealth_cents": 700, "rank": 2}],
        "metrics": {"a1": {"name": LONG_ARM, "quests_completed": 2}, "a2": {"name": "baseline", "quests_completed": 0}}}))
    telemetry = Telemetry(tmp_path / "telemetry.jsonl")
    telemetry.emit("session_start", LONG_ARM, session=1)
    telemetry.emit("llm_call", LONG_ARM, input_tokens=900_000, cached_input_tokens=800_000, output_tokens=20_000, cost_usd=3.0)
    telemetry.emit("run_complete", LONG_ARM, reason="budget_exhausted")
    telemetry.emit("run_complete", "baseline", reason="model_arms_done")
    narrow = render(summary_table(tmp_path), 80)
    assert_fits(narrow, 80)
    for whole in (LONG_ARM, f"anthropic {model}", "budget_exhausted", "model_arms_done", "920,000", "1,234.56"):
        assert whole in narrow
    assert "season" not in narrow  # a scripted arm's end is what its telemetry says
    assert table_count(render(summary_table(tmp_path), 220)) == 1


# ---- other tables at 80 columns -------------------------------------------------------------------


def test_the_leaderboard_and_a_bench_table_fit_80_columns():
    archives = [str(FIXTURES / f"{n}.wildhold.zip") for n in ("ties_seed5", "delve_seed11")]
    result = runner.invoke(app, ["leaderboard", *archives, "--trust", "--pool-scenarios"], env={"COLUMNS": "80"})  # earlier content
    assert result.exit_code == 0, result.output
    assert_fits(result.output, 80)
    assert "Leaderboard over 2 matches" in result.output

    from wildhold.bench.engine import _table

    honest = {"cpu_agent_ticks_per_s": 1000.0, "agent_ticks_per_s": 900.0, "accepted_share": 1.0, "candidates_passed_share": 0.2, "observe_us": 50.0,
              "decide_us": 40.0, "submit_us": 10.0, "step_us_per_agent_tick": 5.0, "decisions_per_agent_tick": 0.5}
    figures = {"quick": False, "repeats": 3, "memory_method": "tracemalloc", "agent_ticks_per_s": {"1": 1.0, "100": 2.0},
               "honest": {"1": honest, "100": honest}, "honest_ticks": {"1": 10, "100": 10}, "guessed_accepted_share": 0.1,
               "ticks": {"1": 10, "100": 10}, "pass": {"worldgen_384_ms": True, "mb_full_maps": False, "observe_9k_us": True,
                                                                "honest_100_agent_ticks_per_s": False, "crowd_tick_s": False},
               "observe_by_memory": {"9000": {"remembered": 9012, "changes_us": 97.0, "whole_us": 4178.0}},
               "worldgen_ms": 1.0, "worldgen_wall_ms": 1.5, "worldgen_384_ms": 120.0, "worldgen_384_wall_ms": 130.0,
               "mb_full_maps": 7.7, "full_map_tiles": 9216, "crowd": {"agents": 10_000, "tick_cpu_s": 9.2, "observe_cpu_s": 1.3, "gc_cpu_s": 1.8, "memory_mb": 60.0},
               "mb_per_world": 2.0, "mb_per_world_peak": 3.0, "crafter_steps_per_s": None,
               "crafter_cpu_steps_per_s": None, "crafter_reset_ms": None, "ratio_1_agent_vs_crafter": None, "ratio_100_agents_vs_crafter": None,
               "ratio_crafter_reset_vs_worldgen": None,
               "observe_by_part": {"us": {"market": 6.0, "settlement": 3.0}, "total_us": 9.0, "observations": 1000,
                                   "observations_sha256": "ab" * 32, "chain_head": "cd" * 16}}
    text = render(_table(figures), 80)
    assert_fits(text, 80)
    assert table_count(text) == 1 and "crafter steps/s" in text


# ---- --version ------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_version_names_the_commit_in_a_checkout_and_only_the_version_elsewhere(tmp_path):
    package = tmp_path / "repo" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    _git(package.parent, "init", "-q")
    _git(package.parent, "add", ".")
    _git(package.parent, "commit", "-qm", "first")
    sha = _git(package.parent, "rev-parse", "--short", "HEAD")
    assert version_text(package) == f"wildhold {wildhold.__version__} (git {sha})"
    (package / "__init__.py").write_text("x = 1\n")
    assert git_revision(package) == f"{sha}-dirty"
    assert git_revision(package, short=False) == _git(package.parent, "rev-parse", "HEAD") + "-dirty"  # run manifests
    (tmp_path / "elsewhere").mkdir()
    assert git_revision(tmp_path / "elsewhere") is None
    (package / "untracked").mkdir()  # inside a repository, but not tracked by it: an installed package
    assert version_text(package / "untracked") == f"wildhold {wildhold.__version__}"

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith(f"wildhold {wildhold.__version__}")


# ---- choices and spellings ------------------------------------------------------------------------


def test_formats_and_clocks_are_listed_choices_and_json_has_one_spelling(tmp_path):
    assert [c.value for c in Clock] == list(CLOCKS)
    for args, option in ((["rules", "--format", "pdf"], "--format"), (["serve", "--clock", "sundial"], "--clock"),
                         (["report", str(FIXTURES / "ties_seed5.wildhold.zip"), "--format", "pdf"], "--format")):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and option in result.output and "is not one of" in result.output
    assert "md|json" in runner.invoke(app, ["rules", "--help"], env={"COLUMNS": "120"}).output
    archive = str(FIXTURES / "ties_seed5.wildhold.zip")
    spelled = runner.invoke(app, ["report", archive, "--json", "--trust"])
    assert spelled.exit_code == 0 and spelled.stdout == runner.invoke(app, ["report", archive, "--format", "json", "--trust"]).stdout
    clash = runner.invoke(app, ["report", archive, "--json", "--format", "html"])
    assert clash.exit_code == 2 and "two formats" in clash.output
    assert json.loads(runner.invoke(app, ["rules", "--json"]).stdout)["version"]["wildhold"] == wildhold.__version__
    for command in ("demo", "resume", "run"):
        assert "-q" in runner.invoke(app, [command, "--help"], env={"COLUMNS": "120"}).output


# ---- wildhold examples ----------------------------------------------------------------------------


def _tree(root) -> set[str]:
    def walk(node, prefix: str):
        for child in node.iterdir():
            if child.name == "__pycache__" or child.name.endswith(".pyc"):
                continue
            if child.is_dir():
                yield from walk(child, f"{prefix}{child.name}/")
            else:
                yield f"{prefix}{child.name}"

    return set(walk(root, ""))


def test_examples_copies_the_packaged_tree_refuses_to_overwrite_and_each_experiment_finds_its_files(tmp_path):
    from wildhold.agents.scaffold.experiment import Experiment

    dest = tmp_path / "ex"
    result = runner.invoke(app, ["examples", str(dest)])
    assert result.exit_code == 0, result.output
    packaged = _tree(files("wildhold") / "examples")
    assert {"offline-smoke.yaml", "cassettes/explorer.json", "programs/farmer.py"} <= packaged
    assert _tree(dest) == packaged
    assert f"wildhold run {dest / 'offline-smoke.yaml'} --out runs/smoke" in result.output

    again = runner.invoke(app, ["examples", str(dest)])
    assert again.exit_code == 1 and "--force" in again.output and "Traceback" not in again.output
    (dest / "offline-smoke.yaml").write_text("edited")
    assert runner.invoke(app, ["examples", str(dest), "--force"]).exit_code == 0
    assert (dest / "offline-smoke.yaml").read_bytes() == (files("wildhold") / "examples" / "offline-smoke.yaml").read_bytes()

    for experiment in dest.glob("*.yaml"):  # cassettes resolve beside the file, whatever the working directory
        if experiment.name.startswith("sweep-"):  # a sweep file: its arms are an experiment's
            arms = yaml.safe_load(experiment.read_text())["arms"]
            assert all("cassette" not in arm or (experiment.parent / arm["cassette"]).is_file() for arm in arms)
            continue
        for arm in Experiment.load(experiment).arms:
            assert arm.cassette is None or (experiment.parent / arm.cassette).is_file()
