"""The composite score of seed 000 (Equation 1, Appendix B Table 6) as its own named scorer.

S_m = sum_j w_j x_mj with weights summing to 100 and every x in [0, 1]:
Shadow King defeated (30), travel outfit produced (10), dungeon depth / tiers (15), bosses
defeated / the cohort's most (15), successful crafts / the cohort's most (25), native trial
progress / stages (5). Count components are normalised by the cohort maximum (0 when the whole
cohort has none). Kills, coins and knockdowns are reported, never scored. Agents are ranked by
the unrounded score, computed exactly in fractions, so equal scores share a rank
(`rank_standard`); the displayed score is rounded to one decimal.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

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


def composite_scores(mm: MatchMetrics, scorer: CompositeScorer = COMPOSITE) -> dict[str, Any]:
    """Per agent, in rank order: the normalised components, the score and its rank."""
    agents = mm.agents
    tiers = max(len(mm.levels) - 1, 1)
    stages = max(len(mm.stages), 1)
    most_bosses = max((am.bosses for am in agents.values()), default=0)
    most_crafts = max((am.crafts for am in agents.values()), default=0)
    exact: dict[str, Fraction] = {}
    parts: dict[str, dict[str, Fraction]] = {}
    for a, am in agents.items():
        x = {
            "hero": Fraction(int(am.hero)),
            "outfit": Fraction(int(am.outfit)),
            "depth": Fraction(min(am.depth, tiers), tiers),
            "bosses": Fraction(am.bosses, most_bosses) if most_bosses else Fraction(0),
            "crafts": Fraction(am.crafts, most_crafts) if most_crafts else Fraction(0),
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
    } for a in agents]
    rows.sort(key=lambda r: (r["rank"], agents[r["agent"]].join_index))
    return {"scorer": scorer.describe(), "cohort": {"most_bosses": most_bosses, "most_crafts": most_crafts,
                                                     "tiers": tiers, "stages": stages}, "rows": rows}
