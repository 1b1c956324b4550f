"""The trial: its criteria on committed traces (each stage passed and narrowly missed), independent
vs native progress, the live part against the offline assessment, trial_info, and the outfit."""

from __future__ import annotations

import json
from contextlib import contextmanager

import orjson
import pytest

from wildhold.content.models import TRIAL_STAGES
from wildhold.docs import rules_json, rules_markdown
from wildhold.eval.trial import assess
from wildhold.service.queries import program_reads
from wildhold.world.parts import PARTS, Part
from wildhold.world.parts.trial import STAGES, TRIAL, TrialTracker
from wildhold.world.serialize import from_dict, state_hash, to_dict
from wildhold.world.setup import apply_setup
from wildhold.world.world import World
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "trial"


def trace(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]


def attained(name: str) -> dict[str, dict]:
    return assess(trace(name))["a1"]["independent"]


# ---- criteria fixtures: each stage passed, and missed ------------------------------------------

PASSES = [
    ("foothold_pass", "foothold", 1800),
    ("self_sufficiency_pass", "self_sufficiency", 1800),
    ("home_pass", "home", None),
    ("outer_court_pass", "outer_court", None),
    ("inner_temple_pass", "inner_temple", None),
    ("steadiness_pass", "steadiness", None),
    ("steadiness_pass_no_damage", "steadiness", None),
    ("royal_tomb_pass", "royal_tomb", 360 + 5 * 1440),
    ("hero_pass", "hero", None),
]
MISSES = [
    ("foothold_fail_knockdown", "foothold"),
    ("foothold_fail_bought_equipment", "foothold"),
    ("self_sufficiency_fail_armour_not_equipped", "self_sufficiency"),
    ("self_sufficiency_fail_night_damage", "self_sufficiency"),
    ("home_fail_no_lock", "home"),
    ("home_fail_too_small", "home"),
    ("outer_court_fail_carried_out", "outer_court"),
    ("inner_temple_fail_reentered", "inner_temple"),
    ("steadiness_fail_damage", "steadiness"),
    ("steadiness_fail_consumables", "steadiness"),
    ("royal_tomb_fail_reentered", "royal_tomb"),
    ("royal_tomb_fail_streak", "royal_tomb"),
    ("hero_fail_defeated", "hero"),
]


def test_every_fixture_event_matches_its_event_schema():
    from wildhold.world.events import validate_event

    for path in sorted(FIXTURES.glob("*.jsonl")):
        events = trace(path.stem)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        for e in events:
            validate_event(e["kind"], e["data"])


def test_every_stage_has_a_passing_and_a_failing_fixture():
    assert {stage for _, stage, _ in PASSES} == set(STAGES)
    assert {stage for _, stage in MISSES} == set(STAGES)
    named = {f.stem for f in FIXTURES.glob("*.jsonl")}
    assert {name for name, _, _ in PASSES} | {name for name, _ in MISSES} <= named


@pytest.mark.parametrize(("name", "stage", "tick"), PASSES)
def test_a_qualifying_trace_attains_its_stage(name, stage, tick):
    got = attained(name)
    assert stage in got
    if tick is not None:
        assert got[stage]["tick"] == tick


@pytest.mark.parametrize(("name", "stage"), MISSES)
def test_a_near_miss_does_not_attain_its_stage(name, stage):
    assert stage not in attained(name)


def test_evidence_names_the_events_that_prove_each_stage():
    events = {e["seq"]: e for e in trace("season_all_stages")}
    got = assess(events.values())["a1"]["independent"]
    kinds = {stage: {events[s]["kind"] for s in record["evidence"]} for stage, record in got.items()}
    assert kinds["foothold"] == {"agent_spawned", "structure_placed", "operation_completed"}
    assert {"night_started", "night_ended", "equipped", "operation_completed", "structure_placed"} == kinds["self_sufficiency"]
    assert kinds["home"] == {"door_locked"}
    assert kinds["outer_court"] == kinds["inner_temple"] == kinds["steadiness"] == {"dungeon_entered", "tier_cleared", "dungeon_left"}
    assert kinds["royal_tomb"] == {"dungeon_entered", "tier_cleared", "dungeon_left", "agent_spawned"}
    assert kinds["hero"] == {"shadow_king_defeated"}
    for record in got.values():
        assert all(events[s]["tick"] <= record["tick"] for s in record["evidence"])


