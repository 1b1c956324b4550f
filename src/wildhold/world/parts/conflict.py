"""Conflict, where a scenario allows it: raids on other characters' structures, attacks on
characters, and the loot an attacker takes from a character it knocks down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from wildhold.world.actions.registry import ActionArgs, CharacterName, Plan, character_field, other_character, reach_tiles, structure_in_reach, target
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import settings
from wildhold.world.parts.base import Part, Saved, Section, saved
from wildhold.world.parts.construction import damage_structure
from wildhold.world.parts.society import change_reputation, damage_bonus
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.world import World


@dataclass
class ConflictState(Saved):
    """Saved with the market's and society's state in the snapshot's "economy" section."""

    last_hit: dict[str, list] = saved("pairs", dict)  # victim -> [attacker, tick] of the latest attack this tick


def state(w: World) -> ConflictState:
    return CONFLICT.state(w)


# ---- events --------------------------------------------------------------------------------

class CharacterAttacked(Ev):
    agent: str
    target: str
    damage: int
    health: int


class Looted(Ev):
    """A character knocked down by an attacker lost part of each stack to that attacker."""

    agent: str
    victim: str
    items: dict[str, int]



# ---- raids ---------------------------------------------------------------------------------


def _conflict_on(w: World) -> Rejected | None:
    if not w.scenario.conflict:
        return Rejected("conflict_off", f"The {w.scenario_name} scenario does not allow attacking characters or their structures.")
    return None


def _others_in_reach(w: World, c: Character) -> bool:
    """Whether another character stands within the character's reach: an attack's target must."""
    occupants = w.occupants
    return any(who != c.id for p in reach_tiles(w, c) for who in occupants.get(p, ()))


def _safe(w: World, p: int) -> bool:
    return w.safe_terrain[w.terrain[p]]


def _attack_spend(w: World, a: dict[str, Any], _: Any) -> Plan:
    k = w.content.conflict
    return Plan(k.attack_duration, k.attack_energy)


class AttackStructure:
    """Raid another character's structure within reach: it loses conflict.structure_damage hit
    points (plus your strength damage bonus). Only where the scenario allows conflict, never inside
    the settlement's safe terrain, never your own or an unowned structure. Each raid lowers your
    reputation."""

    name, category = "attack_structure", "combat"

    class Args(ActionArgs):
        x: int = Field(description="Column of the structure.")
        y: int = Field(description="Row of the structure.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        if not w.scenario.conflict:  # `_conflict_on`'s refusal, no sentence built: asked of every drawn action
            return "conflict_off"
        return None if structure_in_reach(w, c) else "no_structure"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        x, y = a["x"], a["y"]
        bad = _conflict_on(w)
        if bad:
            return bad
        p = target(w, c, x, y)
        if isinstance(p, Rejected):
            return p
        s = w.structures.get(p)
        if s is None or s.hp <= 0:
            return Rejected("no_structure", f"There is no structure at ({x}, {y}).")
        if s.owner is None or s.owner == c.id:
            whose = "yours" if s.owner == c.id else "owned by no one"
            return Rejected("not_raidable", f"The {s.kind} at ({x}, {y}) is {whose}; only another character's structure can be raided.")
        if _safe(w, p):
            return Rejected("safe_zone", f"({x}, {y}) is in the settlement's safe ground, where no one may be attacked.")
        return p

    spend = staticmethod(_attack_spend)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: int) -> dict:
        s = w.structures[p]
        kind, owner = s.kind, s.owner
        damage = w.content.conflict.structure_damage + damage_bonus(w, c)
        destroyed = damage_structure(w, p, damage, c.id)
        change_reputation(w, c.id, w.content.economy.reputation_raid, f"raid:{owner}")
        return {"structure": kind, "owner": owner, "damage": damage, "hp": 0 if destroyed else s.hp, "destroyed": destroyed}


class Attack:
    """Attack an adjacent character: it loses conflict.character_damage health (plus your strength
    damage bonus). Only where the scenario allows conflict, and neither of you may stand on the
    settlement's safe terrain. If it is knocked down the same tick, you take loot_fraction of each
    of its stacks. Each attack lowers your reputation."""

    name, category = "attack", "combat"

    class Args(ActionArgs):
        character: CharacterName = character_field("The character to attack.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        if not w.scenario.conflict:  # `_conflict_on`'s refusal, no sentence built: asked of every drawn action
            return "conflict_off"
        return None if _others_in_reach(w, c) else "out_of_range"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Character | Rejected:
        agent = a["character"]
        bad = _conflict_on(w)
        if bad:
            return bad
        other = other_character(w, c, agent)
        if isinstance(other, Rejected):
            return other
        if w.distance(c.pos, other.pos) > w.needs.reach:
            return Rejected("out_of_range", f"{agent} is {w.distance(c.pos, other.pos)} tiles away; attacks reach {w.needs.reach}.")
        if _safe(w, c.pos) or _safe(w, other.pos):
            return Rejected("safe_zone", "No one may be attacked on or from the settlement's safe ground.")
        return other

    spend = staticmethod(_attack_spend)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, other: Character) -> dict:
        damage = w.content.conflict.character_damage + damage_bonus(w, c)
        health = max(other.health - damage, 0)
        w.set_needs(other, f"attack:{c.id}", health, other.energy, other.satiety)
        state(w).last_hit[other.id] = [c.id, w.tick]
        w.emit("character_attacked", agent=c.id, target=other.id, damage=damage, health=health)
        change_reputation(w, c.id, w.content.economy.reputation_raid, f"attack:{other.id}")
        return {"target": other.id, "damage": damage, "health": health}



# ---- the part ------------------------------------------------------------------------------


def _rules(c: Content) -> dict[str, Any]:
    return {"conflict": c.conflict.model_dump(mode="json")}


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    return ["## Conflict", "", "Only in scenarios with conflict on, and never inside the settlement.", "", *settings(doc["conflict"])]


class Conflict(Part[ConflictState]):
    name, section = "conflict", "economy"
    tables = ("conflict", "economy", "attributes")
    codes_place = 6
    codes = {
        "conflict_off": "The scenario does not allow attacking characters or their structures.",
        "not_raidable": "Only another character's structure can be raided (not one's own, not an unowned one).",
        "safe_zone": "No one may be attacked on or from the settlement's safe ground.",
    }
    events = {"character_attacked": CharacterAttacked, "looted": Looted}
    actions = (AttackStructure, Attack)
    rules = (Section(60, _rules, _rules_markdown),)

    def new_state(self, w: World) -> ConflictState:
        return ConflictState()

    def tick(self, w: World) -> None:
        hits = state(w).last_hit
        for victim in [v for v, (_, t) in hits.items() if t < w.tick]:
            del hits[victim]

    def before_knockdown(self, w: World, c: Character) -> None:
        """Knocked down by an attacker this tick: the attacker takes loot_fraction of each stack
        (rounded up, like the knockdown drop) before the ordinary drop."""
        hit = state(w).last_hit.pop(c.id, None)
        if hit is None or hit[1] != w.tick or hit[0] not in w.chars:
            return
        attacker = hit[0]
        fraction = w.content.conflict.loot_fraction
        taken: dict[str, int] = {}
        for item, qty in sorted(c.inventory.items()):
            n = min(qty, math.ceil(qty * fraction))
            if n:
                w.take(c.id, item, n, f"loot:{attacker}")
                w.give(attacker, item, n, f"loot:{attacker}")
                taken[item] = n
        if taken:
            w.emit("looted", agent=attacker, victim=c.id, items=taken)


CONFLICT = Conflict()
