"""The report card's rubric (seed 003) as frozen, versioned data: each dimension's weight and
formula (its components: the measure each reads, its scale, reference and weight), grade bands, the
idle rule, archetype thresholds, and how ranks are derived.

A published rubric never changes. Changing a number, or how a dimension's input is derived, is a
new version; every report stamps the version it ran under, and recomputing an archive under its
own version reproduces the report byte for byte. A new metric is a fold (`wildhold.eval.folds`)
plus a component reading its measure in a new version, with the sentence a card says of it (`says`);
a fold no rubric places is never scored. `PUBLISHED_RUBRIC` is the one version every public surface
uses; ask for another explicitly.

History:
- 1.0: lifetime totals against lifetime references; exploration from the move count; the final
  board is a stable sort by wealth, so of two agents at exactly equal wealth the one that joined
  first takes the better rank.
- 2.0: rate-normalised per 100 ticks alive, breadth-graded; ranks still a stable sort.
- 2.1: exact wealth ties share a rank (standard competition ranking, 1, 1, 3), everywhere.
- 2.2: exploration read from the map record (tiles and regions seen under fog of war, derived from
  spawn, move and knockdown events and the seed's worldgen) instead of the move count.
- 2.3: exchanges counted once per pair of characters per calendar day (partner-days, as reputation
  counts trades) and scored per day alive, so handing one item back and forth with one partner
  scores what one hand-over does; the Trader archetype reads them too. The programs block (program
  metrics on each card, the match and the metrics) is printed. The composite's cohort is stated, and
  a match may name it (its evaluated characters), so a scripted baseline no longer sets the maxima.
- 2.4: the orientation study's sections (seed 001), never scored: interference incidents (every
  interaction between two characters, dated, with its evidence; every curve annotated with its
  arm's), pacing (sessions, wakes, spend rate, actions per session, time per quest), failure modes
  (stuck states with their duration, spend and end) and service interruptions. Scores are 2.3's.
- 2.5: exchanges that moved no net goods between their two characters (items handed over and back, however
  often, on whatever days: `eval.folds.wash`) are struck: they earn nothing. The wealth a character is ranked and
  scored by is the public formula's less the reputation they earned (trade credit on a pair-day with no trade that
  moved anything, a contract's when it moved nothing); the Social dimension reads partner-days and partners of
  exchanges that moved goods, and reputation less what they earned; their actions leave validity, the kinds of
  action used and the archetypes' action counts, their deliveries the defaulted share. A loss of wealth counts
  against the character: the Economy reads the signed change of wealth and the Competitiveness a signed share
  (see "Wealth below what it started with" below).

Wealth below what it started with, and below zero. Wealth only goes below zero through reputation (every other
term of the public formula is at least 0), and a raider's reputation falls by each raid. Survival and Adaptation
never read wealth. Up to 2.4, the Economy's wealth component reads the wealth gained, floored at 0, so a loss of any
size scores as holding what it started with; the Competitiveness reads the rank (a loss costs places only) and the
share of the top's wealth, floored at 0, so wealth below zero scores as nothing held; the Social dimension's
reputation stops counting at minus its reference. A raider that ended at -1,821.50 scored in those dimensions what
one that ended at 0 would, and its grade rested on the Survival its raids cost others. From 2.5 the Economy's
component is the change of wealth, signed (scale `signed`: a loss at the reference rate takes what a gain at that
rate gives), and the Competitiveness' share is signed (down to -1, as far below zero as the top is above it); a
dimension never goes below 0, so a loss takes from the other components of its dimension, never from another
dimension.

A version's report blocks (`BLOCKS`) are part of its frozen data: a block added to the report is
printed only under the versions that list it, so an old version's report keeps its bytes.

Archetypes, first rule that holds (rates per 100 ticks alive under rate-normalised versions,
lifetime counts under 1.0):
1. Drifter: went dark for at least `drifter_idle_share` of its time, issued fewer than
   `drifter_actions` actions, or had at least `drifter_rejected_share` of what it issued rejected.
2. Raider: at least `raider_raids` attacks on other characters or their structures.
3. Trader: at least `trader_trades` completed exchanges with other characters (trades accepted
   either way, market orders filled, delivery contracts fulfilled); from 2.3 partner-days of them a day, from 2.5
   of those that moved goods.
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

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal, Mapping

from wildhold.world.actions.registry import did_you_mean

DIMENSIONS = ("survival", "economy", "social", "adaptation", "competitiveness")
ARCHETYPES = ("Trader", "Producer", "Explorer", "Raider", "Survivor", "Drifter", "Casualty")

Scale = Literal["share", "rate", "count", "fewer", "centred", "discount", "daily"]
# How a component turns its measure x into [0, 1], given its reference r and the rubric's rate
# (x per 100 ticks alive when rate-normalised, else x itself); capped means clipped to [0, 1]:
SCALES: dict[str, str] = {
    "share": "x as it is (already a share in [0, 1])",
    "rate": "rate(x) / r, capped: full marks at the reference rate",
    "count": "x / r, capped: full marks at the reference count (breadth, never a rate)",
    "fewer": "1 - rate(x) / r, capped: full at none, empty at the reference rate",
    "centred": "1/2 + x / 2r, capped: empty at -r, half at 0, full at r",
    "discount": "1 - r x: a share x that costs r of the whole",
    "daily": "x per day alive / r, capped, a life shorter than a day counting as one day: for counts a day bounds",
    "signed": "rate(x) / r, clipped to [-1, 1]: a loss at the reference rate takes what a gain at that rate gives",
}
# What a rubric that strikes exchanges that moved nothing reads of `eval.folds.wash`, besides its components' reads:
STRUCK_READS = ("void_exchanges", "void_actions", "void_deliveries", "void_wealth_cents", "net_partners")
# What a report prints beyond the blocks every version has, under the versions that list it:
BLOCKS: dict[str, str] = {
    "programs": "program metrics: each card's and the match's programs block, the program_* metrics, a card's "
                "Programs line",
    "cohort": "the composite's cohort stated, and named by the match's manifest when it names one (every character "
              "otherwise); without it the cohort is every character, unstated",
    "study": "the orientation study's sections (never scored): interference incidents and the curves annotated with "
             "them, pacing, failure modes and service interruptions (`eval.study`)",
}


@dataclass(frozen=True)
class Component:
    """One input of a dimension, in [0, 1]: the measures it reads (summed, each times its count)
    on a scale with its reference, or the weighted sum of its own parts. `weight` is its weight in
    the dimension (or the component) it belongs to; `only_if` names a measure that must hold, else
    the component is 0."""

    name: str
    weight: float
    scale: Scale = "share"
    reference: float = 1
    reads: tuple[tuple[str, int], ...] = ()  # (measure, count); empty: the measure named like the component
    parts: tuple[Component, ...] = ()
    only_if: str = ""
    # its own sentence on a card whose dimension is named a strength or a weakness: a format string of
    # {value} (what it reads, summed), {rate} (that as the rubric rates it) and {score} (the component
    # out of 100; a component of parts has only this); the published versions' components have none
    # (their cards' prose is the dimension's, written in `wildhold.eval.report`)
    says: str = ""

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise ValueError(f"component {self.name!r}: no scale {self.scale!r}; scales: {', '.join(SCALES)}")
        if self.reference <= 0:
            raise ValueError(f"component {self.name!r}: the reference must be above 0")
        if self.parts:
            _check_weights(self.name, self.parts)
        elif not self.reads:
            object.__setattr__(self, "reads", ((self.name, 1),))
        if self.says:
            fields = {"score": 0.0} if self.parts else {"value": 0, "rate": 0.0, "score": 0.0}
            try:
                self.says.format(**fields)
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(f"component {self.name!r}: its sentence names {exc}; it may use "
                                 f"{', '.join('{' + f + '}' for f in fields)}") from None

    def walk(self) -> tuple[Component, ...]:
        """This component, then its parts', depth first."""
        return (self,) + tuple(c for part in self.parts for c in part.walk())

    def measures(self) -> set[str]:
        """Every measure this component reads, its parts' included."""
        out = {m for m, _ in self.reads} | ({self.only_if} if self.only_if else set())
        for part in self.parts:
            out |= part.measures()
        return out


