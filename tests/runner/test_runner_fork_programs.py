"""`wildhold fork` of an archive whose agent ran a program: the program running at the fork restarts there from its
revision (its memory does not carry over), its runs from the fork on are in the fork's archive and re-simulate from
their transcripts, and the fork verifies and replays against its parent; an absent or replaced character's program
is stopped, never restarted."""

from __future__ import annotations

import pytest
from programs_support import join, open_host, steps
from typer.testing import CliRunner

from wildhold.agents.scaffold.experiment import Experiment
from wildhold.cli import app
from wildhold.content import default_content
from wildhold.programs.replay import check_archive
from wildhold.runner.fork import PROGRAM_MEMORY, fork, fork_checks
from wildhold.service.verify import verify_archive
from wildhold.store.archive import Archive
from paths_support import ROOT

pytestmark = [pytest.mark.slow(seconds=5), pytest.mark.xdist_group("program_fork")]  # one parent feeds every test

runner = CliRunner()
AT, TICKS = 380, 40  # the tiny scenario starts at tick 360
# A program that counts its turns: what it remembers shows in its log, so a restart from the first line shows too.
COUNTER = 'n = 0\nwhile True:\n    n += 1\n    r = wait(ticks=2)\n    log("turn", n, now(), r["status"])\n'
ISSUER = "program:count@1"


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    """A served tiny match: `counter` runs the program (its agent silent), `walker` joined with a scripted policy."""
    host = open_host(tmp_path_factory.mktemp("parent"))
    agent = join(host, "counter")
    host.register("walker", {"policy": "survivor"})
    host.programs.save(agent, "count", COUNTER)
    host.programs.start(agent, "count")
    steps(host, TICKS)
    try:
        return host.stop()["archive"]
    finally:
        host.close()


def program_inputs(path, after: int = -1):
    with Archive(path) as arc:
        return [i for i in arc.inputs() if i.tick > after and (i.kind == "program" or i.issuer == ISSUER)]


def test_a_program_running_at_the_fork_restarts_there_and_the_fork_verifies_and_replays(parent, tmp_path):
    made = fork(parent, AT, tmp_path / "fork")
    path = made["archive"]
    verify_archive(path)  # every program run re-simulates from its transcript, or this raises
    record = made["fork"]
    assert record["programs"] == [{"character": "counter", "agent": "a1", "program": "count", "revision": 1, "tick": AT,
                                   "parent_run": 1, "to": "restarted", "run": 2}]
    assert record["program_memory"] == PROGRAM_MEMORY
    with Archive(path) as arc, Archive(parent) as par:
        assert arc.manifest["fork"] == record and arc.manifest["final_tick"] == 360 + TICKS
        assert list(arc.program_sources()) == list(par.program_sources())  # saved before the fork: carried
        runs = list(arc.program_runs())
        assert [(r["run"], r["started_tick"], r["state"]) for r in runs] == [(2, AT, "stopped")]  # only the fork's run
        assert [c.ok for c in check_archive(arc, default_content())] == [True]
        fork_log = [line["text"] for line in arc.program_logs()]
        parent_log = [line["text"] for line in par.program_logs() if line["tick"] > AT]
    assert fork_log[0].startswith("turn 1 ") and not parent_log[0].startswith("turn 1 ")  # counting from 1 again
    # the log says so: the parent's run stopped at the fork, the fork's own started there, and it acted after it
    assert [(i.tick, i.name, i.args.get("run"), i.issuer) for i in program_inputs(path, AT - 1) if i.kind == "program"] == [
        (AT, "stop", 1, "operator"), (AT, "start", 2, "operator"), (360 + TICKS, "stop", 2, "direct")]
    assert any(i.kind == "action" for i in program_inputs(path, AT))
    assert all(same for *_, same in fork_checks(path, parent)) and len(fork_checks(path, parent)) == 3
    result = runner.invoke(app, ["replay", str(path), "--parent", str(parent)])
    assert result.exit_code == 0, result.output
    assert "program runs re-simulate" in result.output and "replay matches the archive" in result.output
    result = runner.invoke(app, ["fork", str(parent), "--at", str(AT), "--out", str(tmp_path / "again")])
    assert result.exit_code == 0, result.output
    assert f"counter's program count@1 (run 1): restarted as run 2 at tick {AT}" in " ".join(result.output.split())
    with Archive(path) as a, Archive(tmp_path / "again" / "match.wildhold.zip") as b:
        assert a.manifest["chain_head"] == b.manifest["chain_head"]  # the restarted program plays the same again


@pytest.mark.parametrize("how", ["absent", "replace"])
def test_an_absent_or_replaced_characters_program_is_stopped_at_the_fork_and_not_restarted(parent, tmp_path, how):
    change = {"absent": ["counter"]} if how == "absent" else {"replace": {"counter": "survivor"}}
    made = fork(parent, AT, tmp_path / how, **change)
    path = made["archive"]
    verify_archive(path)
    why = "its character is absent from the fork" if how == "absent" else "survivor plays its character from the fork"
    assert made["fork"]["programs"] == [{"character": "counter", "agent": "a1", "program": "count", "revision": 1,
                                         "tick": AT, "parent_run": 1, "to": "stopped", "why": why}]
    assert [(i.tick, i.name, i.args) for i in program_inputs(path, AT - 1)] == [
        (AT, "stop", {"name": "count", "revision": 1, "run": 1, "reason": why})]  # no run, no action after the fork
    with Archive(path) as arc:
        assert arc.has_programs and list(arc.program_runs()) == []
        inputs = list(arc.inputs())
    acted = {i.issuer for i in inputs if i.kind == "action" and i.agent == "a1" and i.tick >= AT}
    assert acted == (set() if how == "absent" else {"direct"})
    result = runner.invoke(app, ["replay", str(path), "--parent", str(parent)])
    assert result.exit_code == 0, result.output


def test_a_fork_played_as_an_experiment_restarts_the_program_on_its_served_match(parent, tmp_path):
    exp = Experiment.model_validate({
        "name": "takeover", "clock": "lockstep", "turn_deadline_s": 30.0, "budget_usd": 1.0, "ceiling_s": 600,
        "arms": [{"name": "explorer", "provider": "replay", "cassette": "cassettes/explorer.json", "seat": "walker",
                  "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]})
    made = fork(parent, AT, tmp_path / "exp", experiment=exp, base=ROOT / "examples")
    path = made["archive"]
    verify_archive(path)
    assert [p["to"] for p in made["fork"]["programs"]] == ["restarted"]
    with Archive(path) as arc:
        assert [(r["run"], r["started_tick"]) for r in arc.program_runs()] == [(2, AT)]
        assert [c.ok for c in check_archive(arc, default_content())] == [True]
    assert any(i.kind == "action" for i in program_inputs(path, AT))
    result = runner.invoke(app, ["replay", str(path), "--parent", str(parent)])
    assert result.exit_code == 0, result.output