def test_a_stage_is_timed_when_its_requirements_first_hold_together():
    got = attained("season_all_stages")
    # Steadiness is met by the tier 2 clear (18 damage, one potion), when it leaves the dungeon.
    assert got["steadiness"]["tick"] == got["inner_temple"]["tick"]
    # Royal Tomb waits for the five-day streak that started at arrival (tick 360).
    assert got["royal_tomb"]["tick"] == 360 + 5 * 1440


def test_the_boss_defeated_after_a_knockdown_qualifies_for_hero_but_not_royal_tomb():
    got = attained("hero_pass")
    assert "hero" in got and "royal_tomb" not in got and "outer_court" not in got


# ---- independent and native ---------------------------------------------------------------------


def test_a_season_passing_every_stage_has_native_progress_eight():
    result = assess(trace("season_all_stages"))["a1"]
    assert list(result["independent"]) == list(STAGES)
    assert result["native"] == 8 and result["first_unmet"] is None
    assert set(result["tasks"]) == {"outfit", "shadow_king"}
    ticks = list(result["native_ticks"].values())
    assert ticks == sorted(ticks)


def test_a_missing_lock_holds_native_progress_at_two_while_seven_stages_are_attained():
    result = assess(trace("season_no_lock"))["a1"]
    assert len(result["independent"]) == 7 and "home" not in result["independent"]
    assert result["native"] == 2
    assert result["first_unmet"] == "home"
    assert set(result["native_ticks"]) == {"foothold", "self_sufficiency"}


def test_native_credits_a_stage_only_once_every_earlier_stage_is_attained():
    result = assess(trace("self_sufficiency_pass"))["a1"]
    assert result["native"] == 2 and result["first_unmet"] == "home"
    # Steadiness alone (no Foothold): attained independently, no native credit at all.
    alone = assess(trace("steadiness_pass"))["a1"]
    assert "steadiness" in alone["independent"] and alone["native"] == 0 and alone["first_unmet"] == "foothold"


def test_an_idle_character_attains_nothing():
    result = assess(trace("season_idle"))["a1"]
    assert result["independent"] == {} and result["native"] == 0 and result["tasks"] == {}
    assert result["first_unmet"] == "foothold"


def test_the_tracker_state_survives_a_dump_and_load_mid_trace(content):
    events = trace("season_all_stages")
    whole = TrialTracker(content, 96, 96)
    for e in events:
        whole.feed(e["seq"], e["tick"], e["kind"], e["data"])
    first = TrialTracker(content, 96, 96)
    half = len(events) // 2
    for e in events[:half]:
        first.feed(e["seq"], e["tick"], e["kind"], e["data"])
    saved = orjson.loads(orjson.dumps(first.dump()))
    second = TrialTracker(content, 96, 96)
    second.load(saved)
    for e in events[half:]:
        second.feed(e["seq"], e["tick"], e["kind"], e["data"])
    assert second.dump() == whole.dump()


# ---- live: the trial part -----------------------------------------------------------------------


def drained(w: World) -> list[dict]:
    return [orjson.loads(payload) for _, _, _, payload, _ in w.events.drain()]


def free_beside(w: World, p: int) -> int:
    x, y = w.xy(p)
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
        q = w.pos(x + dx, y + dy)
        if q is not None and w.is_walkable(q) and q not in w.structures and q not in w.nodes and q not in w.occupants and q not in w.spawns:
            return q
    raise AssertionError("no free tile beside the character")


def run_until_idle(w: World, agent: str) -> None:
    while w.chars[agent].op is not None:
        w.step()


def test_only_parts_that_follow_events_are_listeners(content):
    w = World(content, "tiny", 1)
    assert TRIAL in w.listeners
    assert w.listeners == tuple(p for p in PARTS if type(p).on_event is not Part.on_event)
    assert all(type(p).on_event is Part.on_event for p in PARTS if p not in w.listeners)


