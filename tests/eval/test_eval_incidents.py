"""Interference incidents: every interaction between two characters, dated and cited by the events that
prove it, from a played archive."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from wildhold.content import default_content
from wildhold.eval.html import INCIDENTS_LISTED
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.service.match import Match
from wildhold.world.parts.settlement import village

FIXTURES = Path(__file__).parents[1] / "fixtures" / "eval"


@pytest.fixture(scope="module")
def meeting(tmp_path_factory):
    """Ann and Bob side by side on the famine map: a whisper, the same quest taken twice, a locked door
    of Ann's in Bob's way, and Ann knocking Bob down and looting him."""
    path = tmp_path_factory.mktemp("meeting") / "meeting.wildhold.zip"
    match = Match.create("famine", 7, path.with_suffix(".sqlite"), default_content())
    ann, bob = match.join("ann"), match.join("bob")
    w = match.world

    def free(p: int) -> bool:
        return w.walkable_terrain[w.terrain[p]] and not w.safe_terrain[w.terrain[p]] and p not in w.structures and p not in w.nodes

    x, y = next((x, y) for y in range(2, w.height - 2) for x in range(2, w.width - 5) if all(free(w.pos(x + i, y)) for i in range(4)))

    def act(agent: str, action: str, args: dict) -> object:
        result = match.submit(agent, action, args)
        while w.chars[agent].op is not None:
            match.step()
        return result

    match.setup("move_character", {"agent": bob, "x": x + 1, "y": y})
    match.setup("move_character", {"agent": ann, "x": x, "y": y})
    act(ann, "whisper", {"to": bob, "text": "hello"})
    quest = next(iter(village(w).board))
    act(ann, "accept_quest", {"quest": quest})
    act(bob, "accept_quest", {"quest": quest})
    match.setup("place_structure", {"structure": "door", "x": x + 2, "y": y, "owner": ann})
    match.setup("move_character", {"agent": ann, "x": x + 3, "y": y})
    match.setup("give_items", {"agent": ann, "item": "lock", "qty": 1})
    act(ann, "lock", {"x": x + 2, "y": y})
    act(bob, "move", {"direction": "e"})
    match.setup("move_character", {"agent": ann, "x": x, "y": y})
    match.setup("give_items", {"agent": bob, "item": "berries", "qty": 4})
    match.setup("set_needs", {"agent": bob, "health": 5})
    act(ann, "attack", {"character": bob})
    match.step()
    match.end("fixture")
    out = match.export(path)
    match.close()
    return load_match(out), (x, y), quest


def test_each_interaction_is_an_incident_naming_its_parties_tick_and_evidence(meeting):
    record, (x, y), quest = meeting
    incidents = compute_metrics(record).logs["incidents"]
    events = {e["seq"]: e for e in record.events}
    assert [i["kind"] for i in incidents] == ["message", "same_quest", "blocked_path", "attack", "loot", "knockdown"]
    assert [i["n"] for i in incidents] == list(range(1, 7))
    for incident in incidents:
        assert incident["evidence"] and all(events[seq]["tick"] <= incident["tick"] for seq in incident["evidence"])
    message, same, blocked, attack, loot, knockdown = incidents
    assert message["parties"] == ["a1", "a2"] and events[message["evidence"][0]]["kind"] == "message_whispered"
    assert same["parties"] == ["a2", "a1"] and same["detail"]["quest"] == quest
    assert [events[s]["kind"] for s in same["evidence"]] == ["quest_accepted", "action_rejected"]
    assert blocked["parties"] == ["a2", "a1"] and blocked["detail"] == {"x": x + 2, "y": y, "locked": True, "code": "blocked"}
    assert sorted(events[s]["kind"] for s in blocked["evidence"]) == ["action_rejected", "door_locked", "structure_placed"]
    assert attack["parties"] == loot["parties"] == knockdown["parties"] == ["a1", "a2"]
    assert loot["detail"]["items"]["berries"] == 4
    assert [events[s]["kind"] for s in knockdown["evidence"]] == ["character_attacked", "knockdown"]
    assert events[knockdown["evidence"][1]]["data"]["agent"] == "a2"


def test_each_character_counts_the_incidents_it_is_a_party_to(meeting):
    record, _, _ = meeting
    agents = compute_metrics(record).agents
    assert agents["a1"].measures["incidents"] == agents["a2"].measures["incidents"] == 6


def test_a_match_of_raids_and_trades_logs_them_and_one_without_meetings_logs_none():
    famine = compute_metrics(load_match(FIXTURES / "famine_seed2.wildhold.zip")).logs["incidents"]
    kinds = Counter(i["kind"] for i in famine)
    assert {"attack", "raid", "trade_offer", "trade", "loot", "knockdown"} <= set(kinds)
    assert all(len(set(i["parties"])) >= 2 for i in famine)
    assert [i["tick"] for i in famine] == sorted(i["tick"] for i in famine)
    assert compute_metrics(load_match(FIXTURES / "tiny_seed3.wildhold.zip")).logs["incidents"] == []


def marked_incidents(html: str, chart: str) -> int:
    """How many incidents a chart's marks stand for: one each, or the count a merged mark's title gives."""
    svg = re.search(rf'<svg [^>]*aria-label="{chart}".*?</svg>', html, re.S).group(0)
    titles = re.findall(r'<path class="incident"[^>]*><title>([^<]*)</title>', svg)
    return sum(int(m.group(1)) if (m := re.match(r"(\d+) incidents from ", t)) else 1 for t in titles)


def test_the_study_block_and_its_marks_are_printed_from_2_4_only():
    from wildhold.eval.html import render_html
    from wildhold.eval.report import build_report, report_markdown

    record = load_match(FIXTURES / "famine_seed2.wildhold.zip")
    metrics = compute_metrics(record)
    old, new = build_report(record, metrics, "2.3"), build_report(record, metrics, "2.4")
    assert "study" not in old and "incidents" not in old["curves"] and all("stuck" not in c for c in old["agents"])
    assert 'class="incident"' not in render_html(old) and "## Interference incidents" not in report_markdown(old)
    log = new["study"]["incidents"]["log"]
    assert log and [i["n"] for i in log] == list(range(1, len(log) + 1))
    assert all(i["wall_time"] is None for i in log)  # no session records in this archive: no wall clock to read
    html = render_html(new)
    assert marked_incidents(html, "Wealth over time") == sum(len(set(i["parties"])) for i in log)  # each party's, merged or not
    assert 'id="incident-log"' in html if len(log) <= INCIDENTS_LISTED else 'id="incident-groups"' in html
    assert new["study"]["recorded"] is False and "not recorded" in report_markdown(new)
