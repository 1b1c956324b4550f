"""The dungeon: instances, telegraphed combat, knockdowns that retain an instance, the altar and the Shadow King."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from wildhold.content.models import EnemySpec
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import validate_event
from wildhold.world.observe import observe
from wildhold.world.parts import PARTS
from wildhold.world.parts.dungeon import dungeon_status, room_view, state, weapon_damage
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import apply_setup
from wildhold.world.world import World

BEST = {"iron_sword": 1, "iron_armor": 1, "healing_potion": 10, "energy_tonic": 4}


# ---- helpers -------------------------------------------------------------------------------


def hero(content, seed: int = 3, items: dict[str, int] | None = None, equip: tuple[str, ...] = ()) -> tuple[World, str]:
    """A world with one character standing on the dungeon entrance, carrying and wearing what it is given."""
    w = World(content, "tiny", seed)
    a = w.join("hero")
    x, y = w.xy(w.dungeon)
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    for item, qty in (items or {}).items():
        apply_setup(w, "give_items", {"agent": a, "item": item, "qty": qty})
    for item in equip:
        act(w, a, "equip", {"item": item})
    return w, a


def act(w: World, a: str, action: str, args: dict[str, Any] | None = None) -> Accepted:
    """Submit an action that must be accepted and step until it is over."""
    result = w.submit(a, action, args or {})
    assert isinstance(result, Accepted), (action, args, result)
    while w.chars[a].op is not None:
        w.step()
    return result


def events(w: World) -> list[tuple[int, str, dict[str, Any]]]:
    """The events emitted since the last call, each checked against its typed model."""
    out = []
    for _, tick, kind, payload, _ in w.events.drain():
        data = orjson.loads(payload)["data"]
        validate_event(kind, data)
        out.append((tick, kind, data))
    return out


def of(evs: list, kind: str) -> list[dict[str, Any]]:
    return [d for _, k, d in evs if k == kind]


def careful_turn(w: World, a: str) -> None:
    """Dodge whenever a strike is announced; otherwise strike, a vulnerable enemy first."""
    view = room_view(w, a)
    if any(e["intent"] for e in view["enemies"]):
        act(w, a, "dodge")
        return
    if w.chars[a].energy < 6 and w.chars[a].inventory.get("energy_tonic"):
        act(w, a, "use_consumable", {"item": "energy_tonic"})
        return
    strike_best(w, a, view)


def careless_turn(w: World, a: str, heal_below: int = 45) -> None:
    """Never defend: heal when low, otherwise strike."""
    c = w.chars[a]
    if c.health < heal_below and c.inventory.get("healing_potion"):
        act(w, a, "use_consumable", {"item": "healing_potion"})
    elif c.energy < 6 and c.inventory.get("energy_tonic"):
        act(w, a, "use_consumable", {"item": "energy_tonic"})
    else:
        strike_best(w, a, room_view(w, a))


def strike_best(w: World, a: str, view: dict[str, Any]) -> None:
    enemies = view["enemies"]
    target = min([e for e in enemies if e["next"]["vulnerable"]] or enemies, key=lambda e: e["hp"])
    act(w, a, "strike", {"enemy": target["id"]})


def fight_room(w: World, a: str, turn=careful_turn) -> None:
    while room_view(w, a)["enemies"]:
        turn(w, a)


def clear_tier(w: World, a: str, tier: int, turn=careful_turn, king: bool = False, leave: bool = True, enter: bool = True) -> None:
    """Enter a tier, fight through every room (and the Shadow King when asked), and leave alive."""
    if enter:
        act(w, a, "enter_dungeon", {"tier": tier})
    while True:
        fight_room(w, a, turn)
        view = room_view(w, a)
        if view["room"] < view["rooms"]:
            act(w, a, "advance")
        elif king and view["altar"] == "ready":
            act(w, a, "activate_altar")
        else:
            break
    if leave:
        act(w, a, "leave_dungeon")


def walk_to_boss(w: World, a: str, tier: int) -> None:
    """Enter and clear every room before the boss's, carefully, and step into the boss room."""
    act(w, a, "enter_dungeon", {"tier": tier})
    while room_view(w, a)["room"] < room_view(w, a)["rooms"]:
        fight_room(w, a)
        act(w, a, "advance")


def wait_for_intent(w: World, a: str) -> dict[str, Any]:
    """Wait a tick at a time until an enemy announces a strike; return that enemy's view."""
    for _ in range(20):
        announced = [e for e in room_view(w, a)["enemies"] if e["intent"]]
        if announced:
            return announced[0]
        act(w, a, "wait", {"ticks": 1})
    raise AssertionError("no enemy announced a strike within 20 ticks")


