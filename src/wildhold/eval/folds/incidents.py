"""Interference incidents (seed 001's protocol): every interaction between two characters, dated and
cited by event number, so a study's curves are annotated with them and no run is excluded.

An incident names its kind, the tick, the parties (the one who acted first) and the events that prove
it. What the world's log does not record is not guessed: resource nodes have no owner in Wildhold,
so no gather is ever refused by another's claim; tilled plots, structures and animals do have owners,
and a refusal naming one is an incident. The tile of a refused step or of a blocked path is read
from the refusal's sentence, the owner and the lock from the events before it.
"""

from __future__ import annotations

import re
from typing import Any

from wildhold.eval.events import (Access, Attacked, Built, ContractDefaulted, ContractFulfilled, ContractOffered, Damaged, Door,
                                  Failed, Husbanded, Knockdown, Looted, OrderFilled, Placed, PlotLost, QuestTaken, Refused,
                                  Removed, Said, Tilled, TradeClosed, TradeCompleted, TradeOffered, Whispered)
from wildhold.eval.fold import Fold, MatchInfo, fold, on

KINDS: dict[str, str] = {
    "attack": "attacked another character",
    "raid": "damaged a structure another character owns",
    "knockdown": "knocked another character down",
    "loot": "took loot from a character it knocked down",
    "trade_offer": "offered a trade",
    "trade": "traded (an offer accepted)",
    "trade_declined": "a trade offer was declined or withdrawn",
    "contract": "offered a delivery contract",
    "contract_accepted": "accepted a delivery contract",
    "contract_fulfilled": "delivered on a contract",
    "contract_default": "defaulted on a contract",
    "order_filled": "filled another character's market order",
    "message": "spoke to or whispered to another character",
    "blocked_path": "was stopped by another character's locked door or structure",
    "refused_claim": "was refused another character's plot, animal or structure",
    "same_quest": "tried to take a quest another character had already taken",
}
TILE = re.compile(r"\((-?\d+), (-?\d+)\)")
QUEST = re.compile(r"No quest '([^']+)'")
CLAIM_CODES = frozenset({"not_plot_owner", "not_animal_owner", "not_owner"})


