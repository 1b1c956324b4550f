"""The market's records and who is party to each: the state the market part saves, each character's open
dealings as observations show them, and the escrows whose items are still a character's own.

Both the market part (its economy section) and the wealth formula (escrowed items count as their owner's) read
these, so they live below both: the market imports the wealth, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wildhold.world.parts.base import Saved, saved

if TYPE_CHECKING:
    from wildhold.world.world import World

NAME = "market"  # the market part's name: its state and its event counts are kept under it
ESCROW = "escrow@"
KINDS = ("trade", "contract", "order")
NAMING_NONE = (NAME, None)  # where `World.part_changes` counts the last market event naming no one

# ---- state ---------------------------------------------------------------------------------


@dataclass
class MarketState(Saved):
    """Saved with society's and conflict's state in the snapshot's "economy" section, where the
    single economy part kept it, so older snapshots restore. Records are JSON-ready dicts."""

    next_id: dict[str, int] = saved("shared_counters", lambda: dict.fromkeys(KINDS, 0))
    trades: dict[str, dict[str, Any]] = saved("records", dict)
    contracts: dict[str, dict[str, Any]] = saved("records", dict)
    orders: dict[str, dict[str, Any]] = saved("records", dict)
    defaults: dict[str, int] = saved("pairs", dict)
    trade_credit: dict[str, int] = saved("pairs", dict)  # "a|b" -> last day that pair earned trade reputation

    def new_id(self, kind: str) -> str:
        self.next_id[kind] += 1
        return record_id(kind, self.next_id[kind])


def record_id(kind: str, n: int) -> str:
    """The id of the n-th record of a kind made in a world (ids are never reused)."""
    return f"{kind}{n}"


def state(w: World) -> MarketState:
    return w.states[NAME]  # type: ignore[return-value]


def escrow_holder(record_id: str) -> str:
    return f"{ESCROW}{record_id}"


def escrows_of(w: World, agent: str) -> list[str]:
    """The escrow holders whose items still belong to `agent`: its open offers, the contracts it
    pays, its open market orders. The wealth formula counts their items as the agent's."""
    return list(dealings(w, agent).escrows)


@dataclass(slots=True)
class Dealings:
    """One character's open records as observations show them (read-only: shared by its observations), and
    the escrows whose items are still its own, each in the order the records were made."""

    trades: list[dict[str, Any]]  # offers it made or received
    contracts: list[dict[str, Any]]  # contracts it pays or delivers
    orders: list[dict[str, Any]]  # its own market orders
    escrows: list[str]  # its offers', paid contracts' and orders' escrow holders


def dealings(w: World, agent: str, stamp: tuple[int | None, int | None] | None = None) -> Dealings:
    """A character's `Dealings`, kept until a market event names it (or names no one): every change of a record
    it is party to emits one naming both parties (see `World.part_changes`). `stamp`, when the caller read them
    already, is the counts of those events (`dealt_stamp`)."""
    if stamp is None:
        stamp = dealt_stamp(w, agent)
    kept = w.kept.dealings
    if kept is None:
        kept = w.kept.dealings = {}
    held = kept.get(agent)
    if held is None or held[0] != stamp:
        held = kept[agent] = (stamp, _dealings(w, agent))
    return held[1]


def dealt_stamp(w: World, agent: str) -> tuple[int | None, int | None]:
    """Where `World.part_changes` counts the market events naming the character and naming no one: its dealings
    change only with one of them."""
    return w.part_changes.get((NAME, agent)), w.part_changes.get(NAMING_NONE)


def _dealings(w: World, agent: str) -> Dealings:
    """One pass over each kind of the records it is party to (a character's dealings are rebuilt whenever a market
    event names it); most characters are party to none."""
    parties = _parties(w)
    mine = parties.mine.get(agent)
    if mine is None:  # party to no record: the world's one empty `Dealings` (a world's own, as any it shows)
        empty = w.kept.no_dealings
        if empty is None:
            empty = w.kept.no_dealings = Dealings([], [], [], [])
        return empty
    e, escrows = parties.state, []
    trade_entries, contract_entries, order_entries = mine
    trades = _open_shown(trade_entries, e.trades, None, public_trade, agent, escrows) if trade_entries else []
    contracts = _open_shown(contract_entries, e.contracts, "stage", public_contract, agent, escrows) if contract_entries else []
    orders = _open_shown(order_entries, e.orders, "qty", public_order, agent, escrows) if order_entries else []
    return Dealings(trades, contracts, orders, escrows)