# ---- entering and leaving ------------------------------------------------------------------


def test_entering_draws_a_fresh_instance_and_shows_the_room(content):
    w, a = hero(content, items={"iron_sword": 1}, equip=("iron_sword",))
    events(w)
    act(w, a, "enter_dungeon", {"tier": "outer_court"})
    evs = events(w)
    entered = of(evs, "dungeon_entered")
    assert entered == [{"agent": a, "instance": "d1", "tier": 1, "fresh": True, "resumed": False}]
    (room,) = of(evs, "room_entered")
    view = observe(w, a)["dungeon"]
    assert view["in_dungeon"] and view["instance"] == "d1" and view["unlocked"] == [1]
    r = view["room"]
    assert (r["tier"], r["room"], r["rooms"]) == (1, 1, content.dungeon.tiers["outer_court"].rooms + 1)
    assert [e["kind"] for e in r["enemies"]] == room["enemies"]
    assert r["boss"]["kind"] == content.dungeon.tiers["outer_court"].boss and r["shadow_king"] is None
    for e in r["enemies"]:
        assert e["next"]["at"] == w.tick + 1
        assert (e["intent"] is not None) == (e["next"]["damage"] > 0)


def test_inside_the_character_is_sheltered_and_cannot_walk(content):
    w, a = hero(content)
    act(w, a, "enter_dungeon", {"tier": 1})
    c = w.chars[a]
    assert c.pos == w.dungeon and w.is_sheltered(c)
    assert w.submit(a, "move", {"direction": "s"}).code == "held_in_place"
    assert w.submit(a, "move_to", {"x": 5, "y": 5}).code == "held_in_place"
    for action, args in (("gather", {"x": 0, "y": 0}), ("craft", {"recipe": "plank"}), ("drop", {"item": "berries"})):
        assert w.submit(a, action, args).code == "held_in_place"
    assert isinstance(w.submit(a, "wait", {"ticks": 1}), Accepted)


def test_an_action_mask_sees_the_character_held_from_entering_to_leaving(content):
    """`ready_code` and the check answer held_in_place from the tick the character enters until it leaves, alive or
    carried out, and in a world loaded while it is inside: the world keeps whom the dungeon holds between its events."""
    w, a = hero(content, seed=4)
    assert w.ready_code(a, "move") is None
    act(w, a, "enter_dungeon", {"tier": 1})
    assert (w.ready_code(a, "move"), w.refusal_code(a, "move", {"direction": "s"})) == ("held_in_place", "held_in_place")
    assert w.check(a, "move", {"direction": "s"}).message.startswith("You are inside the dungeon")
    assert w.ready_code(a, "leave_dungeon") is None  # the dungeon's own actions stay open
    loaded = loads(content, dumps(w))
    assert loaded.ready_code(a, "drop") == loaded.refusal_code(a, "drop", {"item": "berries"}) == "held_in_place"
    act(w, a, "leave_dungeon")
    assert w.ready_code(a, "move") is None and w.refusal_code(a, "move", {"direction": "s"}) != "held_in_place"
    act(loaded, a, "leave_dungeon")
    assert loaded.ready_code(a, "drop") is None
    act(w, a, "enter_dungeon", {"tier": 1})
    assert w.ready_code(a, "move") == "held_in_place"
    apply_setup(w, "set_needs", {"agent": a, "health": 0})
    w.step()  # knocked down: carried out
    assert w.ready_code(a, "move") is None


def test_whom_the_dungeon_holds_is_read_again_after_a_set_up_command(content):
    """A set-up command may write a part's state directly: after one, the world asks again whom the parts hold (it
    keeps them between their own events)."""
    w, a = hero(content)
    assert w.ready_code(a, "move") is None
    state(w).inside[a] = "d1"  # as a command writing the dungeon's state would leave it
    apply_setup(w, "set_needs", {"agent": a, "health": 50})
    assert w.ready_code(a, "move") == w.refusal_code(a, "move", {"direction": "s"}) == "held_in_place"


