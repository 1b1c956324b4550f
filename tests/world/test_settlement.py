"""The settlement part: villagers' schedules, talk and gifts, friendship unlocks and discounts,
shops, the quest board and quest log, rejections that change nothing, snapshots."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import validate_event
from wildhold.world.observe import observe
from wildhold.world.parts import PARTS
from wildhold.world.parts.settlement import SETTLEMENT, place_tile, scheduled_place
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import apply_setup
from wildhold.world.world import World

COIN = "coin"


# ---- helpers -------------------------------------------------------------------------------------


def make(content, seed: int = 0, agents: int = 1, scenario: str = "tiny") -> tuple[World, list[str]]:
    w = World(content, scenario, seed)
    ids = [w.join(f"c{i}") for i in range(agents)]
    return w, ids


def drain(w: World) -> list[tuple[str, dict[str, Any]]]:
    """The events since the last drain as (kind, data), each checked against its typed model."""
    events = [(kind, orjson.loads(payload)["data"]) for _, _, kind, payload, _ in w.events.drain()]
    for kind, data in events:
        validate_event(kind, data)
    return events


def of(events: list[tuple[str, dict]], kind: str) -> list[dict]:
    return [d for k, d in events if k == kind]


def clock(w: World, day: int, hour: int) -> None:
    """Jump to the start of an hour and run one tick, so villagers and the board catch up."""
    apply_setup(w, "set_time", {"day": day, "hour": hour})
    w.step()


def give(w: World, agent: str, item: str, qty: int) -> None:
    apply_setup(w, "give_items", {"agent": agent, "item": item, "qty": qty})


def stand_by(w: World, agent: str, npc: str) -> None:
    """Put the character on the villager's tile (villagers block no one)."""
    x, y = w.xy(SETTLEMENT.state(w).villagers[npc][1])
    apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})


def stand_far(w: World, agent: str, npc: str) -> None:
    """Put the character on the walkable tile farthest from the villager."""
    home = SETTLEMENT.state(w).villagers[npc][1]
    p = max((p for p in range(w.width * w.height) if w.is_walkable(p)), key=lambda p: (w.distance(p, home), -p))
    x, y = w.xy(p)
    apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})


def do(w: World, agent: str, action: str, **args: Any) -> tuple[dict, list[tuple[str, dict]]]:
    """Submit an action that must be accepted, run it to its end; its result and the events on the way."""
    drain(w)
    r = w.submit(agent, action, args)
    assert isinstance(r, Accepted), r
    while w.chars[agent].op is not None:
        w.step()
    events = drain(w)
    done = [d for d in of(events, "operation_completed") if d["op"] == r.op]
    assert done, of(events, "operation_failed")
    return done[0]["result"], events


def rejected(w: World, agent: str, action: str, **args: Any) -> str:
    """Submit an action that must be rejected without changing the state; its code."""
    before = state_hash(w)
    r = w.submit(agent, action, args)
    assert isinstance(r, Rejected), r
    assert state_hash(w) == before, (action, args, r)
    return r.code


def world_with_quest(content, kind: str) -> tuple[World, list[str], dict]:
    """The first tiny world (by seed) whose day-1 board posts a quest of this kind."""
    for seed in range(100):
        w, ids = make(content, seed)
        posted = [q for q in observe(w, ids[0])["quest_board"] if q["kind"] == kind]
        if posted:
            return w, ids, posted[0]
    raise AssertionError(f"no seed posts a {kind} quest")


# ---- villagers and their schedule ---------------------------------------------------------------


def test_villagers_follow_their_schedule_by_hour(content):
    w, _ = make(content)
    drain(w)
    for hour in range(24):
        moves = []
        for _ in range(60):
            w.step()
            moved = of(drain(w), "npc_moved")
            if moved:
                assert w.tick % 60 == 0, "villagers move only on the hour"
            moves += moved
        now = w.tick % w.calendar.ticks_per_day // 60
        for name, npc in content.npcs.items():
            place = scheduled_place(npc, now)
            assert SETTLEMENT.state(w).villagers[name] == (place, place_tile(w, place))
        for m in moves:
            assert w.pos(m["x"], m["y"]) == SETTLEMENT.state(w).villagers[m["npc"]][1]


