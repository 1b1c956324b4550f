"""The economy and society: escrowed trades, contracts, market orders, reputation, attributes,
artwork, messages, raids, and the public wealth formula with its shared ranks."""

from __future__ import annotations

import math

import orjson
import pytest

from wildhold.world.errors import Accepted, Rejected
from wildhold.world.observe import observe
from wildhold.world.parts.society import SOCIETY
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import apply_setup
from wildhold.world.wealth import formula_summary, rank_standard, wealth_cents, wealth_table, wealth_terms
from wildhold.world.world import World

# ---- helpers -------------------------------------------------------------------------------


def make_world(content, scenario: str = "tiny", agents: int = 2, seed: int = 5) -> tuple[World, list[str]]:
    w = World(content, scenario, seed)
    return w, [w.join(f"c{i}") for i in range(agents)]


def give(w: World, agent: str, **items: int) -> None:
    for item, qty in items.items():
        apply_setup(w, "give_items", {"agent": agent, "item": item, "qty": qty})


def events(w: World, since: int = 0) -> list[tuple[str, dict]]:
    out = []
    for seq, _, kind, payload, _ in w.events.pending:
        if seq > since:
            out.append((kind, orjson.loads(payload)["data"]))
    return out


def of_kind(w: World, kind: str, since: int = 0) -> list[dict]:
    return [d for k, d in events(w, since) if k == kind]


def act(w: World, agent: str, action: str, **args) -> dict:
    """Submit, step until the operation ends, and return its completed result (fails the test if refused)."""
    got = w.submit(agent, action, args)
    assert isinstance(got, Accepted), got
    since = w.events.seq
    while w.chars[agent].op is not None:
        w.step()
    done = [d for k, d in events(w, since) if k in ("operation_completed", "operation_failed") and d["op"] == got.op]
    assert done, f"{action} did not end"
    assert "result" in done[-1], done[-1]
    return done[-1]["result"]


def refused(w: World, agent: str, action: str, **args) -> str:
    """Submit an action that must be refused at once without changing the state; return its code."""
    before = state_hash(w)
    got = w.submit(agent, action, args)
    assert isinstance(got, Rejected), got
    assert state_hash(w) == before
    return got.code


def open_tile(w: World, near: int, *, safe: bool | None = None, avoid: tuple[int, ...] = ()) -> int:
    """The closest empty walkable tile to `near` (outside or inside safe ground as asked)."""
    best = None
    for p in range(w.width * w.height):
        if p in w.structures or p in w.nodes or p in w.occupants or p in avoid or p == w.dungeon or not w.is_walkable(p):
            continue
        if safe is not None and w.safe_terrain[w.terrain[p]] != safe:
            continue
        key = (w.distance(p, near), p)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[1]


def put(w: World, agent: str, p: int) -> None:
    x, y = w.xy(p)
    apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})


def place(w: World, p: int, kind: str, owner: str | None = None) -> tuple[int, int]:
    x, y = w.xy(p)
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": kind, "owner": owner})
    return x, y


def stall_site(w: World, kind: str = "market_stall", safe: bool | None = None) -> tuple[tuple[int, int], list[int]]:
    """A structure of `kind` and the walkable tiles next to it (its east side)."""
    for p in sorted(range(w.width * w.height), key=lambda q: (w.distance(q, w.settlement), q)):
        x, y = w.xy(p)
        if not (2 <= x < w.width - 3 and 2 <= y < w.height - 3):
            continue
        side = [w.pos(x + 1, y + dy) for dy in (-1, 0, 1)]
        tiles = [p, *side]
        if any(q in w.structures or q in w.nodes or q == w.dungeon or not w.is_walkable(q) for q in tiles):
            continue
        if safe is not None and any(w.safe_terrain[w.terrain[q]] != safe for q in tiles):
            continue
        return place(w, p, kind), side
    raise AssertionError("no site")


def total_items(w: World) -> dict[str, int]:
    out: dict[str, int] = {}
    holders = [c.inventory for c in w.chars.values()] + list(w.ground.values()) + list(w.containers.values())
    for items in holders:
        for item, qty in items.items():
            out[item] = out.get(item, 0) + qty
    return out


# ---- trades --------------------------------------------------------------------------------


def test_offer_puts_the_given_items_in_escrow_at_once(content):
    w, (a, b) = make_world(content)
    give(w, a, wood=5)
    r = act(w, a, "offer_trade", to=b, give={"wood": 3}, want={"berries": 2}, ticks=30)
    offer = r["offer"]
    assert w.chars[a].inventory["wood"] == 2 + 4  # tiny starts everyone with 4 wood
    assert w.containers[f"escrow@{offer}"] == {"wood": 3}
    assert of_kind(w, "trade_offered")[-1]["give"] == {"wood": 3}