def test_leaving_alive_discards_the_instance_and_the_next_entry_is_fresh(content):
    w, a = hero(content)
    act(w, a, "enter_dungeon", {"tier": 1})
    events(w)
    act(w, a, "leave_dungeon")
    assert of(events(w), "dungeon_left") == [{"agent": a, "instance": "d1", "tier": 1, "alive": True, "cleared": False, "fresh": True}]
    assert state(w).instances == {} and not dungeon_status(w, a)["in_dungeon"]
    assert all(part.confines(w, w.chars[a], "move") is None for part in PARTS)
    act(w, a, "enter_dungeon", {"tier": 1})
    assert of(events(w), "dungeon_entered")[0] == {"agent": a, "instance": "d2", "tier": 1, "fresh": True, "resumed": False}


def test_tier_2_is_refused_before_tier_1_is_cleared(content):
    w, a = hero(content, items=BEST, equip=("iron_sword", "iron_armor"))
    before = state_hash(w)
    refused = w.submit(a, "enter_dungeon", {"tier": 2})
    assert refused.code == "tier_locked" and state_hash(w) == before
    clear_tier(w, a, 1)
    assert dungeon_status(w, a)["unlocked"] == [1, 2]
    act(w, a, "enter_dungeon", {"tier": 2})
    assert w.submit(a, "leave_dungeon", {}).op


# ---- combat --------------------------------------------------------------------------------


def test_a_strike_is_announced_the_tick_before_it_lands(content):
    w, a = hero(content, items={"iron_sword": 1}, equip=("iron_sword",))
    act(w, a, "enter_dungeon", {"tier": 1})
    events(w)
    for _ in range(30):
        act(w, a, "wait", {"ticks": 1})
    evs = events(w)
    intents = {(d["enemy"], d["lands_at"]): (tick, d) for tick, k, d in evs if k == "enemy_intent"}
    hits = [(tick, d) for tick, k, d in evs if k == "character_hit"]
    assert hits
    for tick, hit in hits:
        announced_at, intent = intents[(hit["enemy"], tick)]
        assert announced_at == tick - 1 and intent["move"] == hit["move"]


def test_perfect_timing_beats_the_boss_without_damage(content):
    w, a = hero(content, seed=5, items={"iron_sword": 1}, equip=("iron_sword",))
    walk_to_boss(w, a, 1)
    events(w)
    fight_room(w, a, careful_turn)
    evs = events(w)
    assert of(evs, "character_hit") and all(h["dodged"] and h["damage"] == 0 for h in of(evs, "character_hit"))
    assert any(h["vulnerable"] for h in of(evs, "enemy_hit"))
    (cleared,) = of(evs, "tier_cleared")
    assert cleared == {"agent": a, "instance": "d1", "tier": 1, "fresh": True, "damage_taken": 0, "consumables_used": 0}
    assert w.chars[a].health == content.needs.max_health
    gained = [d for d in of(evs, "item_gained") if d["source"] == "dungeon:1"]
    assert {d["item"] for d in gained} >= {"t_coin", "hide"}
    lo, hi = content.dungeon.tiers["outer_court"].coins
    assert lo <= next(d["qty"] for d in gained if d["item"] == "t_coin") <= hi


def test_absorbing_damage_and_drinking_potions_also_wins(content):
    w, a = hero(content, seed=5, items={"iron_sword": 1, "healing_potion": 4}, equip=("iron_sword",))
    walk_to_boss(w, a, 1)
    apply_setup(w, "set_needs", {"agent": a, "health": 30})
    events(w)
    fight_room(w, a, lambda w, a: careless_turn(w, a, heal_below=25))
    evs = events(w)
    assert not any(h["dodged"] or h["guarded"] for h in of(evs, "character_hit"))
    (cleared,) = of(evs, "tier_cleared")
    assert cleared["damage_taken"] > 0 and cleared["consumables_used"] >= 1
    assert len(of(evs, "consumable_used")) == cleared["consumables_used"]
    assert of(evs, "consumable_used")[0] == {"agent": a, "instance": "d1", "item": "healing_potion"}


def _first_hit(w: World, a: str, defend: str | None) -> dict[str, Any]:
    """Wait for an announced strike, meet it with `defend` (or a plain wait), and return the hit."""
    wait_for_intent(w, a)
    events(w)
    act(w, a, defend or "wait", None if defend else {"ticks": 1})
    hits = of(events(w), "character_hit")
    assert hits
    return hits[0]


