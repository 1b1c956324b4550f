"""The dungeon (seed 000 Figure 4 and Table 3): each level's attempts and clears, kills, bosses,
coins and depth."""

from __future__ import annotations

from wildhold.eval.events import Altar, Cleared, Defeated, Entered, ItemMoved, KingDefeated
from wildhold.eval.fold import Fold, MatchInfo, fold, on
from wildhold.eval.metrics import KING, AgentMetrics, LevelStats


@fold
class Dungeon(Fold):
    """Per level (a tier, or the Shadow King): instances entered, clears with the damage taken and
    consumables used in each. Kills (bosses included), bosses, T-coins from the dungeon, deepest tier
    cleared."""

    writes = ("dungeon", "kills", "bosses", "coins", "depth")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.tiers = list(match.content.dungeon.tiers)
        self.levels = [*self.tiers, KING]
        self.coin = match.content.dungeon.coin
        self.instances: dict[tuple[str, str], set[str]] = {}  # (agent, level) -> instances attempted

    def _tier(self, tier: int) -> str:
        return self.tiers[tier - 1] if 0 < tier <= len(self.tiers) else str(tier)

    @on("dungeon_entered")
    def entered(self, tick: int, ev: Entered) -> None:
        self.instances.setdefault((ev.agent, self._tier(ev.tier)), set()).add(ev.instance)

    @on("altar_activated")
    def altar(self, tick: int, ev: Altar) -> None:
        self.instances.setdefault((ev.agent, KING), set()).add(ev.instance)

    @on("enemy_defeated")
    def defeated(self, tick: int, ev: Defeated) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.kills += 1
            am.bosses += bool(ev.boss)

    @on("tier_cleared")
    def cleared(self, tick: int, ev: Cleared) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.depth = max(am.depth, ev.tier)
            self._clear(am, self._tier(ev.tier), ev.damage_taken, ev.consumables_used)

    @on("shadow_king_defeated")
    def king(self, tick: int, ev: KingDefeated) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            self._clear(am, KING, ev.damage_taken, ev.consumables_used)

    @staticmethod
    def _clear(am: AgentMetrics, level: str, damage: int, consumables: int) -> None:
        stats = am.dungeon.setdefault(level, LevelStats())
        stats.clears += 1
        stats.damage.append(damage)
        stats.consumables.append(consumables)

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        am = self.agents.get(ev.holder)
        if am is not None and ev.item == self.coin and ev.source.split(":", 1)[0] == "dungeon":
            am.coins += ev.qty

    def finish(self) -> None:
        for (agent, level), ids in self.instances.items():
            am = self.agents.get(agent)
            if am is not None:
                am.dungeon.setdefault(level, LevelStats()).attempts = len(ids)
        order = self.levels
        for am in self.agents.values():
            am.dungeon = {lv: am.dungeon[lv] for lv in sorted(am.dungeon, key=lambda lv: order.index(lv) if lv in order else len(order))}