def test_accept_swaps_both_sides_in_one_step_and_raises_both_reputations(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"wood": 3}, want={"berries": 2}, ticks=30)
    before = total_items(w)
    act(w, b, "accept_trade", offer=r["offer"])
    assert (w.chars[a].inventory["wood"], w.chars[a].inventory["berries"]) == (1, 6)
    assert (w.chars[b].inventory["wood"], w.chars[b].inventory["berries"]) == (7, 2)
    assert f"escrow@{r['offer']}" not in w.containers
    assert total_items(w) == before
    rep = content.economy.reputation_trade
    assert [(d["agent"], d["delta"]) for d in of_kind(w, "reputation_changed")] == [(a, rep), (b, rep)]
    assert observe(w, a)["economy"]["reputation"] == rep
    assert observe(w, a)["economy"]["trades"] == []


def test_a_pair_earns_trade_reputation_once_a_day_so_churn_does_not_pay(content):
    w, (a, b) = make_world(content)
    for _ in range(3):
        r = act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"berries": 1}, ticks=30)
        act(w, b, "accept_trade", offer=r["offer"])
    assert len(of_kind(w, "trade_completed")) == 3
    assert observe(w, a)["economy"]["reputation"] == content.economy.reputation_trade
    apply_setup(w, "set_time", {"day": w.day + 1, "hour": 8})
    r = act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"berries": 1}, ticks=30)
    act(w, b, "accept_trade", offer=r["offer"])
    assert observe(w, a)["economy"]["reputation"] == 2 * content.economy.reputation_trade


def test_decline_returns_the_escrow_to_the_offerer(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"wood": 4}, want={}, ticks=30)
    assert "wood" not in w.chars[a].inventory
    act(w, b, "decline_trade", offer=r["offer"])
    assert w.chars[a].inventory["wood"] == 4
    assert f"escrow@{r['offer']}" not in w.containers
    assert of_kind(w, "trade_closed")[-1]["reason"] == "declined"


def test_cancel_by_the_offerer_returns_the_escrow_and_no_one_else_may_cancel(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"berries": 2}, want={"wood": 1}, ticks=30)
    assert refused(w, b, "cancel_trade", offer=r["offer"]) == "not_party"
    act(w, a, "cancel_trade", offer=r["offer"])
    assert w.chars[a].inventory["berries"] == 4
    assert refused(w, b, "accept_trade", offer=r["offer"]) == "unknown_offer"


def test_an_offer_expires_after_its_ticks_and_returns_the_escrow(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"wood": 2}, want={"berries": 1}, ticks=5)
    for _ in range(4):
        w.step()
    assert w.containers[f"escrow@{r['offer']}"] == {"wood": 2}
    w.step()
    assert w.tick == r["expires"]
    assert f"escrow@{r['offer']}" not in w.containers
    assert w.chars[a].inventory["wood"] == 4
    assert of_kind(w, "trade_closed")[-1] == {"offer": r["offer"], "agent": a, "to": b, "reason": "expired"}


def _later_offer_closes_first(content, forget: bool = False) -> bool:
    """A long offer is made and the market's tick has looked ahead to its expiry; then a short offer is made: whether
    the short one closes at its own expiry (with `forget`, the world does not count the market's events)."""
    w, (a, b) = make_world(content)
    act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"berries": 1}, ticks=40)
    w.step()
    if forget:
        w._owner_of = {kind: owner for kind, owner in w._owner_of.items() if owner != "market"}
    r = act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"berries": 1}, ticks=3)
    while w.tick < r["expires"]:
        w.step()
    return f"escrow@{r['offer']}" not in w.containers


def test_an_offer_made_after_a_longer_one_expires_on_its_own_tick(content):
    """The market looks at its records only when one may be due: a new record (a market event) brings its expiry in."""
    assert _later_offer_closes_first(content)
    assert not _later_offer_closes_first(content, forget=True)  # the test sees a look-ahead that missed it


def test_recipient_without_the_wanted_items_is_refused_and_nothing_moves(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"stone": 3}, ticks=30)
    assert refused(w, b, "accept_trade", offer=r["offer"]) == "missing_materials"
    give(w, b, stone=3)
    assert isinstance(w.submit(b, "accept_trade", {"offer": r["offer"]}), Accepted)
    apply_setup(w, "take_items", {"agent": b, "item": "stone", "qty": 1})  # loses a stone before it completes
    before = total_items(w)
    w.step()
    assert of_kind(w, "operation_failed")[-1]["code"] == "missing_materials"
    assert w.containers[f"escrow@{r['offer']}"] == {"wood": 1}
    assert w.chars[b].inventory["stone"] == 2
    assert total_items(w) == before