_UNSHOWN = object()  # the version of an entry not shown yet: equal to no version


def _open_shown(entries: list[list], records: dict[str, dict[str, Any]], changing: str | None, public: Any,
                agent: str, escrows: list[str]) -> list[dict[str, Any]]:
    """The entries' records still open, as observations show them, in order; closed ones are dropped from `entries`.
    The escrow holders of those whose escrow is `agent`'s are added to `escrows`, in the same order.

    A record as shown is a fresh copy, its item tables copied too (an observation never aliases what the world
    mutates), made again only when `changing` (a contract's stage, an order's quantity: the only fields changed in
    place) differs from the version the entry holds, and shared by both parties' observations (read-only)."""
    shown = []
    for entry in entries:
        record = records.get(entry[0])
        if record is not None:
            version = None if changing is None else record[changing]
            if entry[1] != version:
                entry[1], entry[2] = version, copied(public(record))
            shown.append(entry[2])
            if entry[3] == agent:
                escrows.append(entry[4])
    if len(shown) != len(entries):
        entries[:] = [entry for entry in entries if entry[0] in records]
    return shown


_PARTY_FIELDS = {"trade": ("from", "to"), "contract": ("payer", "deliverer"), "order": ("agent",)}  # a record's parties
_ESCROW_FIELD = {"trade": "from", "contract": "payer", "order": "agent"}  # the party whose items its escrow holds


def _parties(w: World) -> _Parties:
    """The index of records by party, brought up to date with the records made since it was last asked."""
    e = state(w)
    held = w.kept.market_parties
    if held is None or held.state is not e:
        held = w.kept.market_parties = _Parties(e)
    elif held.made != e.next_id:
        held.catch_up()
    return held


class _Parties:
    """Under each character, for each kind (in the order of `KINDS`), the entries of the records it is party to that
    were open when last looked at, in the order the records were made (the order of the state's records: each is
    added with a new id, `record_id` of the kind's count, and never changes parties). An entry, [id, version, record
    as shown, the party whose items its escrow holds, its escrow holder], is shared by the record's parties (see
    `_open_shown`). Records made since `made` (the counts of
    records made when it was last brought up to date) are added by their ids; closed ones are dropped when next
    looked at. A character's dealings read its few records, not every open one."""

    __slots__ = ("state", "made", "mine")

    def __init__(self, e: MarketState):
        self.state, self.made = e, dict(e.next_id)
        self.mine: dict[str, tuple[list[list], list[list], list[list]]] = {}
        for kind in KINDS:
            for record in _records(e, kind).values():
                self._add(kind, record)

    def _add(self, kind: str, record: dict[str, Any]) -> None:
        entry = [record["id"], _UNSHOWN, None, record[_ESCROW_FIELD[kind]], escrow_holder(record["id"])]
        at = KINDS.index(kind)
        for role in _PARTY_FIELDS[kind]:
            lists = self.mine.get(record[role])
            if lists is None:
                lists = self.mine[record[role]] = ([], [], [])
            lists[at].append(entry)

    def catch_up(self) -> None:
        e = self.state
        for kind in KINDS:
            records = _records(e, kind)
            for n in range(self.made[kind] + 1, e.next_id[kind] + 1):
                record = records.get(record_id(kind, n))
                if record is not None:
                    self._add(kind, record)
        self.made = dict(e.next_id)


def _records(e: MarketState, kind: str) -> dict[str, dict[str, Any]]:
    return e.trades if kind == "trade" else e.contracts if kind == "contract" else e.orders


def public_trade(t: dict[str, Any]) -> dict[str, Any]:
    return {k: t[k] for k in ("id", "from", "to", "give", "want", "expires")}


def public_contract(k: dict[str, Any]) -> dict[str, Any]:
    return {key: k[key] for key in ("id", "payer", "deliverer", "deliver", "pay", "deadline", "stage")}


def public_order(o: dict[str, Any]) -> dict[str, Any]:
    return {k: o[k] for k in ("id", "agent", "x", "y", "side", "item", "qty", "price")}


def copied(record: dict[str, Any]) -> dict[str, Any]:
    """A public record whose values are scalars or item tables ({item: qty}), with those tables copied (in place:
    the record is a fresh one)."""
    for k, v in record.items():
        if v.__class__ is dict:
            record[k] = dict(v)
    return record
