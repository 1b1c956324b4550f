"""An arm's identity is every setting that changes what its agent sees or may do: each field of an experiment and
an arm is in it unless it is declared neutral (`NEUTRAL`), or, for a scripted arm, read only by the scaffold
(`SCAFFOLD_ONLY`). Two arms that differ only in one such setting (an image arm and a text arm, seed 002's ablation)
are two configurations on the leaderboard and in compare; a sweep's own settings are each classified."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from wildhold.agents.scaffold.experiment import NEUTRAL, SCAFFOLD_ONLY, ArmSpec, Experiment, arm_identity
from wildhold.agents.scaffold.session import Caps
from wildhold.eval.identity import identity_key
from wildhold.runner.spec import NOT_ARM_SETTINGS, Protocol, Sweep, identity

PRICE = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
MODEL_ARM = {"name": "probe", "provider": "replay", "cassette": "a.json", "price": PRICE}
SCRIPTED_ARM = {"name": "baseline", "provider": "scripted", "policy": "producer"}
EXPERIMENT = {"name": "e", "budget_usd": 1.0, "ceiling_s": 120}

# Each setting: (experiment fields both sides share, arm fields both share, the experiment's change, the arm's change).
CHANGES: dict[str, tuple[dict, dict, dict, dict]] = {
    "Experiment.name": ({}, {}, {"name": "other"}, {}),
    "Experiment.scenario": ({}, {}, {"scenario": "famine"}, {}),
    "Experiment.seed": ({}, {}, {"seed": 2}, {}),
    "Experiment.clock": ({}, {}, {"clock": "realtime"}, {}),
    "Experiment.tick_seconds": ({"clock": "realtime"}, {}, {"tick_seconds": 2.0}, {}),
    "Experiment.objective": ({}, {}, {"objective": "Build a home."}, {}),
    "Experiment.horizon": ({}, {}, {"horizon": "visible"}, {}),
    "Experiment.observation": ({}, {}, {"observation": "both"}, {}),
    "Experiment.tools": ({}, {}, {"tools": "compact"}, {}),
    "Experiment.budget_usd": ({}, {}, {"budget_usd": 2.0}, {}),
    "Experiment.ceiling_s": ({}, {}, {"ceiling_s": 60}, {}),
    "Experiment.turn_deadline_s": ({}, {}, {"turn_deadline_s": 9.0}, {}),
    "Experiment.caps": ({}, {}, {"caps": {"max_tool_calls": 10}}, {}),
    "Experiment.arms": ({}, {}, {"arms": "and another"}, {}),
    "Experiment.cohort": ({}, {}, {"cohort": ["probe"]}, {}),
    "Experiment.scaffold_profile": ({}, {}, {"scaffold_profile": "budget_visible"}, {}),
    "Experiment.knowledge_pack": ({"scaffold_profile": "knowledge_pack", "knowledge_pack": "pack"}, {},
                                  {"knowledge_pack": "pack2"}, {}),
    "ArmSpec.name": ({}, {}, {}, {"name": "other"}),
    "ArmSpec.provider": ({}, {}, {}, {"provider": "openai"}),
    "ArmSpec.model": ({}, {}, {}, {"model": "replay/other"}),
    "ArmSpec.base_url": ({}, {}, {}, {"base_url": "http://127.0.0.1:9/v1"}),
    "ArmSpec.api_key_env": ({}, {}, {}, {"api_key_env": "KEY"}),
    "ArmSpec.cassette": ({}, {}, {}, {"cassette": "b.json"}),
    "ArmSpec.policy": ({}, {}, {}, {"policy": "trader"}),
    "ArmSpec.sampling": ({}, {}, {}, {"sampling": {"temperature": 0.5}}),
    "ArmSpec.price": ({}, {}, {}, {"price": {"input_per_mtok": 3.0, "output_per_mtok": 2.0}}),
    "ArmSpec.budget_usd": ({}, {}, {}, {"budget_usd": 0.5}),
    "ArmSpec.ceiling_s": ({}, {}, {}, {"ceiling_s": 30}),
    "ArmSpec.scaffold_profile": ({}, {}, {}, {"scaffold_profile": "design_withheld"}),
    "ArmSpec.knowledge_pack": ({"scaffold_profile": "knowledge_pack", "knowledge_pack": "pack"}, {}, {},
                               {"knowledge_pack": "pack2"}),
    "ArmSpec.seat": ({}, {}, {}, {"seat": "ann"}),
}
SETTINGS = [f"{owner.__name__}.{name}" for owner in (Experiment, ArmSpec) for name in owner.model_fields]


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """Two cassettes of one recorded model that differ in their turns, and two knowledge packs."""
    (tmp_path / "a.json").write_text(json.dumps({"model": "replay/probe", "turns": []}))
    (tmp_path / "b.json").write_text(json.dumps({"model": "replay/probe", "turns": [{"tool_calls": []}]}))
    for pack, text in (("pack", "Berries restore satiety.\n"), ("pack2", "Wood burns.\n")):
        (tmp_path / pack).mkdir()
        (tmp_path / pack / "notes.md").write_text(text)
    return tmp_path


def key_of(base: Path, exp_fields: dict[str, Any], arm_fields: dict[str, Any], scripted: bool = False) -> str:
    """The identity key of the probe arm (or, `scripted`, of a scripted arm beside it) under these fields."""
    arms = [{**MODEL_ARM, **arm_fields}, SCRIPTED_ARM]
    if exp_fields.get("arms") == "and another":
        arms.append({"name": "extra", "provider": "scripted", "policy": "trader"})
    exp = Experiment.model_validate({**EXPERIMENT, **exp_fields, "arms": arms})
    return identity_key(arm_identity(exp, exp.arms[1 if scripted else 0], base))


def test_every_setting_says_how_it_is_varied_and_the_declarations_name_real_fields():
    assert sorted(CHANGES) == sorted(SETTINGS), "a new setting: say here how to vary it (and whether it is neutral)"
    assert set(NEUTRAL) | SCAFFOLD_ONLY <= set(SETTINGS) and not set(NEUTRAL) & SCAFFOLD_ONLY


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_model_arm_is_another_configuration_for_every_setting_but_the_neutral(base, setting):
    exp_shared, arm_shared, exp_change, arm_change = CHANGES[setting]
    before = key_of(base, exp_shared, arm_shared)
    after = key_of(base, {**exp_shared, **exp_change}, {**arm_shared, **arm_change})
    assert (before == after) == (setting in NEUTRAL), f"{setting}: {'left out of' if before == after else 'in'} the identity"


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.startswith("Experiment.")])
def test_a_scripted_arm_is_another_configuration_for_every_setting_it_plays_under(base, setting):
    exp_shared, arm_shared, exp_change, _ = CHANGES[setting]
    before = key_of(base, exp_shared, arm_shared, scripted=True)
    after = key_of(base, {**exp_shared, **exp_change}, arm_shared, scripted=True)
    assert (before == after) == (setting in NEUTRAL or setting in SCAFFOLD_ONLY), setting


@pytest.mark.parametrize("cap", [f.name for f in fields(Caps)])
def test_every_cap_is_in_the_identity(base, cap):
    assert key_of(base, {}, {}) != key_of(base, {"caps": {cap: getattr(Caps(), cap) + 1}}, {})


def test_a_text_arm_and_an_image_arm_are_two_configurations_on_the_leaderboard(base, tmp_path):
    from wildhold.eval.leaderboard import leaderboard
    from wildhold.service.match import Match

    archives = []
    for seed, observation in ((1, "text"), (2, "both"), (3, "text")):
        exp = Experiment.model_validate({**EXPERIMENT, "observation": observation, "arms": [MODEL_ARM]})
        match = Match.create("tiny", seed, tmp_path / f"m{seed}.sqlite")
        match.join("probe")
        for _ in range(3):
            match.step()
        match.end("fixture")
        archives.append(match.export(tmp_path / f"m{seed}.wildhold.zip",
                                     extra={"arm_identities": {"probe": arm_identity(exp, exp.arms[0], base)}}))
        match.close()
    rows = leaderboard(archives, trust=True)["rows"]
    assert sorted((r["identity"]["observation"], r["matches"]) for r in rows) == [("both", 1), ("text", 2)]
    assert len({r["config"] for r in rows}) == 2 and all(r["config"].startswith("replay/probe #") for r in rows)


def test_two_sweeps_differing_only_in_what_an_observe_shows_are_compared_as_two_configurations(base, tmp_path):
    from wildhold.runner.compare import compare

    sides = []
    for observation in ("text", "image"):
        sweep = Sweep.model_validate({"name": observation, "budget_usd": 1.0, "experiment": {"observation": observation},
                                      "arms": [MODEL_ARM, SCRIPTED_ARM], "protocols": [{"name": "tiny", "scenario": "tiny"}],
                                      "seeds": [1, 2]})
        model, scripted = (identity(sweep, arm, base) for arm in sweep.arms)
        cells = [{"cell": f"probe__tiny__s{s}__r0", "arm": "probe", "protocol": "tiny", "seed": s, "repeat": 0,
                  "identity": model, "config": identity_key(model), "measures": {"index": 50.0 + s}} for s in (1, 2)]
        folder = tmp_path / observation
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps({"results": cells}))
        sides.append((folder, identity_key(scripted)))
    (text, scripted_text), (image, scripted_image) = sides
    result = compare(str(text), str(image), trust=True)  # synthetic cells: the labels are what is tested
    assert result["a"]["config"] != result["b"]["config"] and result["a"]["label"] != result["b"]["label"]
    assert scripted_text == scripted_image  # a scripted cell is its policy played directly: no observe reaches it


@pytest.mark.parametrize("owner", [Sweep, Protocol])
def test_every_setting_of_a_sweep_and_a_protocol_is_classified(owner):
    names = {f"{owner.__name__}.{name}" for name in owner.model_fields}
    assert names <= set(NOT_ARM_SETTINGS), "a new sweep setting: classify it in runner.spec.NOT_ARM_SETTINGS"