@fold
class Incidents(Fold):
    """Every interaction between two characters, in order: the match's `incidents` log, and each
    character's count of the incidents it is a party to (`incidents`, never scored)."""

    writes = ("incidents",)
    numbered = True

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.log: list[dict[str, Any]] = []
        self.owners: dict[tuple[int, int], tuple[str, int]] = {}  # tile -> (its owner, the event that made it theirs)
        self.locks: dict[tuple[int, int], int] = {}  # locked door tile -> the event that locked it
        self.allowed: dict[tuple[int, int], set[str]] = {}
        self.lethal: dict[str, tuple[str, int, int]] = {}  # target -> (attacker, tick, seq) of a hit that left it at 0
        self.quests: dict[str, tuple[str, int]] = {}  # quest -> (who took it, the event)

    def _add(self, kind: str, tick: int, parties: list[str], evidence: list[int], **detail: Any) -> None:
        if len(set(parties)) < 2 or not all(p in self.agents for p in parties):
            return
        self.log.append({"kind": kind, "tick": tick, "parties": parties, "evidence": evidence, "detail": detail})

    # ---- conflict ------------------------------------------------------------------------------

    @on("character_attacked")
    def attacked(self, tick: int, ev: Attacked) -> None:
        self._add("attack", tick, [ev.agent, ev.target], [self.match.seq], health=ev.health)
        if ev.health == 0:
            self.lethal[ev.target] = (ev.agent, tick, self.match.seq)

    @on("knockdown")
    def knocked(self, tick: int, ev: Knockdown) -> None:
        hit = self.lethal.pop(ev.agent, None)
        if hit is not None and hit[1] == tick:
            self._add("knockdown", tick, [hit[0], ev.agent], [hit[2], self.match.seq])

    @on("looted")
    def looted(self, tick: int, ev: Looted) -> None:
        self._add("loot", tick, [ev.agent, ev.victim], [self.match.seq], items=dict(ev.items))

    @on("structure_damaged")
    def damaged(self, tick: int, ev: Damaged) -> None:
        if ev.owner is not None:
            self._add("raid", tick, [ev.by, ev.owner], [self.match.seq], x=ev.x, y=ev.y, hp=ev.hp)

    # ---- exchanges and messages ----------------------------------------------------------------

    @on("trade_offered")
    def offered(self, tick: int, ev: TradeOffered) -> None:
        self._add("trade_offer", tick, [ev.agent, ev.to], [self.match.seq], offer=ev.offer)

    @on("trade_completed")
    def traded(self, tick: int, ev: TradeCompleted) -> None:
        self._add("trade", tick, [ev.agent, ev.to], [self.match.seq], offer=ev.offer)

    @on("trade_closed")
    def closed(self, tick: int, ev: TradeClosed) -> None:
        if ev.reason in ("declined", "withdrawn", "cancelled"):
            self._add("trade_declined", tick, [ev.agent, ev.to], [self.match.seq], offer=ev.offer, reason=ev.reason)

    @on("contract_offered")
    def contracted(self, tick: int, ev: ContractOffered) -> None:
        self._add("contract", tick, [ev.payer, ev.deliverer], [self.match.seq], contract=ev.contract)

    @on("contract_accepted")
    def accepted(self, tick: int, ev: ContractFulfilled) -> None:
        self._add("contract_accepted", tick, [ev.deliverer, ev.payer], [self.match.seq], contract=ev.contract)

    @on("contract_fulfilled")
    def fulfilled(self, tick: int, ev: ContractFulfilled) -> None:
        self._add("contract_fulfilled", tick, [ev.deliverer, ev.payer], [self.match.seq], contract=ev.contract)

    @on("contract_defaulted")
    def defaulted(self, tick: int, ev: ContractDefaulted) -> None:
        self._add("contract_default", tick, [ev.defaulter, ev.payer], [self.match.seq], contract=ev.contract)

    @on("order_filled")
    def filled(self, tick: int, ev: OrderFilled) -> None:
        self._add("order_filled", tick, [ev.by, ev.agent], [self.match.seq], order=ev.order)

    @on("message_whispered")
    def whispered(self, tick: int, ev: Whispered) -> None:
        self._add("message", tick, [ev.agent, ev.to], [self.match.seq], how="whisper")

    @on("message_said")
    def said(self, tick: int, ev: Said) -> None:
        heard = [a for a in ev.heard_by if a != ev.agent]
        self._add("message", tick, [ev.agent, *heard], [self.match.seq], how="said")

    # ---- what belongs to whom ------------------------------------------------------------------

    def _own(self, x: int, y: int, owner: str | None) -> None:
        if owner is None:
            self.owners.pop((x, y), None)
        else:
            self.owners[(x, y)] = (owner, self.match.seq)

    @on("structure_placed")
    def placed(self, tick: int, ev: Placed) -> None:
        self._own(ev.x, ev.y, ev.owner)

    @on("structure_built")
    def built(self, tick: int, ev: Built) -> None:
        self._own(ev.x, ev.y, ev.agent)

    @on("plot_tilled")
    def tilled(self, tick: int, ev: Tilled) -> None:
        self._own(ev.x, ev.y, ev.agent)

    @on("animal_settled", "animal_fed")
    def settled(self, tick: int, ev: Husbanded) -> None:
        if (ev.x, ev.y) not in self.owners:
            self._own(ev.x, ev.y, ev.agent)

    @on("structure_destroyed", "structure_demolished")
    def removed(self, tick: int, ev: Removed) -> None:
        for table in (self.owners, self.locks, self.allowed):
            table.pop((ev.x, ev.y), None)  # type: ignore[attr-defined]

    @on("plot_lost")
    def lost(self, tick: int, ev: PlotLost) -> None:
        self.owners.pop((ev.x, ev.y), None)

    @on("door_locked")
    def locked(self, tick: int, ev: Door) -> None:
        self.locks[(ev.x, ev.y)] = self.match.seq

    @on("door_unlocked")
    def unlocked(self, tick: int, ev: Door) -> None:
        self.locks.pop((ev.x, ev.y), None)

    @on("access_changed")
    def access(self, tick: int, ev: Access) -> None:
        allowed = self.allowed.setdefault((ev.x, ev.y), set())
        (allowed.add if ev.allowed else allowed.discard)(ev.character)

    # ---- refusals --------------------------------------------------------------------------------

    def _blocked(self, tick: int, agent: str, message: str, code: str) -> None:
        m = TILE.search(message)
        if m is None:
            return
        tile = (int(m[1]), int(m[2]))
        owner = self.owners.get(tile)
        if owner is None or owner[0] == agent or agent in self.allowed.get(tile, ()):
            return
        evidence = [self.match.seq, owner[1]]
        lock = self.locks.get(tile)
        if lock is not None:
            evidence.append(lock)
        self._add("blocked_path", tick, [agent, owner[0]], sorted(evidence), x=tile[0], y=tile[1], locked=lock is not None,
                  code=code)

    @on("action_rejected")
    def refused(self, tick: int, ev: Refused) -> None:
        if ev.code == "blocked":
            self._blocked(tick, ev.agent, ev.message, ev.code)
        elif ev.code in CLAIM_CODES:
            m = TILE.search(ev.message)
            owner = self.owners.get((int(m[1]), int(m[2]))) if m else None
            if owner is not None:
                self._add("refused_claim", tick, [ev.agent, owner[0]], sorted([self.match.seq, owner[1]]), action=ev.action,
                          code=ev.code, x=int(m[1]), y=int(m[2]))  # type: ignore[index]
        elif ev.code == "unknown_quest" and ev.action == "accept_quest":
            self._quest_taken(tick, ev.agent, ev.message)

    def _quest_taken(self, tick: int, agent: str, message: str) -> None:
        m = QUEST.search(message)
        taken = self.quests.get(m[1]) if m else None
        if taken is not None:
            self._add("same_quest", tick, [agent, taken[0]], [taken[1], self.match.seq], quest=m[1])  # type: ignore[index]

    @on("operation_failed")
    def failed(self, tick: int, ev: Failed) -> None:
        if ev.code == "path_blocked":
            self._blocked(tick, ev.agent, ev.message, ev.code)
        elif ev.code == "unknown_quest" and ev.action == "accept_quest":  # both took it in the same tick: one was first
            self._quest_taken(tick, ev.agent, ev.message)

    @on("quest_accepted")
    def took(self, tick: int, ev: QuestTaken) -> None:
        self.quests[ev.quest] = (ev.agent, self.match.seq)

    def finish(self) -> None:
        counts = dict.fromkeys(self.agents, 0)
        for n, incident in enumerate(self.log, 1):
            incident["n"] = n
            for a in set(incident["parties"]):
                counts[a] += 1
        for a, am in self.agents.items():
            am.measures["incidents"] = counts[a]
        self.match.logs["incidents"] = self.log