def test_guard_reduces_the_damage_of_a_hit(content):
    pct = content.dungeon.guard_reduction_pct
    plain_w, plain_a = hero(content, seed=7)
    guard_w, guard_a = hero(content, seed=7)
    for w, a in ((plain_w, plain_a), (guard_w, guard_a)):
        act(w, a, "enter_dungeon", {"tier": 1})
    plain = _first_hit(plain_w, plain_a, None)
    guarded = _first_hit(guard_w, guard_a, "guard")
    assert (plain["guarded"], guarded["guarded"]) == (False, True)
    assert plain["raw"] == guarded["raw"] == plain["damage"]
    assert guarded["damage"] == plain["raw"] - plain["raw"] * pct // 100 < plain["damage"]
    assert guard_w.chars[guard_a].health == plain_w.chars[plain_a].health + plain["damage"] - guarded["damage"]


def test_armour_subtracts_its_defense_from_every_hit(content):
    defense = content.items["iron_armor"].tool.defense
    bare_w, bare_a = hero(content, seed=7, items={"iron_armor": 1})
    worn_w, worn_a = hero(content, seed=7, items={"iron_armor": 1}, equip=("iron_armor",))
    act(bare_w, bare_a, "wait", {"ticks": 1})
    for w, a in ((bare_w, bare_a), (worn_w, worn_a)):
        act(w, a, "enter_dungeon", {"tier": 1})
    bare = _first_hit(bare_w, bare_a, None)
    worn = _first_hit(worn_w, worn_a, None)
    assert bare["damage"] == bare["raw"] and worn["raw"] == bare["raw"]
    assert worn["damage"] == max(0, bare["raw"] - defense)
    assert room_view(worn_w, worn_a)["self"]["defense"] == defense


def test_a_dodge_avoids_an_announced_strike_and_a_stray_dodge_only_costs_energy(content):
    w, a = hero(content, seed=7)
    act(w, a, "enter_dungeon", {"tier": 1})
    hit = _first_hit(w, a, "dodge")
    assert hit["dodged"] and hit["damage"] == 0 and hit["health"] == w.chars[a].health
    while any(e["intent"] for e in room_view(w, a)["enemies"]):
        act(w, a, "wait", {"ticks": 1})
    health, energy = w.chars[a].health, w.chars[a].energy
    events(w)
    act(w, a, "dodge")
    assert of(events(w), "character_hit") == []
    assert w.chars[a].health == health and w.chars[a].energy == energy - content.actions["dodge"].energy


def test_a_strike_on_a_vulnerable_move_deals_extra_damage(content):
    w, a = hero(content, seed=5, items={"wooden_club": 1}, equip=("wooden_club",))
    act(w, a, "enter_dungeon", {"tier": 1})
    base = weapon_damage(w, w.chars[a])
    seen = set()
    for _ in range(12):
        view = room_view(w, a)
        if not view["enemies"]:
            break
        target = view["enemies"][0]
        events(w)
        act(w, a, "strike", {"enemy": target["id"]})
        (hit,) = of(events(w), "enemy_hit")
        assert hit["vulnerable"] == target["next"]["vulnerable"]
        want = base * content.dungeon.vulnerable_damage_pct // 100 if hit["vulnerable"] else base
        assert hit["damage"] == want and hit["hp"] == max(0, target["hp"] - want)
        seen.add(hit["vulnerable"])
    assert seen == {True, False}


def test_enemies_act_only_in_the_characters_room(content):
    w, a = hero(content)
    act(w, a, "enter_dungeon", {"tier": 1})
    inst = state(w).instances["d1"]
    later = [(e.id, e.pos, e.hp) for room in inst.rooms[1:] for e in room]
    for _ in range(10):
        act(w, a, "guard")
    assert [(e.id, e.pos, e.hp) for room in inst.rooms[1:] for e in room] == later


# ---- knockdowns and retained instances -----------------------------------------------------


