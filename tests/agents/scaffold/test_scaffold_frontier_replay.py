"""The orientation protocol replayed offline (examples/frontier-replay.yaml): two model arms on the frontier
map that meet, from recorded model turns through the real MCP server. Its report (the published rubric) carries
the interference incidents, pacing, failure modes and service interruptions, and every piece of evidence each
cites is found where it says: event numbers in the archive, session calls in the telemetry."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from wildhold.agents.scaffold.accounting import Telemetry
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.eval.html import render_html
from wildhold.eval.metrics import load_match
from wildhold.eval.report import report_markdown
from wildhold.eval.rubric import PUBLISHED_RUBRIC

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "frontier-replay.yaml"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    run = Run(Experiment.load(EXAMPLE), tmp_path_factory.mktemp("frontier-replay"), EXAMPLE.parent)
    asyncio.run(run.play())
    paths = run.finish()
    report = json.loads(paths["report"].read_text())
    events = {e["seq"]: e for e in load_match(paths["archive"]).events}
    ids = {c["name"]: c["agent"] for c in report["agents"]}
    return report, events, ids, Telemetry(paths["telemetry"]).records()


def session_calls(records: list[dict], arm: str, session: int) -> list[dict]:
    return [r for r in records if r["kind"] == "tool_call" and r["arm"] == arm and r["session"] == session]


def test_the_report_is_rubric_2_4_with_the_study_recorded(replayed):
    report, _, ids, _ = replayed
    assert report["rubric_version"] == PUBLISHED_RUBRIC and report["study"]["recorded"]
    assert set(report["study"]["pacing"]) == set(report["study"]["interruptions"]) == {ids["scout"], ids["pilgrim"]}


def test_the_arms_meet_and_each_incident_cites_the_events_that_prove_it(replayed):
    report, events, ids, _ = replayed
    scout, pilgrim = ids["scout"], ids["pilgrim"]
    log = report["study"]["incidents"]["log"]
    assert sorted(i["kind"] for i in log) == ["message", "message", "same_quest", "trade", "trade_offer"]
    for i in log:
        assert set(i["parties"]) == {scout, pilgrim} and i["study_pair"] and i["wall_time"] is not None
        cited = [events[seq] for seq in i["evidence"]]
        assert all(e["tick"] <= i["tick"] for e in cited) and cited[-1]["tick"] == i["tick"]
    by_kind = {i["kind"]: i for i in log}
    whisper = next(i for i in log if i["kind"] == "message" and i["detail"]["how"] == "whisper")
    assert [events[s]["kind"] for s in whisper["evidence"]] == ["message_whispered"]
    assert events[whisper["evidence"][0]]["data"] | {"text": ""} == {"agent": scout, "to": pilgrim, "text": ""}
    shout = next(i for i in log if i["kind"] == "message" and i["detail"]["how"] == "said")
    assert events[shout["evidence"][0]]["data"]["agent"] == pilgrim and scout in events[shout["evidence"][0]]["data"]["heard_by"]
    taken, refused = (events[s] for s in by_kind["same_quest"]["evidence"])
    assert taken["kind"] == "quest_accepted" and taken["data"]["quest"] == "q1" == by_kind["same_quest"]["detail"]["quest"]
    assert refused["data"]["code"] == "unknown_quest" and refused["data"]["agent"] == by_kind["same_quest"]["parties"][0]
    assert events[by_kind["trade_offer"]["evidence"][0]]["data"]["offer"] == "trade1"
    assert events[by_kind["trade"]["evidence"][0]]["kind"] == "trade_completed"


def test_every_curve_is_annotated_with_its_arms_incidents(replayed):
    report, _, ids, _ = replayed
    numbers = [i["n"] for i in report["study"]["incidents"]["log"]]
    for agent in ids.values():
        assert [n for _, n, _ in report["curves"]["incidents"][agent]] == numbers
        marks = report["study"]["incidents"]["annotations"][agent]
        assert [m["n"] for m in marks] == numbers
        dollars = [m["dollars"] for m in marks]
        assert dollars == sorted(dollars) and dollars[-1] <= report["curves"]["dollars"][agent]["dollars"] + 1e-9
    html = render_html(report)
    assert html.count('class="incident"') >= 2 * len(numbers)  # on the timeline and on the spend charts


def test_pacing_shows_sessions_wakes_spend_rate_and_calls_per_session(replayed):
    report, _, ids, records = replayed
    scout = report["study"]["pacing"][ids["scout"]]
    assert [s["session"] for s in scout["sessions"]] == [1, 2]
    assert [s["wake_minutes"] for s in scout["sessions"]] == [30, 60]  # what it chose with set_next_wake
    assert [s["end_reason"] for s in scout["sessions"]] == ["end_session", "end_session"]
    assert scout["wake_actual_ticks"]["n"] == 1 and scout["wake_actual_ticks"]["min"] >= 30  # it slept what it chose
    assert [s["tool_calls"] for s in scout["sessions"]] == [len(session_calls(records, "scout", n)) for n in (1, 2)]
    assert scout["sessions"][0]["workspace_writes"] == 1
    assert scout["spend_rate"]["points"][-1][1] == pytest.approx(report["curves"]["dollars"][ids["scout"]]["dollars"], abs=1e-3)
    assert scout["wall_clock"]["interrupted_s"] == 12.0 and scout["wall_clock"]["quests_completed"] == 0
    pilgrim = report["study"]["pacing"][ids["pilgrim"]]
    assert [s["end_reason"] for s in pilgrim["sessions"]] == ["repetition", "end_session"]


def test_failure_modes_cite_the_calls_and_events_of_each_stuck_state(replayed):
    report, events, ids, records = replayed
    [streak] = [f for f in report["study"]["failures"][ids["scout"]] if f["kind"] == "error_streak"]
    first, last = streak["evidence"]["calls"]
    cited = session_calls(records, "scout", streak["evidence"]["session"])[first - 1:last]
    assert [c["code"] for c in cited] == ["not_in_inventory"] * 3 and streak["codes"] == ["not_in_inventory"]
    assert streak["ended_by"] == "a call succeeded" and streak["cost_usd"] > 0
    refused = [e for e in events.values() if e["kind"] == "action_rejected" and e["data"]["agent"] == ids["scout"]
               and e["data"]["code"] == "not_in_inventory"]
    assert len(refused) == 3 and {e["tick"] for e in refused} == {streak["start_tick"]}
    [loop] = [f for f in report["study"]["failures"][ids["pilgrim"]] if f["kind"] == "repetition"]
    first, last = loop["evidence"]["calls"]
    cited = session_calls(records, "pilgrim", loop["evidence"]["session"])[first - 1:last]
    assert [c["name"] for c in cited] == ["observe"] * 6 and loop["calls"] == 6
    assert loop["ended_by"] == "the scaffold's repetition breaker ended session 1" and loop["cost_usd"] > 0
    card = next(c for c in report["agents"] if c["name"] == "pilgrim")  # disclosed on the card, as idle spans are
    assert card["stuck"] == {"count": 1, "cost_usd": loop["cost_usd"]}
    assert f"Stuck repeating observe 6 times in session 1, ${loop['cost_usd']:.4f} spent in it; {loop['ended_by']}." in card["weaknesses"]


def test_service_interruptions_are_recorded_per_arm(replayed):
    report, _, ids, _ = replayed
    scout, pilgrim = (report["study"]["interruptions"][ids[n]] for n in ("scout", "pilgrim"))
    assert [(e["kind"], e["error"], e["duration_s"], e["session"]) for e in scout["events"]] == \
        [("retry", "APIStatusError 529", 4.0, 1), ("retry", "APIStatusError 529", 8.0, 1)]
    assert scout["line"] == "2 interruptions, about 0.2 minutes (2 retries after provider errors)"
    assert pilgrim == {"by_kind": {}, "count": 0, "events": [], "line": "no service interruption recorded", "seconds": 0.0}


def test_the_markdown_and_html_reports_show_the_four_sections_with_their_evidence(replayed):
    report, _, _, _ = replayed
    md, html = report_markdown(report), render_html(report)
    for title in ("## Interference incidents", "## Pacing", "## Failure modes", "## Service interruptions"):
        assert title in md
    for i in report["study"]["incidents"]["log"]:
        assert f"| {i['n']} | {i['clock']} (tick {i['tick']}) | {i['wall_time']} | {i['kind']} |" in md
    for fs in report["study"]["failures"].values():
        for f in fs:
            ev = f["evidence"]
            cited = f"session {ev['session']}, calls {ev['calls'][0]}-{ev['calls'][1]}" if "calls" in ev else None
            assert cited is None or f"| {f['kind']} | tick {f['start_tick']} |" in md and cited in md
    assert "the scaffold's repetition breaker ended session 1" in md
    for section in ('id="incidents"', 'id="pacing"', 'id="failures"', 'id="interruptions"', "Spend over wall-clock time"):
        assert section in html


def test_discovery_shows_what_each_arm_wrote_down_against_the_rules(replayed):
    report, _, ids, records = replayed
    arms = report["study"]["discovery"]["arms"]
    scout = arms[ids["scout"]]
    written = next(r for r in records if r["kind"] == "tool_call" and r["arm"] == "scout" and r["name"] == "write_file")
    assert scout["files"] == [{"path": written["args"]["path"], "bytes": len(written["args"]["content"].encode())}]
    assert scout["sections_read"] == ["recipes"] and scout["design_reads"][0]["key"] == "berry_stew"
    status = {f["fact"]: (f["status"], f["by_playing"]) for f in scout["facts"] if f["status"] != "never"}
    assert status == {"recipe:berry_stew": ("right", False), "price:bread": ("wrong", True), "villager:mara": ("right", True)}
    assert arms[ids["pilgrim"]]["counts"]["never"] == arms[ids["pilgrim"]]["of"]  # it wrote nothing
    md = report_markdown(report)
    assert "- scout: recipe:berry_stew right; price:bread wrong (by playing); villager:mara right (by playing)." in md
    assert 'id="discovery-table"' in render_html(report)
