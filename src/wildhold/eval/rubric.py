"""The report card's rubric (seed 003) as frozen, versioned objects: weights, grade bands, reference
constants, idle rule, archetype rules, and how ranks and exploration are derived.

A published rubric never changes. Changing a constant, or how a dimension's input is derived, is a
new version; every report stamps the version it ran under, and recomputing an archive under its
own version reproduces the report byte for byte. `PUBLISHED_RUBRIC` is the one version every
public surface uses; ask for another explicitly.

History:
- 1.0: lifetime totals against lifetime references; exploration from the move count; the final
  board is a stable sort by wealth, so of two agents at exactly equal wealth the one that joined
  first takes the better rank.
- 2.0: rate-normalised per 100 ticks alive, breadth-graded; ranks still a stable sort.
- 2.1: exact wealth ties share a rank (standard competition ranking, 1, 1, 3), everywhere.
- 2.2: exploration read from the map record (tiles and regions seen under fog of war, derived from
  spawn, move and knockdown events and the seed's worldgen) instead of the move count.

Archetypes, first rule that holds (rates per 100 ticks alive under rate-normalised versions,
lifetime counts under 1.0):
1. Drifter: went dark for at least `drifter_idle_share` of its time, issued fewer than
   `drifter_actions` actions, or had at least `drifter_rejected_share` of what it issued rejected.
2. Raider: at least `raider_raids` attacks on other characters or their structures.
3. Trader: at least `trader_trades` completed exchanges with other characters (trades accepted
   either way, market orders filled, delivery contracts fulfilled).
4. Casualty: at least `casualty_knockdowns` knockdowns.
5. Producer: production is at least `producer_share` of its executed actions other than movement
   (walking dominates every agent's log) and it produced at least `producer_goods` goods.
6. Explorer: cleared at least `explorer_depth` dungeon tiers (the dungeon is the exploration task),
   or an exploration component of at least `explorer_exploration` with movement at least
   `explorer_movement_share` of its actions.
7. Survivor: never knocked down.
8. Drifter otherwise: it did nothing that stands out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from wildhold.world.actions.registry import did_you_mean

DIMENSIONS = ("survival", "economy", "social", "adaptation", "competitiveness")
ARCHETYPES = ("Trader", "Producer", "Explorer", "Raider", "Survivor", "Drifter", "Casualty")


@dataclass(frozen=True)
class References:
    """What full marks in a component take. Rates are per 100 ticks alive when the rubric is
    rate-normalised, lifetime totals otherwise; breadth references are counts either way."""

    knockdowns: float  # knockdowns at which the knockdown component reaches 0
    goods: float  # goods produced (gathered, crafted, cooked, harvested, collected)
    wealth_gain_cents: float  # wealth gained since spawning, in cents
    goods_breadth: int  # distinct goods produced
    exchanges: float  # trades, filled orders and fulfilled contracts with other characters
    partners: int  # distinct other characters engaged
    community: float  # quests completed (x3), villager talks, gifts, purchases and sales
    messages: float  # messages said, whispered or posted
    reputation: int  # reputation at which the reputation component is full (its negative: empty)
    moves: float  # tiles moved (exploration before 2.2)
    tiles_seen: float  # tiles seen (exploration from 2.2)


@dataclass(frozen=True)
class ArchetypeRules:
    drifter_idle_share: float
    drifter_actions: float
    drifter_rejected_share: float
    raider_raids: float
    trader_trades: float
    casualty_knockdowns: float
    producer_share: float
    producer_goods: float
    explorer_exploration: float
    explorer_movement_share: float
    explorer_depth: int = 1


@dataclass(frozen=True)
class Rubric:
    version: str
    summary: str
    ties: Literal["stable", "shared"]
    exploration: Literal["moves", "map"]
    rate_normalised: bool
    references: References
    archetypes: ArchetypeRules
    weights: tuple[float, float, float, float, float] = (0.25, 0.25, 0.20, 0.15, 0.15)
    grades: tuple[tuple[float, str], ...] = ((85, "S"), (75, "A"), (65, "B"), (50, "C"), (35, "D"))
    idle_threshold_ticks: int = 120  # a silence this long or longer is "went dark"
    strength_at: float = 70.0  # a dimension at or above this is named a strength
    weakness_below: float = 35.0  # a dimension below this is named a weakness
    rejected_share_weakness: float = 0.25  # rejected share of issued actions named a weakness

    def grade(self, fitness: float) -> str:
        for floor, letter in self.grades:
            if fitness >= floor:
                return letter
        return "F"

    def describe(self) -> dict[str, object]:
        """The rubric as a report prints it."""
        return {
            "version": self.version,
            "summary": self.summary,
            "ties": self.ties,
            "exploration": self.exploration,
            "rate_normalised": self.rate_normalised,
            "weights": dict(zip(DIMENSIONS, self.weights)),
            "idle_threshold_ticks": self.idle_threshold_ticks,
        }


_LIFETIME = References(
    knockdowns=5, goods=300, wealth_gain_cents=20_000, goods_breadth=6, exchanges=10, partners=3,
    community=20, messages=10, reputation=10, moves=600, tiles_seen=2_000,
)
_RATES = References(
    knockdowns=0.25, goods=8, wealth_gain_cents=400, goods_breadth=8, exchanges=1.0, partners=3,
    community=1.0, messages=0.5, reputation=10, moves=20, tiles_seen=150,
)
_ARCH_LIFETIME = ArchetypeRules(
    drifter_idle_share=0.5, drifter_actions=10, drifter_rejected_share=0.5, raider_raids=3, trader_trades=3,
    casualty_knockdowns=3, producer_share=0.4, producer_goods=30, explorer_exploration=0.6, explorer_movement_share=0.5,
)
_ARCH_RATES = ArchetypeRules(
    drifter_idle_share=0.5, drifter_actions=1.0, drifter_rejected_share=0.5, raider_raids=0.3, trader_trades=0.3,
    casualty_knockdowns=0.1, producer_share=0.4, producer_goods=2.0, explorer_exploration=0.6, explorer_movement_share=0.5,
)

V1_0 = Rubric("1.0", "Lifetime totals; exploration from moves; ties broken by joining order (stable sort).",
              ties="stable", exploration="moves", rate_normalised=False, references=_LIFETIME, archetypes=_ARCH_LIFETIME)
V2_0 = Rubric("2.0", "Rate-normalised per 100 ticks alive, breadth-graded; exploration from moves; ties broken by joining order (stable sort).",
              ties="stable", exploration="moves", rate_normalised=True, references=_RATES, archetypes=_ARCH_RATES)
V2_1 = replace(V2_0, version="2.1", summary="Rate-normalised per 100 ticks alive, breadth-graded; exploration from moves; "
               "exact wealth ties share a rank (1, 1, 3).", ties="shared")
V2_2 = replace(V2_1, version="2.2", summary="Rate-normalised per 100 ticks alive, breadth-graded; exact wealth ties share a rank (1, 1, 3); "
               "exploration read from the map record (tiles and regions seen under fog of war).", exploration="map")

RUBRICS: dict[str, Rubric] = {r.version: r for r in (V1_0, V2_0, V2_1, V2_2)}
PUBLISHED_RUBRIC = "2.2"


class UnknownRubric(ValueError):
    """No rubric has that version."""


def get_rubric(version: str | None = None) -> Rubric:
    """The rubric of that version; the published one when none is named."""
    version = PUBLISHED_RUBRIC if version is None else version
    try:
        return RUBRICS[version]
    except KeyError:
        raise UnknownRubric(f"no rubric {version!r}; versions: {', '.join(RUBRICS)}.{did_you_mean(version, RUBRICS)}") from None


def placements(rubric: Rubric, wealth: dict[str, int]) -> dict[str, int]:
    """Final ranks by wealth under the rubric's tie rule. `wealth` is in joining order.

    "shared": `rank_standard`, the one ranking rule (exact ties share a rank, the next skips).
    "stable": the historical board of 1.0 and 2.0, a stable sort by wealth, so of two agents at
    equal wealth the one that joined first takes the better rank. Kept only so those versions
    reproduce what they published.
    """
    from wildhold.world.wealth import rank_standard

    if rubric.ties == "shared":
        return rank_standard(wealth)
    ordered = sorted(wealth, key=lambda agent: -wealth[agent])
    return {agent: i + 1 for i, agent in enumerate(ordered)}