def test_a_knockdown_retains_the_instance_and_reentry_resumes_it(content):
    w, a = hero(content, seed=4, items={"iron_sword": 1}, equip=("iron_sword",))
    act(w, a, "enter_dungeon", {"tier": 1})
    first = room_view(w, a)["enemies"][0]["id"]
    act(w, a, "strike", {"enemy": first})
    inst = state(w).instances["d1"]
    kept = [[(e.id, e.hp, e.pos) for e in room] for room in inst.rooms]
    assert kept[0][0][1] < content.enemies[inst.rooms[0][0].kind].hp
    apply_setup(w, "set_needs", {"agent": a, "health": 0})
    events(w)
    w.step()
    evs = events(w)
    assert of(evs, "carried_out") == [{"agent": a, "instance": "d1", "tier": 1}]
    assert of(evs, "dungeon_left") == [{"agent": a, "instance": "d1", "tier": 1, "alive": False, "cleared": False, "fresh": False}]
    assert [k for _, k, _ in evs].index("dungeon_left") < [k for _, k, _ in evs].index("knockdown")
    status = dungeon_status(w, a)
    assert not status["in_dungeon"] and status["retained"] == [{"instance": "d1", "tier": 1, "room": 1, "rooms": 3, "cleared": False}]
    for _ in range(50):
        w.step()
    assert [[(e.id, e.hp, e.pos) for e in room] for room in inst.rooms] == kept
    x, y = w.xy(w.dungeon)
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    act(w, a, "enter_dungeon", {"tier": 1})
    evs = events(w)
    assert of(evs, "dungeon_entered") == [{"agent": a, "instance": "d1", "tier": 1, "fresh": False, "resumed": True}]
    assert [[(e.id, e.hp, e.pos) for e in room] for room in state(w).instances["d1"].rooms] == kept
    assert dungeon_status(w, a)["retained"] == []
    clear_tier(w, a, 1, leave=False, enter=False)
    (cleared,) = of(events(w), "tier_cleared")
    assert cleared["fresh"] is False


def test_a_knockdown_in_combat_carries_the_character_out(content):
    w, a = hero(content, seed=4)
    act(w, a, "enter_dungeon", {"tier": 1})
    apply_setup(w, "set_needs", {"agent": a, "health": 1})
    for _ in range(40):
        if not dungeon_status(w, a)["in_dungeon"]:
            break
        act(w, a, "wait", {"ticks": 1})
    assert w.chars[a].knockdowns == 1 and w.chars[a].pos != w.dungeon
    assert dungeon_status(w, a)["retained"][0]["instance"] == "d1"


# ---- the altar and the Shadow King ---------------------------------------------------------


def test_the_altar_reveals_the_shadow_king_only_after_the_royal_tomb_boss(content):
    w, a = hero(content, seed=2, items=BEST, equip=("iron_sword", "iron_armor"))
    clear_tier(w, a, 1, leave=False)
    assert w.submit(a, "activate_altar", {}).code == "no_altar"
    act(w, a, "leave_dungeon")
    clear_tier(w, a, 2)
    act(w, a, "enter_dungeon", {"tier": 3})
    assert w.submit(a, "activate_altar", {}).code == "no_altar"
    while room_view(w, a)["room"] < room_view(w, a)["rooms"]:
        fight_room(w, a)
        act(w, a, "advance")
    assert w.submit(a, "activate_altar", {}).code == "room_not_clear"
    fight_room(w, a)
    assert room_view(w, a)["altar"] == "ready" and room_view(w, a)["shadow_king"] is None
    assert w.submit(a, "advance", {}).code == "no_next_room"
    events(w)
    act(w, a, "activate_altar")
    assert of(events(w), "altar_activated") == [{"agent": a, "instance": "d3"}]
    assert w.submit(a, "activate_altar", {}).code == "altar_used"
    act(w, a, "advance")
    view = room_view(w, a)
    assert [e["kind"] for e in view["enemies"]] == [content.dungeon.shadow_king.enemy]
    assert view["shadow_king"]["hp"] == content.enemies["shadow_king"].hp


def test_best_gear_and_potions_clear_every_tier_and_the_shadow_king(content):
    """A careless fighter (never dodges or guards) in the strongest craftable gear, drinking potions."""
    w, a = hero(content, seed=11, items=BEST, equip=("iron_sword", "iron_armor"))
    events(w)
    for tier in (1, 2):
        clear_tier(w, a, tier, turn=careless_turn)
    clear_tier(w, a, 3, turn=careless_turn, king=True)
    evs = events(w)
    assert [d["tier"] for d in of(evs, "tier_cleared")] == [1, 2, 3]
    (king,) = of(evs, "shadow_king_defeated")
    assert king["fresh"] and king["damage_taken"] > 0 and king["consumables_used"] > 0
    assert w.chars[a].knockdowns == 0 and w.chars[a].inventory.get("shadow_crown") == 1
    assert dungeon_status(w, a) | {"retained": []} == {
        "in_dungeon": False, "instance": None, "tier": None, "unlocked": [1, 2, 3], "cleared": [1, 2, 3],
        "shadow_king_defeats": 1, "retained": [],
    }
    assert [d["alive"] for d in of(evs, "dungeon_left")] == [True, True, True]


# ---- rejections, snapshots, determinism ----------------------------------------------------


