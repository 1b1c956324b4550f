"""The season's table (seed 000, Table 3) per character: each column a metric its fold computes
(`wildhold.eval.folds`), read from a match's events alone.

Columns: Outfit (the production task: a completed tailoring of the outfit recipe), Depth (the
deepest dungeon tier whose boss it defeated, fresh or not), Hero (the Shadow King defeated), Kills
(enemies defeated, bosses included), Bosses (bosses defeated: tier bosses and the Shadow King),
Crafts (completed craft and cook operations), Coins (T-coins received from the dungeon), Trial
(stages passed under the native cumulative rule) and Downs (knockdowns).
"""

from __future__ import annotations

from dataclasses import dataclass

from wildhold.content import Content
from wildhold.eval.fold import writers
from wildhold.eval.metrics import MatchMetrics, MatchRecord, compute_metrics

COLUMNS = ("Outfit", "Depth", "Hero", "Kills", "Bosses", "Crafts", "Coins", "Trial", "Downs")
# each column's field of a row, and the metric it shows
METRICS = {"outfit": "outfit", "depth": "depth", "hero": "hero", "kills": "kills", "bosses": "bosses", "crafts": "crafts",
           "coins": "coins", "trial": "trial_native", "downs": "knockdowns"}


@dataclass
class SeasonRow:
    agent: str
    name: str
    outfit: bool = False
    depth: int = 0
    hero: bool = False
    kills: int = 0
    bosses: int = 0
    crafts: int = 0
    coins: int = 0
    trial: int = 0
    downs: int = 0

    def cells(self, stages: int) -> list[str]:
        """The row as Table 3 prints it."""
        yn = {True: "Y", False: "N"}
        return [yn[self.outfit], str(self.depth), yn[self.hero], str(self.kills), str(self.bosses),
                str(self.crafts), str(self.coins), f"{self.trial}/{stages}", str(self.downs)]


def rows_of(metrics: MatchMetrics) -> dict[str, SeasonRow]:
    """One row per character, in joining order, from metrics that hold the columns' (`METRICS`)."""
    return {a: SeasonRow(a, am.name, **{f: am.value(m) for f, m in METRICS.items()}) for a, am in metrics.agents.items()}


def season_rows(record: MatchRecord, content: Content | None = None) -> dict[str, SeasonRow]:
    """One row per character, in joining order; only the folds that write the columns run."""
    return rows_of(compute_metrics(record, content, writers(*METRICS.values())))
