"""Each session's record in the match: its timing, turns, tool calls and service interruptions, from telemetry."""

from __future__ import annotations

import asyncio

import pytest

from wildhold.agents.scaffold.accounting import session_log
from wildhold.agents.scaffold.adapters import ProviderAdapter


def rec(kind, t, **data):
    return {"kind": kind, "arm": "a", "t": t, **data}


def test_a_session_log_holds_its_times_ticks_turns_calls_writes_and_end():
    records = [
        rec("run_start", 0.0),
        rec("session_start", 1.0, session=1, tick=100),
        rec("llm_call", 2.0, session=1, cost_usd=0.5, input_tokens=900, output_tokens=100, tool_calls=1, retries=1,
            interruptions=[{"at": 1.5, "error": "APIStatusError 529", "wait_s": 0.4, "final": False}]),
        rec("tool_call", 2.5, session=1, name="observe", code="ok", tick=101),
        rec("tool_call", 2.6, session=1, name="write_file", code="bad_path", tick=101, args={"path": "/x", "content": "no"}),
        rec("tool_call", 2.7, session=1, name="write_file", code="ok", tick=101, args={"path": "notes.md", "content": "Berries: 1c."}),
        rec("workspace_write", 2.7, session=1, path="notes.md", bytes=12),
        rec("tool_call", 2.8, session=1, name="rules", code="ok", tick=101, args={"section": "recipes"}),
        rec("tool_call", 2.9, session=1, name="delete_file", code="ok", tick=101, args={"path": "old.md"}),
        rec("session_end", 3.0, session=1, reason="end_session", wake_minutes=30, tick=102),
        rec("session_start", 9.0, session=2, tick=140),
    ]
    log = session_log(records, "a", 1, frozenset({"write_file", "delete_file"}), frozenset({"rules"}))
    assert (log["started_at"], log["ended_at"], log["start_tick"], log["end_tick"]) == (1.0, 3.0, 100, 102)
    assert (log["end_reason"], log["wake_minutes"]) == ("end_session", 30)
    assert log["turns"] == [[2.0, 0.5, 1000, 1, 1]]
    assert log["calls"][:2] == [[2.5, 101, "observe", "ok", True], [2.6, 101, "write_file", "bad_path", False]]
    assert log["writes"] == [[2.7, "notes.md", 12, "Berries: 1c."]]  # what was written, failed writes left out
    assert log["deletes"] == [[2.9, "old.md"]] and log["design_reads"] == [[2.8, 101, "rules", {"section": "recipes"}]]
    assert log["interruptions"] == [{"kind": "retry", "at": 1.5, "duration_s": 0.4, "error": "APIStatusError 529"}]


def test_a_provider_failure_that_stopped_the_arm_lasts_until_the_run_came_back():
    records = [
        rec("run_start", 0.0),
        rec("session_start", 1.0, session=1, tick=10),
        rec("provider_error", 2.0, session=1, error="APIConnectionError", fatal=True,
            attempts=[{"at": 1.2, "error": "APIConnectionError", "wait_s": 0.5, "final": False},
                      {"at": 2.0, "error": "APIConnectionError", "wait_s": 0.0, "final": True}]),
        rec("run_start", 62.0, resumed=True),
        rec("session_resumed", 62.5, session=1, tick=70, unanswered=0),
        rec("session_end", 63.0, session=1, reason="model_stopped", wake_minutes=60, tick=71),
    ]
    met = session_log(records, "a", 1)["interruptions"]
    assert met == [{"kind": "retry", "at": 1.2, "duration_s": 0.5, "error": "APIConnectionError"},
                   {"kind": "provider_error", "at": 2.0, "duration_s": 60.0, "error": "APIConnectionError"}]


def test_a_run_killed_without_a_provider_error_is_down_from_its_last_record_to_its_restart():
    records = [rec("run_start", 0.0), rec("session_start", 1.0, session=1, tick=10), rec("tool_call", 4.0, session=1,
               name="observe", code="ok", tick=11), rec("run_start", 34.0, resumed=True),
               rec("session_resumed", 35.0, session=1, tick=40, unanswered=1)]
    assert session_log(records, "a", 1)["interruptions"] == [{"kind": "run_stopped", "at": 4.0, "duration_s": 30.0, "error": None}]


def test_the_provider_adapter_keeps_each_failed_attempt_with_its_wait():
    adapter = ProviderAdapter("m", backoff_s=0.0, max_retries=2)
    attempts = {"n": 0}

    class Overloaded(Exception):
        status_code = 529

    async def call():
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise Overloaded()
        return "ok"

    assert asyncio.run(adapter.with_retries(call, lambda exc: True)) == ("ok", 2)
    assert [(m["error"], m["final"]) for m in adapter.interruptions] == [("Overloaded 529", False)] * 2
    adapter.interruptions.clear()
    attempts["n"] = -10
    with pytest.raises(Overloaded):
        asyncio.run(adapter.with_retries(call, lambda exc: True))
    assert [m["final"] for m in adapter.interruptions] == [False, False, True]
