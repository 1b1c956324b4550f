"""`wildhold fork`: a season archive forked at tick 3000 with one agent replaced replays exactly; the fork records
its parent's digest, the chain head at the fork and the tick, and its log at that point is the parent's."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wildhold.agents.runner import ScriptedRun
from wildhold.cli import app
from wildhold.content import default_content
from wildhold.eval.identity import agent_identity
from wildhold.runner.fork import ForkError, fork, fork_checks
from wildhold.service.verify import resimulate, verify_archive
from wildhold.store.archive import Archive

pytestmark = [pytest.mark.slow(seconds=20), pytest.mark.xdist_group("season_fork")]  # one season archive feeds every test

runner = CliRunner()
AT = 3000


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    """A season of four scripted agents (expedition x2, producer, idle), played to tick 3600."""
    out = tmp_path_factory.mktemp("season")
    run = ScriptedRun.start("season", 1, out / "match.sqlite")
    run.run(until=3600)
    run.match.end("cut short for the fork tests")
    path = run.match.export(out / "season.wildhold.zip")
    run.match.close()
    return path


@pytest.fixture(scope="module")
def forked(season, tmp_path_factory):
    return fork(season, AT, tmp_path_factory.mktemp("fork"), replace={"producer-3": "trader"})


def test_a_season_forked_at_tick_3000_with_one_agent_replaced_replays_exactly(season, forked):
    path = forked["archive"]
    verify_archive(path)  # re-simulated from its own seed and inputs: every check agrees, or this raises
    with Archive(path) as arc:
        sim = resimulate(arc, default_content())
        assert all(c.same for c in sim.checks)
        m = arc.manifest
    assert m["final_tick"] == 3600 and m["scenario"] == "season"
    record = m["fork"]
    with Archive(season) as parent:
        pm = parent.manifest
        parent_hashes = [h for _, h in parent.event_records()]
    assert record["tick"] == AT and record["parent_chain_head"] == pm["chain_head"]
    assert record["chain_head_at_fork"] == parent_hashes[record["seq"] - 1]  # the shared history is the parent's
    assert record["agents"] == {"producer-3": {"from": "producer", "to": "trader"}}
    assert m["chain_head"] != pm["chain_head"]  # another policy from tick 3000 on: another match
    assert all(same for *_, same in fork_checks(path, season)) and len(fork_checks(path, season)) == 3


def test_the_replaced_agent_is_its_own_configuration_on_the_leaderboard(forked):
    with Archive(forked["archive"]) as arc:
        m = arc.manifest
    producer = next(a for a in m["agents"] if a["name"] == "producer-3")
    assert agent_identity(m, producer) == {"harness": "direct", "provider": "scripted", "policy": "trader",
                                           "fork": {"tick": AT, "from": "producer"}}


def test_an_absent_agent_acts_no_more_after_the_fork(season, tmp_path):
    made = fork(season, AT, tmp_path, absent=["expedition-1"], ticks=120)
    with Archive(made["archive"]) as arc:
        agent = next(a["id"] for a in arc.manifest["agents"] if a["name"] == "expedition-1")
        late = [i for i in arc.inputs() if i.agent == agent and i.kind == "action" and i.tick >= AT]
        early = [i for i in arc.inputs() if i.agent == agent and i.kind == "action" and i.tick < AT]
        assert arc.manifest["final_tick"] == AT + 120
    assert early and not late


def test_fork_and_replay_from_the_command_line(season, tmp_path):
    made = runner.invoke(app, ["fork", str(season), "--at", str(AT), "--out", str(tmp_path / "f"), "--replace",
                               "producer-3=trader", "--ticks", "60"], env={"COLUMNS": "160"})
    assert made.exit_code == 0, made.output
    assert "producer-3: producer -> trader" in made.output
    replayed = runner.invoke(app, ["replay", str(tmp_path / "f" / "match.wildhold.zip"), "--parent", str(season)],
                             env={"COLUMNS": "160"})
    assert replayed.exit_code == 0 and "fork point in the parent" in replayed.output
    assert "replay matches the archive" in replayed.output


def test_a_fork_checked_against_another_parent_fails(season, forked, tmp_path):
    other = tmp_path / "other.wildhold.zip"
    run = ScriptedRun.start("season", 2, tmp_path / "o.sqlite")
    run.run(until=3100)
    run.match.export(other)
    run.match.close()
    checks = {name: same for name, _, _, same in fork_checks(forked["archive"], other)}
    assert checks == {"fork point in its log": True, "parent digest": False, "fork point in the parent": False}
    out = runner.invoke(app, ["replay", str(forked["archive"]), "--parent", str(other)], env={"COLUMNS": "160"})
    assert out.exit_code == 1


@pytest.mark.parametrize("kwargs, code", [
    ({"at": 360}, "fork_tick_out_of_range"),
    ({"at": 9999}, "fork_tick_out_of_range"),
    ({"replace": {"nobody": "trader"}}, "fork_unknown_agent"),
    ({"replace": {"idle-4": "dreamer"}}, "fork_unknown_policy"),
    ({"replace": {"idle-4": "trader"}, "absent": ["idle-4"]}, "fork_conflicting_agents"),
])
def test_a_bad_fork_is_refused_with_a_stable_code(season, tmp_path, kwargs, code):
    args = {"at": AT, **kwargs}
    with pytest.raises(ForkError) as refused:
        fork(season, args.pop("at"), tmp_path, ticks=10, **args)
    assert refused.value.code == code


def test_a_forked_archive_records_its_parent_the_fork_point_and_what_changed(forked):
    with Archive(forked["archive"]) as arc:
        record = arc.manifest["fork"]
    assert set(record) == {"parent_sha256", "parent_archive_head", "parent_chain_head", "tick", "seq",
                           "chain_head_at_fork", "inputs_carried", "agents"}
