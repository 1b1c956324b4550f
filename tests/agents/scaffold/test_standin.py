"""The stand-in model: a scripted policy behind an OpenAI-compatible endpoint on 127.0.0.1, answering the official
SDK with tool calls and usage and saying it is a stand-in; `wildhold run examples/standin.yaml` plays it through the
real provider path offline, completes quests, and its quests-against-spend curve rises."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import openai
import pytest
from pydantic import ValidationError

from wildhold.agents.scaffold.experiment import ArmSpec, Experiment, run_experiment
from wildhold.agents.scaffold.loopback import Loopback
from wildhold.agents.scaffold.standin import standin_app
from wildhold.content import default_content
from wildhold.service.match import Match
from wildhold.world.observe import observe

EXAMPLE = Path(__file__).resolve().parents[3] / "src" / "wildhold" / "examples" / "standin.yaml"
TOOLS = [{"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}
         for name in ("observe", "wait_operation", "accept_quest", "move_to", "gather", "rest", "wait")]


def _ask(*requests: dict) -> list:
    """Each request's answer from the stand-in, served on 127.0.0.1 and asked through the openai SDK (an error's
    exception in its place)."""

    async def go() -> list:
        answers = []
        async with Loopback(standin_app()) as server:
            async with openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="any", max_retries=0) as client:
                for request in requests:
                    try:
                        answers.append(await client.chat.completions.create(**request))
                    except openai.APIStatusError as exc:
                        answers.append(exc)
        return answers

    return asyncio.run(go())


def _observation() -> dict:
    """A character's first look at the tiny world, as `observe` answers it."""
    match = Match.create("tiny", 1, None, default_content(), clock="lockstep")
    agent = match.join("quester", policy="quester")
    match.flush()
    return json.loads(json.dumps(observe(match.world, agent, True, None)))


def test_the_standin_looks_first_then_acts_on_what_it_sees_with_usage_counted_from_what_it_was_sent():
    opening = [{"role": "system", "content": "You are quester."}, {"role": "user", "content": "Session 1 begins."}]
    obs = _observation()
    looked = opening + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "observe", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(obs)}]
    first, second = _ask({"model": "wildhold-standin/quester", "messages": opening, "tools": TOOLS},
                         {"model": "wildhold-standin/quester", "messages": looked, "tools": TOOLS})
    call = first.choices[0].message.tool_calls[0].function
    assert (call.name, json.loads(call.arguments)) == ("observe", {"memory": "full"})
    assert first.choices[0].message.content.startswith("Stand-in (the scripted policy quester, not a language model)")
    sent = json.dumps(opening, sort_keys=True) + json.dumps(TOOLS, sort_keys=True)
    assert first.usage.prompt_tokens == math.ceil(len(sent) / 4) and first.usage.completion_tokens > 0
    assert second.usage.prompt_tokens > first.usage.prompt_tokens  # the observation it was sent counts
    acted = second.choices[0].message.tool_calls[0].function
    board = {q["id"] for q in obs["quest_board"]}
    assert acted.name == "accept_quest" and json.loads(acted.arguments)["quest"] in board


def test_an_operation_still_running_is_waited_on_with_a_look_after():
    opening = [{"role": "user", "content": "Session 1 begins."}]
    running = opening + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "gather", "arguments": "{\"x\": 3, \"y\": 4}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"op": "op7", "status": "running", "ends": 9})}]
    [answer] = _ask({"model": "wildhold-standin/quester", "messages": running, "tools": TOOLS})
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in answer.choices[0].message.tool_calls]
    assert calls == [("wait_operation", {"op": "op7", "timeout_s": 10.0}), ("observe", {"memory": "full"})]


def test_the_standin_refuses_a_model_it_does_not_serve_and_streaming_and_lists_what_it_serves():
    unknown, streamed = _ask({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
                             {"model": "wildhold-standin/quester", "messages": [{"role": "user", "content": "hi"}],
                              "stream": True})
    assert isinstance(unknown, openai.NotFoundError) and "wildhold-standin/quester" in str(unknown)
    assert "not language models" in str(unknown)
    assert isinstance(streamed, openai.BadRequestError) and "does not stream" in str(streamed)


@pytest.mark.parametrize(("arm", "message"), [
    ({"policy": "dreamer"}, "the stand-in plays a scripted policy"),
    ({"model": "gpt-4.1"}, "a stand-in's model is 'wildhold-standin/quester'"),
])
def test_a_standin_arm_plays_a_scripted_policy_under_its_own_model_name(arm, message):
    with pytest.raises(ValidationError, match=message):
        ArmSpec.model_validate({"name": "s", "provider": "standin", **arm})
    named = ArmSpec.model_validate({"name": "s", "provider": "standin"})
    assert (named.policy, named.model) == ("quester", "wildhold-standin/quester")


@pytest.mark.slow(seconds=20)
def test_the_standin_example_completes_quests_offline_and_its_spend_curve_rises(tmp_path):
    paths = run_experiment(EXAMPLE, tmp_path / "run", quiet=True)
    exp = Experiment.load(EXAMPLE)
    curve = json.loads(paths["spend_curve"].read_text())["arms"]["quester"]
    points = curve["points"]
    quests = [p["quests"] for p in points]
    dollars = [p["cost_usd"] for p in points]
    tokens = [p["tokens"] for p in points]
    assert quests == sorted(quests) and quests[0] == 0 and quests[-1] >= 1  # rises from nothing
    assert dollars == sorted(set(dollars)) and tokens == sorted(set(tokens)) and len(points) >= 3
    assert curve["total_cost_usd"] >= exp.budget_usd  # the hidden budget ended it
    report = json.loads(paths["report"].read_text())  # from the archive alone: its spend records and events
    [from_archive] = report["curves"]["dollars"].values()
    assert [p["quests"] for p in from_archive["points"]] == quests
    assert from_archive["dollars"] == pytest.approx(curve["total_cost_usd"])
    manifest = json.loads(paths["manifest"].read_text())
    [arm] = manifest["arms"]
    assert arm["provider"] == "standin" and arm["model"] == "wildhold-standin/quester"
    telemetry = [json.loads(line) for line in paths["telemetry"].read_text().splitlines()]
    assert {r["provider"] for r in telemetry if r["kind"] == "run_start" and r.get("arm") == "quester"} == {"standin"}