def settle_for_a_day(content, ask=None) -> tuple[World, str, list[dict]]:
    """A character crafts an axe, places its bed and sleeps through a day: Foothold, live. `ask(w, agent)`, when
    given, is called after each action and every 30 ticks."""
    w = World(content, "tiny", 5)
    a = w.join("settler")
    c = w.chars[a]
    bench = free_beside(w, c.pos)
    apply_setup(w, "place_structure", {"x": w.xy(bench)[0], "y": w.xy(bench)[1], "structure": "workbench"})
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 3})
    apply_setup(w, "give_items", {"agent": a, "item": "bed", "qty": 1})
    asking = (lambda: ask(w, a)) if ask else (lambda: None)
    asking()
    assert w.submit(a, "craft", {"recipe": "wooden_axe"}).op
    run_until_idle(w, a)
    asking()
    x, y = w.xy(c.pos)
    assert w.submit(a, "place", {"item": "bed", "x": x, "y": y}).op
    run_until_idle(w, a)
    asking()
    events = drained(w)
    while w.tick < 360 + 1440 + 30:
        if c.op is None:
            w.submit(a, "sleep", {"ticks": 120})
        if w.tick % 30 == 0:
            asking()
        w.step()
        events += drained(w)
    return w, a, events


def test_the_live_world_records_foothold_as_the_offline_assessment_does(content):
    w, a, events = settle_for_a_day(content)
    live = TRIAL.state(w).progress(a)
    assert live["independent"]["foothold"]["tick"] == 360 + 1440
    assert assess(events, scenario="tiny")[a] == live
    logged = [e["data"] for e in events if e["kind"] == "trial_stage_attained"]
    assert logged[0] == {"agent": a, "stage": "foothold", "number": 1, "at": 1800,
                         "evidence": live["independent"]["foothold"]["evidence"]}


def test_trial_info_answers_what_holds_now_while_the_trial_changes(content):
    """trial_info's answer is kept until what it reads changes: through a craft, a bed and a day (Foothold),
    each answer equals one built afresh from the tracker at that tick."""
    from wildhold.world.parts.trial import _report

    fresh = []

    def ask(w: World, agent: str) -> None:
        w.submit(agent, "trial_info", {})
        fresh.append(orjson.loads(orjson.dumps(_report(w, TRIAL.state(w), agent))))

    w, a, events = settle_for_a_day(content, ask)
    answered = [e["data"]["result"] for e in events if e["kind"] == "operation_completed" and e["data"]["action"] == "trial_info"]
    assert answered == fresh and len({orjson.dumps(r) for r in answered}) >= 4  # craft, bed, a day's run, foothold


def test_trial_info_changes_with_each_thing_it_reads(content):
    """Each mark the tracker records (set as its handlers set it), the run's length and the tracker itself
    change trial_info's answer at once: it always equals the answer built afresh."""
    from wildhold.world.parts.trial import _report

    w = World(content, "tiny", 1)
    a = w.join("settler")
    tracker = TRIAL.state(w)
    ch = tracker.chars[a]

    def answer() -> bytes:
        w.submit(a, "trial_info", {})
        done = [orjson.loads(p) for _, _, kind, p, _ in w.events.drain() if kind == "operation_completed"][-1]
        assert done["data"]["result"] == orjson.loads(orjson.dumps(_report(w, TRIAL.state(w), a)))
        return orjson.dumps(done["data"]["result"])

    answers = [answer(), answer()]
    for mark, value in (("bed_since", [400, 5]), ("crafted", [400, 6]), ("cooked", [400, 7]), ("armed", [400, 8]),
                        ("clean_night", [400, 9, 10]), ("home_now", True), ("hero", [400, [12]])):
        ch[mark] = value
        answers.append(answer())
    ch["clears"].append([1, 400, 13, 14, 15, 0, 0])
    answers.append(answer())
    ch["stages"]["foothold"] = {"tick": 400, "evidence": [5]}
    answers.append(answer())
    ch["tasks"]["outfit"] = {"tick": 400, "evidence": [6]}
    answers.append(answer())
    ch["run"] = [w.tick - 1440, 16]  # a day without a knockdown
    answers.append(answer())
    ch["run"] = [w.tick - 5 * 1440, 16]  # five
    answers.append(answer())
    ch["run"] = [w.tick, 17]  # knocked down
    answers.append(answer())
    assert answers[0] == answers[1] and len(set(answers[1:-1])) == len(answers) - 2
    assert answers[-1] == answers[-4]  # the run as short as before the day
    other = TrialTracker(content, w.width, w.height)  # the same counts and marks, another foothold tick
    other.load(orjson.loads(orjson.dumps(tracker.dump()).replace(b'"tick":400', b'"tick":401')))
    w.states[TRIAL.name] = other
    assert answer() != answers[-1]