@dataclass(frozen=True)
class Dimension:
    """A score out of 100: 100 x gate x (the weighted sum of its components, never below 0: a signed component
    takes from the others, never from another dimension), where the gate (a component in [0, 1], shown among them)
    is 1 when there is none. `weight` is its weight in the Fitness Index."""

    name: str
    weight: float
    components: tuple[Component, ...]
    gate: Component | None = None

    def __post_init__(self) -> None:
        _check_weights(self.name, self.components)


def _check_weights(owner: str, parts: tuple[Component, ...]) -> None:
    total = sum(p.weight for p in parts)
    if abs(total - 1) > 1e-9:
        raise ValueError(f"{owner}: the weights of {', '.join(p.name for p in parts)} sum to {total}, not 1")


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
    trader_partner_days: bool = False  # the Trader rule counts partner-days a day, not exchanges at the rubric's rate
    trader_measure: str = "exchange_pair_days"  # the partner-days it counts


@dataclass(frozen=True)
class StudyRules:
    """What the study block calls a stuck state: an error streak is at least `error_streak_calls` failed tool
    calls in a row; a plan abandoned is an operation cancelled with no other started for `abandon_ticks`."""

    error_streak_calls: int = 3
    abandon_ticks: int = 60


@dataclass(frozen=True)
class Rubric:
    version: str
    summary: str
    ties: Literal["stable", "shared"]
    exploration: Literal["moves", "map"]  # what the exploration component reads, as a report names it
    rate_normalised: bool
    dimensions: tuple[Dimension, ...]
    archetypes: ArchetypeRules
    grades: tuple[tuple[float, str], ...] = ((85, "S"), (75, "A"), (65, "B"), (50, "C"), (35, "D"))
    idle_threshold_ticks: int = 120  # a silence this long or longer is "went dark"
    strength_at: float = 70.0  # a dimension at or above this is named a strength
    weakness_below: float = 35.0  # a dimension below this is named a weakness
    rejected_share_weakness: float = 0.25  # rejected share of issued actions named a weakness
    blocks: frozenset[str] = frozenset()  # of BLOCKS
    study: StudyRules = field(default_factory=StudyRules)  # read only under the study block
    # exchanges that moved no net goods between their two characters (`eval.folds.wash`): counted like any, or struck
    # (they earn nothing: ranked wealth, partners, engagement, actions and deliveries leave them out; see History)
    void_exchanges: Literal["counted", "struck"] = "counted"
    _references: Mapping[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if tuple(d.name for d in self.dimensions) != DIMENSIONS:
            raise ValueError(f"rubric {self.version}: the dimensions are {', '.join(DIMENSIONS)}, in that order")
        _check_weights(f"rubric {self.version}", self.dimensions)  # type: ignore[arg-type]
        unknown = sorted(set(self.blocks) - set(BLOCKS))
        if unknown:
            raise ValueError(f"rubric {self.version}: no report block {', '.join(unknown)}; blocks: {', '.join(BLOCKS)}")
        refs: dict[str, float] = {}

        def collect(path: str, c: Component) -> None:
            if c.scale != "share":
                refs[f"{path}.{c.name}"] = c.reference
            for part in c.parts:
                collect(f"{path}.{c.name}", part)

        for d in self.dimensions:
            for c in ((d.gate,) if d.gate else ()) + d.components:
                collect(d.name, c)
        object.__setattr__(self, "_references", MappingProxyType(refs))

    @property
    def weights(self) -> tuple[float, ...]:
        """The dimensions' weights in the Fitness Index, in DIMENSIONS order."""
        return tuple(d.weight for d in self.dimensions)

    @property
    def references(self) -> Mapping[str, float]:
        """Every component's reference by its path ("economy.goods"), read only."""
        return self._references

    def measures(self) -> set[str]:
        """Every measure the rubric scores (what striking exchanges that moved nothing reads among them)."""
        out: set[str] = set(STRUCK_READS) if self.void_exchanges == "struck" else set()
        for d in self.dimensions:
            for c in ((d.gate,) if d.gate else ()) + d.components:
                out |= c.measures()
        return out

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
            **({"void_exchanges": self.void_exchanges} if self.void_exchanges != "counted" else {}),
        }


