"""`wildhold fork --experiment`: a famine archive of scripted agents forked with one character taken over by a model
arm (a recorded cassette, offline) seated on it; the fork replays exactly, its log at the fork point is the parent's,
and it carries the arm's identity under the character it played."""

from __future__ import annotations

import shutil

import pytest
import yaml
from typer.testing import CliRunner

from wildhold.agents.runner import ScriptedRun
from wildhold.agents.scaffold.experiment import Experiment, ExperimentError, Run
from wildhold.cli import app
from wildhold.content import default_content
from wildhold.eval.identity import agent_identity
from wildhold.runner.fork import ForkError, fork, fork_checks
from wildhold.service.match import SPEND
from wildhold.service.verify import resimulate, verify_archive
from wildhold.store.archive import Archive
from paths_support import ROOT

pytestmark = [pytest.mark.slow(seconds=10), pytest.mark.xdist_group("famine_fork")]  # one parent feeds every test

runner = CliRunner()
EXAMPLES = ROOT / "examples"
AT, END = 420, 480
SEAT = "producer-3"


def experiment(**changes) -> Experiment:
    """One model arm from a recorded cassette, seated on the famine's producer-3."""
    data = {"name": "takeover", "clock": "lockstep", "turn_deadline_s": 30.0, "budget_usd": 1.0, "ceiling_s": 600,
            "arms": [{"name": "explorer", "provider": "replay", "cassette": "cassettes/explorer.json", "seat": SEAT,
                      "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]}
    for key, value in changes.items():
        if key == "arm":
            data["arms"][0].update(value)
        else:
            data[key] = value
    return Experiment.model_validate(data)


@pytest.fixture(scope="module")
def famine(tmp_path_factory):
    """A famine of six scripted agents, played to tick 480."""
    out = tmp_path_factory.mktemp("famine")
    run = ScriptedRun.start("famine", 1, out / "match.sqlite")
    run.run(until=END)
    run.match.end("cut short for the fork tests")
    path = run.match.export(out / "famine.wildhold.zip")
    run.match.close()
    return path


@pytest.fixture(scope="module")
def forked(famine, tmp_path_factory):
    return fork(famine, AT, tmp_path_factory.mktemp("fork"), experiment=experiment(), base=EXAMPLES)


def test_a_model_arm_seated_on_a_character_plays_it_from_the_fork_and_the_fork_replays_exactly(famine, forked):
    path = forked["archive"]
    verify_archive(path)  # re-simulated from its own seed and inputs: every check agrees, or this raises
    with Archive(path) as arc:
        assert all(c.same for c in resimulate(arc, default_content()).checks)
        m = arc.manifest
        inputs = list(arc.inputs())
    with Archive(famine) as parent:
        pm = parent.manifest
        parent_hashes = [h for _, h in parent.event_records()]
    record = m["fork"]
    assert (m["scenario"], m["seed"], record["tick"], record["experiment"]) == ("famine", 1, AT, "takeover")
    assert record["chain_head_at_fork"] == parent_hashes[record["seq"] - 1]  # the shared history is the parent's
    assert record["parent_chain_head"] == pm["chain_head"] and m["chain_head"] != pm["chain_head"]
    assert record["agents"] == {SEAT: {"from": "producer", "to": "explorer"}}
    assert all(same for *_, same in fork_checks(path, famine)) and len(fork_checks(path, famine)) == 3
    assert [a["name"] for a in m["agents"]] == [a["name"] for a in pm["agents"]]  # no one joined: the arm took a seat
    ids = {a["name"]: a["id"] for a in m["agents"]}
    spends = [i for i in inputs if i.kind == SPEND]
    assert spends and {i.agent for i in spends} == {ids[SEAT]}  # the model's sessions were the seat's
    after = {i.agent for i in inputs if i.kind == "action" and i.tick >= AT}
    assert ids[SEAT] in after and set(ids.values()) <= after  # the seat and every kept character played on
    assert AT < m["final_tick"] <= END


def test_the_archive_carries_the_arms_identity_under_the_character_it_played(forked):
    with Archive(forked["archive"]) as arc:
        m = arc.manifest
    seat = next(a for a in m["agents"] if a["name"] == SEAT)
    ident = agent_identity(m, seat)
    assert (ident["provider"], ident["model"], ident["harness"]) == ("replay", "replay/explorer-v1", "wildhold-scaffold")
    assert ident["cassette_sha256"] and ident["fork"] == {"tick": AT, "from": "producer"}
    kept = next(a for a in m["agents"] if a["name"] == "trader-1")
    assert agent_identity(m, kept) == {"provider": "scripted", "policy": "trader", "harness": "wildhold-scaffold",
                                       "clock": "lockstep", "horizon": "hidden", "turn_deadline_s": 30.0}  # as it played


def test_fork_with_an_experiment_quietly_and_replay_from_the_command_line(famine, tmp_path):
    (tmp_path / "cassettes").mkdir()
    shutil.copyfile(EXAMPLES / "cassettes" / "explorer.json", tmp_path / "cassettes" / "explorer.json")
    exp = tmp_path / "fork.yaml"
    exp.write_text(yaml.safe_dump(experiment().model_dump(mode="json", exclude_unset=True)))
    made = runner.invoke(app, ["fork", str(famine), "--at", str(AT), "--out", str(tmp_path / "f"), "--experiment",
                               str(exp), "--ticks", "8", "-q"], env={"COLUMNS": "160"})  # -q as `run` takes it
    assert made.exit_code == 0, made.output
    assert f"{SEAT}: producer -> explorer" in made.output and "telemetry:" in made.output
    archive = tmp_path / "f" / "world" / "match.wildhold.zip"
    with Archive(archive) as arc:
        assert arc.manifest["final_tick"] == AT + 8  # --ticks ends the fork before the cassette does
    replayed = runner.invoke(app, ["replay", str(archive), "--parent", str(famine)], env={"COLUMNS": "160"})
    assert replayed.exit_code == 0 and "fork point in the parent" in replayed.output
    assert "replay matches the archive" in replayed.output


@pytest.mark.parametrize("exp, kwargs, code", [
    (experiment(arm={"seat": "nobody"}), {}, "fork_unknown_agent"),
    (experiment(arms=[experiment().arms[0].model_dump(), {**experiment().arms[0].model_dump(), "name": "again"}]), {},
     "fork_seat_taken"),
    (experiment(), {"absent": [SEAT]}, "fork_conflicting_agents"),
    (experiment(), {"replace": {SEAT: "trader"}}, "fork_conflicting_agents"),
    (experiment(arm={"name": "trader-1"}), {}, "fork_name_taken"),
    (experiment(scenario="tiny"), {}, "fork_experiment_mismatch"),
    (experiment(seed=2), {}, "fork_experiment_mismatch"),
])
def test_a_bad_seat_is_refused_with_a_stable_code_before_anything_is_written(famine, tmp_path, exp, kwargs, code):
    with pytest.raises(ForkError) as refused:
        fork(famine, AT, tmp_path / "f", ticks=5, experiment=exp, base=EXAMPLES, **kwargs)
    assert refused.value.code == code and not (tmp_path / "f").exists()


def test_another_model_takes_over_a_model_arms_seat_in_a_served_run(tmp_path):
    """A `wildhold run` archive (two recorded-turn arms and a scripted baseline) forked with the explorer gone and
    another arm in the stumbler's seat; the baseline plays on with the policy its arm identity names."""
    served = Run(Experiment.load(EXAMPLES / "offline-smoke.yaml"), tmp_path / "parent", EXAMPLES).play_through()
    with Archive(served["archive"]) as arc:
        at = arc.manifest["start_tick"] + 20
    made = fork(served["archive"], at, tmp_path / "f", absent=["explorer"],
                experiment=experiment(arm={"name": "newcomer", "seat": "stumbler"}), base=EXAMPLES)
    verify_archive(made["archive"])
    assert all(same for *_, same in fork_checks(made["archive"], served["archive"]))
    assert made["fork"]["agents"] == {"explorer": {"from": "replay", "to": "absent"},
                                      "stumbler": {"from": "replay", "to": "newcomer"}}
    with Archive(made["archive"]) as arc:
        m = arc.manifest
    agents = {a["name"]: a for a in m["agents"]}
    assert agent_identity(m, agents["stumbler"])["fork"] == {"tick": at, "from": "replay"}
    assert agent_identity(m, agents["baseline"])["policy"] == "producer"
    assert agent_identity(m, agents["explorer"])["policy"] == "absent"


def test_a_fork_refuses_a_folder_that_holds_a_run_already(famine, forked):
    with pytest.raises(ForkError) as refused:
        fork(famine, AT, forked["archive"].parent.parent, ticks=5, experiment=experiment(), base=EXAMPLES)
    assert refused.value.code == "fork_out_used"


def test_a_seat_outside_a_fork_is_refused(tmp_path):
    with pytest.raises(ExperimentError) as refused:
        Run(experiment(scenario="famine"), tmp_path, EXAMPLES)
    assert refused.value.code == "seat_without_fork" and not (tmp_path / "world").exists()
    exp = tmp_path / "seated.yaml"
    exp.write_text(yaml.safe_dump(experiment(arm={"cassette": str(EXAMPLES / "cassettes" / "explorer.json")})
                                  .model_dump(mode="json", exclude_unset=True)))
    out = runner.invoke(app, ["run", str(exp), "--out", str(tmp_path / "run"), "--quiet"], env={"COLUMNS": "160"})
    assert out.exit_code == 1 and "seat_without_fork" in out.output