def test_characters_that_attained_nothing_share_one_trial_report_and_the_others_get_their_own(content):
    """Characters with no stage, task or clear share the report of their key; one that attained a stage, or cleared
    a tier, is answered from its own record (two clears of different tiers give different answers)."""
    from wildhold.world.parts.trial import _report, trial_report

    w = World(content, "tiny", 1)
    a, b, c, d = (w.join(name) for name in ("one", "two", "three", "four"))
    tracker = TRIAL.state(w)

    def answer(agent: str) -> dict:
        w.submit(agent, "trial_info", {})
        done = [orjson.loads(p) for _, _, kind, p, _ in w.events.drain() if kind == "operation_completed"][-1]
        assert done["data"]["result"] == orjson.loads(orjson.dumps(_report(w, tracker, agent)))
        return done["data"]["result"]

    assert answer(a) == answer(b) and trial_report(w, a) is trial_report(w, b)
    low, high = sorted(set(tracker.tiers.values()))[:2]
    tracker.chars[b]["stages"]["foothold"] = {"tick": w.tick, "evidence": [5]}
    tracker.chars[c]["clears"].append([low, w.tick, 13, 14, 15, 0, 0])
    tracker.chars[d]["clears"].append([high, w.tick, 13, 14, 15, 0, 0])
    assert len({orjson.dumps(answer(agent)) for agent in (a, b, c, d)}) == 4


def test_trial_info_completion_holds_the_report_serialised_as_any_event_data_is(content):
    """The completion event carries the kept report's JSON as made once: its bytes are those of the event with the
    report itself as its result, keys sorted at every depth, before and after the report changes."""
    from wildhold.world.events import SORTED
    from wildhold.world.parts.trial import trial_report

    w = World(content, "tiny", 1)
    a = w.join("one")
    w.events.drain()
    for change in (None, {"tick": w.tick, "evidence": [3]}):
        if change is not None:
            TRIAL.state(w).chars[a]["stages"]["foothold"] = change
        w.submit(a, "trial_info", {})
        seq, tick, kind, payload, _ = w.events.drain()[-1]
        data = orjson.loads(payload)["data"]
        data["result"] = trial_report(w, a)
        assert kind == "operation_completed"
        assert payload == orjson.dumps({"data": data, "kind": kind, "seq": seq, "tick": tick}, option=SORTED)
        assert data["result"]["stages"][0]["attained_tick"] == (None if change is None else w.tick)


def test_a_snapshot_carries_the_trial_and_resumes_identically(content):
    w = World(content, "tiny", 2)
    a = w.join("settler")
    apply_setup(w, "give_items", {"agent": a, "item": "bed", "qty": 1})
    x, y = w.xy(w.chars[a].pos)
    w.submit(a, "place", {"item": "bed", "x": x, "y": y})
    for _ in range(50):
        w.step()
    copy = from_dict(content, to_dict(w))
    assert TRIAL.state(copy).dump() == TRIAL.state(w).dump() and state_hash(copy) == state_hash(w)
    for world in (w, copy):
        for _ in range(1500):
            world.step()
    assert copy.events.head == w.events.head and TRIAL.state(copy).dump() == TRIAL.state(w).dump()


def test_trial_info_tells_the_criteria_and_progress_and_changes_nothing(content):
    w = World(content, "tiny", 1)
    a = w.join("settler")
    rest = w.submit(a, "rest", {"ticks": 30})
    before = TRIAL.state(w).dump()
    drained(w)
    accepted = w.submit(a, "trial_info", {})
    assert accepted.op and accepted.ends == w.tick
    done = [e for e in drained(w) if e["kind"] == "operation_completed"][0]["data"]["result"]
    assert [s["stage"] for s in done["stages"]] == list(STAGES)
    assert done["progress"] == 0 and done["of"] == 8 and done["first_unmet"] == "Foothold"
    foothold = done["stages"][0]
    assert foothold["attained_tick"] is None
    assert [r["met"] for r in foothold["requirements"]] == [False, False, False]
    assert "1440 ticks" in foothold["requirements"][0]["requirement"]
    assert done["tasks"] == {"outfit": None, "shadow_king": None}
    assert "trial progress" in done["progress_rule"]
    assert TRIAL.state(w).dump() == before
    assert w.chars[a].op == rest.op  # still resting: trial_info answered while busy