def test_a_villager_stands_on_its_place_or_the_nearest_free_settlement_tile(content):
    w, _ = make(content)
    clock(w, 1, 10)
    cx, cy = w.xy(w.settlement)
    dx, dy = content.social.places["square"]
    assert SETTLEMENT.state(w).villagers["oskar"] == ("square", w.pos(cx + dx, cy + dy))
    apply_setup(w, "place_structure", {"x": cx + dx, "y": cy + dy, "structure": "workbench"})
    clock(w, 1, 11)
    clock(w, 1, 12)
    clock(w, 2, 7)  # oskar is at the square again from 6
    place, p = SETTLEMENT.state(w).villagers["oskar"]
    assert place == "square" and p != w.pos(cx + dx, cy + dy) and w.is_walkable(p)
    assert w.distance(p, w.pos(cx + dx, cy + dy)) == 1
    r = w.scenario.settlement.radius
    assert w.distance(p, w.settlement) <= r


def test_villagers_appear_in_the_observation_only_in_view(content):
    w, (a,) = make(content)
    clock(w, 1, 10)
    stand_by(w, a, "mara")
    seen = {v["npc"]: v for v in observe(w, a)["villagers"]}
    assert "mara" in seen
    assert seen["mara"]["role"] == "shopkeeper" and seen["mara"]["shop"]["open"] is True
    assert (seen["mara"]["x"], seen["mara"]["y"]) == w.xy(SETTLEMENT.state(w).villagers["mara"][1])
    stand_far(w, a, "mara")
    assert observe(w, a)["villagers"] == []


def test_no_villagers_board_or_locks_where_the_scenario_has_none(content):
    tiny = content.scenarios["tiny"]
    quiet = content.model_copy(update={"scenarios": {**content.scenarios, "quiet": tiny.model_copy(update={"npcs": False})}})
    w, (a,) = make(quiet, scenario="quiet")
    events = drain(w)
    assert not of(events, "quest_posted")
    w.step()
    assert not of(drain(w), "npc_moved")
    obs = observe(w, a)
    assert (obs["villagers"], obs["quest_board"], obs["friendship"]) == ([], [], {})
    assert rejected(w, a, "talk", npc="mara") == "unknown_npc"
    assert rejected(w, a, "accept_quest", quest="q1") == "unknown_quest"
    assert not SETTLEMENT.state(w).villagers
    assert all(part.recipe_locked(w, w.chars[a], "iron_pickaxe") is None for part in PARTS)


# ---- talk and gifts ------------------------------------------------------------------------------


def test_talking_counts_once_a_day(content):
    w, (a,) = make(content)
    clock(w, 1, 10)
    stand_by(w, a, "ines")
    first, events = do(w, a, "talk", npc="ines")
    assert first["friendship_gained"] == content.social.talk_points
    assert first["line"] in content.npcs["ines"].lines["greeting"]
    assert of(events, "talked")[0]["delta"] == content.social.talk_points
    again, events = do(w, a, "talk", npc="ines")
    assert again["friendship_gained"] == 0 and again["line"]
    assert again["points"] == content.social.talk_points
    assert of(events, "talked")[0]["delta"] == 0
    clock(w, 2, 10)
    stand_by(w, a, "ines")
    next_day, _ = do(w, a, "talk", npc="ines")
    assert next_day["points"] == 2 * content.social.talk_points


def test_gifts_move_friendship_by_the_villagers_preferences(content):
    w, ids = make(content, agents=4)
    clock(w, 1, 10)
    mara = content.npcs["mara"]
    items = {"loved": mara.loves[0], "liked": mara.likes[0], "neutral": "wood", "disliked": mara.dislikes[0]}
    assert "wood" not in mara.loves + mara.likes + mara.dislikes
    gained = {}
    for agent, (felt, item) in zip(ids, items.items()):
        give(w, agent, item, 1)
        stand_by(w, agent, "mara")
        result, events = do(w, agent, "gift", npc="mara", item=item)
        assert result["opinion"] == felt and result["line"] in mara.lines[f"gift_{felt}"]
        assert of(events, "item_lost") == [{"holder": agent, "item": item, "qty": 1, "source": "gift:mara"}]
        assert of(events, "gift_given")[0]["delta"] == result["friendship_gained"]
        gained[felt] = result["friendship_gained"]
    assert gained["loved"] > gained["liked"] > gained["neutral"] > 0
    assert gained["disliked"] == 0  # friendship never falls below 0 points
    # The disliker raised friendship first: a disliked gift then takes points away.
    disliker = ids[3]
    clock(w, 2, 10)
    stand_by(w, disliker, "mara")
    give(w, disliker, items["loved"], 1)
    do(w, disliker, "gift", npc="mara", item=items["loved"])
    clock(w, 3, 10)
    stand_by(w, disliker, "mara")
    give(w, disliker, items["disliked"], 1)
    result, _ = do(w, disliker, "gift", npc="mara", item=items["disliked"])
    assert result["friendship_gained"] == content.social.gift_points["disliked"] < 0
    assert result["points"] == content.social.gift_points["loved"] + content.social.gift_points["disliked"]


