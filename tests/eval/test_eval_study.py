"""The study block's computations on a hand-made log and session records: wall times read between session
records, quests from acceptance to completion, stuck states with their duration, spend and end, and
service interruptions that never shorten an arm's wall clock unseen."""

from __future__ import annotations

import pytest

from wildhold.eval.metrics import MatchRecord, compute_metrics
from wildhold.eval.report import build_report
from wildhold.eval.spend import session_ticks
from wildhold.eval.study import WallClock

T0 = 1_800_000_000.0


def log_of(events: list[tuple[int, str, dict]], final_tick: int) -> MatchRecord:
    """Two characters spawned at tick 0, then these (tick, kind, data) events."""
    rows = [{"seq": i + 1, "tick": 0, "kind": "agent_spawned", "data": {"agent": a, "name": n, "x": 1, "y": 1}}
            for i, (a, n) in enumerate((("a1", "ann"), ("a2", "bob")))]
    for tick, kind, data in events:
        rows.append({"seq": len(rows) + 1, "tick": tick, "kind": kind, "data": data})
    manifest = {"scenario": "tiny", "seed": 3, "start_tick": 0, "final_tick": final_tick, "agents": []}
    return MatchRecord(manifest, rows)


def session(agent: str, number: int, start: tuple[int, float], end: tuple[int, float], reason: str, calls: list, turns: list,
            interruptions: list | None = None, wake: int = 60) -> dict:
    cost = sum(t[1] for t in turns)
    return {"agent": agent, "tick": end[0], "session": number, "llm_calls": len(turns), "input_tokens": 1000 * len(turns),
            "cached_input_tokens": 0, "output_tokens": 10 * len(turns), "cost_usd": cost, "price": {}, "price_table": "t",
            "log": {"started_at": start[1], "ended_at": end[1], "start_tick": start[0], "end_tick": end[0], "end_reason": reason,
                    "wake_minutes": wake, "turns": turns, "calls": calls, "writes": [], "deletes": [], "design_reads": [],
                    "interruptions": interruptions or []}}


@pytest.fixture(scope="module")
def study():
    events = [(10, "quest_accepted", {"agent": "a1", "quest": "q1", "deadline_tick": 900}),
              (20, "operation_started", {"agent": "a2", "op": "op1", "action": "move_to", "issuer": "direct"}),
              (25, "operation_cancelled", {"agent": "a2", "op": "op1", "action": "move_to"}),
              (40, "quest_completed", {"agent": "a1", "quest": "q1", "kind": "deliver", "issuer": "mara"}),
              (400, "operation_started", {"agent": "a1", "op": "op2", "action": "wait", "issuer": "direct"})]
    record = log_of(events, final_tick=600)
    sessions = [
        session("a1", 1, (0, T0), (50, T0 + 100), "consecutive_errors",
                [[T0 + 10, 5, "observe", "ok", True], [T0 + 20, 6, "eat", "not_in_inventory", True],
                 [T0 + 30, 6, "eat", "not_in_inventory", True], [T0 + 40, 7, "eat", "not_in_inventory", True]],
                [[T0 + 5, 0.01, 1010, 1, 0], [T0 + 15, 0.02, 1010, 1, 0], [T0 + 25, 0.03, 1010, 1, 0], [T0 + 35, 0.04, 1010, 1, 2]],
                interruptions=[{"kind": "retry", "at": T0 + 33, "duration_s": 2.0, "error": "APIStatusError 529"}]),
        session("a1", 2, (300, T0 + 700), (310, T0 + 760), "end_session", [[T0 + 710, 301, "observe", "ok", True]],
                [[T0 + 705, 0.05, 1010, 1, 0]],
                interruptions=[{"kind": "provider_error", "at": T0 + 600, "duration_s": 90.0, "error": "APIConnectionError"}]),
    ]
    report = build_report(record, compute_metrics(record, probes=session_ticks(sessions)), "2.4", sessions)
    return report["study"], report


def test_a_ticks_wall_time_is_read_between_the_nearest_session_records():
    clock = WallClock([session("a1", 1, (0, 100.0), (50, 200.0), "end_session", [[150.0, 20, "observe", "ok", True]], [])])
    assert clock.at(0) == 100.0 and clock.at(20) == 150.0 and clock.at(35) == pytest.approx(175.0)
    assert clock.at(60) is None  # past every record: not guessed


def test_pacing_reads_sessions_wakes_spend_rate_and_the_time_per_quest(study):
    st, _ = study
    p = st["pacing"]["a1"]
    assert [s["length_s"] for s in p["sessions"]] == [100.0, 60.0] and p["wake_actual_ticks"]["max"] == 250
    assert p["quests"] == [{"quest": "q1", "accepted_tick": 10, "completed_tick": 40, "ticks": 30,
                            "wall_s": 41.86, "evidence": [3, 6]}]  # ticks 10 and 40 read between ticks 7 and 50
    wc = p["wall_clock"]
    assert wc["elapsed_s"] == 760.0 and wc["interrupted_s"] == 92.0 and wc["quests_completed"] == 1
    assert (wc["per_quest_s"], wc["per_quest_uninterrupted_s"]) == (760.0, 668.0)
    assert p["spend_rate"]["points"][-1] == [pytest.approx(760 / 3600, abs=1e-3), 0.15]


def test_stuck_states_carry_their_duration_spend_and_what_ended_them(study):
    st, report = study
    [streak] = [f for f in st["failures"]["a1"] if f["kind"] == "error_streak"]
    assert streak["evidence"] == {"session": 1, "calls": [2, 4]} and streak["duration_s"] == 20.0
    assert streak["cost_usd"] == pytest.approx(0.09)  # the turns that asked for the three failed calls
    assert streak["ended_by"] == "the scaffold's error breaker ended session 1"
    [abandoned] = [f for f in st["failures"]["a2"] if f["kind"] == "plan_abandoned"]
    assert (abandoned["start_tick"], abandoned["duration_ticks"], abandoned["ended_by"]) == (25, 575, "the match ended")
    assert abandoned["evidence"] == {"events": [5]} and abandoned["action"] == "move_to"
    dark = [f for f in st["failures"]["a1"] if f["kind"] == "went_dark"]
    assert [(d["start_tick"], d["end_tick"], d["ended_by"], d["sessions"]) for d in dark] == [(0, 400, "it acted again", [1, 2])]
    assert dark[0]["cost_usd"] is None and dark[0]["duration_s"] is None  # tick 400 is past every record: not guessed
    card = next(c for c in report["agents"] if c["agent"] == "a2")
    assert any(line.startswith("Abandoned a plan at day 1") for line in card["weaknesses"])


def test_service_interruptions_are_listed_with_their_durations(study):
    st, _ = study
    it = st["interruptions"]["a1"]
    assert [(e["kind"], e["duration_s"], e["session"]) for e in it["events"]] == [("retry", 2.0, 1), ("provider_error", 90.0, 2)]
    assert it["line"] == ("2 interruptions, about 1.5 minutes (1 provider failure that stopped the arm, "
                          "1 retry after a provider error)")


def test_a_tool_name_the_model_made_up_is_never_printed_as_markdown():
    from wildhold.eval.study import stuck_lines

    made_up = {"kind": "repetition", "tools": ["](http://x) **bold**"], "calls": 6, "session": 1, "cost_usd": 0.1,
               "ended_by": "the scaffold's repetition breaker ended session 1"}
    [line] = stuck_lines([made_up])
    assert "http" not in line and line.startswith("Stuck repeating a tool that does not exist 6 times")
