"""The season's table (seed 000, Table 3) per character, computed from a match's events alone.

Columns: Outfit (the production task: a completed tailoring of the outfit recipe), Depth (the
deepest dungeon tier whose boss it defeated, fresh or not), Hero (the Shadow King defeated), Kills
(enemies defeated, bosses included), Bosses (bosses defeated: tier bosses and the Shadow King),
Crafts (completed craft and cook operations), Coins (T-coins received from the dungeon), Trial
(stages passed under the native cumulative rule) and Downs (knockdowns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from wildhold.content import Content, default_content
from wildhold.eval.trial import assess

COLUMNS = ("Outfit", "Depth", "Hero", "Kills", "Bosses", "Crafts", "Coins", "Trial", "Downs")


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


def season_rows(events: Iterable[dict[str, Any]], content: Content | None = None, scenario: str = "season") -> dict[str, SeasonRow]:
    """One row per character, in joining order."""
    content = content or default_content()
    coin = content.dungeon.coin
    events = list(events)
    rows: dict[str, SeasonRow] = {}
    for e in events:
        kind, d = e["kind"], e["data"]
        if kind == "agent_spawned":
            rows[d["agent"]] = SeasonRow(d["agent"], d["name"])
            continue
        row = rows.get(d.get("agent") or d.get("holder"))
        if row is None:
            continue
        if kind == "enemy_defeated":
            row.kills += 1
            row.bosses += bool(d["boss"])
        elif kind == "tier_cleared":
            row.depth = max(row.depth, d["tier"])
        elif kind == "operation_completed" and d["action"] in ("craft", "cook"):
            row.crafts += 1
        elif kind == "item_gained" and d["item"] == coin and d["source"].startswith("dungeon:"):
            row.coins += d["qty"]
        elif kind == "knockdown":
            row.downs += 1
    for agent, result in assess(events, content, scenario).items():
        row = rows[agent]
        row.trial = result["native"]
        row.outfit = "outfit" in result["tasks"]
        row.hero = "shadow_king" in result["tasks"]
    return rows