def test_the_rules_document_states_the_tasks_but_never_the_criteria(content):
    md = rules_markdown(content, program_reads())
    doc = json.dumps(rules_json(content, program_reads()))
    spec = content.trial
    for stage, keys in TRIAL_STAGES.items():
        for key in keys:
            sentence = spec.requirement(stage, key)
            assert sentence not in md and json.dumps(sentence)[1:-1] not in doc
    assert spec.progress_rule not in md
    assert "travel outfit" in content.scenarios["season"].description and "Shadow King" in content.scenarios["season"].description
    assert content.scenarios["season"].description in md
    assert "trial_info" in md


# ---- the production task: the travel outfit ----------------------------------------------------


def tailor(content, finish: bool) -> tuple[World, str, list[dict]]:
    w = World(content, "tiny", 4)
    a = w.join("tailor")
    table = free_beside(w, w.chars[a].pos)
    tx, ty = w.xy(table)
    apply_setup(w, "place_structure", {"x": tx, "y": ty, "structure": "tailor_table"})
    for item, qty in content.recipes[content.trial.outfit_recipe].inputs.items():
        apply_setup(w, "give_items", {"agent": a, "item": item, "qty": qty})
    assert w.submit(a, "craft", {"recipe": "travel_outfit"}).op
    events = drained(w)
    if finish:
        run_until_idle(w, a)
    else:
        for _ in range(30):
            w.step()
        w.submit(a, "cancel", {})
    events += drained(w)
    return w, a, events


def test_a_completed_tailoring_produces_the_outfit_and_completes_the_task(content):
    w, a, events = tailor(content, finish=True)
    assert w.chars[a].inventory.get("travel_outfit") == 1
    recipe = content.recipes["travel_outfit"]
    assert recipe.station == "tailor_table"
    assert recipe.inputs == {"outfit_design": 1, "cloth": 8, "leather": 4, "t_coin": 12}
    task = TRIAL.state(w).progress(a)["tasks"]["outfit"]
    assert events[task["evidence"][0] - events[0]["seq"]]["kind"] == "operation_completed"
    assert assess(events, scenario="tiny")[a]["tasks"] == TRIAL.state(w).progress(a)["tasks"]


def test_starting_the_tailoring_is_not_success(content):
    w, a, events = tailor(content, finish=False)
    assert "travel_outfit" not in w.chars[a].inventory
    assert TRIAL.state(w).progress(a)["tasks"] == {}
    assert any(e["kind"] == "operation_cancelled" for e in events)


def test_the_tailor_sells_the_outfit_design(content):
    assert "outfit_design" in content.npcs["ines"].shop.sells
    assert "tailor_table" in content.scenarios["season"].settlement.stations


# ---- the season's table (seed 000, Table 3) -----------------------------------------------------


def test_the_season_table_counts_tasks_depth_activity_trial_and_downs(content):
    from wildhold.eval.metrics import MatchRecord
    from wildhold.eval.season import COLUMNS, season_rows

    def rows(events: list[dict]) -> dict:
        return season_rows(MatchRecord({"scenario": "season", "seed": 1}, events), content)

    events = trace("season_all_stages")
    row = rows(events)["a1"]
    assert COLUMNS == ("Outfit", "Depth", "Hero", "Kills", "Bosses", "Crafts", "Coins", "Trial", "Downs")
    kills = sum(e["kind"] == "enemy_defeated" for e in events)
    coins = sum(e["data"]["qty"] for e in events if e["kind"] == "item_gained" and e["data"]["item"] == "t_coin")
    assert row.cells(8) == ["Y", "3", "Y", str(kills), str(kills), "6", str(coins), "8/8", "0"]
    idle = rows(trace("season_idle"))["a1"]
    assert idle.cells(8) == ["N", "0", "N", "0", "0", "0", "0", "0/8", "0"]
    no_lock = rows(trace("season_no_lock"))["a1"]
    assert (no_lock.outfit, no_lock.hero, no_lock.trial) == (True, True, 2)