def test_accept_finishing_on_the_expiry_tick_fails_and_nothing_is_duplicated(content):
    w, (a, b) = make_world(content)
    give(w, b, stone=1)
    r = act(w, a, "offer_trade", to=b, give={"wood": 2}, want={"stone": 1}, ticks=3)
    w.step()
    w.step()
    assert isinstance(w.submit(b, "accept_trade", {"offer": r["offer"]}), Accepted)  # ends on the expiry tick
    before = total_items(w)
    w.step()
    assert w.tick == r["expires"]
    assert of_kind(w, "operation_failed")[-1]["code"] == "unknown_offer"
    assert (w.chars[a].inventory["wood"], w.chars[b].inventory["wood"], w.chars[b].inventory["stone"]) == (4, 4, 1)
    assert not any(h.startswith("escrow@") for h in w.containers)
    assert total_items(w) == before
    assert of_kind(w, "trade_completed") == []


def test_a_knocked_down_recipient_leaves_the_escrow_whole_and_nothing_duplicates(content):
    w, (a, b) = make_world(content)
    r = act(w, a, "offer_trade", to=b, give={"wood": 2}, want={"berries": 1}, ticks=60)
    before = total_items(w)
    apply_setup(w, "set_needs", {"agent": b, "health": 0})
    w.step()
    assert of_kind(w, "knockdown")[-1]["agent"] == b
    assert w.containers[f"escrow@{r['offer']}"] == {"wood": 2}
    assert total_items(w) == before
    # accepting on the tick it is knocked down: operations run before knockdowns, so the swap
    # completes whole and the ordinary drop then applies to what it holds
    assert isinstance(w.submit(b, "accept_trade", {"offer": r["offer"]}), Accepted)
    apply_setup(w, "set_needs", {"agent": b, "health": 0})
    w.step()
    assert len(of_kind(w, "trade_completed")) == 1 and len(of_kind(w, "knockdown")) == 2
    assert f"escrow@{r['offer']}" not in w.containers
    assert total_items(w) == before


def test_only_the_recipient_may_accept_and_nobody_trades_with_themselves(content):
    w, (a, b, c) = make_world(content, agents=3)
    r = act(w, a, "offer_trade", to=b, give={"wood": 1}, want={}, ticks=30)
    assert refused(w, c, "accept_trade", offer=r["offer"]) == "not_party"
    assert refused(w, a, "offer_trade", to=a, give={"wood": 1}, want={}, ticks=5) == "self_target"
    assert refused(w, a, "offer_trade", to="a9", give={"wood": 1}, want={}, ticks=5) == "unknown_character"
    assert refused(w, a, "offer_trade", to=b, give={}, want={}, ticks=5) == "empty_trade"
    assert refused(w, a, "offer_trade", to=b, give={"wood": 1}, want={}, ticks=content.economy.trade_max_ticks + 1) == "bad_arguments"
    assert refused(w, a, "offer_trade", to=b, give={"wood": 99}, want={}, ticks=5) == "missing_materials"
    assert refused(w, a, "offer_trade", to=b, give={"wod": 1}, want={}, ticks=5) == "unknown_item"


# ---- contracts -----------------------------------------------------------------------------


def test_a_fulfilled_contract_pays_the_deliverer_from_escrow_and_raises_its_reputation(content):
    w, (payer, deliverer) = make_world(content)
    give(w, payer, coin=10)
    give(w, deliverer, stone=3)
    r = act(w, payer, "offer_contract", to=deliverer, deliver={"stone": 3}, pay={"coin": 6}, deadline_ticks=100)
    k = r["contract"]
    assert w.containers[f"escrow@{k}"] == {"coin": 6}
    assert refused(w, deliverer, "fulfil_contract", contract=k) == "wrong_stage"
    act(w, deliverer, "accept_contract", contract=k)
    assert refused(w, payer, "cancel_contract", contract=k) == "wrong_stage"
    act(w, deliverer, "fulfil_contract", contract=k)
    assert (w.chars[payer].inventory["coin"], w.chars[payer].inventory["stone"]) == (4, 3)
    assert w.chars[deliverer].inventory["coin"] == 6 and "stone" not in w.chars[deliverer].inventory
    assert observe(w, deliverer)["economy"]["reputation"] == content.economy.reputation_contract
    assert observe(w, payer)["economy"]["reputation"] == 0