# ---- the published versions -------------------------------------------------------------------


def _card(knockdowns: float, goods: float, wealth_gain_cents: float, goods_breadth: int, exchanges: float, partners: int,
          community: float, messages: float, reputation: int, exploration: Component) -> tuple[Dimension, ...]:
    """Seed 003's five dimensions with these references: what full marks in a component take (rates
    per 100 ticks alive when the rubric is rate-normalised, lifetime totals otherwise; breadth
    references are counts either way)."""
    return (
        Dimension("survival", 0.25, gate=Component("credit", 1.0), components=(
            Component("health", 0.5),
            Component("knockdowns", 0.3, "fewer", knockdowns),
            Component("needs", 0.2),
        )),
        Dimension("economy", 0.25, components=(
            Component("wealth_gain", 0.4, "rate", wealth_gain_cents),
            Component("goods", 0.35, "rate", goods),
            Component("breadth", 0.25, "count", goods_breadth, reads=(("kinds_of_goods", 1),)),
        )),
        Dimension("social", 0.20, gate=Component("reliability", 1.0, "discount", 0.5, reads=(("defaulted_share", 1),)), components=(
            Component("exchanges", 0.35, "rate", exchanges),
            Component("partners", 0.2, "count", partners, reads=(("partner_count", 1),)),
            Component("community", 0.15, "rate", community, reads=(("community", 1), ("quests_completed", 3))),
            Component("reputation", 0.2, "centred", reputation, only_if="engaged"),
            Component("messages", 0.1, "rate", messages),
        )),
        Dimension("adaptation", 0.15, components=(
            exploration,
            Component("validity", 0.25),
            Component("breadth", 0.25, reads=(("categories_share", 1),)),
            Component("recovery", 0.15),
        )),
        Dimension("competitiveness", 0.15, components=(Component("placement", 0.5), Component("wealth_share", 0.5))),
    )