def test_gifts_per_day_are_limited_per_villager(content):
    w, (a,) = make(content)
    clock(w, 1, 10)
    stand_by(w, a, "mara")
    give(w, a, "wood", 5)
    for _ in range(content.social.gifts_per_day):
        do(w, a, "gift", npc="mara", item="wood")
    assert rejected(w, a, "gift", npc="mara", item="wood") == "gift_limit"
    assert observe(w, a)["friendship"]["mara"]["gifts_today"] == content.social.gifts_per_day
    clock(w, 2, 10)
    stand_by(w, a, "mara")
    do(w, a, "gift", npc="mara", item="wood")


def test_friendship_levels_are_private_to_each_character(content):
    w, (a, b) = make(content, agents=2)
    clock(w, 1, 10)
    stand_by(w, a, "oskar")
    give(w, a, "milk", 1)
    do(w, a, "gift", npc="oskar", item="milk")
    assert observe(w, a)["friendship"]["oskar"]["points"] == content.social.gift_points["loved"]
    assert observe(w, b)["friendship"]["oskar"] == {"points": 0, "level": 0, "discount_pct": 0, "talked_today": False, "gifts_today": 0}


# ---- unlocks and discounts -----------------------------------------------------------------------


def _befriend(w: World, agent: str, npc: str, item: str, days: int, first_day: int = 1) -> list[tuple[str, dict]]:
    """Talk and give a loved item each day for some days; the events on the way."""
    events = []
    for day in range(first_day, first_day + days):
        clock(w, day, 10)
        stand_by(w, agent, npc)
        give(w, agent, item, 1)
        events += do(w, agent, "talk", npc=npc)[1]
        events += do(w, agent, "gift", npc=npc, item=item)[1]
    return events


def test_a_locked_recipe_names_every_villager_whose_friendship_opens_it(content):
    """Each recipe an unlock lists is locked until its level with that villager, and the refusal says with whom; a
    recipe no unlock lists is never locked."""
    w, (a,) = make(content)
    opens = {}
    for name, npc in content.npcs.items():
        for u in npc.unlocks:
            for recipe in u.recipes:
                opens.setdefault(recipe, []).append(f"level {u.level} with {name} (yours: 0)")
    assert opens, "the content unlocks no recipe"
    for recipe in content.recipes:
        why = SETTLEMENT.recipe_locked(w, w.chars[a], recipe)
        assert why == (f"{recipe} opens at friendship {' or '.join(opens[recipe])}. Talk with villagers daily, bring gifts"
                       " and finish their quests." if recipe in opens else None)