def test_a_defaulted_contract_is_counted_against_the_deliverer_and_lowers_its_reputation(content):
    """The deliverer committed to deliver by accepting: it is the defaulter, and the pay returns."""
    w, (payer, deliverer) = make_world(content)
    give(w, payer, coin=5)
    r = act(w, payer, "offer_contract", to=deliverer, deliver={"iron_ore": 2}, pay={"coin": 5}, deadline_ticks=10)
    k = r["contract"]
    act(w, deliverer, "accept_contract", contract=k)
    while w.tick < r["deadline"]:
        w.step()
    d = of_kind(w, "contract_defaulted")
    assert d == [{"contract": k, "defaulter": deliverer, "payer": payer, "deliver": {"iron_ore": 2}, "pay": {"coin": 5}, "defaults": 1}]
    assert w.chars[payer].inventory["coin"] == 5 and f"escrow@{k}" not in w.containers
    me = observe(w, deliverer)["economy"]
    assert (me["defaults"], me["reputation"]) == (1, content.economy.reputation_default)
    assert of_kind(w, "reputation_changed")[-1] == {"agent": deliverer, "delta": content.economy.reputation_default, "reason": f"default:{k}", "value": content.economy.reputation_default}


def test_an_unaccepted_contract_expires_without_a_default(content):
    w, (payer, deliverer) = make_world(content)
    give(w, payer, coin=5)
    r = act(w, payer, "offer_contract", to=deliverer, deliver={"stone": 1}, pay={"coin": 5}, deadline_ticks=4)
    while w.tick < r["deadline"]:
        w.step()
    assert of_kind(w, "contract_closed")[-1]["reason"] == "expired"
    assert of_kind(w, "contract_defaulted") == [] and of_kind(w, "reputation_changed") == []
    assert w.chars[payer].inventory["coin"] == 5


def test_declined_and_cancelled_contracts_return_the_pay(content):
    w, (payer, deliverer) = make_world(content)
    give(w, payer, coin=8)
    k1 = act(w, payer, "offer_contract", to=deliverer, deliver={"stone": 1}, pay={"coin": 3}, deadline_ticks=50)["contract"]
    k2 = act(w, payer, "offer_contract", to=deliverer, deliver={"stone": 1}, pay={"coin": 5}, deadline_ticks=50)["contract"]
    assert w.chars[payer].inventory.get("coin", 0) == 0
    assert refused(w, payer, "decline_contract", contract=k1) == "not_party"
    act(w, deliverer, "decline_contract", contract=k1)
    act(w, payer, "cancel_contract", contract=k2)
    assert w.chars[payer].inventory["coin"] == 8
    assert [d["reason"] for d in of_kind(w, "contract_closed")] == ["declined", "cancelled"]


# ---- market orders -------------------------------------------------------------------------


def market(content, agents: int = 2):
    w, ids = make_world(content, agents=agents)
    (sx, sy), side = stall_site(w)
    for agent, p in zip(ids, side):
        put(w, agent, p)
    return w, ids, (sx, sy)


def test_a_sell_order_escrows_its_items_and_a_fill_swaps_at_its_price(content):
    w, (seller, buyer), (sx, sy) = market(content)
    give(w, buyer, coin=10)
    oid = act(w, seller, "post_order", x=sx, y=sy, side="sell", item="wood", qty=4, price=2)["order"]
    assert w.containers[f"escrow@{oid}"] == {"wood": 4}
    assert [o["id"] for o in observe(w, buyer)["economy"]["market"]] == [oid]
    act(w, buyer, "fill_order", order=oid, qty=3)
    assert w.chars[buyer].inventory["wood"] == 7 and w.chars[buyer].inventory["coin"] == 4
    assert w.chars[seller].inventory["coin"] == 6
    assert w.containers[f"escrow@{oid}"] == {"wood": 1}
    assert refused(w, buyer, "fill_order", order=oid, qty=2) == "exceeds_order"
    act(w, buyer, "fill_order", order=oid, qty=1)
    assert f"escrow@{oid}" not in w.containers
    assert of_kind(w, "order_closed")[-1] == {"order": oid, "agent": seller, "reason": "filled", "remaining": 0}


def test_a_buy_order_escrows_coins_and_a_fill_delivers_the_items(content):
    w, (buyer, seller), (sx, sy) = market(content)
    give(w, buyer, coin=9)
    oid = act(w, buyer, "post_order", x=sx, y=sy, side="buy", item="berries", qty=3, price=3)["order"]
    assert w.containers[f"escrow@{oid}"] == {"coin": 9}
    act(w, seller, "fill_order", order=oid, qty=2)
    assert w.chars[buyer].inventory["berries"] == 6 and w.chars[seller].inventory["coin"] == 6
    act(w, buyer, "cancel_order", order=oid)
    assert w.chars[buyer].inventory["coin"] == 3
    assert of_kind(w, "order_closed")[-1]["reason"] == "cancelled"


