"""The market and its escrow: trades between characters, delivery contracts, and market orders at
stalls.

Every item that changes hands passes through an escrow holder `escrow@<id>` (a container of the
world), so an offer, contract or order is either open with its escrow full or closed with it
empty: no state exists in which an item is counted twice or lost.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import Field, PositiveInt

from wildhold.world import wealth  # the module, not its names: importing wealth first runs the parts package, this part among them
from wildhold.world.actions.registry import ActionArgs, CharacterName, character_field, did_you_mean, other_character, reach_tiles, shortfall, structure_in_reach, target
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import settings
from wildhold.world.parts.base import Part, Section
from wildhold.world.readonly import freeze
from wildhold.world.parts.construction import CONSTRUCTION
from wildhold.world.parts.dealings import NAME, NAMING_NONE, MarketState, dealings, escrow_holder, public_order, state
from wildhold.world.parts.society import SOCIETY, artworks_by, change_reputation, reputation_of, send_message, trained
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.world import World

# ---- events --------------------------------------------------------------------------------

class TradeOffered(Ev):
    """A trade offer was made; its `give` items are now in escrow@<offer>."""

    offer: str
    agent: str
    to: str
    give: dict[str, int]
    want: dict[str, int]
    expires: int


class TradeCompleted(Ev):
    """The recipient accepted: `want` went to the offerer and the escrowed `give` to the recipient."""

    offer: str
    agent: str
    to: str
    give: dict[str, int]
    want: dict[str, int]


class TradeClosed(Ev):
    """An offer ended unaccepted (declined, cancelled or expired); its escrow went back to the offerer."""

    offer: str
    agent: str
    to: str
    reason: str


class ContractOffered(Ev):
    """A delivery contract was offered; its pay is now in escrow@<contract>."""

    contract: str
    payer: str
    deliverer: str
    deliver: dict[str, int]
    pay: dict[str, int]
    deadline: int


class ContractAccepted(Ev):
    """The deliverer committed to deliver before the deadline."""

    contract: str
    payer: str
    deliverer: str


class ContractFulfilled(Ev):
    """The goods went to the payer and the escrowed pay to the deliverer."""

    contract: str
    payer: str
    deliverer: str


class ContractClosed(Ev):
    """A contract ended before acceptance (declined, cancelled or expired); the pay went back to the payer."""

    contract: str
    payer: str
    deliverer: str
    reason: str


class ContractDefaulted(Ev):
    """An accepted contract passed its deadline undelivered: a default counted against the deliverer."""

    contract: str
    defaulter: str
    payer: str
    deliver: dict[str, int]
    pay: dict[str, int]
    defaults: int


class OrderPosted(Ev):
    """A market order was posted at a stall; its escrow (items to sell, coins to buy) is in escrow@<order>."""

    order: str
    agent: str
    x: int
    y: int
    side: str
    item: str
    qty: int
    price: int


class OrderFilled(Ev):
    """Another character filled part or all of an order at the order's price."""

    order: str
    agent: str
    by: str
    side: str
    item: str
    qty: int
    price: int
    remaining: int


class OrderClosed(Ev):
    """An order ended (filled, cancelled, or its stall is gone); what was left in escrow went back."""

    order: str
    agent: str
    reason: str
    remaining: int


# ---- checks and item moves -----------------------------------------------------------------


def _known_items(w: World, items: dict[str, int], what: str) -> Rejected | None:
    for item in items:
        if item not in w.content.items:
            return Rejected("unknown_item", f"{what}: there is no item {item!r}.{did_you_mean(item, w.content.items)}")
    return None



def _move(w: World, src: str, dst: str, items: dict[str, int], source: str) -> None:
    """Move items between two holders; callers have checked that `src` holds them."""
    for item, qty in sorted(items.items()):
        w.take(src, item, qty, source)
        w.give(dst, item, qty, source)


def _ticks_within(n: int, limit: int, action: str, name: str) -> Rejected | None:
    if n > limit:
        return Rejected("bad_arguments", f"{action}: {name} must be at most {limit}.")
    return None


ItemMap = dict[str, PositiveInt]



# ---- trades --------------------------------------------------------------------------------


def _open_trade(w: World, offer: str) -> dict[str, Any] | Rejected:
    t = state(w).trades.get(offer)
    if t is None:
        return Rejected("unknown_offer", f"No open trade offer {offer!r}: it may never have existed or was accepted, declined, cancelled or expired.")
    if w.tick >= t["expires"]:
        return Rejected("unknown_offer", f"Trade offer {offer!r} expired at tick {t['expires']}.")
    return t


