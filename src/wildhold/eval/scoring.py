"""One agent's dimensions scored under a rubric: each component's measures read, scaled and weighted
exactly as the rubric's data says (`wildhold.eval.rubric`).

A measure is read from, in order: the card measures below (what depends on the rubric or the field:
credited time, rank, shares), a fold's own measures, then the metric of that name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from wildhold.eval.metrics import CATEGORIES, AgentMetrics, MatchMetrics
from wildhold.eval.rubric import Component, Dimension, Rubric

CARD_MEASURES: dict[str, Callable[[Card], Any]] = {}


def card_measure(fn: Callable[[Card], Any]) -> Callable[[Card], Any]:
    CARD_MEASURES[fn.__name__] = fn
    return fn


def cap(x: float) -> float:
    return 0.0 if x <= 0 else 1.0 if x >= 1 else x


@dataclass
class Card:
    """What one agent's card is computed from: its metrics, the match, the rubric, and its place in the field."""

    am: AgentMetrics
    mm: MatchMetrics
    rubric: Rubric
    rank: int
    n: int
    top: int  # the field's top wealth, as the rubric ranks it (`scored_wealth`)

    def rate(self, x: float) -> float:
        """Per 100 ticks alive under a rate-normalised rubric, else the lifetime total."""
        return self.am.rate(x) if self.rubric.rate_normalised else float(x)

    def daily(self, x: float) -> float:
        """Per day alive, a life shorter than a day counting as one: a count that each day bounds (a
        partner a day) is not inflated by a short match."""
        return x / max(self.am.ticks_alive / self.mm.ticks_per_day, 1)

    @cached_property
    def dark(self) -> list[list[int]]:
        """The agent's silences long enough to count as going dark under this rubric."""
        return [s for s in self.am.idle_spans if s[1] - s[0] >= self.rubric.idle_threshold_ticks]

    @cached_property
    def _credited_means(self) -> tuple[int, float, float]:
        """(credited ticks, mean health share, needs-met share) over the agent's time outside dark spans."""
        credited = 0
        health = 0
        met = 0
        steps = self.am.needs_steps
        end = self.mm.final_tick
        for i, (tick, hp, ok) in enumerate(steps):
            stop = steps[i + 1][0] if i + 1 < len(steps) else end
            start = tick
            if stop <= start:
                continue
            length = stop - start
            for s, e in self.dark:
                overlap = min(stop, e) - max(start, s)
                if overlap > 0:
                    length -= overlap
            credited += length
            health += hp * length
            met += length if ok else 0
        if credited <= 0:
            return 0, 0.0, 0.0
        return credited, health / (credited * self.mm.max_health), met / credited

    @property
    def credited(self) -> int:
        return self._credited_means[0]

    @property
    def struck(self) -> bool:
        """Whether the rubric strikes exchanges that moved no net goods (`eval.folds.wash`): they earn nothing."""
        return self.rubric.void_exchanges == "struck"

    @property
    def wealth(self) -> int:
        """The wealth it is ranked and scored by (`scored_wealth`)."""
        return scored_wealth(self.am, self.rubric)

    @cached_property
    def void_actions(self) -> dict[str, int]:
        """Its actions in exchanges that moved nothing, by category, where the rubric strikes them (none otherwise)."""
        return self.am.value("void_actions") if self.struck else {}

    @property
    def actions(self) -> int:
        """Its executed actions, less those the rubric strikes."""
        return self.am.actions - sum(self.void_actions.values())

    @property
    def issued(self) -> int:
        return self.actions + self.am.rejected

    @property
    def used(self) -> int:
        """Kinds of action (of CATEGORIES) it used (in what the rubric does not strike)."""
        return sum(1 for c in CATEGORIES if self.am.by_category.get(c, 0) - self.void_actions.get(c, 0) > 0)

    @property
    def unrecovered(self) -> int:
        """Knockdowns that fell inside a dark span."""
        return sum(1 for k in self.am.knockdown_ticks if any(s <= k < e for s, e in self.dark))

    def measure(self, name: str) -> Any:
        fn = CARD_MEASURES.get(name)
        return fn(self) if fn is not None else self.am.value(name)

    # ---- scoring ---------------------------------------------------------------------------

    def component(self, c: Component) -> float:
        """The component's value in [0, 1] (see `wildhold.eval.rubric.SCALES`)."""
        if c.parts:
            total = c.parts[0].weight * self.component(c.parts[0])
            for part in c.parts[1:]:
                total = total + part.weight * self.component(part)
            return total
        if c.only_if and not self.measure(c.only_if):
            return 0.0
        return SCALED[c.scale](self, self.read(c), c.reference)

    def read(self, c: Component) -> Any:
        """What a component without parts reads: its measures summed, each times its count."""
        (first, count), *more = c.reads
        x = self.measure(first) if count == 1 else count * self.measure(first)
        for name, count in more:
            x = x + count * self.measure(name)
        return x

    def dimension(self, d: Dimension) -> tuple[dict[str, float], float]:
        """(its components by name, the gate's among them; its score out of 100, unrounded)."""
        values = {c.name: self.component(c) for c in d.components}
        weighted = d.components[0].weight * values[d.components[0].name]
        for c in d.components[1:]:
            weighted = weighted + c.weight * values[c.name]
        if weighted < 0:  # a signed component takes from the others, never below nothing
            weighted = 0.0
        if d.gate is None:
            return values, 100 * weighted
        gate = self.component(d.gate)
        return {d.gate.name: gate, **values}, 100 * gate * weighted


