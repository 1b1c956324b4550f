"""Scaffold accounting: caching-neutral cost, crash-safe telemetry, and the ledger rebuilt from it."""

from __future__ import annotations

import pytest

from wildhold.agents.scaffold.accounting import Price, Telemetry, rebuild
from wildhold.agents.scaffold.adapters import Usage


def test_cost_is_caching_neutral_every_input_token_at_the_input_rate():
    price = Price(input_per_mtok=3.0, output_per_mtok=15.0)
    cached = Usage(input_tokens=1_000_000, cached_input_tokens=900_000, output_tokens=100_000)
    uncached = Usage(input_tokens=1_000_000, cached_input_tokens=0, output_tokens=100_000)
    assert price.cost(cached) == price.cost(uncached) == pytest.approx(4.5)


def test_the_ledger_is_rebuilt_from_telemetry_ignoring_a_torn_last_line(tmp_path):
    t = Telemetry(tmp_path / "telemetry.jsonl")
    t.emit("run_start", "a")
    t.emit("session_start", "a", session=1)
    for n in (100, 200):
        t.emit("llm_call", "a", session=1, input_tokens=n, cached_input_tokens=n // 2, output_tokens=10, cost_usd=0.5)
    t.emit("tool_call", "a", session=1, name="observe", args={}, code="ok")
    t.emit("wake_scheduled", "a", minutes=10, wake_tick=400)
    with t.path.open("a") as f:
        f.write('{"kind": "llm_call", "arm": "a", "input_tok')  # a crash mid-write
    a = rebuild(t.records()).arm("a")
    assert (a.input_tokens, a.cached_input_tokens, a.output_tokens) == (300, 150, 20)
    assert a.cost_usd == pytest.approx(1.0) and a.llm_calls == 2 and a.sessions == 1 and a.tool_calls == 1
    assert a.wake_tick == 400 and a.complete is None


def test_unknown_telemetry_kinds_are_refused(tmp_path):
    with pytest.raises(ValueError):
        Telemetry(tmp_path / "t.jsonl").emit("mystery", "a")