def test_orders_need_a_stall_in_reach_and_fills_need_the_same_stall(content):
    w, (a, b), (sx, sy) = market(content)
    assert refused(w, a, "post_order", x=sx + 1, y=sy, side="sell", item="wood", qty=1, price=1) == "no_market"
    assert refused(w, a, "post_order", x=sx, y=sy, side="sell", item="coin", qty=1, price=1) == "not_tradeable"
    assert refused(w, a, "post_order", x=sx, y=sy, side="buy", item="wood", qty=1, price=1) == "missing_materials"
    oid = act(w, a, "post_order", x=sx, y=sy, side="sell", item="wood", qty=1, price=1)["order"]
    assert refused(w, a, "fill_order", order=oid, qty=1) == "own_order"
    put(w, b, open_tile(w, w.pos(sx + 4, sy)))
    give(w, b, coin=1)
    assert refused(w, b, "fill_order", order=oid, qty=1) == "out_of_range"
    assert refused(w, b, "cancel_order", order=oid) == "not_party"


def test_open_orders_per_character_are_capped(content):
    small = content.model_copy(update={"economy": content.economy.model_copy(update={"market_max_orders": 2})})
    w, (a, _), (sx, sy) = market(small)
    for _ in range(2):
        act(w, a, "post_order", x=sx, y=sy, side="sell", item="wood", qty=1, price=1)
    assert refused(w, a, "post_order", x=sx, y=sy, side="sell", item="wood", qty=1, price=1) == "too_many_orders"


def test_orders_at_a_destroyed_stall_close_and_return_their_escrow(content):
    w, (a, _), (sx, sy) = market(content)
    act(w, a, "post_order", x=sx, y=sy, side="sell", item="wood", qty=2, price=1)
    from wildhold.world.parts.construction import damage_structure

    damage_structure(w, w.pos(sx, sy), 10_000, "test")
    w.step()
    assert of_kind(w, "order_closed")[-1]["reason"] == "stall_gone"
    assert w.chars[a].inventory["wood"] == 4


# ---- attributes and artwork ----------------------------------------------------------------


def test_training_at_a_workshop_costs_coins_and_energy_and_raises_the_level(content):
    w, (a,) = make_world(content, agents=1)
    (wx, wy), side = stall_site(w, "workshop")
    put(w, a, open_tile(w, w.pos(wx + 5, wy)))
    assert refused(w, a, "train", attribute="woodcraft") == "no_workshop"
    put(w, a, side[0])
    assert refused(w, a, "train", attribute="woodcraft") == "not_enough_coins"
    assert refused(w, a, "train", attribute="wodcraft") == "unknown_attribute"
    spec = content.attributes["woodcraft"]
    give(w, a, coin=spec.coins_per_level * 3)
    start, energy = w.tick, w.chars[a].energy
    assert act(w, a, "train", attribute="woodcraft") == {"attribute": "woodcraft", "level": 1}
    assert w.tick - start == spec.train_ticks
    assert w.chars[a].inventory["coin"] == spec.coins_per_level * 2
    assert w.chars[a].energy <= energy - spec.energy
    act(w, a, "train", attribute="woodcraft")
    assert "coin" not in w.chars[a].inventory
    assert observe(w, a)["economy"]["attributes"]["woodcraft"] == 2


def test_trained_attributes_raise_gather_yields(content):
    w, (a,) = make_world(content, agents=1)
    (wx, wy), side = stall_site(w, "workshop")
    put(w, a, side[1])
    tx, ty = w.xy(open_tile(w, side[1], avoid=(side[0], side[2])))
    apply_setup(w, "place_resource", {"x": tx, "y": ty, "node": "tree"})
    base = act(w, a, "gather", x=tx, y=ty)["qty"]
    assert base == content.nodes["tree"].base_yield
    give(w, a, coin=content.attributes["woodcraft"].coins_per_level)
    act(w, a, "train", attribute="woodcraft")
    assert act(w, a, "gather", x=tx, y=ty)["qty"] == base + content.attributes["woodcraft"].yield_bonus["tree"]