# What each of the rubric's scales (`wildhold.eval.rubric.SCALES`) makes of a measure x with reference r.
SCALED: dict[str, Callable[[Card, Any, float], float]] = {
    "share": lambda card, x, r: x,
    "rate": lambda card, x, r: cap(card.rate(x) / r),
    "count": lambda card, x, r: cap(x / r),
    "fewer": lambda card, x, r: 1 - cap(card.rate(x) / r),
    "centred": lambda card, x, r: cap(0.5 + x / (2 * r)),
    "discount": lambda card, x, r: 1 - r * x,
    "daily": lambda card, x, r: cap(card.daily(x) / r),
    "signed": lambda card, x, r: max(-1.0, min(1.0, card.rate(x) / r)),
}


def scored_wealth(am: AgentMetrics, rubric: Rubric) -> int:
    """The wealth a rubric ranks and scores a character by, in cents: the public formula's, less the reputation's share
    that exchanges which moved no net goods earned where the rubric strikes them."""
    if rubric.void_exchanges == "struck":
        return am.wealth_cents - am.value("void_wealth_cents")
    return am.wealth_cents


# ---- card measures: what a rubric's components read besides the metrics ----------------------


@card_measure
def credit(card: Card) -> float:
    """Share of its time alive not spent dark."""
    alive = max(card.am.ticks_alive, 0)
    return card.credited / alive if alive else 0.0


@card_measure
def health(card: Card) -> float:
    """Mean health (of the maximum) over credited time."""
    return card._credited_means[1]


@card_measure
def needs(card: Card) -> float:
    """Share of credited time with energy and satiety above 0."""
    return card._credited_means[2]


@card_measure
def wealth_gain(card: Card) -> int:
    """Wealth gained since spawning (never below 0), in cents."""
    return max(0, card.wealth - card.am.wealth_start_cents)


@card_measure
def wealth_change(card: Card) -> int:
    """Wealth gained since spawning, in cents: below 0 when it lost wealth."""
    return card.wealth - card.am.wealth_start_cents


@card_measure
def kinds_of_goods(card: Card) -> int:
    return len(card.am.goods_kinds)


@card_measure
def partner_count(card: Card) -> int:
    """The characters it engaged (where the rubric strikes exchanges that moved nothing, by anything else)."""
    return card.am.value("net_partners") if card.struck else len(card.am.partners)


@card_measure
def engaged(card: Card) -> bool:
    """It dealt with anyone: another character, a villager, a quest."""
    am = card.am
    return partner_count(card) > 0 or am.community > 0 or am.quests_completed > 0


@card_measure
def defaulted_share(card: Card) -> float:
    """Share of its delivery contracts (fulfilled or defaulted) it defaulted on."""
    am = card.am
    fulfilled = am.contracts_fulfilled - (am.value("void_deliveries") if card.struck else 0)
    contracts = fulfilled + am.contracts_defaulted
    return am.contracts_defaulted / contracts if contracts else 0


@card_measure
def region_share(card: Card) -> float:
    """Share of the map's regions it saw."""
    return len(card.am.regions_seen) / max(len(card.mm.map_regions), 1)


@card_measure
def validity(card: Card) -> float:
    """Accepted share of the actions it issued."""
    return card.actions / card.issued if card.issued else 0.0


@card_measure
def categories_share(card: Card) -> float:
    """Share of the kinds of action it used."""
    return card.used / len(CATEGORIES)


@card_measure
def recovery(card: Card) -> float:
    """Share of its knockdowns not followed by going dark (0 for an agent that never acted)."""
    am = card.am
    if am.actions == 0:
        return 0.0
    return 1 - card.unrecovered / am.knockdowns if am.knockdowns else 1.0


@card_measure
def placement(card: Card) -> float:
    """(n - rank) / (n - 1): 1 for first place, 0 for last."""
    return (card.n - card.rank) / (card.n - 1) if card.n > 1 else 1.0


@card_measure
def wealth_share(card: Card) -> float:
    """Its wealth over the field's top wealth."""
    return cap(card.wealth / card.top) if card.top > 0 else 0.0


@card_measure
def signed_wealth_share(card: Card) -> float:
    """Its wealth over the field's top wealth, down to -1 for wealth as far below 0 as the top's is above (0 when
    nobody's wealth is above 0)."""
    return max(-1.0, min(1.0, card.wealth / card.top)) if card.top > 0 else 0.0