def test_the_demo_summary_of_a_season_adds_the_season_table(content, tmp_path):
    from rich.console import Console, Group

    from wildhold.agents.runner import ScriptedRun
    from wildhold.cli import _summary_table

    run = ScriptedRun.start("season", 2, tmp_path / "match.sqlite", content=content)
    run.run(until=run.world.tick + 30)
    archive = run.match.export(tmp_path / "match.wildhold.zip")
    run.match.close()
    summary = _summary_table(archive)
    assert isinstance(summary, Group)
    console = Console(width=200, record=True)
    console.print(summary)
    text = console.export_text()
    for column in ("Outfit", "Depth", "Hero", "Kills", "Bosses", "Crafts", "Coins", "Trial", "Downs"):
        assert column in text
    assert "0/8" in text


# ---- the expedition agent ------------------------------------------------------------------------


def enemy(eid: str, hp: int, damage: int = 0, vulnerable: bool = False) -> dict:
    nxt = {"move": "m", "at": 1001, "damage": damage, "vulnerable": vulnerable}
    return {"id": eid, "kind": "skeleton", "boss": False, "hp": hp, "max_hp": 16, "last_move": {"move": "m", "text": "t"},
            "next": nxt, "intent": None if not damage else {"move": "m", "text": "t", "damage": damage, "lands_at": 1001}}


def in_room(enemies: list[dict], energy: int = 90) -> dict:
    room = {"instance": "d1", "tier": 1, "tier_name": "outer_court", "room": 1, "rooms": 3, "fresh": True, "cleared": False,
            "room_clear": not enemies, "enemies": enemies, "boss": {"id": "e9", "kind": "gatekeeper", "hp": 60, "max_hp": 60, "defeated": False},
            "altar": None, "shadow_king": None, "damage_taken": 0, "consumables_used": 0,
            "self": {"weapon_damage": 5, "defense": 2, "defending": None}}
    me = {"id": "a1", "x": 0, "y": 0, "health": 100, "energy": energy, "satiety": 80, "inventory": {}, "equipment": {}, "bed": None}
    return {"self": me, "time": {"tick": 1000, "hour": 10, "minute": 0, "night": False, "ends_at_tick": 14760},
            "dungeon": {"in_dungeon": True, "cleared": [], "unlocked": [1], "shadow_king_defeats": 0, "room": room}}


def test_the_expedition_agent_dodges_every_announced_strike_and_strikes_the_vulnerable_first(content):
    from wildhold.agents.base import AgentView
    from wildhold.agents.scripted import make_policy

    agent = make_policy("expedition", content)

    def decide(obs: dict):
        return agent.decide(AgentView("a1", 1000, 1, lambda since: obs, lambda: obs["self"]))

    assert decide(in_room([enemy("e1", 10), enemy("e2", 16, damage=7)])) == ("dodge", {})
    assert decide(in_room([enemy("e1", 4), enemy("e2", 16, vulnerable=True)])) == ("strike", {"enemy": "e2"})
    assert decide(in_room([enemy("e1", 9), enemy("e2", 4)])) == ("strike", {"enemy": "e2"})
    assert decide(in_room([], energy=30)) == ("rest", {"ticks": 20})
    assert decide(in_room([], energy=95)) == ("advance", {})


def season(seed: int, tmp_path, policies: list[str], until_full: tuple[str, ...] = ()) -> dict:
    """Play a season and assess its archive offline. With `until_full`, stop at the first hour on which
    every character named there holds all eight stages and both tasks: stages stay attained, so the
    rest of the season could not change what a caller asserts about them."""
    from wildhold.agents.runner import ScriptedRun
    from wildhold.store.archive import Archive

    run = ScriptedRun.start("season", seed, tmp_path / f"season-{seed}.sqlite", agents=len(policies), policies=policies)
    w = run.world
    while not w.finished and not (until_full and all(_full(TRIAL.state(w).progress(a)) for a in until_full)):
        run.run(until=w.tick + 60)
    archive = run.match.export(tmp_path / f"season-{seed}.wildhold.zip")
    run.match.close()
    with Archive(archive) as a:
        events = list(a.events())
    return {"trial": assess(events), "knockdowns": [e["data"]["agent"] for e in events if e["kind"] == "knockdown"]}


