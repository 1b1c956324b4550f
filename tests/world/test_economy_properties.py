"""Property checks of the economy: over random sequences of offers, accepts, declines, cancels,
expiries, contracts, market orders, fills, deposits and knockdowns, no item is ever created,
lost or counted twice except by a rule that says so, no count is negative, and every escrow
holds exactly what its open offer, contract or order says.
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wildhold.content import default_content
from wildhold.world.errors import Rejected
from wildhold.world.parts.market import MARKET
from wildhold.world.serialize import state_hash
from wildhold.world.setup import apply_setup
from wildhold.world.world import World

CONTENT = default_content()
COIN = CONTENT.economy.coin
GOODS = ["wood", "berries", "stone", COIN]

# Sources that move items between holders; every other source creates or destroys by rule
# (gather, craft, eat, shops, quests, training, artwork, setup...).
MOVES = ("escrow:", "trade:", "refund:", "contract:", "order:", "loot:", "knockdown", "drop", "pick_up",
         "deposit:", "withdraw:", "store:", "retrieve:", "spilled:", "destroyed:")


def is_move(source: str) -> bool:
    return source.startswith(MOVES)


# ---- the arena: three characters around a market stall and a storehouse ---------------------


def arena(seed: int) -> tuple[World, list[str], dict[str, tuple[int, int]], list[int]]:
    w = World(CONTENT, "tiny", seed)
    agents = [w.join(f"c{i}") for i in range(3)]
    for p in sorted(range(w.width * w.height), key=lambda q: (w.distance(q, w.settlement), q)):
        x, y = w.xy(p)
        tiles = [w.pos(x + dx, y + dy) for dx in (0, 1, 2) for dy in (-1, 0, 1)] if 1 <= y < w.height - 1 and x < w.width - 2 else []
        if tiles and all(q not in w.structures and q not in w.nodes and q != w.dungeon and w.is_walkable(q) for q in tiles):
            break
    else:
        raise AssertionError("no arena")
    stall, store = (x, y), (x + 2, y)
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": "market_stall"})
    apply_setup(w, "place_structure", {"x": x + 2, "y": y, "structure": "storehouse", "owner": agents[0]})
    spots = [w.pos(x + 1, y + dy) for dy in (-1, 0, 1)]
    for agent, p in zip(agents, spots):
        apply_setup(w, "move_character", {"agent": agent, "x": w.xy(p)[0], "y": w.xy(p)[1]})
        for item, qty in (("coin", 20), ("stone", 5), ("wood", 3)):
            apply_setup(w, "give_items", {"agent": agent, "item": item, "qty": qty})
    return w, agents, {"stall": stall, "store": store}, spots


# ---- programs ------------------------------------------------------------------------------

who = st.integers(0, 2)
other = st.integers(1, 2)  # the other party: (actor + other) % 3, never the actor itself
pick = st.integers(-1, 7)  # which open record an answer targets; -1 is the latest
rightful = st.sampled_from([True, True, True, False])  # mostly the party who may act, sometimes anyone
bundle = st.dictionaries(st.sampled_from(GOODS), st.integers(1, 6), min_size=1, max_size=2)
some = st.dictionaries(st.sampled_from(GOODS), st.integers(1, 6), max_size=2)
pause = st.builds(lambda n: ("step", n), st.integers(0, 14))

offer_trade = st.tuples(st.just("offer_trade"), who, other, bundle, some, st.integers(2, 12))
answer_trade = st.tuples(st.sampled_from(["accept_trade", "accept_trade", "decline_trade", "cancel_trade"]), who, pick, rightful)
offer_contract = st.tuples(st.just("offer_contract"), who, other, bundle, bundle, st.integers(2, 12))
answer_contract = st.tuples(st.sampled_from(["accept_contract", "fulfil_contract", "decline_contract", "cancel_contract"]), who, pick, rightful)
post_order = st.tuples(st.just("post_order"), who, st.sampled_from(["buy", "sell"]), st.sampled_from(GOODS), st.integers(1, 4), st.integers(1, 3))
fill_order = st.tuples(st.just("fill_order"), who, pick, st.integers(1, 4))
cancel_order = st.tuples(st.just("cancel_order"), who, pick, rightful)

single = st.one_of(
    offer_trade, answer_trade, offer_contract, answer_contract, post_order, fill_order, cancel_order,
    st.tuples(st.sampled_from(["deposit", "withdraw"]), who, st.sampled_from(GOODS), st.integers(1, 4)),
    st.tuples(st.just("step"), st.integers(1, 8)),
    st.tuples(st.just("knockdown"), who),
)
# Scenes pair an offer with an answer to it after a pause, so that accepts, fulfilments, fills and
# answers racing an expiry happen often; single elements interleave everything else.
trade_scene = st.builds(lambda o, p, a: [o, p, (a[0], a[1], -1, a[3])], offer_trade, pause, answer_trade)
contract_scene = st.builds(
    lambda o, p1, p2, last: [o, p1, ("accept_contract", 0, -1, True), p2, (last, 0, -1, True)],
    offer_contract, pause, pause, st.sampled_from(["fulfil_contract", "fulfil_contract", "cancel_contract"]),
)
order_scene = st.builds(lambda o, f, p, c: [o, p, (f[0], (o[1] + f[1] % 2 + 1) % 3, -1, f[3]), c], post_order, fill_order, pause, cancel_order)
program = st.lists(st.one_of(single.map(lambda e: [e]), trade_scene, contract_scene, order_scene), min_size=3, max_size=14).map(
    lambda scenes: [e for scene in scenes for e in scene]
)


def submit(w: World, agents: list[str], places: dict, spots: list[int], el: tuple) -> None:
    kind = el[0]
    e = MARKET.state(w)
    if kind == "step":
        for _ in range(el[1]):
            w.step()
        return
    if kind == "knockdown":
        c = w.chars[agents[el[1]]]
        w.set_needs(c, "test", 0, c.energy, c.satiety)
        w.step()
        x, y = w.xy(spots[el[1]])
        if w.chars[c.id].pos != spots[el[1]] and not w.occupants.get(spots[el[1]]):
            apply_setup(w, "move_character", {"agent": c.id, "x": x, "y": y})
        return
    actor = agents[el[1]]
    if kind in ("offer_trade", "offer_contract"):
        _, i, k, a, b, ticks = el
        to = (i + k) % 3
        if kind == "offer_trade":
            args = {"to": agents[to], "give": a, "want": b, "ticks": ticks}
        else:
            args = {"to": agents[to], "deliver": a, "pay": b, "deadline_ticks": ticks}
    elif kind in ("accept_trade", "decline_trade", "cancel_trade"):
        trades = list(e.trades.values())
        if not trades:
            return
        t = trades[el[2] % len(trades)]
        if el[3]:
            actor = t["from"] if kind == "cancel_trade" else t["to"]
        args = {"offer": t["id"]}
    elif kind in ("accept_contract", "decline_contract", "cancel_contract", "fulfil_contract"):
        contracts = list(e.contracts.values())
        if not contracts:
            return
        k = contracts[el[2] % len(contracts)]
        if el[3]:
            actor = k["payer"] if kind == "cancel_contract" else k["deliverer"]
        args = {"contract": k["id"]}
    elif kind == "post_order":
        x, y = places["stall"]
        args = {"x": x, "y": y, "side": el[2], "item": el[3], "qty": el[4], "price": el[5]}
    elif kind in ("fill_order", "cancel_order"):
        orders = list(e.orders.values())
        if not orders:
            return
        o = orders[el[2] % len(orders)]
        if kind == "cancel_order" and el[3]:
            actor = o["agent"]
        args = {"order": o["id"], "qty": el[3]} if kind == "fill_order" else {"order": o["id"]}
    else:
        x, y = places["store"]
        args = {"x": x, "y": y, "item": el[2], "qty": el[3]}
    before = state_hash(w)
    if isinstance(w.submit(actor, kind, args), Rejected):
        assert state_hash(w) == before, (kind, args)
    w.step()


# ---- invariants ----------------------------------------------------------------------------


def totals(w: World) -> dict[str, int]:
    out: dict[str, int] = {}
    holders = [c.inventory for c in w.chars.values()] + list(w.ground.values()) + list(w.containers.values())
    for items in holders:
        for item, qty in items.items():
            assert qty > 0, (item, qty)
            out[item] = out.get(item, 0) + qty
    return out


def rule_net(events: list[tuple]) -> tuple[dict[str, int], dict[str, int]]:
    """Per item, the net change by events whose source creates or destroys by rule, and by all events."""
    by_rule: dict[str, int] = {}
    every: dict[str, int] = {}
    for _, _, kind, payload, _ in events:
        if kind not in ("item_gained", "item_lost"):
            continue
        d = orjson.loads(payload)["data"]
        sign = 1 if kind == "item_gained" else -1
        every[d["item"]] = every.get(d["item"], 0) + sign * d["qty"]
        if not is_move(d["source"]):
            by_rule[d["item"]] = by_rule.get(d["item"], 0) + sign * d["qty"]
    return by_rule, every


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    keys = set(after) | set(before)
    return {k: after.get(k, 0) - before.get(k, 0) for k in sorted(keys) if after.get(k, 0) != before.get(k, 0)}


def nonzero(d: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in sorted(d.items()) if v}


def check_escrows(w: World) -> None:
    e = MARKET.state(w)
    expected: dict[str, dict[str, int]] = {}
    for t in e.trades.values():
        expected[f"escrow@{t['id']}"] = t["give"]
    for k in e.contracts.values():
        expected[f"escrow@{k['id']}"] = k["pay"]
    for o in e.orders.values():
        expected[f"escrow@{o['id']}"] = {o["item"]: o["qty"]} if o["side"] == "sell" else {COIN: o["qty"] * o["price"]}
    actual = {h: items for h, items in w.containers.items() if h.startswith("escrow@")}
    assert actual == {h: items for h, items in expected.items() if items}


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**16), program)
def test_items_are_conserved_and_escrows_match_their_records(seed, program):
    w, agents, places, spots = arena(seed)
    w.events.drain()
    for el in program:
        before = totals(w)
        submit(w, agents, places, spots, el)
        after = totals(w)
        by_rule, every = rule_net(w.events.drain())
        assert delta(after, before) == nonzero(every), el
        assert delta(after, before) == nonzero(by_rule), el
        check_escrows(w)
    # run every open offer, contract and order out: expiries and defaults return every escrow
    for _ in range(40):
        w.step()
    w.events.drain()
    assert not MARKET.state(w).trades and not MARKET.state(w).contracts
    check_escrows(w)