def close_trade(w: World, t: dict[str, Any], reason: str) -> None:
    """End an unaccepted offer: the escrow goes back to the offerer, then the record is removed."""
    _move(w, escrow_holder(t["id"]), t["from"], t["give"], f"refund:{t['id']}")
    del state(w).trades[t["id"]]
    w.emit("trade_closed", offer=t["id"], agent=t["from"], to=t["to"], reason=reason)


def _items(items: dict[str, int]) -> str:
    """Items as an offer's message states them: "2 wood, 1 stone" (nothing: "nothing")."""
    return ", ".join(f"{q} {i}" for i, q in items.items()) or "nothing"


class OfferTrade:
    """Offer another character a swap: your `give` items go into escrow at once; it may accept (getting
    them for its `want` items), decline, or let the offer expire after `ticks`; you may cancel it.
    Trades need no proximity: the characters may be anywhere (no courier is modelled). A completed
    trade raises both sides' reputation."""

    name, category = "offer_trade", "social"

    class Args(ActionArgs):
        to: CharacterName = character_field("The character the offer is for.")
        give: ItemMap = Field(default_factory=dict, description="Item -> quantity you hand over (put in escrow now).")
        want: ItemMap = Field(default_factory=dict, description="Item -> quantity you ask for in return.")
        ticks: int = Field(ge=1, description="Ticks the offer stays open.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        other = other_character(w, c, a["to"])
        if isinstance(other, Rejected):
            return other
        if not a["give"] and not a["want"]:
            return Rejected("empty_trade", "A trade offer must give or want at least one item.")
        return (
            _ticks_within(a["ticks"], w.content.economy.trade_max_ticks, "offer_trade", "ticks")
            or _known_items(w, a["give"], "give")
            or _known_items(w, a["want"], "want")
            or shortfall(w, c, a["give"], "This offer")
        )

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        a, e = op.args, state(w)
        tid = e.new_id("trade")
        give, want = dict(sorted(a["give"].items())), dict(sorted(a["want"].items()))
        t = {"id": tid, "from": c.id, "to": a["to"], "give": give, "want": want, "expires": w.tick + a["ticks"]}
        e.trades[tid] = t
        _move(w, c.id, escrow_holder(tid), give, f"escrow:{tid}")
        w.emit("trade_offered", offer=tid, agent=c.id, to=t["to"], give=give, want=want, expires=t["expires"])
        send_message(w, [t["to"]], c.id, "trade_offer", f"Trade offer {tid}: {_items(give)} for {_items(want)}, open "
                     f"until tick {t['expires']}. Answer with accept_trade or decline_trade, offer '{tid}'.")
        return {"offer": tid, "expires": t["expires"]}


class OfferArgs(ActionArgs):
    offer: str = Field(description="Id of the trade offer (e.g. trade3).")


class AcceptTrade:
    """Accept a trade offer made to you, from anywhere: in one step your `want` items go to the
    offerer and the escrowed `give` items to you. Refused (nothing moves) if you do not carry the
    wanted items, or once the offer has expired (an offer is open until the tick it expires)."""

    name, category = "accept_trade", "social"
    Args = OfferArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        offer = a["offer"]
        t = _open_trade(w, offer)
        if isinstance(t, Rejected):
            return t
        if t["to"] != c.id:
            return Rejected("not_party", f"Trade offer {offer} is for {t['to']}, not you.")
        return shortfall(w, c, t["want"], f"Accepting {offer}") or t

    @staticmethod
    def apply(w: World, c: Character, op: Operation, t: dict[str, Any]) -> dict:
        tid = t["id"]
        del state(w).trades[tid]
        _move(w, c.id, t["from"], t["want"], f"trade:{tid}")
        _move(w, escrow_holder(tid), c.id, t["give"], f"trade:{tid}")
        w.emit("trade_completed", offer=tid, agent=t["from"], to=c.id, give=t["give"], want=t["want"])
        # Reputation rewards dealing, not churn: a pair earns it for their first trade of each day only.
        pair = "|".join(sorted((t["from"], c.id)))
        if state(w).trade_credit.get(pair) != w.day:
            state(w).trade_credit[pair] = w.day
            rep = w.content.economy.reputation_trade
            change_reputation(w, t["from"], rep, f"trade:{tid}")
            change_reputation(w, c.id, rep, f"trade:{tid}")
        return {"offer": tid, "received": t["give"], "paid": t["want"]}


class DeclineTrade:
    """Decline a trade offer made to you; its escrow goes back to the offerer."""

    name, category = "decline_trade", "social"
    Args = OfferArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        offer = a["offer"]
        t = _open_trade(w, offer)
        if not isinstance(t, Rejected) and t["to"] != c.id:
            return Rejected("not_party", f"Trade offer {offer} is for {t['to']}, not you.")
        return t

    @staticmethod
    def apply(w: World, c: Character, op: Operation, t: dict[str, Any]) -> dict:
        close_trade(w, t, "declined")
        return {"offer": t["id"]}


class CancelTrade:
    """Withdraw a trade offer you made; its escrow comes back to you."""

    name, category = "cancel_trade", "social"
    Args = OfferArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        offer = a["offer"]
        t = _open_trade(w, offer)
        if not isinstance(t, Rejected) and t["from"] != c.id:
            return Rejected("not_party", f"Trade offer {offer} was made by {t['from']}; only they may cancel it.")
        return t

    @staticmethod
    def apply(w: World, c: Character, op: Operation, t: dict[str, Any]) -> dict:
        close_trade(w, t, "cancelled")
        return {"offer": t["id"]}


# ---- delivery contracts --------------------------------------------------------------------


def _open_contract(w: World, contract: str, stage: str) -> dict[str, Any] | Rejected:
    k = state(w).contracts.get(contract)
    if k is None:
        return Rejected("unknown_contract", f"No open contract {contract!r}: it may never have existed or was fulfilled, declined, cancelled, expired or defaulted.")
    if w.tick >= k["deadline"]:
        return Rejected("unknown_contract", f"Contract {contract!r} passed its deadline at tick {k['deadline']}.")
    if k["stage"] != stage:
        return Rejected("wrong_stage", f"Contract {contract} is {k['stage']}; this needs it {stage}.")
    return k


def _close_contract(w: World, k: dict[str, Any], reason: str) -> None:
    _move(w, escrow_holder(k["id"]), k["payer"], k["pay"], f"refund:{k['id']}")
    del state(w).contracts[k["id"]]
    w.emit("contract_closed", contract=k["id"], payer=k["payer"], deliverer=k["deliverer"], reason=reason)


def _default_contract(w: World, k: dict[str, Any]) -> None:
    """An accepted contract's deadline passed: the pay returns to the payer and the deliverer, who
    committed to deliver, is counted a defaulter and loses reputation."""
    e = state(w)
    _move(w, escrow_holder(k["id"]), k["payer"], k["pay"], f"refund:{k['id']}")
    del e.contracts[k["id"]]
    who = k["deliverer"]
    e.defaults[who] = e.defaults.get(who, 0) + 1
    w.emit("contract_defaulted", contract=k["id"], defaulter=who, payer=k["payer"], deliver=k["deliver"], pay=k["pay"], defaults=e.defaults[who])
    change_reputation(w, who, w.content.economy.reputation_default, f"default:{k['id']}")


class OfferContract:
    """Offer another character a delivery contract: you pay `pay` (usually coins, put in escrow now)
    for `deliver` items handed to you before `deadline_ticks` pass. Once it accepts, the deliverer
    is committed: if the deadline passes undelivered, the pay returns to you and the default is
    counted against the deliverer (the party who committed to deliver, never the payer who
    offered), which loses reputation. An offer not accepted by the deadline lapses with no default.
    Before acceptance you may cancel it. No proximity is needed (no courier is modelled)."""

    name, category = "offer_contract", "social"

    class Args(ActionArgs):
        to: CharacterName = character_field("The character asked to deliver.")
        deliver: ItemMap = Field(description="Item -> quantity to be delivered to you.")
        pay: ItemMap = Field(description="Item -> quantity you pay on delivery (put in escrow now).")
        deadline_ticks: int = Field(ge=1, description="Ticks from now until the delivery deadline.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        other = other_character(w, c, a["to"])
        if isinstance(other, Rejected):
            return other
        if not a["deliver"] or not a["pay"]:
            return Rejected("empty_trade", "A contract must name items to deliver and items to pay.")
        return (
            _ticks_within(a["deadline_ticks"], w.content.economy.contract_max_ticks, "offer_contract", "deadline_ticks")
            or _known_items(w, a["deliver"], "deliver")
            or _known_items(w, a["pay"], "pay")
            or shortfall(w, c, a["pay"], "This contract's pay")
        )

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        a, e = op.args, state(w)
        kid = e.new_id("contract")
        deliver, pay = dict(sorted(a["deliver"].items())), dict(sorted(a["pay"].items()))
        k = {"id": kid, "payer": c.id, "deliverer": a["to"], "deliver": deliver, "pay": pay,
             "deadline": w.tick + a["deadline_ticks"], "stage": "offered"}
        e.contracts[kid] = k
        _move(w, c.id, escrow_holder(kid), pay, f"escrow:{kid}")
        w.emit("contract_offered", contract=kid, payer=c.id, deliverer=k["deliverer"], deliver=deliver, pay=pay, deadline=k["deadline"])
        send_message(w, [k["deliverer"]], c.id, "contract_offer", f"Contract offer {kid}: deliver {_items(deliver)} by tick "
                     f"{k['deadline']} for {_items(pay)}. Answer with accept_contract or decline_contract, contract '{kid}'.")
        return {"contract": kid, "deadline": k["deadline"]}


class ContractArgs(ActionArgs):
    contract: str = Field(description="Id of the contract (e.g. contract2).")


def _contract_action(name: str, doc: str, party: str, stage: str, apply):
    """Accept, decline, cancel and fulfil share one shape: an open contract at a stage, one party.
    Returns the action class."""

    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        contract = a["contract"]
        k = _open_contract(w, contract, stage)
        if isinstance(k, Rejected):
            return k
        if k[party] != c.id:
            return Rejected("not_party", f"Only the {party} of {contract} ({k[party]}) may {name.split('_')[0]} it.")
        if name == "fulfil_contract":
            return shortfall(w, c, k["deliver"], f"Fulfilling {k['id']}") or k
        return k

    def applied(w: World, c: Character, op: Operation, k: dict[str, Any]) -> dict:
        return apply(w, c, k)

    cls = type(name, (), {"__doc__": doc, "name": name, "category": "social", "Args": ContractArgs,
                          "plan": staticmethod(plan), "apply": staticmethod(applied)})
    return cls


def _accept(w: World, c: Character, k: dict[str, Any]) -> dict:
    k["stage"] = "accepted"
    w.emit("contract_accepted", contract=k["id"], payer=k["payer"], deliverer=c.id)
    return {"contract": k["id"], "deadline": k["deadline"]}


def _fulfil(w: World, c: Character, k: dict[str, Any]) -> dict:
    kid = k["id"]
    del state(w).contracts[kid]
    _move(w, c.id, k["payer"], k["deliver"], f"contract:{kid}")
    _move(w, escrow_holder(kid), c.id, k["pay"], f"contract:{kid}")
    w.emit("contract_fulfilled", contract=kid, payer=k["payer"], deliverer=c.id)
    change_reputation(w, c.id, w.content.economy.reputation_contract, f"contract:{kid}")
    return {"contract": kid, "delivered": k["deliver"], "paid": k["pay"]}


def _closing(reason: str):
    def apply(w: World, c: Character, k: dict[str, Any]) -> dict:
        _close_contract(w, k, reason)
        return {"contract": k["id"]}

    return apply


AcceptContract = _contract_action(
    "accept_contract",
    "Accept a delivery contract offered to you. From then on you are committed: deliver with\n"
    "fulfil_contract before the deadline, or it defaults (counted against you, reputation lost).",
    "deliverer", "offered", _accept,
)
DeclineContract = _contract_action(
    "decline_contract",
    "Decline a delivery contract offered to you (before accepting it); its pay returns to the payer.",
    "deliverer", "offered", _closing("declined"),
)
CancelContract = _contract_action(
    "cancel_contract",
    "Withdraw a contract you offered, before it is accepted; its pay comes back to you.",
    "payer", "offered", _closing("cancelled"),
)
FulfilContract = _contract_action(
    "fulfil_contract",
    "Deliver the goods of a contract you accepted, before its deadline: they go to the payer and the\n"
    "escrowed pay comes to you; your reputation rises. No proximity is needed.",
    "deliverer", "accepted", _fulfil,
)


# ---- market orders -------------------------------------------------------------------------


def _stall_at(w: World, p: int) -> bool:
    s = w.structures.get(p)
    return s is not None and s.hp > 0 and w.content.structures[s.kind].part == "market_stall"


def _order_escrow(w: World, o: dict[str, Any], qty: int) -> dict[str, int]:
    """What backs `qty` units of an order: the items of a sell order, qty x price coins of a buy."""
    if o["side"] == "sell":
        return {o["item"]: qty}
    return {w.content.economy.coin: qty * o["price"]}


def close_order(w: World, o: dict[str, Any], reason: str) -> None:
    left = o["qty"]
    _move(w, escrow_holder(o["id"]), o["agent"], _order_escrow(w, o, left), f"refund:{o['id']}")
    del state(w).orders[o["id"]]
    w.emit("order_closed", order=o["id"], agent=o["agent"], reason=reason, remaining=left)


class PostOrder:
    """Post a buy or sell order at a market stall within reach. A sell order puts its items in escrow;
    a buy order puts qty x price coins in escrow. Anyone within reach of the same stall may fill it
    at its price; you may cancel it from anywhere. At most market_max_orders open orders each."""

    name, category = "post_order", "social"

    class Args(ActionArgs):
        x: int = Field(description="Column of the market stall.")
        y: int = Field(description="Row of the market stall.")
        side: Literal["buy", "sell"] = Field(description="buy: you pay coins for the item; sell: you sell the item for coins.")
        item: str = Field(description="The item bought or sold.")
        qty: PositiveInt = Field(description="Units.")
        price: PositiveInt = Field(description="Coins per unit.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        stalls = structure_in_reach(w, c) and any(_stall_at(w, p) for p in reach_tiles(w, c))  # a stall is a structure
        return None if stalls else "no_market"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        p = target(w, c, a["x"], a["y"])
        if isinstance(p, Rejected):
            return p
        if not _stall_at(w, p):
            return Rejected("no_market", f"There is no market stall at ({a['x']}, {a['y']}).")
        e = w.content.economy
        bad = _known_items(w, {a["item"]: 1}, "item")
        if bad:
            return bad
        if a["item"] == e.coin:
            return Rejected("not_tradeable", f"Orders are priced in {e.coin}; {e.coin} itself cannot be bought or sold.")
        mine = sum(1 for o in state(w).orders.values() if o["agent"] == c.id)
        if mine >= e.market_max_orders:
            return Rejected("too_many_orders", f"You have {mine} open orders, the most allowed; cancel one first.")
        escrow = {a["item"]: a["qty"]} if a["side"] == "sell" else {e.coin: a["qty"] * a["price"]}
        return shortfall(w, c, escrow, f"This {a['side']} order") or p

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: int) -> dict:
        a, e = op.args, state(w)
        oid = e.new_id("order")
        o = {"id": oid, "agent": c.id, "tile": p, "x": a["x"], "y": a["y"], "side": a["side"], "item": a["item"],
             "qty": a["qty"], "price": a["price"]}
        e.orders[oid] = o
        _move(w, c.id, escrow_holder(oid), _order_escrow(w, o, o["qty"]), f"escrow:{oid}")
        w.emit("order_posted", order=oid, agent=c.id, x=a["x"], y=a["y"], side=a["side"], item=a["item"], qty=a["qty"], price=a["price"])
        return {"order": oid}


class FillOrder:
    """Fill another character's market order, in part or whole, standing within reach of its stall.
    Filling a sell order: you pay qty x price coins and get the items from escrow. Filling a buy
    order: you hand over the items and get qty x price coins from escrow."""

    name, category = "fill_order", "social"

    class Args(ActionArgs):
        order: str = Field(description="Id of the order (e.g. order4).")
        qty: PositiveInt = Field(description="Units to fill.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        oid, qty = a["order"], a["qty"]
        o = state(w).orders.get(oid)
        if o is None:
            return Rejected("unknown_order", f"No open order {oid!r}: it may never have existed or was filled or cancelled.")
        if o["agent"] == c.id:
            return Rejected("own_order", f"{oid} is your own order; cancel it instead.")
        if not _stall_at(w, o["tile"]) or w.distance(c.pos, o["tile"]) > w.needs.reach:
            return Rejected("out_of_range", f"Order {oid} is at the stall at ({o['x']}, {o['y']}); stand within {w.needs.reach} of it.")
        if qty > o["qty"]:
            return Rejected("exceeds_order", f"Order {oid} has {o['qty']} left, not {qty}.")
        coin = w.content.economy.coin
        pays = {coin: qty * o["price"]} if o["side"] == "sell" else {o["item"]: qty}
        return shortfall(w, c, pays, f"Filling {oid}") or o

    @staticmethod
    def apply(w: World, c: Character, op: Operation, o: dict[str, Any]) -> dict:
        qty = op.args["qty"]
        oid, coin = o["id"], w.content.economy.coin
        pays = {coin: qty * o["price"]} if o["side"] == "sell" else {o["item"]: qty}
        o["qty"] -= qty
        _move(w, c.id, o["agent"], pays, f"order:{oid}")
        _move(w, escrow_holder(oid), c.id, _order_escrow(w, o, qty), f"order:{oid}")
        w.emit("order_filled", order=oid, agent=o["agent"], by=c.id, side=o["side"], item=o["item"], qty=qty, price=o["price"], remaining=o["qty"])
        if o["qty"] == 0:
            del state(w).orders[oid]
            w.emit("order_closed", order=oid, agent=o["agent"], reason="filled", remaining=0)
        return {"order": oid, "qty": qty, "paid": pays}


class CancelOrder:
    """Cancel one of your open market orders, from anywhere; what is left in its escrow comes back."""

    name, category = "cancel_order", "social"

    class Args(ActionArgs):
        order: str = Field(description="Id of your order.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> dict[str, Any] | Rejected:
        oid = a["order"]
        o = state(w).orders.get(oid)
        if o is None:
            return Rejected("unknown_order", f"No open order {oid!r}: it may never have existed or was filled or cancelled.")
        if o["agent"] != c.id:
            return Rejected("not_party", f"Order {oid} belongs to {o['agent']}; only they may cancel it.")
        return o

    @staticmethod
    def apply(w: World, c: Character, op: Operation, o: dict[str, Any]) -> dict:
        left = o["qty"]
        close_order(w, o, "cancelled")
        return {"order": o["id"], "returned": left}



# ---- the part ------------------------------------------------------------------------------


def _tick_expiries(w: World) -> None:
    """Offers past their ticks close, contracts past their deadline close or default, and orders
    whose stall is gone close; each returns its escrow to whoever put it in.

    Nothing is looked at before the next expiry or deadline while no market event is emitted (every record is
    made, changed and closed with one) and no structure is placed or removed (a stall gone)."""
    due = w.kept.market_due
    if due is not None and due[0] == (w.part_changes[MARKET.name], w.builds) and w.tick < due[1]:
        return
    _close_expired(w)
    e = state(w)
    soonest = min([x["expires"] for x in e.trades.values()] + [x["deadline"] for x in e.contracts.values()], default=math.inf)
    w.kept.market_due = ((w.part_changes[MARKET.name], w.builds), soonest)


def _close_expired(w: World) -> None:
    e, t = state(w), w.tick
    for tr in [x for x in e.trades.values() if x["expires"] <= t]:
        close_trade(w, tr, "expired")
    for k in [x for x in e.contracts.values() if x["deadline"] <= t]:
        if k["stage"] == "accepted":
            _default_contract(w, k)
        else:
            _close_contract(w, k, "expired")
    for o in [x for x in e.orders.values() if not _stall_at(w, x["tile"])]:
        close_order(w, o, "stall_gone")


def _rules(c: Content) -> dict[str, Any]:
    return {"economy": c.economy.model_dump(mode="json")}


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    # the messages' settings (society's) have always shared this table
    return ["## Economy and messages", "", *settings({**doc["economy"], **doc["messages"]})]


class Market(Part[MarketState]):
    name, section = NAME, "economy"
    tables = ("economy", "structures", "items")
    codes_place = 4
    codes = {
        "self_target": "That needs another character, not the acting one.",
        "empty_trade": "A trade or contract must move at least one item each way it names.",
        "unknown_offer": "No open trade offer has that id (it was accepted, declined, cancelled or expired, or never existed).",
        "unknown_contract": "No open contract has that id (it was fulfilled, declined, cancelled, expired or defaulted, or never existed).",
        "unknown_order": "No open market order has that id (it was filled or cancelled, or never existed).",
        "not_party": "The character is not the party of that offer, contract or order who may do this.",
        "wrong_stage": "The contract is not at the stage this action needs (offered or accepted).",
        "own_order": "A character cannot fill its own market order; it may cancel it.",
        "exceeds_order": "The quantity is more than the order has left.",
        "too_many_orders": "The character has as many open market orders as it may.",
        "no_market": "There is no market stall on that tile.",
        "not_tradeable": "That item cannot be ordered at a market (orders are priced in it).",
    }
    events = {
        "trade_offered": TradeOffered,
        "trade_completed": TradeCompleted,
        "trade_closed": TradeClosed,
        "contract_offered": ContractOffered,
        "contract_accepted": ContractAccepted,
        "contract_fulfilled": ContractFulfilled,
        "contract_closed": ContractClosed,
        "contract_defaulted": ContractDefaulted,
        "order_posted": OrderPosted,
        "order_filled": OrderFilled,
        "order_closed": OrderClosed,
    }
    actions = (OfferTrade, AcceptTrade, DeclineTrade, CancelTrade, OfferContract, AcceptContract, DeclineContract,
               CancelContract, FulfilContract, PostOrder, FillOrder, CancelOrder)
    observation_fields = {
        "economy": {
            "description": "This character's economy: reputation, defaults, attributes, wealth, and the offers, contracts and orders it is party to.",
            "fields": {
                "reputation": "Reputation (starts 0; trades and delivered contracts raise it, defaults and raids lower it).",
                "defaults": "Accepted contracts it failed to deliver before their deadline.",
                "attributes": "Attribute -> trained level.",
                "wealth": "{cents, formula}: its own wealth under the public formula, and the formula in one line.",
                "trades": "Open trade offers it made or received: {id, from, to, give, want, expires}.",
                "contracts": "Open contracts it pays or delivers: {id, payer, deliverer, deliver, pay, deadline, stage}.",
                "orders": "Its own open market orders: {id, agent, x, y, side, item, qty, price}.",
                "market": "Other characters' open orders at stalls in view: {id, agent, x, y, side, item, qty, price}.",
                "artworks": "Artworks it created: {id, title, text, author, tick}.",
            },
        },
    }
    rules = (Section(50, _rules, _rules_markdown),)

    def new_state(self, w: World) -> MarketState:
        return MarketState()

    def tick(self, w: World) -> None:
        _tick_expiries(w)

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        # The section is kept per character with the stamps it was built at (see `_KeptEconomy`): taken here in one
        # tuple, as cheaply as can be, since on most observations none changed.
        me, changes, society = c.id, w.part_changes, w.states[SOCIETY.name]
        kept = w.kept.economy
        if kept is None:
            kept = w.kept.economy = {}
        held = kept.get(me)
        if held is None:
            held = kept[me] = _KeptEconomy(w, self.name, me)
        levels = society.attributes.get(me)
        seen = w.kept.orders_seen
        if seen is None or seen[0] != changes[self.name]:
            seen = _orders_seen(w)
        stamps = EconomyStamps(len(society.artworks), society.reputation.get(me), sum(levels.values()) if levels else 0,
                               changes.get(held.named), changes.get(NAMING_NONE),
                               w.holdings.get(me), w.builds, changes[CONSTRUCTION.name],
                               c.pos if seen[1] else None, seen[2])  # with no open order, its tile shows none wherever it is
        if stamps != held.stamps:
            held.refresh(w, c, stamps)
        obs["economy"] = held.section


class EconomyStamps(NamedTuple):
    """What a character's economy section is kept for, in four groups (see `_KeptEconomy`)."""

    artworks: int  # standing: the count of artworks,
    reputation: int | None  # its reputation
    levels: int  # and the sum of its attribute levels
    named: int | None  # dealt: market events naming it
    none: int | None  # and naming no one
    carried: int | None  # holding: its `World.holdings` count,
    built: int  # `World.builds`
    hit: int  # and construction's event count
    where: int | None  # where: its tile (None while no order is open)
    version: int  # and the open orders' version


class _KeptEconomy:
    """A character's economy section (read-only: shared by its observations) and the stamps it was built at. Each
    observation takes the stamps of four groups; when one changed, only the fields it covers are asked again, and a
    field that differs replaces the section (older observations keep the one they have):

    - `standing`, the count of artworks and its reputation and sum of attribute levels (which only rise), covers its
      `reputation`, `attributes` and `artworks`;
    - `dealt`, the market events naming it or no one, covers its `trades`, `contracts`, `orders` and `defaults`: every
      change of a record it is party to, and of its defaults, emits one naming it (see `dealings`), and a set-up
      command counts as every part's event naming no one;
    - its `wealth` is asked again when any of those or `holding` changed: what it carries (`World.holdings`), a
      structure placed or removed (`World.builds`: who owns which) and construction's events (a structure's hit points
      change only with one). What its escrows hold changes only with a market event naming it, and what its deposits
      hold only with items moved to or from it, their storehouse removed or a set-up command, so these stamps cover
      every term; `wealth_cents` then revalues only the terms whose own stamps moved (a structure placed elsewhere
      costs its structures' term, not a rebuilt section);
    - `where`, its tile (while any order is open: with none, it sees none wherever it is) and the open orders'
      version, covers the orders in view (`market`).

    The stamps of all four are an `EconomyStamps`.
    """

    __slots__ = ("me", "named", "stamps", "section", "valued")

    def __init__(self, w: World, part: str, me: str):
        self.me, self.named = me, (part, me)  # `named`: where `World.part_changes` counts market events naming it
        self.stamps: EconomyStamps | None = None
        self.section: dict[str, Any] | None = None
        self.valued = wealth.valued(w, me)  # its kept wealth, asked without a lookup

    def refresh(self, w: World, c: Character, stamps: EconomyStamps) -> None:
        """Bring the section up to these stamps: the groups are compared a value at a time (no slices built), the
        fields of those that changed are asked again, and those that differ replace the section."""
        section, me = self.section, self.me
        arts, rep, levels, named, none, carried, built, hit, where, version = stamps
        arts0, rep0, levels0, named0, none0, carried0, built0, hit0, where0, version0 = self.stamps or stamps
        self.stamps = stamps
        if section is None:
            self.section = freeze(_economy(w, me, _orders_in_view(w, me, w.view_bounds(c.pos))))
            return
        changed: dict[str, Any] = {}
        if arts != arts0 or rep != rep0 or levels != levels0:
            changed["reputation"] = rep or 0  # its reputation, read for the stamp (none yet: 0)
            changed["attributes"], changed["artworks"] = _standing(w, me)
        dealt, escrows = (named, none), None
        if named != named0 or none != none0:
            mine = dealings(w, me, dealt)
            changed["defaults"] = w.states[Market.name].defaults.get(me, 0)
            changed["trades"], changed["contracts"], changed["orders"] = mine.trades, mine.contracts, mine.orders
            escrows = mine.escrows
        if changed or carried != carried0 or built != built0 or hit != hit0:
            # the wealth reads the stamps read for the section: it is valued without reading them again
            cents = self.valued.at(w, carried, built, hit, dealt, escrows, rep or 0, levels)
            if cents != section["wealth"]["cents"]:
                changed["wealth"] = {**section["wealth"], "cents": cents}
        if where != where0 or version != version0:
            orders = _orders_in_view(w, me, w.view_bounds(c.pos))
            if orders != section["market"]:
                changed["market"] = orders
        if changed:
            self.section = freeze({**section, **changed})


def _orders_seen(w: World) -> tuple[int, list[dict[str, Any]], int]:
    """The market's event count, every open order as observations show it, and a version of those that changes
    whenever any of them does: checked again after each market event (orders are posted, filled and closed with
    one), shared by every character's section."""
    stamp = w.part_changes[MARKET.name]
    held = w.kept.orders_seen
    if held is None or held[0] != stamp:
        public = [public_order(o) for o in state(w).orders.values()]
        version = 0 if held is None else held[2] + (public != held[1])
        held = w.kept.orders_seen = (stamp, public, version)
    return held


def _orders_in_view(w: World, me: str, bounds: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """The open market orders of others at stalls in this view square, as observations show them."""
    x0, x1, y0, y1 = bounds
    return [public_order(o) for o in state(w).orders.values()
            if o["agent"] != me and x0 <= o["x"] <= x1 and y0 <= o["y"] <= y1]


def _economy(w: World, me: str, orders: list[dict[str, Any]]) -> dict[str, Any]:
    """A character's economy section, with these orders in view; its lists and records are kept pieces."""
    mine = dealings(w, me)
    attributes, artworks = _standing(w, me)
    return {
        "reputation": reputation_of(w, me),
        "defaults": state(w).defaults.get(me, 0),
        "attributes": attributes,
        "wealth": {"cents": wealth.wealth_cents(w, me), "formula": _formula(w)},
        "trades": mine.trades,
        "contracts": mine.contracts,
        "orders": mine.orders,
        "market": orders,
        "artworks": artworks,
    }


def _formula(w: World) -> str:
    """The wealth formula's one line, as every economy section shows it: content, so made once per world."""
    formula = w.kept.formula
    if formula is None:
        formula = w.kept.formula = wealth.formula_summary(w.content)
    return formula


def _standing(w: World, me: str) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """A character's attribute levels (every attribute, 0 for those never trained) and copies of its artworks, as
    observations show them: kept while its trained levels stay and no artwork is created (they are only added)."""
    levels, artworks = trained(w, me), SOCIETY.state(w).artworks
    stamp = (tuple(levels.items()), id(artworks), len(artworks))
    kept = w.kept.standing
    if kept is None:
        kept = w.kept.standing = {}
    held = kept.get(me)
    if held is None or held[0] != stamp:
        held = kept[me] = (stamp, {a: levels.get(a, 0) for a in w.content.attributes}, [dict(a) for a in artworks_by(w, me)])
    return held[1], held[2]


MARKET = Market()
