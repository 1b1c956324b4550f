"""Seed 001's arms as switches: `scaffold_profile` (zero priors, knowledge pack, budget visible, design
withheld) and `horizon`. Each is recorded in the manifest, and each reaches the agent and nothing else does:
everything the model received under it differs from the zero-priors run only where the switch says."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from wildhold.agents.scaffold.experiment import Experiment, Run

CASSETTE = {"model": "replay/probe", "turns": [
    {"tool_calls": [{"name": "list_files", "arguments": {}}, {"name": "world_info", "arguments": {}}],
     "usage": {"input_tokens": 100, "output_tokens": 10}},
    {"tool_calls": [{"name": "rules", "arguments": {"section": "actions", "key": "eat"}}],
     "usage": {"input_tokens": 200, "output_tokens": 10}},
    {"tool_calls": [{"name": "end_session", "arguments": {}}], "usage": {"input_tokens": 300, "output_tokens": 10}},
    {"tool_calls": [{"name": "end_session", "arguments": {}}], "usage": {"input_tokens": 300, "output_tokens": 10}},
]}


def play(tmp_path: Path, name: str, **switches) -> tuple[list[dict], dict, dict]:
    """One replay arm on the tiny map under these experiment fields: what the model received, the run
    manifest and the archive's manifest."""
    base = tmp_path / name
    base.mkdir()
    (base / "probe.json").write_text(json.dumps(CASSETTE))
    pack = base / "pack"
    (pack / "notes").mkdir(parents=True)
    (pack / "notes" / "food.md").write_text("Berries restore satiety.\n")
    exp = Experiment.model_validate({
        "name": name, "scenario": "tiny", "seed": 1, "budget_usd": 1.0, "ceiling_s": 120,
        "caps": {"wake_default_minutes": 5},
        "arms": [{"name": "probe", "provider": "replay", "cassette": "probe.json",
                  "price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}], **switches})
    run = Run(exp, base / "out", base)
    asyncio.run(run.play())
    paths = run.finish()
    from wildhold.store.archive import Archive

    with Archive(paths["archive"]) as a:
        archived = a.manifest
    return run.adapters["probe"].received, json.loads(paths["manifest"].read_text()), archived


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return play(tmp_path_factory.mktemp("profiles"), "zero")


def differences(a: list[dict], b: list[dict]) -> dict[str, list]:
    """Where two runs' model inputs differ: the system prompt, the tool list, and each message by place."""
    out: dict[str, list] = {"system": [], "tools": [], "messages": []}
    for x, y in zip(a, b):
        if x["system"] != y["system"]:
            out["system"].append((x["system"], y["system"]))
        tx, ty = {t["name"]: t for t in x["tools"]}, {t["name"]: t for t in y["tools"]}
        out["tools"] += [("removed", n) for n in sorted(set(tx) - set(ty))] + [("added", n) for n in sorted(set(ty) - set(tx))]
        out["tools"] += [("changed", n) for n in sorted(set(tx) & set(ty)) if tx[n] != ty[n]]
        for i, (mx, my) in enumerate(zip(x["messages"], y["messages"])):
            if mx != my and (i, mx, my) not in out["messages"]:
                out["messages"].append((i, mx, my))
    out["tools"] = sorted(set(out["tools"]))
    out["system"] = sorted(set(out["system"]))
    assert len(a) == len(b)
    return out


def test_zero_priors_is_the_default_and_the_manifest_says_so(baseline):
    received, manifest, archived = baseline
    assert manifest["scaffold_profile"] == "zero_priors" and manifest["arms"][0]["scaffold_profile"] == "zero_priors"
    assert archived["scaffold_profiles"] == {"probe": "zero_priors"}
    assert received[0]["messages"][0]["content"] == "Session 1 begins."
    assert any(t["name"] == "rules" for t in received[0]["tools"])


def test_budget_visible_tells_the_agent_its_budget_and_spend_and_nothing_else_changes(baseline, tmp_path):
    received, manifest, archived = play(tmp_path, "budget", scaffold_profile="budget_visible")
    assert manifest["arms"][0]["scaffold_profile"] == archived["scaffold_profiles"]["probe"] == "budget_visible"
    diff = differences(baseline[0], received)
    assert diff["system"] == [] and diff["tools"] == []
    assert {i for i, _, _ in diff["messages"]} == {0}  # each session's opening line, nothing after it
    openings = {my["content"] for _, _, my in diff["messages"]}
    assert len(openings) == 2
    assert "Session 1 begins. Your inference budget is $1.00; you have spent $0.0000 of it (0.0%). The run stops when it is spent." in openings
    assert "Session 2 begins. Your inference budget is $1.00; you have spent $0.0007 of it (0.1%). The run stops when it is spent." in openings


def test_design_withheld_removes_the_rules_tool_and_its_mention_and_nothing_else(baseline, tmp_path):
    received, manifest, archived = play(tmp_path, "withheld", scaffold_profile="design_withheld")
    assert manifest["arms"][0]["scaffold_profile"] == archived["scaffold_profiles"]["probe"] == "design_withheld"
    diff = differences(baseline[0], received)
    assert diff["tools"] == [("removed", "rules")]
    [(before, after)] = diff["system"]
    assert "`rules` returns the rules document" in before and "rules" not in after
    assert before.replace("; `rules` returns the rules document", "").replace(f"{len(baseline[0][0]['tools']) - 6} world",
                                                                           f"{len(received[0]['tools']) - 6} world") == after
    [(i, mx, my)] = diff["messages"]  # the model's call of rules: answered as an unknown tool
    assert mx["name"] == my["name"] == "rules" and my["content"].startswith("unknown_tool:")


def test_a_knowledge_pack_is_in_the_workspace_before_the_first_session_and_nothing_else_changes(baseline, tmp_path):
    received, manifest, archived = play(tmp_path, "pack", scaffold_profile="knowledge_pack", knowledge_pack="pack")
    arm = manifest["arms"][0]
    assert arm["scaffold_profile"] == "knowledge_pack" and arm["knowledge_pack"] == "pack" and len(arm["knowledge_pack_sha256"]) == 64
    diff = differences(baseline[0], received)
    assert diff["system"] == [] and diff["tools"] == []
    [(i, mx, my)] = diff["messages"]  # only what list_files answered
    assert my["name"] == "list_files" and json.loads(my["content"])["files"] == [{"path": "notes/food.md", "bytes": 25}]
    assert json.loads(mx["content"])["files"] == []


def test_the_visible_horizon_reaches_the_agent_only_through_what_the_world_says_of_its_end(baseline, tmp_path):
    received, manifest, archived = play(tmp_path, "horizon", horizon="visible")
    assert manifest["horizon"] == archived["horizon"] == "visible" and baseline[1]["horizon"] == "hidden"
    diff = differences(baseline[0], received)
    assert diff["system"] == [] and diff["tools"] == []
    [(i, mx, my)] = diff["messages"]  # only what world_info answered: the end of the match, and nothing else
    hidden, visible = json.loads(mx["content"]), json.loads(my["content"])
    assert "ends_at_tick" not in hidden["time"] and visible["time"]["ends_at_tick"] > 0
    visible["time"].pop("ends_at_tick")
    assert {k: v for k, v in visible.items() if k in hidden} == hidden


def test_a_profile_that_does_not_fit_is_refused_naming_the_arm():
    arm = {"name": "probe", "provider": "replay", "cassette": "probe.json", "price": {"input_per_mtok": 1, "output_per_mtok": 1}}
    base = {"name": "x", "budget_usd": 1, "ceiling_s": 1}
    with pytest.raises(ValidationError, match="the knowledge_pack profile needs a knowledge_pack folder"):
        Experiment.model_validate({**base, "scaffold_profile": "knowledge_pack", "arms": [arm]})
    with pytest.raises(ValidationError, match="only read under the knowledge_pack profile"):
        Experiment.model_validate({**base, "arms": [{**arm, "knowledge_pack": "pack"}]})
    with pytest.raises(ValidationError, match="scaffold_profile"):
        Experiment.model_validate({**base, "scaffold_profile": "telepathic", "arms": [arm]})