def test_an_artwork_uses_its_materials_and_is_registered_for_its_author(content):
    w, (a, b) = make_world(content)
    e = content.economy
    assert refused(w, a, "create_artwork", title="Dawn", text="Light on the hills.") == "missing_materials"
    give(w, a, **e.artwork_materials)
    assert refused(w, a, "create_artwork", title="  ", text="x") == "empty_message"
    assert refused(w, a, "create_artwork", title="x" * (e.artwork_title_max + 1), text="x") == "too_long"
    start = w.tick
    r = act(w, a, "create_artwork", title="Dawn", text="Light on the hills.")
    assert w.tick - start == e.artwork_duration
    assert w.chars[a].inventory[e.artwork_item] == 1
    mine = observe(w, a)["economy"]["artworks"]
    assert mine == [{"id": r["artwork"], "title": "Dawn", "text": "Light on the hills.", "author": a, "tick": w.tick}]
    assert observe(w, b)["economy"]["artworks"] == []


# ---- messages ------------------------------------------------------------------------------


def test_say_is_heard_within_say_radius_only(content):
    w, (a, b, c) = make_world(content, agents=3)
    put(w, b, open_tile(w, w.chars[a].pos, avoid=(w.chars[a].pos,)))
    far = next(p for p in range(w.width * w.height) if w.is_walkable(p) and w.distance(p, w.chars[a].pos) > content.social.say_radius)
    put(w, c, far)
    r = act(w, a, "say", text="Wood for berries?")
    assert r == {"heard_by": [b]}
    assert observe(w, b)["messages"]["inbox"] == [{"tick": w.tick, "from": a, "kind": "say", "text": "Wood for berries?"}]
    assert observe(w, c)["messages"]["inbox"] == []


def test_hearers_of_one_word_each_see_their_own_copy(content):
    """A message said to several is one record in the world, never one an observation may change: the copy
    observations share refuses writes."""
    w, (a, b, c) = make_world(content, agents=3)
    for other in (b, c):
        put(w, other, open_tile(w, w.chars[a].pos, avoid=(w.chars[a].pos, w.chars[b].pos)))
    assert act(w, a, "say", text="Wood for berries?") == {"heard_by": [b, c]}
    heard = observe(w, b)["messages"]["inbox"]
    with pytest.raises(TypeError, match="read-only"):
        heard[0]["text"] = "changed by b's agent"
    said = [{"tick": w.tick, "from": a, "kind": "say", "text": "Wood for berries?"}]
    assert observe(w, c)["messages"]["inbox"] == said and SOCIETY.state(w).inboxes[b] == said


def test_whisper_reaches_one_character_anywhere_and_posts_reach_everyone(content):
    w, (a, b, c) = make_world(content, agents=3)
    act(w, a, "whisper", to=c, text="meet at dawn")
    assert observe(w, c)["messages"]["inbox"][-1]["kind"] == "whisper"
    assert observe(w, b)["messages"]["inbox"] == []
    act(w, b, "post", text="selling stone")
    assert observe(w, c)["messages"]["board"] == [{"tick": w.tick, "from": b, "text": "selling stone"}]
    assert refused(w, a, "say", text="   ") == "empty_message"
    assert refused(w, a, "whisper", to=b, text="x" * (content.social.message_max_chars + 1)) == "too_long"


def test_the_board_and_inboxes_keep_only_their_latest_messages(content):
    small = content.model_copy(update={
        "social": content.social.model_copy(update={"board_max_posts": 3}),
        "economy": content.economy.model_copy(update={"inbox_max_messages": 2}),
    })
    w, (a, b) = make_world(small)
    for i in range(5):
        act(w, a, "post", text=f"p{i}")
        act(w, a, "whisper", to=b, text=f"w{i}")
    assert [p["text"] for p in observe(w, b)["messages"]["board"]] == ["p2", "p3", "p4"]
    assert [m["text"] for m in observe(w, b)["messages"]["inbox"]] == ["w3", "w4"]


# ---- raids ---------------------------------------------------------------------------------


def test_every_attack_is_refused_where_conflict_is_off(content):
    w, (a, b) = make_world(content)
    (x, y), side = stall_site(w, "chest")
    w.structures[w.pos(x, y)].owner = b
    put(w, a, side[0])
    put(w, b, side[1])
    assert refused(w, a, "attack_structure", x=x, y=y) == "conflict_off"
    assert refused(w, a, "attack", character=b) == "conflict_off"


def raid_world(content):
    w, (raider, victim) = make_world(content, "famine", agents=2)
    (x, y), side = stall_site(w, "storehouse", safe=False)
    w.structures[w.pos(x, y)].owner = victim
    put(w, raider, side[0])
    put(w, victim, side[1])
    return w, raider, victim, (x, y)


