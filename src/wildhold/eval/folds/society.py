"""How characters dealt with each other and the village: exchanges, partners, messages, raids,
quests and villager dealings, reputation."""

from __future__ import annotations

from wildhold.eval.events import (Act, Attacked, ContractDefaulted, ContractFulfilled, ContractOffered, Damaged, OrderFilled,
                                  Reputation, Said, TradeCompleted, TradeOffered, Whispered)
from wildhold.eval.fold import Fold, MatchInfo, fold, on


@fold
class Exchanges(Fold):
    """Completed exchanges with other characters: trades accepted either way, market orders filled
    either way, delivery contracts fulfilled; offers made and contracts defaulted."""

    writes = ("exchanges", "trades", "trade_offers", "orders_filled", "contracts_fulfilled", "contracts_defaulted")

    @on("trade_offered")
    def offered(self, tick: int, ev: TradeOffered) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.trade_offers += 1

    @on("trade_completed")
    def traded(self, tick: int, ev: TradeCompleted) -> None:
        for a in (ev.agent, ev.to):
            am = self.agents.get(a)
            if am is not None:
                am.trades += 1
                am.exchanges += 1

    @on("contract_fulfilled")
    def fulfilled(self, tick: int, ev: ContractFulfilled) -> None:
        for a in (ev.payer, ev.deliverer):
            am = self.agents.get(a)
            if am is not None:
                am.exchanges += 1
        am = self.agents.get(ev.deliverer)
        if am is not None:
            am.contracts_fulfilled += 1

    @on("contract_defaulted")
    def defaulted(self, tick: int, ev: ContractDefaulted) -> None:
        am = self.agents.get(ev.defaulter)
        if am is not None:
            am.contracts_defaulted += 1

    @on("order_filled")
    def filled(self, tick: int, ev: OrderFilled) -> None:
        for a in (ev.agent, ev.by):
            am = self.agents.get(a)
            if am is not None:
                am.orders_filled += 1
                am.exchanges += 1


@fold
class ExchangeDays(Fold):
    """Exchanges counted once per pair of characters per calendar day, as reputation counts trades: a
    partner it completed any exchange with that day, however many. Handing one item back and forth
    with one partner cannot raise it; only more partners, or more days, can."""

    name = "exchange_days"
    writes = ("exchange_pair_days",)

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.ticks_per_day = match.content.calendar.ticks_per_day
        self.pairs: set[tuple[str, str, int]] = set()  # (character, partner, day), both ways

    def _exchange(self, tick: int, a: str, b: str) -> None:
        if a != b:
            day = tick // self.ticks_per_day
            self.pairs.update(((a, b, day), (b, a, day)))

    @on("trade_completed")
    def traded(self, tick: int, ev: TradeCompleted) -> None:
        self._exchange(tick, ev.agent, ev.to)

    @on("contract_fulfilled")
    def fulfilled(self, tick: int, ev: ContractFulfilled) -> None:
        self._exchange(tick, ev.payer, ev.deliverer)

    @on("order_filled")
    def filled(self, tick: int, ev: OrderFilled) -> None:
        self._exchange(tick, ev.agent, ev.by)

    def finish(self) -> None:
        counts = dict.fromkeys(self.agents, 0)
        for a, _, _ in self.pairs:
            if a in counts:
                counts[a] += 1
        for a, am in self.agents.items():
            am.measures["exchange_pair_days"] = counts[a]


@fold
class Partners(Fold):
    """The other characters each one engaged: trade offers and trades either way, contracts offered,
    orders filled, messages heard or whispered."""

    writes = ("partners",)

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.partners: dict[str, set[str]] = {}

    def _engage(self, a: str, b: str) -> None:
        if a in self.agents and b in self.agents and a != b:
            self.partners.setdefault(a, set()).add(b)
            self.partners.setdefault(b, set()).add(a)

    @on("trade_offered")
    def offered(self, tick: int, ev: TradeOffered) -> None:
        self._engage(ev.agent, ev.to)

    @on("trade_completed")
    def traded(self, tick: int, ev: TradeCompleted) -> None:
        self._engage(ev.agent, ev.to)

    @on("contract_offered")
    def contracted(self, tick: int, ev: ContractOffered) -> None:
        self._engage(ev.payer, ev.deliverer)

    @on("order_filled")
    def filled(self, tick: int, ev: OrderFilled) -> None:
        self._engage(ev.agent, ev.by)

    @on("message_said")
    def said(self, tick: int, ev: Said) -> None:
        for other in ev.heard_by:
            self._engage(ev.agent, other)

    @on("message_whispered")
    def whispered(self, tick: int, ev: Whispered) -> None:
        self._engage(ev.agent, ev.to)

    def finish(self) -> None:
        for a, am in self.agents.items():
            am.partners = sorted(self.partners.get(a, ()), key=agent_order)


def agent_order(agent: str) -> tuple[int, str]:
    """Characters in joining order: a1, a2, ..., a10 (ids the world did not give last, by name)."""
    digits = agent[1:]
    return (int(digits), agent) if digits.isdigit() else (1 << 30, agent)


@fold
class Messages(Fold):
    """Messages said, whispered or posted (their content is never read)."""

    writes = ("messages",)

    @on("message_said", "message_whispered", "message_posted")
    def message(self, tick: int, ev: Said | Whispered | Act) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.messages += 1


@fold
class Conflict(Fold):
    """Raids: attacks on other characters and damage to structures others own; and being raided.
    Attacks, a measure: the attacks on other characters alone."""

    writes = ("raids", "attacked_by_others", "attacks")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.attacks: dict[str, int] = {}

    @on("structure_damaged")
    def damaged(self, tick: int, ev: Damaged) -> None:
        raider = self.agents.get(ev.by)
        if raider is not None and ev.owner not in (None, ev.by):
            raider.raids += 1
            victim = self.agents.get(ev.owner)  # type: ignore[arg-type]
            if victim is not None:
                victim.attacked_by_others += 1

    @on("character_attacked")
    def attacked(self, tick: int, ev: Attacked) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.raids += 1
            self.attacks[ev.agent] = self.attacks.get(ev.agent, 0) + 1
        am = self.agents.get(ev.target)
        if am is not None:
            am.attacked_by_others += 1

    def finish(self) -> None:
        for a, am in self.agents.items():
            am.measures["attacks"] = self.attacks.get(a, 0)


@fold
class Community(Fold):
    """Quests completed (and when), and villager dealings: talks, gifts, purchases and sales."""

    writes = ("quests_completed", "quest_ticks", "community")

    @on("quest_completed")
    def quest(self, tick: int, ev: Act) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.quests_completed += 1
            am.quest_ticks.append(tick)

    @on("talked", "gift_given", "bought", "sold")
    def dealt(self, tick: int, ev: Act) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.community += 1


@fold
class Standing(Fold):
    """Reputation at the end of the match."""

    writes = ("reputation",)

    @on("reputation_changed")
    def changed(self, tick: int, ev: Reputation) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.reputation = ev.value
