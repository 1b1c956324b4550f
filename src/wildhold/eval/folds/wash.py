"""Exchanges that moved nothing between their two characters: items handed over and handed back (wash trading).

Per pair of characters and item, a unit handed over cancels one the other side handed over before it and has not
had back (first in, first out); an exchange every unit of which is cancelled, by handing back or by being handed
back later, moved no net goods between them. Whatever the pair does, what ends up moved is what stays uncancelled.
A rubric that strikes such exchanges (`Rubric.void_exchanges`) scores them, and all they earned, as nothing: the
actions that made them, the partner-days, the partners met only through them, the reputation they earned and that
reputation's share of wealth. Goods passed around a ring of three or more are not paired, so not cancelled."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from wildhold.eval.events import (ContractFulfilled, ContractOffered, ItemMoved, OrderFilled, Reputation, Said,
                                  TradeCompleted, TradeOffered, Whispered)
from wildhold.eval.fold import Fold, MatchInfo, fold, on
from wildhold.world.actions.registry import REGISTRY

EXCHANGE_SOURCES = ("trade:", "contract:", "order:")  # how the items an exchange moves name it
# The actions each side takes to make an exchange of each kind: (maker's, taker's).
ACTIONS = {"trade": (("offer_trade",), ("accept_trade",)),
           "contract": (("offer_contract",), ("accept_contract", "fulfil_contract")),
           "fill": ((), ("fill_order",))}


@dataclass(eq=False)
class Exchange:
    """One completed exchange: its kind, its maker and taker (offerer and acceptor, payer and deliverer, an order's
    poster and its filler), its calendar day, the units it moved and how many of them are cancelled."""

    kind: str
    maker: str
    taker: str
    day: int
    units: int = 0
    cancelled: int = 0

    @property
    def void(self) -> bool:
        return self.units > 0 and self.cancelled == self.units


@fold
class Wash(Fold):
    """Per character: its partner-days and partners through exchanges that moved goods (and messages and offers), and
    what its exchanges that moved nothing made and earned: their count, its actions in them by category, the
    deliveries among them, and the reputation they earned, in points and in cents of wealth."""

    writes = ("net_exchange_pair_days", "net_partners", "void_exchanges", "void_actions", "void_deliveries",
              "void_reputation", "void_wealth_cents")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.ticks_per_day = match.content.calendar.ticks_per_day
        self.reputation_cents = match.content.wealth.reputation_cents
        self.received: dict[str, list[tuple[str, str, int]]] = {}  # source -> (holder, item, qty) not yet its exchange's
        self.exchanges: list[Exchange] = []
        self.named: dict[str, Exchange] = {}  # "trade:trade1", "contract:contract2" -> its exchange
        self.open: dict[tuple[str, str, str], deque[list]] = {}  # (giver, receiver, item) -> [[exchange, units not back]]
        self.fills: dict[str, tuple[str, list[Exchange]]] = {}  # order -> (its poster, its fills)
        self.engaged: list[tuple[str, str, str | Exchange | None]] = []  # (a, b, its exchange or offer; None: a message)
        self.credits: list[tuple[str, int, str]] = []  # (character, delta, reason) of reputation an exchange earned

    # ---- exchanges ---------------------------------------------------------------------------

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        if ev.source.startswith(EXCHANGE_SOURCES) and ev.holder in self.agents:
            self.received.setdefault(ev.source, []).append((ev.holder, ev.item, ev.qty))

    def _completed(self, tick: int, kind: str, source: str, maker: str, taker: str) -> Exchange:
        ex = Exchange(kind, maker, taker, tick // self.ticks_per_day)
        for holder, item, qty in self.received.pop(source, ()):
            if holder in (maker, taker):
                ex.units += qty
                self._handed(ex, taker if holder == maker else maker, holder, item, qty)
        self.exchanges.append(ex)
        self.engaged.append((maker, taker, ex))
        return ex

    def _handed(self, ex: Exchange, giver: str, receiver: str, item: str, qty: int) -> None:
        """`qty` of `item` from giver to receiver: first they cancel what the receiver handed the giver, not yet back."""
        back = self.open.get((receiver, giver, item))
        while qty and back:
            entry = back[0]
            n = min(qty, entry[1])
            entry[0].cancelled += n
            ex.cancelled += n
            qty -= n
            entry[1] -= n
            if not entry[1]:
                back.popleft()
        if qty:
            self.open.setdefault((giver, receiver, item), deque()).append([ex, qty])

    @on("trade_completed")
    def traded(self, tick: int, ev: TradeCompleted) -> None:
        source = f"trade:{ev.offer}"
        self.named[source] = self._completed(tick, "trade", source, ev.agent, ev.to)

    @on("contract_fulfilled")
    def fulfilled(self, tick: int, ev: ContractFulfilled) -> None:
        source = f"contract:{ev.contract}"
        self.named[source] = self._completed(tick, "contract", source, ev.payer, ev.deliverer)

    @on("order_filled")
    def filled(self, tick: int, ev: OrderFilled) -> None:
        ex = self._completed(tick, "fill", f"order:{ev.order}", ev.agent, ev.by)
        self.fills.setdefault(ev.order, (ev.agent, []))[1].append(ex)

    @on("reputation_changed")
    def reputation(self, tick: int, ev: Reputation) -> None:
        if ev.reason.startswith(EXCHANGE_SOURCES):
            self.credits.append((ev.agent, ev.delta, ev.reason))

    # ---- engagement --------------------------------------------------------------------------

    @on("trade_offered")
    def offered(self, tick: int, ev: TradeOffered) -> None:
        self.engaged.append((ev.agent, ev.to, f"trade:{ev.offer}"))

    @on("contract_offered")
    def contracted(self, tick: int, ev: ContractOffered) -> None:
        self.engaged.append((ev.payer, ev.deliverer, f"contract:{ev.contract}"))

    @on("message_said")
    def said(self, tick: int, ev: Said) -> None:
        self.engaged += [(ev.agent, other, None) for other in ev.heard_by]

    @on("message_whispered")
    def whispered(self, tick: int, ev: Whispered) -> None:
        self.engaged.append((ev.agent, ev.to, None))

    # ---- what it comes to ----------------------------------------------------------------------

    def finish(self) -> None:
        agents = self.agents
        pair_days: set[tuple[str, str, int]] = set()
        traded: set[tuple[str, str, int]] = set()  # (maker, taker, day) of the trades that moved something
        void = dict.fromkeys(agents, 0)
        deliveries = dict.fromkeys(agents, 0)
        actions: dict[str, dict[str, int]] = {a: {} for a in agents}

        def took(agent: str, names: tuple[str, ...]) -> None:
            for name in names if agent in actions else ():
                category = REGISTRY[name].category
                actions[agent][category] = actions[agent].get(category, 0) + 1

        for ex in self.exchanges:
            if not ex.void:
                pair_days.update(((ex.maker, ex.taker, ex.day), (ex.taker, ex.maker, ex.day)))
                if ex.kind == "trade":
                    traded.update(((ex.maker, ex.taker, ex.day), (ex.taker, ex.maker, ex.day)))
                continue
            made, answered = ACTIONS[ex.kind]
            took(ex.maker, made)
            took(ex.taker, answered)
            for party in (ex.maker, ex.taker):
                if party in void:
                    void[party] += 1
            if ex.kind == "contract" and ex.taker in deliveries:
                deliveries[ex.taker] += 1
        for poster, fills in self.fills.values():
            if all(ex.void for ex in fills):
                took(poster, ("post_order",))
        partners: dict[str, set[str]] = {a: set() for a in agents}
        for a, b, what in self.engaged:
            ex = self.named.get(what) if isinstance(what, str) else what
            if a != b and a in partners and b in partners and not (ex is not None and ex.void):
                partners[a].add(b)
                partners[b].add(a)
        reputation = dict.fromkeys(agents, 0)
        for agent, delta, reason in self.credits:
            ex = self.named.get(reason)
            if agent in reputation and ex is not None and self._void_credit(ex, traded):
                reputation[agent] += delta
        for a, am in agents.items():
            am.measures.update({
                "net_exchange_pair_days": sum(1 for x, _, _ in pair_days if x == a),
                "net_partners": len(partners[a]),
                "void_exchanges": void[a],
                "void_actions": dict(sorted(actions[a].items())),
                "void_deliveries": deliveries[a],
                "void_reputation": reputation[a],
                "void_wealth_cents": reputation[a] * self.reputation_cents,
            })

    @staticmethod
    def _void_credit(ex: Exchange, traded: set[tuple[str, str, int]]) -> bool:
        """Whether the reputation an exchange earned was earned by nothing: a contract's, when it moved nothing; a
        trade's (the pair's credit for the day, earned by its first trade), when none of the pair's trades that day
        moved anything."""
        if ex.kind == "trade":
            return (ex.maker, ex.taker, ex.day) not in traded
        return ex.void
