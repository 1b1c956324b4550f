"""Per-agent summary of a match, computed from its events alone."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from wildhold.content import Content


@dataclass
class AgentSummary:
    agent: str
    name: str
    actions: int = 0
    rejected: int = 0
    crafts: int = 0
    gathered: int = 0
    knockdowns: int = 0
    tiles_moved: int = 0
    structures: int = 0
    trades: int = 0
    raids: int = 0
    quests: int = 0
    defaults: int = 0
    health: int = 0
    inventory: Counter = field(default_factory=Counter)

    def carried_value_cents(self, content: Content) -> int:
        return sum(content.items[i].value_cents * q for i, q in self.inventory.items())


def summarize(events: Iterable[dict[str, Any]], max_health: int) -> dict[str, AgentSummary]:
    """Fold a match's events into one summary per agent, in the order agents joined."""
    out: dict[str, AgentSummary] = {}
    owners: dict[str, int] = defaultdict(int)
    for e in events:
        kind, d = e["kind"], e["data"]
        if kind == "agent_spawned":
            out[d["agent"]] = AgentSummary(d["agent"], d["name"], health=max_health)
            continue
        if kind == "contract_defaulted" and d["defaulter"] in out:
            out[d["defaulter"]].defaults += 1
            continue
        agent = d.get("agent") or d.get("holder")
        s = out.get(agent)
        if s is None:
            continue
        if kind == "operation_started":
            s.actions += 1
        elif kind == "action_rejected":
            s.rejected += 1
        elif kind == "operation_completed" and d["action"] in ("craft", "cook"):
            s.crafts += 1
        elif kind == "item_gained":
            s.inventory[d["item"]] += d["qty"]
            if d["source"].startswith("gather:"):
                s.gathered += d["qty"]
        elif kind == "item_lost":
            s.inventory[d["item"]] -= d["qty"]
        elif kind == "knockdown":
            s.knockdowns += 1
        elif kind == "moved":
            s.tiles_moved += 1
        elif kind == "needs":
            s.health = d["health"]
        elif kind == "operation_completed" and d["action"] in ("place", "build"):
            owners[agent] += 1
        elif kind == "trade_completed":
            s.trades += 1
            if d["to"] in out:
                out[d["to"]].trades += 1
        elif kind == "character_attacked":
            s.raids += 1
        elif kind == "structure_damaged" and d["by"] in out:
            out[d["by"]].raids += 1
        elif kind == "quest_completed":
            s.quests += 1
    for agent, s in out.items():
        s.structures = owners[agent]
        s.inventory = +s.inventory
    return out