def test_friendship_level_unlocks_a_locked_recipe(content):
    bram = content.npcs["bram"]
    unlock = next(u for u in bram.unlocks if "iron_pickaxe" in u.recipes)
    w, (a,) = make(content)
    recipe = content.recipes["iron_pickaxe"]
    for item, qty in recipe.inputs.items():
        give(w, a, item, qty)
    bench = next(p for p, s in w.structures.items() if s.kind == recipe.station)
    bx, by = w.xy(bench)
    apply_setup(w, "move_character", {"agent": a, "x": bx, "y": by + 1})
    assert rejected(w, a, "craft", recipe="iron_pickaxe") == "recipe_locked"
    per_day = content.social.talk_points + content.social.gift_points["loved"]
    days = -(-unlock.level * content.social.points_per_level // per_day)
    events = _befriend(w, a, "bram", bram.loves[0], days)
    levels = [e["level"] for e in of(events, "friendship_level")]
    assert levels == sorted(levels) and levels[-1] >= unlock.level
    assert observe(w, a)["friendship"]["bram"]["level"] >= unlock.level
    apply_setup(w, "move_character", {"agent": a, "x": bx, "y": by + 1})
    result, _ = do(w, a, "craft", recipe="iron_pickaxe")
    assert result["outputs"] == {"iron_pickaxe": 1}


def test_a_friendship_discount_lowers_the_price_rounded_in_the_sellers_favour(content):
    mara = content.npcs["mara"]
    unlock = min((u for u in mara.unlocks if u.discount_pct), key=lambda u: u.level)
    price = mara.shop.sells["sheep"]
    discounted = -(-price * (100 - unlock.discount_pct) // 100)
    assert discounted < price and discounted * 100 != price * (100 - unlock.discount_pct)  # rounding matters here
    w, (a,) = make(content)
    per_day = content.social.talk_points + content.social.gift_points["loved"]
    _befriend(w, a, "mara", mara.loves[0], -(-unlock.level * content.social.points_per_level // per_day))
    mara_seen = next(v for v in observe(w, a)["villagers"] if v["npc"] == "mara")
    assert mara_seen["shop"]["sells"]["sheep"] == discounted
    give(w, a, COIN, price)
    result, events = do(w, a, "buy", npc="mara", item="sheep", qty=1)
    assert result["paid"] == discounted and result["discount_pct"] == unlock.discount_pct
    assert w.chars[a].inventory[COIN] == price - discounted
    assert of(events, "bought")[0]["total"] == discounted


# ---- shops ---------------------------------------------------------------------------------------


def test_buying_and_selling_move_coins_and_items_exactly(content):
    w, (a,) = make(content)
    clock(w, 1, 10)
    stand_by(w, a, "mara")
    give(w, a, COIN, 10)
    berries = w.chars[a].inventory.get("berries", 0)
    unit = content.npcs["mara"].shop.sells["berries"]
    _, events = do(w, a, "buy", npc="mara", item="berries", qty=3)
    assert w.chars[a].inventory[COIN] == 10 - 3 * unit
    assert w.chars[a].inventory["berries"] == berries + 3
    assert of(events, "item_lost") == [{"holder": a, "item": COIN, "qty": 3 * unit, "source": "shop:mara"}]
    assert of(events, "item_gained") == [{"holder": a, "item": "berries", "qty": 3, "source": "shop:mara"}]
    give(w, a, "wheat", 2)
    paid = content.npcs["mara"].shop.buys["wheat"]
    result, events = do(w, a, "sell", npc="mara", item="wheat", qty=2)
    assert result["received"] == 2 * paid
    assert w.chars[a].inventory[COIN] == 10 - 3 * unit + 2 * paid
    assert "wheat" not in w.chars[a].inventory
    assert of(events, "item_lost") == [{"holder": a, "item": "wheat", "qty": 2, "source": "shop:mara"}]
    assert of(events, "item_gained") == [{"holder": a, "item": COIN, "qty": 2 * paid, "source": "shop:mara"}]
    assert of(events, "sold")[0]["total"] == 2 * paid


def test_shops_refuse_outside_open_hours_out_of_reach_and_without_coins(content):
    w, (a,) = make(content)
    opens, closes = content.npcs["mara"].shop.open_hours
    clock(w, 1, closes)
    stand_by(w, a, "mara")
    give(w, a, COIN, 50)
    give(w, a, "wheat", 1)
    assert rejected(w, a, "buy", npc="mara", item="berries") == "shop_closed"
    assert rejected(w, a, "sell", npc="mara", item="wheat") == "shop_closed"
    clock(w, 2, opens)
    stand_far(w, a, "mara")
    assert rejected(w, a, "buy", npc="mara", item="berries") == "out_of_range"
    assert rejected(w, a, "sell", npc="mara", item="wheat") == "out_of_range"
    stand_by(w, a, "mara")
    assert rejected(w, a, "buy", npc="mara", item="cow", qty=2) == "not_enough_coins"
    assert rejected(w, a, "buy", npc="mara", item="iron_ingot") == "not_sold"
    assert rejected(w, a, "sell", npc="mara", item="wheat", qty=2) == "not_in_inventory"
    assert rejected(w, a, "sell", npc="mara", item="wood") == "not_bought"
    do(w, a, "buy", npc="mara", item="berries")


def test_a_shop_that_closes_while_buying_fails_the_operation_and_takes_nothing(content):
    w, (a,) = make(content)
    _, closes = content.npcs["mara"].shop.open_hours
    clock(w, 1, closes - 1)
    apply_setup(w, "set_time", {"day": 1, "hour": closes - 1, "minute": 59})
    stand_by(w, a, "mara")
    give(w, a, COIN, 5)
    drain(w)
    assert isinstance(w.submit(a, "buy", {"npc": "mara", "item": "berries"}), Accepted)
    w.step()
    events = drain(w)
    assert of(events, "operation_failed")[0]["code"] == "shop_closed"
    assert w.chars[a].inventory[COIN] == 5 and not of(events, "bought")


# ---- quests --------------------------------------------------------------------------------------


def test_quests_are_posted_at_day_start(content):
    events = drain(World(content, "tiny", 0))
    kinds = [k for k, _ in events]
    assert kinds.count("quest_posted") == content.questboard.posts_per_day
    assert kinds.index("day_started") < kinds.index("quest_posted")


def test_a_deliver_quest_is_accepted_turned_in_rewarded_and_counted(content):
    w, (a,), q = world_with_quest(content, "deliver")
    clock(w, 1, 12)
    result, events = do(w, a, "accept_quest", quest=q["id"])
    assert of(events, "quest_accepted")[0]["deadline_tick"] == result["deadline_tick"]
    obs = observe(w, a)
    assert q["id"] not in [p["id"] for p in obs["quest_board"]]
    assert [x["id"] for x in obs["quest_log"]["active"]] == [q["id"]]
    stand_by(w, a, q["issuer"])
    assert rejected(w, a, "turn_in", quest=q["id"]) == "quest_incomplete"
    give(w, a, q["item"], q["qty"])
    coins = w.chars[a].inventory.get(COIN, 0)
    result, events = do(w, a, "turn_in", quest=q["id"])
    assert w.chars[a].inventory.get(COIN, 0) == coins + q["reward_coins"]
    assert q["item"] not in w.chars[a].inventory or w.chars[a].inventory[q["item"]] < q["qty"]
    assert {"holder": a, "item": q["item"], "qty": q["qty"], "source": f"quest:{q['id']}"} in of(events, "item_lost")
    assert {"holder": a, "item": COIN, "qty": q["reward_coins"], "source": f"quest:{q['id']}"} in of(events, "item_gained")
    done = of(events, "quest_completed")[0]
    assert (done["quest"], done["completed"], done["friendship"]) == (q["id"], 1, q["friendship"])
    obs = observe(w, a)
    assert obs["quest_log"]["quests_completed"] == 1 and obs["quest_log"]["completed"] == [q["id"]]
    assert obs["friendship"][q["issuer"]]["points"] == q["friendship"]
    assert rejected(w, a, "turn_in", quest=q["id"]) == "unknown_quest"


def test_a_gather_quest_counts_only_what_is_gathered_after_accepting(content):
    w, (a,), q = world_with_quest(content, "gather")
    clock(w, 1, 12)
    give(w, a, q["item"], q["qty"])  # carried, but not gathered
    do(w, a, "accept_quest", quest=q["id"])
    stand_by(w, a, q["issuer"])
    assert rejected(w, a, "turn_in", quest=q["id"]) == "quest_incomplete"
    node = next(n for n, s in content.nodes.items() if s.item == q["item"])
    tool = content.nodes[node].requires_tool
    if tool:
        give(w, a, tool, 1)
        do(w, a, "equip", item=tool)
    x, y = w.xy(w.chars[a].pos)
    spot = next((x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))
                if w.pos(x + dx, y + dy) not in w.structures and w.pos(x + dx, y + dy) not in w.nodes)
    apply_setup(w, "place_resource", {"x": spot[0], "y": spot[1], "node": node, "amount": 50})
    progress = []
    while SETTLEMENT.state(w).logs[a].active[q["id"]].gathered < q["qty"]:
        progress += of(do(w, a, "gather", x=spot[0], y=spot[1])[1], "quest_progress")
    assert progress[-1] == {"agent": a, "quest": q["id"], "gathered": q["qty"], "qty": q["qty"]}
    stand_by(w, a, q["issuer"])
    result, events = do(w, a, "turn_in", quest=q["id"])
    assert result["quests_completed"] == 1 and of(events, "quest_completed")


def test_a_quest_past_its_deadline_fails(content):
    w, (a,), q = world_with_quest(content, "deliver")
    result, _ = do(w, a, "accept_quest", quest=q["id"])
    deadline = result["deadline_tick"]
    give(w, a, q["item"], q["qty"])
    day, minute = divmod(deadline, w.calendar.ticks_per_day)
    apply_setup(w, "set_time", {"day": day + 1, "hour": minute // 60, "minute": minute % 60})
    stand_by(w, a, q["issuer"])
    assert rejected(w, a, "turn_in", quest=q["id"]) == "quest_overdue"
    drain(w)
    w.step()
    failed = of(drain(w), "quest_failed")
    assert [f["quest"] for f in failed] == [q["id"]]
    log = observe(w, a)["quest_log"]
    assert log["failed"] == [q["id"]] and log["active"] == [] and log["quests_completed"] == 0
    assert rejected(w, a, "turn_in", quest=q["id"]) == "unknown_quest"


def test_untaken_quests_expire_at_midnight_and_new_ones_are_posted(content):
    w, (a,) = make(content)
    posted = [q["id"] for q in observe(w, a)["quest_board"]]
    apply_setup(w, "set_time", {"day": 1, "hour": 23, "minute": 59})
    drain(w)
    w.step()
    events = drain(w)
    assert [e["quest"] for e in of(events, "quest_expired")] == posted
    fresh = [e["quest"] for e in of(events, "quest_posted")]
    assert len(fresh) == content.questboard.posts_per_day and not set(fresh) & set(posted)
    assert [q["id"] for q in observe(w, a)["quest_board"]] == fresh
    assert rejected(w, a, "accept_quest", quest=posted[0]) == "unknown_quest"


def test_active_quests_are_limited_per_character(content):
    w, (a,) = make(content)
    limit = content.questboard.max_active_per_character
    accepted = 0
    while True:
        board = [q["id"] for q in observe(w, a)["quest_board"]]
        if accepted == limit and board:
            break
        for qid in board[: limit - accepted]:
            do(w, a, "accept_quest", quest=qid)
            accepted += 1
        if accepted < limit or len(board) <= accepted:
            clock(w, w.day + 1, 1)
    assert len(observe(w, a)["quest_log"]["active"]) == limit
    assert rejected(w, a, "accept_quest", quest=board[-1]) == "too_many_quests"


def test_hunt_quests_are_not_drawn_until_creatures_can_be_defeated(content):
    assert "hunt" not in content.questboard.kinds
    w, (a,) = make(content)
    for day in range(2, 8):
        clock(w, day, 1)
    kinds = {e["kind"] for e in of(drain(w), "quest_posted")}
    assert kinds and "hunt" not in kinds


# ---- rejections and snapshots --------------------------------------------------------------------


def test_every_rejection_leaves_the_state_unchanged(content):
    w, (a, b) = make(content, agents=2)
    clock(w, 1, 10)
    stand_by(w, a, "mara")
    give(w, a, "wood", 2)
    do(w, a, "gift", npc="mara", item="wood")
    board = [q["id"] for q in observe(w, a)["quest_board"]]
    do(w, b, "accept_quest", quest=board[0])
    cases = [
        ("talk", {"npc": "marra"}, "unknown_npc"),
        ("talk", {"npc": "bram"}, "out_of_range"),
        ("gift", {"npc": "mara", "item": "wood"}, "gift_limit"),
        ("gift", {"npc": "mara", "item": "cow"}, "not_in_inventory"),
        ("gift", {"npc": "mara", "item": "unobtainium"}, "unknown_item"),
        ("buy", {"npc": "mara", "item": "bread"}, "not_enough_coins"),
        ("buy", {"npc": "mara", "item": "breaad"}, "unknown_item"),
        ("buy", {"npc": "mara", "item": "lock"}, "not_sold"),
        ("sell", {"npc": "mara", "item": "stone"}, "not_bought"),
        ("buy", {"npc": "mara", "item": "bread", "qty": 0}, "bad_arguments"),
        ("accept_quest", {"quest": board[0]}, "unknown_quest"),
        ("accept_quest", {"quest": "q999"}, "unknown_quest"),
        ("turn_in", {"quest": board[0]}, "unknown_quest"),
        ("talk", {}, "bad_arguments"),
    ]
    for action, args, code in cases:
        assert rejected(w, a, action, **args) == code, (action, args)
    stand_far(w, b, "mara")
    assert rejected(w, b, "turn_in", quest=board[0]) in ("out_of_range", "quest_incomplete")


def test_snapshot_round_trip_keeps_the_settlement_state(content):
    w, (a, b) = make(content, agents=2)
    clock(w, 1, 10)
    stand_by(w, a, "oskar")
    give(w, a, "milk", 1)
    do(w, a, "gift", npc="oskar", item="milk")
    do(w, a, "talk", npc="oskar")
    board = [q["id"] for q in observe(w, a)["quest_board"]]
    do(w, b, "accept_quest", quest=board[0])
    blob = dumps(w)
    copy = loads(content, blob)
    assert state_hash(copy) == state_hash(w)
    assert dumps(copy) == blob
    assert observe(copy, a) == observe(w, a) and observe(copy, b) == observe(w, b)
    for world in (w, copy):
        stand_by(world, a, "oskar")
        world.submit(a, "talk", {"npc": "oskar"})
        for _ in range(3000):
            world.step()
    assert copy.events.head == w.events.head
    assert state_hash(copy) == state_hash(w)


@pytest.mark.parametrize("seed", [0, 7])
def test_the_same_inputs_give_the_same_settlement_events(content, seed):
    heads = []
    for _ in range(2):
        w, (a,) = make(content, seed)
        clock(w, 1, 10)
        stand_by(w, a, "mara")
        for _ in range(3):
            w.submit(a, "talk", {"npc": "mara"})
            for _ in range(3):
                w.step()
        heads.append(w.events.head)
    assert heads[0] == heads[1]


def test_settlement_events_validate_against_their_models(content):
    """`drain` validates every event; this walks through each settlement event kind."""
    w, (a,), q = world_with_quest(content, "deliver")
    events = drain(w)
    clock(w, 1, 12)
    stand_by(w, a, q["issuer"])
    give(w, a, COIN, 20)
    give(w, a, q["item"], q["qty"])
    give(w, a, "pumpkin", 1)
    events += drain(w)
    events += do(w, a, "talk", npc=q["issuer"])[1]
    events += do(w, a, "gift", npc=q["issuer"], item="pumpkin")[1]
    events += do(w, a, "accept_quest", quest=q["id"])[1]
    events += do(w, a, "turn_in", quest=q["id"])[1]
    stand_by(w, a, "oskar")
    events += do(w, a, "buy", npc="oskar", item="milk")[1]
    events += do(w, a, "sell", npc="oskar", item="milk")[1]
    apply_setup(w, "set_time", {"day": 1, "hour": 23, "minute": 59})
    w.step()
    events += drain(w)
    expected = {"npc_moved", "talked", "gift_given", "friendship_level", "quest_posted", "quest_accepted", "quest_completed", "bought", "sold", "quest_expired"}
    assert expected <= {k for k, _ in events}


def test_quests_accepted_out_of_order_completed_and_failed_survive_a_snapshot(content):
    w, (a, b) = make(content, seed=4, agents=2)
    clock(w, 1, 10)
    board = observe(w, a)["quest_board"]
    for q in reversed(board[:3]):
        do(w, a, "accept_quest", quest=q["id"])
    do(w, b, "accept_quest", quest=board[3]["id"])
    done = next(q for q in board[:3] if q["kind"] == "deliver")
    give(w, a, done["item"], done["qty"])
    stand_by(w, a, done["issuer"])
    do(w, a, "turn_in", quest=done["id"])
    v = SETTLEMENT.state(w)
    assert list(v.logs[a].active) == [q["id"] for q in reversed(board[:3]) if q is not done]
    saved = orjson.loads(dumps(w))["parts"]["settlement"]
    assert [q["id"] for q in dict(saved["logs"])[a]["active"]] == [q["id"] for q in board[:3] if q is not done]  # as posted
    for _ in range(3000):  # past every deadline
        w.step()
    assert v.logs[a].completed and v.logs[b].failed
    copy = loads(content, dumps(w))
    assert dumps(copy) == dumps(w) and state_hash(copy) == state_hash(w)
    assert SETTLEMENT.state(copy).logs == v.logs and SETTLEMENT.state(copy).next_deadline == v.next_deadline
