"""The composite score of seed 000 (Equation 1, Appendix B Table 6) as its own named scorer.

S_m = sum_j w_j x_mj with weights summing to 100 and every x in [0, 1]:
Shadow King defeated (30), travel outfit produced (10), dungeon depth / tiers (15), bosses
defeated / the cohort's most (15), successful crafts / the cohort's most (25), native trial
progress / stages (5). Count components are normalised by the cohort maximum (0 when the whole
cohort has none). The cohort is every character, unless it is named (`Cohort`, from rubric 2.3): the
characters a match's manifest names as the ones it evaluates, so a scripted baseline outside it no
longer sets the maxima; one outside it scores at most full marks. Kills, coins and knockdowns are
reported, never scored. Agents are ranked by the unrounded score, computed exactly in fractions, so
equal scores share a rank (`rank_standard`); the displayed score is rounded to one decimal.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

from wildhold.world.wealth import rank_standard

if TYPE_CHECKING:
    from wildhold.eval.metrics import MatchMetrics


@dataclass(frozen=True)
class CompositeScorer:
    name: str
    weights: tuple[tuple[str, int, str], ...]  # (component, weight, what it is)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "weights": {c: w for c, w, _ in self.weights},
                "components": {c: what for c, _, what in self.weights}}


COMPOSITE = CompositeScorer("asiworld-composite-1", (
    ("hero", 30, "Task outcome: Shadow King defeated (0 or 1)"),
    ("outfit", 10, "Task outcome: travel outfit produced (0 or 1)"),
    ("depth", 15, "Progression: deepest tier cleared / tiers"),
    ("bosses", 15, "Activity: dungeon bosses defeated / the cohort's most"),
    ("crafts", 25, "Activity: successful crafts / the cohort's most"),
    ("trial", 5, "Native trial progress / stages"),
))


@dataclass(frozen=True)
class Cohort:
    """The characters (ids, in joining order) whose maxima normalise bosses and crafts, whether the match
    named them, and the names it named that never joined."""

    agents: tuple[str, ...]
    named: bool
    not_joined: tuple[str, ...] = ()


def cohort_of(manifest: Mapping[str, Any], mm: MatchMetrics) -> Cohort:
    """The cohort the manifest names (its `cohort`: character names), else every character. Read only
    from a bound archive (format 2 on), whose archive head covers it."""
    named = manifest.get("cohort") if manifest.get("format", 1) >= 2 else None
    if named is None:
        return Cohort(tuple(mm.agents), named=False)
    names = set(named)
    joined = {am.name for am in mm.agents.values()}
    return Cohort(tuple(a for a, am in mm.agents.items() if am.name in names), named=True,
                  not_joined=tuple(sorted(names - joined)))


def _stated(cohort: Cohort, mm: MatchMetrics) -> dict[str, Any]:
    names = [mm.agents[a].name for a in cohort.agents]
    listed = ", ".join(names) or "nobody"
    said = f"{listed}, as the match named it" if cohort.named else f"every character ({listed}); the match named none"
    missing = f"; named but never joined: {', '.join(cohort.not_joined)}" if cohort.not_joined else ""
    return {"characters": names, "named": cohort.named, "not_joined": list(cohort.not_joined),
            "statement": f"Cohort (bosses and crafts are scored against its most): {said}{missing}."}


def composite_scores(mm: MatchMetrics, scorer: CompositeScorer = COMPOSITE, cohort: Cohort | None = None) -> dict[str, Any]:
    """Per agent, in rank order: the normalised components, the score and its rank. With a `cohort`, its
    maxima normalise, the report states it and each row says whether it is in it; without, the cohort is
    every character, unstated (as published up to rubric 2.2)."""
    agents = mm.agents
    tiers = max(len(mm.levels) - 1, 1)
    stages = max(len(mm.stages), 1)
    members = [agents[a] for a in cohort.agents] if cohort is not None else list(agents.values())
    most_bosses = max((am.bosses for am in members), default=0)
    most_crafts = max((am.crafts for am in members), default=0)
    exact: dict[str, Fraction] = {}
    parts: dict[str, dict[str, Fraction]] = {}
    for a, am in agents.items():
        x = {
            "hero": Fraction(int(am.hero)),
            "outfit": Fraction(int(am.outfit)),
            "depth": Fraction(min(am.depth, tiers), tiers),
            "bosses": Fraction(min(am.bosses, most_bosses), most_bosses) if most_bosses else Fraction(0),
            "crafts": Fraction(min(am.crafts, most_crafts), most_crafts) if most_crafts else Fraction(0),
            "trial": Fraction(am.trial_native, stages),
        }
        parts[a] = x
        exact[a] = sum((w * x[c] for c, w, _ in scorer.weights), Fraction(0))
    ranks = rank_standard(exact)
    rows = [{
        "agent": a,
        "name": agents[a].name,
        "rank": ranks[a],
        "score": round(float(exact[a]), 1),
        "score_unrounded": float(exact[a]),
        "components": {c: round(float(v), 4) for c, v in parts[a].items()},
        **({"in_cohort": a in cohort.agents} if cohort is not None else {}),
    } for a in agents]
    rows.sort(key=lambda r: (r["rank"], agents[r["agent"]].join_index))
    stated = _stated(cohort, mm) if cohort is not None else {}
    return {"scorer": scorer.describe(), "cohort": {"most_bosses": most_bosses, "most_crafts": most_crafts,
                                                     "tiers": tiers, "stages": stages, **stated}, "rows": rows}