def test_every_rejection_leaves_the_state_hash_unchanged(content):
    w, a = hero(content, items={"iron_sword": 1, "berries": 2}, equip=("iron_sword",))
    outside = [
        ("enter_dungeon", {"tier": 9}, "unknown_tier"),
        ("enter_dungeon", {"tier": "crypt"}, "unknown_tier"),
        ("enter_dungeon", {"tier": 3}, "tier_locked"),
        ("strike", {"enemy": "e1"}, "not_in_dungeon"),
        ("guard", {}, "not_in_dungeon"),
        ("dodge", {}, "not_in_dungeon"),
        ("advance", {}, "not_in_dungeon"),
        ("leave_dungeon", {}, "not_in_dungeon"),
        ("activate_altar", {}, "not_in_dungeon"),
        ("use_consumable", {"item": "berries"}, "not_consumable"),
        ("use_consumable", {"item": "healing_potion"}, "not_in_inventory"),
    ]
    inside = [
        ("enter_dungeon", {"tier": 1}, "in_dungeon"),
        ("strike", {"enemy": "e99"}, "no_enemy"),
        ("advance", {}, "room_not_clear"),
        ("activate_altar", {}, "no_altar"),
        ("move", {"direction": "n"}, "held_in_place"),
        ("move_to", {"x": 3, "y": 3}, "held_in_place"),
    ]

    def probe(cases):
        for action, args, code in cases:
            before = state_hash(w)
            result = w.submit(a, action, args)
            assert isinstance(result, Rejected) and result.code == code, (action, args, result)
            assert state_hash(w) == before, (action, args)

    probe(outside)
    apply_setup(w, "move_character", {"agent": a, "x": 16, "y": 16})
    probe([("enter_dungeon", {"tier": 1}, "not_at_dungeon")])
    x, y = w.xy(w.dungeon)
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    act(w, a, "enter_dungeon", {"tier": 1})
    probe(inside)
    apply_setup(w, "set_needs", {"agent": a, "energy": 0})
    probe([("dodge", {}, "not_enough_energy")])


def test_a_snapshot_mid_fight_resumes_exactly(content):
    w, a = hero(content, seed=6, items=BEST, equip=("iron_sword", "iron_armor"))
    act(w, a, "enter_dungeon", {"tier": 1})
    careful_turn(w, a)
    careless_turn(w, a)
    w.submit(a, "guard", {})
    copy = loads(content, dumps(w))
    assert state_hash(copy) == state_hash(w)
    for world in (w, copy):
        for _ in range(12):
            while world.chars[a].op is not None:
                world.step()
            if room_view(world, a)["enemies"]:
                careless_turn(world, a)
        for _ in range(5):
            world.step()
    assert copy.events.head == w.events.head and state_hash(copy) == state_hash(w)


def test_the_same_seed_and_actions_give_the_same_chain(content):
    heads = []
    for _ in range(2):
        w, a = hero(content, seed=9, items=BEST, equip=("iron_sword",))
        clear_tier(w, a, 1)
        clear_tier(w, a, 2, turn=careless_turn)
        heads.append((w.events.head, state_hash(w)))
    assert heads[0] == heads[1]
    other, b = hero(content, seed=10, items=BEST, equip=("iron_sword",))
    clear_tier(other, b, 1)
    assert other.events.head != heads[0][0]


# ---- content --------------------------------------------------------------------------------


def test_an_enemy_pattern_must_telegraph_every_strike():
    moves = [{"move": "wind_up", "text": "winds up"}, {"move": "hit", "text": "hits", "damage": 5}, {"move": "hit2", "text": "hits again", "damage": 5}]
    with pytest.raises(ValidationError, match="telegraph"):
        EnemySpec.model_validate({"description": "x", "hp": 5, "pattern": moves})
    EnemySpec.model_validate({"description": "x", "hp": 5, "pattern": moves[:2]})


def test_weapons_and_armour_are_craftable_and_rank_as_documented(content):
    weapons = {k: i.tool.damage for k, i in content.items.items() if i.tool and i.tool.damage}
    armour = {k: i.tool.defense for k, i in content.items.items() if i.tool and i.tool.defense}
    crafted = {item for r in content.recipes.values() for item in r.outputs}
    assert set(weapons) | set(armour) <= crafted
    assert max(weapons, key=weapons.get) == "iron_sword" and max(armour, key=armour.get) == "iron_armor"
    assert all(content.items[k].tool.slot == "body" for k in armour)
    assert content.items["healing_potion"].category == "consumable"