def test_a_raid_damages_another_characters_structure_and_costs_reputation(content):
    w, raider, victim, (x, y) = raid_world(content)
    s = w.structures[w.pos(x, y)]
    hp = s.hp
    r = act(w, raider, "attack_structure", x=x, y=y)
    assert r["damage"] == content.conflict.structure_damage and s.hp == hp - r["damage"]
    assert of_kind(w, "structure_damaged")[-1]["by"] == raider
    assert observe(w, raider)["economy"]["reputation"] == content.economy.reputation_raid
    assert refused(w, victim, "attack_structure", x=x, y=y) == "not_raidable"


def test_structures_on_safe_ground_and_unowned_ones_cannot_be_raided(content):
    w, (raider, victim) = make_world(content, "famine", agents=2)
    (x, y), side = stall_site(w, "chest", safe=True)
    w.structures[w.pos(x, y)].owner = victim
    put(w, raider, side[0])
    assert refused(w, raider, "attack_structure", x=x, y=y) == "safe_zone"
    w.structures[w.pos(x, y)].owner = None
    assert refused(w, raider, "attack_structure", x=x, y=y) == "not_raidable"
    assert refused(w, raider, "attack", character=victim) in ("out_of_range", "safe_zone")


def test_strength_adds_damage_and_a_knockdown_by_an_attacker_loots_each_stack(content):
    w, raider, victim, _ = raid_world(content)
    SOCIETY.state(w).attributes[raider] = {"strength": 2}
    give(w, victim, stone=4)
    apply_setup(w, "set_needs", {"agent": victim, "health": 5})
    inv = dict(w.chars[victim].inventory)
    since = w.events.seq
    r = act(w, raider, "attack", character=victim)
    assert r["damage"] == content.conflict.character_damage + 2 * content.attributes["strength"].damage_bonus
    looted = of_kind(w, "looted")
    assert looted and looted[-1]["agent"] == raider and looted[-1]["victim"] == victim
    expected = {i: math.ceil(q * content.conflict.loot_fraction) for i, q in inv.items()}
    assert looted[-1]["items"] == {i: n for i, n in expected.items() if n}
    gained = [d for d in of_kind(w, "item_gained", since) if d["holder"] == raider]
    assert {d["item"]: d["qty"] for d in gained} == looted[-1]["items"]
    assert all(d["source"] == f"loot:{raider}" for d in gained)
    assert of_kind(w, "knockdown")[-1]["agent"] == victim


def test_a_knockdown_by_other_causes_loots_nothing(content):
    w, raider, victim, _ = raid_world(content)
    apply_setup(w, "set_needs", {"agent": victim, "health": 0})
    w.step()
    assert of_kind(w, "knockdown")[-1]["agent"] == victim and of_kind(w, "looted") == []


# ---- wealth --------------------------------------------------------------------------------


def test_wealth_formula_adds_up_exactly_on_a_hand_built_state(content):
    w, (a, b, c) = make_world(content, agents=3)
    for agent in (a, b, c):
        for item, qty in list(w.chars[agent].inventory.items()):
            apply_setup(w, "take_items", {"agent": agent, "item": item, "qty": qty})
    give(w, a, wood=3, coin=10, berries=2)
    # escrow: an open offer of 2 wood and an open contract paying 4 coin
    act(w, a, "offer_trade", to=b, give={"wood": 2}, want={"stone": 1}, ticks=500)
    act(w, a, "offer_contract", to=b, deliver={"stone": 1}, pay={"coin": 4}, deadline_ticks=500)
    # structures: a damaged workshop (hp 100 of 150) and a full bed, both a's; a destroyed one is not counted
    (wx, wy), _ = stall_site(w, "workshop")
    w.structures[w.pos(wx, wy)].owner = a
    w.structures[w.pos(wx, wy)].hp = 100
    bed = open_tile(w, w.settlement)
    place(w, bed, "bed", a)
    # deposits: a's 3 berries... held as a deposit in b's storehouse count for a, never b
    w.containers[f"deposit@{w.settlement}:{a}"] = {"stone": 2}
    SOCIETY.state(w).reputation[a] = 3
    SOCIETY.state(w).attributes[a] = {"mining": 2, "foraging": 1}
    items, structures = content.items, content.structures
    expected = {
        "carried": 1 * items["wood"].value_cents + 6 * items["coin"].value_cents + 2 * items["berries"].value_cents,
        "escrowed": 2 * items["wood"].value_cents + 4 * items["coin"].value_cents,
        "structures": structures["workshop"].value_cents * 100 // structures["workshop"].hp + structures["bed"].value_cents,
        "deposits": 2 * items["stone"].value_cents,
        "reputation": 3 * content.wealth.reputation_cents,
        "attributes": 3 * content.wealth.attribute_level_cents,
    }
    assert wealth_terms(w, a) == expected
    assert wealth_cents(w, a) == sum(expected.values())
    assert wealth_cents(w, b) == 0
    me = observe(w, a)["economy"]["wealth"]
    assert me == {"cents": sum(expected.values()), "formula": formula_summary(content)}


