"""The local-model example: an OpenAI-compatible server on this machine (vLLM, Ollama), no key anywhere,
played to its end against a fake chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from scaffold_fakes import FakeProvider

from wildhold.agents.scaffold.accounting import Telemetry, rebuild
from wildhold.agents.scaffold.experiment import Experiment, Run
from paths_support import ROOT

EXAMPLE = ROOT / "examples" / "local-openai.yaml"
PLACEHOLDER_KEY = "not-needed"  # what the adapter sends when the arm names no key variable
ENDING = {
    "id": "chatcmpl-local", "object": "chat.completion", "created": 1, "model": "local",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "A look, then rest.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "observe", "arguments": "{}"}},
                       {"id": "call_2", "type": "function",
                        "function": {"name": "set_next_wake", "arguments": "{\"minutes\": 720}"}},  # few sessions
                       {"id": "call_3", "type": "function", "function": {"name": "end_session", "arguments": "{}"}}]}}],
    "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
}


def model_arm(exp: Experiment):
    (arm,) = [a for a in exp.arms if a.provider == "openai"]
    return arm


def test_the_example_names_a_local_server_and_no_key():
    exp = Experiment.load(EXAMPLE)
    arm = model_arm(exp)
    url = urlsplit(arm.base_url)
    assert (url.scheme, url.hostname, url.path) == ("http", "127.0.0.1", "/v1") and arm.api_key_env is None
    assert arm.model and arm.price is not None and (arm.price.input_per_mtok, arm.price.output_per_mtok) == (0, 0)
    text = EXAMPLE.read_text()
    assert "http://127.0.0.1:11434/v1" in text  # the other local server's address, in a comment


def test_the_example_plays_to_its_end_with_no_key_in_the_environment(tmp_path, monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    data = Experiment.load(EXAMPLE).model_dump()
    fake = FakeProvider([(200, ENDING)])
    with fake as fake_url:
        exp = Experiment.model_validate(copy.deepcopy(data))
        arm = model_arm(exp)
        local = urlsplit(arm.base_url)
        arm.base_url = urlunsplit(urlsplit(fake_url)._replace(path=local.path))  # the same path, the fake's port
        exp.arms = [arm]  # the scripted baseline checks nothing here and would double the run's time
        exp.ceiling_s = 60.0  # a bound for the test; the season's end comes first
        run = Run(exp, tmp_path, EXAMPLE.parent)
        asyncio.run(run.play())
        paths = run.finish()
    ledger = rebuild(Telemetry(paths["telemetry"]).records()).arm(arm.name)
    assert ledger.complete == "season_over" and ledger.sessions >= 2 and ledger.llm_calls == len(fake.requests)
    assert ledger.cost_usd == 0 and ledger.tokens > 0  # tokens counted, nothing priced
    assert {r.path for r in fake.requests} == {f"{local.path}/chat/completions"}
    assert {r.headers.get("authorization") for r in fake.requests} == {f"Bearer {PLACEHOLDER_KEY}"}
    assert {r.body["model"] for r in fake.requests} == {arm.model}
    assert json.loads(paths["manifest"].read_text())["arms"]  # the run wrote its manifest as any other