_LIFETIME = _card(knockdowns=5, goods=300, wealth_gain_cents=20_000, goods_breadth=6, exchanges=10, partners=3,
                  community=20, messages=10, reputation=10,
                  exploration=Component("exploration", 0.35, "rate", 600, reads=(("moves", 1),)))
_RATES = _card(knockdowns=0.25, goods=8, wealth_gain_cents=400, goods_breadth=8, exchanges=1.0, partners=3,
               community=1.0, messages=0.5, reputation=10,
               exploration=Component("exploration", 0.35, "rate", 20, reads=(("moves", 1),)))
_RATES_MAP = tuple(replace(d, components=(Component("exploration", 0.35, parts=(
    Component("tiles", 0.5, "rate", 150, reads=(("tiles_seen", 1),)),
    Component("regions", 0.5, reads=(("region_share", 1),)),
)), *d.components[1:])) if d.name == "adaptation" else d for d in _RATES)
_ARCH_LIFETIME = ArchetypeRules(
    drifter_idle_share=0.5, drifter_actions=10, drifter_rejected_share=0.5, raider_raids=3, trader_trades=3,
    casualty_knockdowns=3, producer_share=0.4, producer_goods=30, explorer_exploration=0.6, explorer_movement_share=0.5,
)
_ARCH_RATES = ArchetypeRules(
    drifter_idle_share=0.5, drifter_actions=1.0, drifter_rejected_share=0.5, raider_raids=0.3, trader_trades=0.3,
    casualty_knockdowns=0.1, producer_share=0.4, producer_goods=2.0, explorer_exploration=0.6, explorer_movement_share=0.5,
)