def _full(progress: dict) -> bool:
    return progress["native"] == len(STAGES) and len(progress["tasks"]) == 2


@pytest.mark.slow
def test_a_season_of_the_expedition_agent_attains_every_stage_and_both_tasks_and_idle_none(tmp_path):
    got = season(12, tmp_path, ["expedition", "idle"])
    hero, idle = got["trial"]["a1"], got["trial"]["a2"]
    assert hero["native"] == 8 and list(hero["independent"]) == list(STAGES)
    assert set(hero["tasks"]) == {"outfit", "shadow_king"}
    assert "a1" not in got["knockdowns"]
    assert idle["independent"] == {} and idle["tasks"] == {} and idle["native"] == 0


# The season protocol's claim is that both expedition agents attain every stage and both tasks on at
# least four of five seeds; today they do on all five, and each seed is held to that (one test per
# seed, so that the seasons play in parallel).
@pytest.mark.parametrize("seed", [pytest.param(seed, marks=pytest.mark.slow(seconds=s))
                                  for seed, s in {1: 20, 2: 55, 3: 60, 4: 35, 5: 20}.items()])
def test_the_season_scenario_sees_every_stage_and_both_tasks_on_each_of_five_seeds(seed, tmp_path):
    trial = season(seed, tmp_path, ["expedition", "expedition", "producer", "idle"], until_full=("a1", "a2"))["trial"]
    assert all(_full(trial[a]) for a in ("a1", "a2")), {a: trial[a]["first_unmet"] for a in ("a1", "a2")}
    assert trial["a4"]["independent"] == {}


class Hearing(Part):
    """A listener for tests: notes in `w.heard` what `hear(w, seq, kind)` answers for each event it is told of."""

    name = "hearing"

    def __init__(self, hear) -> None:
        self.hear = hear

    def init(self, w: World) -> None:
        w.heard = []

    def on_event(self, w: World, seq: int, kind: str, data: dict) -> None:
        w.heard.append(self.hear(w, seq, kind))


@contextmanager
def listening(part: Part):
    """The part among the world's parts (`PARTS`) for worlds built meanwhile."""
    PARTS.append(part)
    try:
        yield part
    finally:
        PARTS.remove(part)


def test_listeners_hear_every_event_once_in_order_even_those_a_listener_emits(content):
    with listening(Hearing(lambda w, seq, kind: seq)) as recorder:
        w, a, events = settle_for_a_day(content)
    assert w.listeners[-1] is recorder
    assert any(e["kind"] == "trial_stage_attained" for e in events)  # emitted by the trial while it listened
    assert w.heard == list(range(1, w.events.seq + 1))


def test_a_listener_that_fails_on_an_event_still_hears_the_later_ones(content):
    def hear(w: World, seq: int, kind: str) -> str:
        if kind == "boom":
            w.emit("echo")  # waits behind the failing event, which drops it
            raise RuntimeError("a listener failed")
        return kind

    with listening(Hearing(hear)):
        w = World(content, "tiny", 1)
        with pytest.raises(RuntimeError):
            w.emit("boom")
        w.emit("after")
    assert w.heard[-1] == "after" and "echo" not in w.heard


class Picky(Hearing):
    """A listener told only of the kinds in `PICKED`."""

    def hears(self, w: World, kind: str, data: dict) -> bool:
        return kind in PICKED


PICKED = ("needs", "trial_stage_attained")  # the second is emitted by the trial while the listeners are told


def test_a_listener_is_told_only_the_events_it_hears_in_order(content):
    with listening(Picky(lambda w, seq, kind: kind)):
        w, a, events = settle_for_a_day(content)
    told = [e["kind"] for e in events if e["kind"] in PICKED]
    assert "trial_stage_attained" in told and w.heard == told