def test_deposits_count_as_the_depositors_wealth_never_the_storehouse_owners(content):
    w, (owner, depositor) = make_world(content)
    (x, y), side = stall_site(w, "storehouse")
    w.structures[w.pos(x, y)].owner = owner
    put(w, depositor, side[0])
    before = {agent: wealth_cents(w, agent) for agent in (owner, depositor)}
    act(w, depositor, "deposit", x=x, y=y, item="wood", qty=3)
    assert wealth_cents(w, depositor) == before[depositor]
    assert wealth_cents(w, owner) == before[owner]
    assert wealth_terms(w, depositor)["deposits"] == 3 * content.items["wood"].value_cents


def test_escrowed_items_stay_in_the_offerers_wealth(content):
    w, (a, b) = make_world(content)
    before = (wealth_cents(w, a), wealth_cents(w, b))
    act(w, a, "offer_trade", to=b, give={"wood": 3}, want={}, ticks=50)
    assert (wealth_cents(w, a), wealth_cents(w, b)) == before


def test_exact_wealth_ties_share_a_rank_and_the_next_rank_skips():
    assert rank_standard({"a1": 500, "a2": 500, "a3": 100}) == {"a1": 1, "a2": 1, "a3": 3}
    assert rank_standard({"a3": 7, "a1": 9, "a2": 9, "a4": 7, "a5": 1}) == {"a3": 3, "a1": 1, "a2": 1, "a4": 3, "a5": 5}
    assert rank_standard({}) == {}


def test_wealth_table_ranks_identical_holdings_as_a_tie(content):
    w, (a, b, c) = make_world(content, agents=3)
    apply_setup(w, "take_items", {"agent": c, "item": "wood", "qty": 1})
    table = wealth_table(w)
    assert [(row[0], row[2]) for row in table] == [(a, 1), (b, 1), (c, 3)]
    assert table[0][1] == table[1][1] > table[2][1]


# ---- rules as data, snapshots, observation -------------------------------------------------


def test_action_table_agrees_with_the_economy_and_conflict_rules(content):
    """The rules document shows actions.yaml; the rules themselves read economy and conflict."""
    k, e = content.conflict, content.economy
    for name in ("attack", "attack_structure"):
        assert (content.actions[name].duration, content.actions[name].energy) == (k.attack_duration, k.attack_energy)
    assert content.actions["create_artwork"].duration == e.artwork_duration


def test_economy_state_survives_a_snapshot_exactly(content):
    w, (a, b) = make_world(content)
    give(w, a, coin=5, **content.economy.artwork_materials)
    act(w, a, "offer_trade", to=b, give={"wood": 1}, want={"berries": 1}, ticks=99)
    k = act(w, a, "offer_contract", to=b, deliver={"stone": 1}, pay={"coin": 2}, deadline_ticks=99)["contract"]
    act(w, b, "accept_contract", contract=k)
    act(w, a, "whisper", to=b, text="hi")
    act(w, b, "post", text="board")
    act(w, a, "create_artwork", title="T", text="x")
    SOCIETY.state(w).reputation[b] = -2
    SOCIETY.state(w).attributes[a] = {"mining": 1}
    restored = loads(content, dumps(w))
    assert state_hash(restored) == state_hash(w)
    assert observe(restored, a) == observe(w, a) and observe(restored, b) == observe(w, b)
    end = w.tick + 100
    for world in (w, restored):
        while world.tick < end:
            world.step()
    assert state_hash(restored) == state_hash(w)


def test_a_character_sees_only_the_offers_it_is_party_to(content):
    w, (a, b, c) = make_world(content, agents=3)
    act(w, a, "offer_trade", to=b, give={"wood": 1}, want={}, ticks=50)
    assert len(observe(w, a)["economy"]["trades"]) == 1
    assert len(observe(w, b)["economy"]["trades"]) == 1
    assert observe(w, c)["economy"]["trades"] == []


@pytest.mark.parametrize("action", ["offer_trade", "accept_trade", "post_order", "train", "attack", "say"])
def test_missing_arguments_are_refused(content, action):
    w, (a, _) = make_world(content)
    assert refused(w, a, action) == "bad_arguments"