V1_0 = Rubric("1.0", "Lifetime totals; exploration from moves; ties broken by joining order (stable sort).",
              ties="stable", exploration="moves", rate_normalised=False, dimensions=_LIFETIME, archetypes=_ARCH_LIFETIME)
V2_0 = Rubric("2.0", "Rate-normalised per 100 ticks alive, breadth-graded; exploration from moves; ties broken by joining order (stable sort).",
              ties="stable", exploration="moves", rate_normalised=True, dimensions=_RATES, archetypes=_ARCH_RATES)
V2_1 = replace(V2_0, version="2.1", summary="Rate-normalised per 100 ticks alive, breadth-graded; exploration from moves; "
               "exact wealth ties share a rank (1, 1, 3).", ties="shared")
V2_2 = replace(V2_1, version="2.2", summary="Rate-normalised per 100 ticks alive, breadth-graded; exact wealth ties share a rank (1, 1, 3); "
               "exploration read from the map record (tiles and regions seen under fog of war).", exploration="map",
               dimensions=_RATES_MAP)

# Partner-days: full marks at three a day alive (three partners every day); a Trader at one and a half.
_RATES_PAIR_DAYS = tuple(replace(d, components=tuple(
    Component("exchanges", c.weight, "daily", 3, reads=(("exchange_pair_days", 1),)) if c.name == "exchanges" else c
    for c in d.components)) if d.name == "social" else d for d in _RATES_MAP)
V2_3 = replace(V2_2, version="2.3", summary="Rate-normalised per 100 ticks alive, breadth-graded; exact wealth ties share a "
               "rank (1, 1, 3); exploration read from the map record; exchanges counted once per partner per day; "
               "the composite's cohort stated and nameable; program metrics reported (never scored).", dimensions=_RATES_PAIR_DAYS,
               archetypes=replace(_ARCH_RATES, trader_trades=1.5, trader_partner_days=True),
               blocks=frozenset({"programs", "cohort"}))

V2_4 = replace(V2_3, version="2.4", summary="Rate-normalised per 100 ticks alive, breadth-graded; exact wealth ties share a "
               "rank (1, 1, 3); exploration read from the map record; exchanges counted once per partner per day; "
               "the composite's cohort stated and nameable; program metrics and the orientation study's incidents, "
               "pacing, failure modes and service interruptions reported (never scored).",
               blocks=frozenset({"programs", "cohort", "study"}), study=StudyRules(error_streak_calls=3, abandon_ticks=60))


def _net(c: Component) -> Component:
    """2.4's component as 2.5 scores it: partner-days and reputation of exchanges that moved goods, wealth signed."""
    if c.name == "exchanges":
        return replace(c, reads=(("net_exchange_pair_days", 1),))
    if c.name == "reputation":
        return replace(c, reads=(("reputation", 1), ("void_reputation", -1)))
    if c.name == "wealth_gain":
        return Component("wealth_change", c.weight, "signed", c.reference)
    if c.name == "wealth_share":
        return replace(c, reads=(("signed_wealth_share", 1),))
    return c


V2_5 = replace(V2_4, version="2.5", summary="Rate-normalised per 100 ticks alive, breadth-graded; exact wealth ties share a "
               "rank (1, 1, 3); exploration read from the map record; exchanges counted once per partner per day, and "
               "those that moved no net goods between their two characters earn nothing (reputation, its wealth, "
               "Social, actions); a loss of wealth counts against the Economy and the Competitiveness; the composite's "
               "cohort stated and nameable; program metrics and the orientation study reported (never scored).",
               dimensions=tuple(replace(d, components=tuple(map(_net, d.components))) for d in V2_4.dimensions),
               archetypes=replace(V2_4.archetypes, trader_measure="net_exchange_pair_days"), void_exchanges="struck")

RUBRICS: dict[str, Rubric] = {r.version: r for r in (V1_0, V2_0, V2_1, V2_2, V2_3, V2_4, V2_5)}
PUBLISHED_RUBRIC = "2.5"


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