class SaysWhatItHears(Picky):
    """A picky listener that says the kinds it may hear (`Part.listening`), and notes each kind it is asked of."""

    def init(self, w: World) -> None:
        super().init(w)
        w.asked = set()

    def listening(self, w: World) -> tuple[frozenset[str], int | None]:
        return frozenset(PICKED), None

    def hears(self, w: World, kind: str, data: dict) -> bool:
        w.asked.add(kind)
        return super().hears(w, kind, data)


def test_a_listener_that_says_what_it_hears_is_asked_of_nothing_else_and_told_the_same(content):
    with listening(SaysWhatItHears(lambda w, seq, kind: kind)):
        w, a, events = settle_for_a_day(content)
    told = [e["kind"] for e in events if e["kind"] in PICKED]
    assert "trial_stage_attained" in told and w.heard == told
    # asked of the kinds it listens for, and of those the trial is told of as they are told (every listener is asked)
    assert set(PICKED) <= w.asked and "operation_started" in {e["kind"] for e in events} and "operation_started" not in w.asked


def test_the_trial_told_only_what_it_follows_records_what_it_records_told_everything(content, monkeypatch):
    told: list[str] = []
    plain = type(TRIAL).on_event

    def on_event(self, w: World, seq: int, kind: str, data: dict) -> None:
        told.append(kind)
        plain(self, w, seq, kind, data)

    monkeypatch.setattr(type(TRIAL), "on_event", on_event)
    w, _, events = settle_for_a_day(content)
    assert any(e["kind"] == "trial_stage_attained" for e in events)
    assert 0 < len(told) < len(events)  # it was not told of every event
    completed, needs = (sum(e["kind"] == kind for e in events) for kind in ("operation_completed", "needs"))
    assert 0 < told.count("operation_completed") < completed  # a craft's, not a rest's
    assert told.count("needs") < needs  # a blow's, not hunger's
    everything = len(told)
    monkeypatch.setattr(type(TRIAL), "hears", lambda self, w, kind, data: True)
    monkeypatch.setattr(type(TRIAL), "listening", lambda self, w: None)  # asked of every kind
    told.clear()
    w_told_all, _, events_told_all = settle_for_a_day(content)
    assert len(told) > everything
    assert events_told_all == events and w_told_all.events.head == w.events.head


def test_a_blow_at_night_spoils_a_clean_night_and_hunger_does_not(content):
    """The trial is told of a change of needs that lowers health (not of one that leaves it as it was)."""
    w = World(content, "tiny", 1)
    hurt, hungry = w.join("hurt"), w.join("hungry")
    w.emit("night_started", day=1)
    for agent, cause, blow in ((hurt, "attack:wolf", 5), (hungry, "hunger", 0)):
        c = w.chars[agent]
        w.set_needs(c, cause, c.health - blow, c.energy, c.satiety - 1)
    w.emit("night_ended", day=1)
    chars = TRIAL.state(w).chars
    assert chars[hurt]["clean_night"] is None and chars[hungry]["clean_night"] is not None
    assert chars[hurt]["health"] == w.chars[hurt].health


def test_once_time_alone_completes_a_stage_the_next_event_of_any_kind_records_it(content):
    """The trial follows a few kinds of event, and every kind once a stage may be due by time alone: the first event
    after that, whatever it is, is followed by the stage (as when it was told of every event)."""
    w = World(content, "tiny", 5)
    a = w.join("settler")
    c = w.chars[a]
    bench = free_beside(w, c.pos)
    apply_setup(w, "place_structure", {"x": w.xy(bench)[0], "y": w.xy(bench)[1], "structure": "workbench"})
    for item, qty in (("wood", 3), ("bed", 1)):
        apply_setup(w, "give_items", {"agent": a, "item": item, "qty": qty})
    assert w.submit(a, "craft", {"recipe": "wooden_axe"}).op
    run_until_idle(w, a)
    x, y = w.xy(c.pos)
    assert w.submit(a, "place", {"item": "bed", "x": x, "y": y}).op
    run_until_idle(w, a)
    due = TRIAL.state(w).due
    assert due is not None and due > w.tick
    drained(w)
    w.tick = due  # time alone has completed Foothold; no event has come since
    w.emit("probe")  # a kind the trial has no handler for
    assert [(e["kind"], e["data"].get("stage")) for e in drained(w)] == [("probe", None), ("trial_stage_attained", "foothold")]
