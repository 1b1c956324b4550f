"""The dungeon: per-character instances of three tiers of rooms below the entrance tile, telegraphed
tick-by-tick combat, knockdowns that retain an instance, and the Shadow King behind the altar.

Timing. Enemies act in this part's tick, one pattern move per tick, only while their instance's
character is in their room (from the tick after it enters). An action the character submits at
tick T that takes one tick resolves during tick T+1 against the enemies' moves of T+1: a strike
lands before they move and deals vulnerable_damage_pct of its damage if the target's
move of T+1 is vulnerable (a charging or recovering move); a guard or dodge covers every hit that
lands during the ticks it occupies. A damaging move is always announced the tick before it lands
(`enemy_intent`, and `intent` in the observation), so an observer can dodge every one of them.

Difficulty (intended; content holds the numbers). Damage a careless fighter takes (strikes every
tick, never guards or dodges, drinks a 35-health potion below 45 health), measured over seeds:
tier 1 yields to any weapon without armour (wooden club: 30-45 damage, no potion). Without
armour tiers 2 and 3 are very hard: with the iron sword, tier 2 costs 120-190 health (2-4 potions)
and tier 3 250-330 (6-8); with a club or spear tier 2 alone costs 150-400 (3-11 potions), and the
paper saw unarmoured agents stall in tier 1 or 2. Iron armour (its leather comes from tier 1
hides) halves that: with the iron sword it clears tier 2 for 50-80 (0-1 potion), tier 3 for
145-185 (3-4) and tier 3 with the Shadow King for 290-345 (6-9). A careful fighter (dodge each
announced strike, strike otherwise, on charging and recovering turns first) takes no damage in
any tier, whatever its armour, at the price of energy (dodges cost more than strikes).

Knockdowns. A character knocked down inside is carried out; its instance is kept with every enemy
as it was (hp, room, pattern position) and marked not fresh; `enter_dungeon` on that tier resumes
it. An instance is fresh while no knocked-down character has been in it; leaving alive discards it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Container, Iterable

from pydantic import Field

from wildhold.content import ContentError
from wildhold.content.models import EnemyMoveSpec
from wildhold.world.actions.needs import per_content
from wildhold.world.actions.registry import ActionArgs, require_item
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import settings, table
from wildhold.world.parts.base import Part, Saved, Section, saved
from wildhold.world.readonly import freeze
from wildhold.world.parts.society import damage_bonus

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.state import Character, Operation
    from wildhold.world.world import World

TIMED_ACTIONS = ("strike", "guard", "dodge")  # each must occupy at least one tick to meet an enemy move


# ---- state ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Enemy:
    """An enemy of an instance; `pos` is the index of the pattern move it made last."""

    id: str
    kind: str
    hp: int
    pos: int
    boss: bool = False


@dataclass(slots=True)
class Instance:
    """One character's run of one tier: its rooms (the last holds the boss) and its totals."""

    id: str
    agent: str
    tier: int
    rooms: list[list[Enemy]]
    room: int = 0
    fresh: bool = True
    cleared: bool = False
    altar: bool = False
    king_defeated: bool = False
    damage_taken: int = 0
    consumables_used: int = 0
    entered_at: int = 0
    guard_at: int | None = None
    dodge_at: int | None = None
    enemies_made: int = 0


@dataclass(slots=True)
class DungeonState(Saved):
    next_instance: int = saved("value", default=0)
    instances: dict[str, Instance] = field(default_factory=dict)  # saved by `dump` below, each as `_dump_instance` writes it
    inside: dict[str, str] = saved("pairs", dict)  # agent -> the instance it is in now
    retained: dict[str, dict[int, str]] = saved("tables", dict)  # agent -> tier -> instance kept after a knockdown
    cleared: dict[str, list[int]] = saved("pairs", dict)  # agent -> tiers whose boss it has defeated, ever
    kings: dict[str, int] = saved("pairs", dict)  # agent -> Shadow King defeats
    # agent -> tier -> the enemy a set-up put first in each ordinary room of the next instance (`stage_enemy`);
    # saved only while one waits, so snapshots of worlds without one keep their bytes
    staged: dict[str, dict[int, str]] = field(default_factory=dict)

    def dump(self) -> dict[str, Any]:
        out = {**Saved.dump(self), "instances": [_dump_instance(i) for _, i in sorted(self.instances.items())]}
        if self.staged:
            out["staged"] = [[a, [[tier, e] for tier, e in sorted(t.items())]] for a, t in sorted(self.staged.items())]
        return out

    def load(self, data: dict[str, Any]) -> None:
        Saved.load(self, data)
        self.instances = {d["id"]: _load_instance(dict(d)) for d in data["instances"]}
        self.staged = {a: {int(t): e for t, e in tiers} for a, tiers in data.get("staged", [])}


def state(w: World) -> DungeonState:
    return DUNGEON.state(w)


# ---- events --------------------------------------------------------------------------------


class DungeonEntered(Ev):
    agent: str
    instance: str
    tier: int
    fresh: bool
    resumed: bool


class RoomEntered(Ev):
    agent: str
    instance: str
    tier: int
    room: int
    enemies: list[str]


class EnemyIntent(Ev):
    agent: str
    instance: str
    enemy: str
    move: str
    text: str
    lands_at: int


class CharacterHit(Ev):
    agent: str
    instance: str
    enemy: str
    move: str
    raw: int
    damage: int
    guarded: bool
    dodged: bool
    health: int


class EnemyHit(Ev):
    agent: str
    instance: str
    enemy: str
    damage: int
    hp: int
    vulnerable: bool


class EnemyDefeated(Ev):
    agent: str
    instance: str
    tier: int
    enemy: str
    kind: str
    boss: bool


class TierCleared(Ev):
    agent: str
    instance: str
    tier: int
    fresh: bool
    damage_taken: int
    consumables_used: int


class ConsumableUsed(Ev):
    agent: str
    instance: str
    item: str


class CarriedOut(Ev):
    agent: str
    instance: str
    tier: int


class DungeonLeft(Ev):
    agent: str
    instance: str
    tier: int
    alive: bool
    cleared: bool
    fresh: bool


class AltarActivated(Ev):
    agent: str
    instance: str


class ShadowKingDefeated(Ev):
    agent: str
    instance: str
    fresh: bool
    damage_taken: int
    consumables_used: int


# ---- rules ---------------------------------------------------------------------------------


def tier_names(w: World) -> list[str]:
    """Tier names in level order: index 0 is tier 1."""
    return list(w.content.dungeon.tiers)


def altar_tier(w: World) -> int:
    return w.content.dungeon.tiers[w.content.dungeon.shadow_king.tier].level


def unlocked_tiers(w: World, agent: str) -> list[int]:
    """Tier 1, and every tier whose previous tier's boss the character has defeated."""
    n = len(w.content.dungeon.tiers)
    cleared = state(w).cleared.get(agent, [])
    return sorted({1, *(t + 1 for t in cleared if t < n)})


def weapon_damage(w: World, c: Character) -> int:
    """Strike damage before vulnerability: the weapon in hand (or bare hands) plus trained strength."""
    hand = c.equipment.get("hand")
    tool = w.content.items[hand].tool if hand else None
    base = tool.damage if tool is not None and tool.damage else w.content.dungeon.unarmed_damage
    return base + damage_bonus(w, c)


def armour_defense(w: World, c: Character) -> int:
    """Damage subtracted from every enemy hit: the defense of everything equipped."""
    total = 0
    for item in c.equipment.values():
        tool = w.content.items[item].tool
        total += tool.defense if tool is not None else 0
    return total


def pattern(w: World, e: Enemy) -> list[EnemyMoveSpec]:
    return w.content.enemies[e.kind].pattern


def next_move(w: World, e: Enemy) -> EnemyMoveSpec:
    """The move the enemy makes on its next acting tick (the one a strike submitted now meets)."""
    moves = pattern(w, e)
    return moves[(e.pos + 1) % len(moves)]


def living(room: list[Enemy]) -> list[Enemy]:
    return [e for e in room if e.hp > 0]


def inside_instance(w: World, agent: str) -> Instance | None:
    iid = state(w).inside.get(agent)
    return state(w).instances[iid] if iid is not None else None


def _covering(w: World, c: Character, inst: Instance, action: str) -> bool:
    """Whether a guard (or dodge) covers the current tick: it ended on it, or is still running."""
    if getattr(inst, f"{action}_at") == w.tick:
        return True
    op = w.ops.get(c.op) if c.op else None
    return op is not None and op.action == action


def _ids(room: list[Enemy]) -> str:
    return ", ".join(e.id for e in living(room)) or "none"


def _tier_of(w: World, tier: int | str) -> int | Rejected:
    names = tier_names(w)
    if isinstance(tier, str) and tier.isdigit():
        tier = int(tier)
    if isinstance(tier, int) and 1 <= tier <= len(names):
        return tier
    if isinstance(tier, str) and tier in names:
        return names.index(tier) + 1
    listed = ", ".join(f"{i + 1} ({n})" for i, n in enumerate(names))
    return Rejected("unknown_tier", f"There is no dungeon tier {tier!r}; tiers: {listed}.")


# ---- instances -----------------------------------------------------------------------------


def _new_enemy(w: World, inst: Instance, kind: str, boss: bool) -> Enemy:
    inst.enemies_made += 1
    spec = w.content.enemies[kind]
    start = w.rng("dungeon").randrange(len(spec.pattern))
    return Enemy(f"e{inst.enemies_made}", kind, spec.hp, start, boss)


def _new_instance(w: World, agent: str, tier: int) -> Instance:
    """Draw the rooms of a fresh instance: ordinary rooms from the tier's weights, then the boss alone."""
    s = state(w)
    s.next_instance += 1
    spec = w.content.dungeon.tiers[tier_names(w)[tier - 1]]
    inst = Instance(f"d{s.next_instance}", agent, tier, [])
    rng = w.rng("dungeon")
    kinds, weights = list(spec.enemies), list(spec.enemies.values())
    staged = s.staged.get(agent, {}).pop(tier, None)
    if agent in s.staged and not s.staged[agent]:
        del s.staged[agent]
    for room in range(spec.rooms):
        count = rng.randint(*spec.enemies_per_room)
        drawn = rng.choices(kinds, weights=weights, k=count)
        if staged is not None:
            drawn[0] = staged
        inst.rooms.append([_new_enemy(w, inst, kind, False) for kind in drawn])
    inst.rooms.append([_new_enemy(w, inst, spec.boss, True)])
    s.instances[inst.id] = inst
    return inst


def _enter_room(w: World, c: Character, inst: Instance) -> None:
    """The character stands in the instance's current room; its enemies act from the next tick."""
    inst.entered_at = w.tick
    room = inst.rooms[inst.room]
    w.emit("room_entered", agent=c.id, instance=inst.id, tier=inst.tier, room=inst.room + 1,
           enemies=[e.kind for e in living(room)])
    for e in living(room):
        _announce(w, c, inst, e)


def _announce(w: World, c: Character, inst: Instance, e: Enemy) -> None:
    """Telegraph the enemy's next move if it will deal damage: it lands on the next tick."""
    moves = pattern(w, e)
    nxt = moves[(e.pos + 1) % len(moves)]
    if nxt.damage:
        w.emit("enemy_intent", agent=c.id, instance=inst.id, enemy=e.id, move=nxt.move, text=moves[e.pos].text, lands_at=w.tick + 1)


def _exit(w: World, c: Character, inst: Instance, alive: bool) -> None:
    """The character is out: a living one discards its instance, a knocked-down one leaves it retained."""
    s = state(w)
    del s.inside[c.id]
    if alive:
        del s.instances[inst.id]
    else:
        inst.fresh = False
        s.retained.setdefault(c.id, {})[inst.tier] = inst.id
        w.emit("carried_out", agent=c.id, instance=inst.id, tier=inst.tier)
    w.emit("dungeon_left", agent=c.id, instance=inst.id, tier=inst.tier, alive=alive, cleared=inst.cleared, fresh=inst.fresh)


def _enemy_acts(w: World, c: Character, inst: Instance, e: Enemy) -> None:
    moves = pattern(w, e)
    e.pos = (e.pos + 1) % len(moves)
    move = moves[e.pos]
    if move.damage:
        _land(w, c, inst, e, move)
    if c.health > 0:
        _announce(w, c, inst, e)


def _land(w: World, c: Character, inst: Instance, e: Enemy, move: EnemyMoveSpec) -> None:
    """A damaging move lands: a dodge avoids it, armour subtracts its defense, a guard removes its share."""
    dodged = _covering(w, c, inst, "dodge")
    guarded = _covering(w, c, inst, "guard")
    damage = 0
    if not dodged:
        damage = max(0, move.damage - armour_defense(w, c))
        if guarded:
            damage -= damage * w.content.dungeon.guard_reduction_pct // 100
    health = max(0, c.health - damage)
    inst.damage_taken += damage
    if damage:
        w.set_needs(c, f"dungeon:{e.kind}", health, c.energy, c.satiety)
    w.emit("character_hit", agent=c.id, instance=inst.id, enemy=e.id, move=move.move, raw=move.damage,
           damage=damage, guarded=guarded, dodged=dodged, health=c.health)


def _strike(w: World, c: Character, inst: Instance, e: Enemy) -> dict[str, Any]:
    vulnerable = next_move(w, e).vulnerable
    damage = weapon_damage(w, c)
    if vulnerable:
        damage = damage * w.content.dungeon.vulnerable_damage_pct // 100
    e.hp = max(0, e.hp - damage)
    w.emit("enemy_hit", agent=c.id, instance=inst.id, enemy=e.id, damage=damage, hp=e.hp, vulnerable=vulnerable)
    if e.hp == 0:
        w.emit("enemy_defeated", agent=c.id, instance=inst.id, tier=inst.tier, enemy=e.id, kind=e.kind, boss=e.boss)
        if e.boss and inst.room == len(inst.rooms) - 1 and inst.altar:
            _king_falls(w, c, inst)
        elif e.boss:
            _tier_falls(w, c, inst)
    return {"enemy": e.id, "damage": damage, "hp": e.hp, "vulnerable": vulnerable, "defeated": e.hp == 0}


def _tier_falls(w: World, c: Character, inst: Instance) -> None:
    """The tier boss is down: T-coins and drops (drawn now), the tier opens the next, tier_cleared."""
    d = w.content.dungeon
    spec = d.tiers[tier_names(w)[inst.tier - 1]]
    rng = w.rng("dungeon")
    source = f"dungeon:{inst.tier}"
    w.give(c.id, d.coin, rng.randint(*spec.coins), source)
    for item, drop in spec.drops.items():
        if rng.random() < drop.chance:
            w.give(c.id, item, rng.randint(*drop.qty), source)
    inst.cleared = True
    cleared = state(w).cleared.setdefault(c.id, [])
    if inst.tier not in cleared:
        cleared.append(inst.tier)
        cleared.sort()
    w.emit("tier_cleared", agent=c.id, instance=inst.id, tier=inst.tier, fresh=inst.fresh,
           damage_taken=inst.damage_taken, consumables_used=inst.consumables_used)


def _king_falls(w: World, c: Character, inst: Instance) -> None:
    for item, qty in w.content.dungeon.shadow_king.reward.items():
        w.give(c.id, item, qty, "dungeon:shadow_king")
    inst.king_defeated = True
    s = state(w)
    s.kings[c.id] = s.kings.get(c.id, 0) + 1
    w.emit("shadow_king_defeated", agent=c.id, instance=inst.id, fresh=inst.fresh,
           damage_taken=inst.damage_taken, consumables_used=inst.consumables_used)


# ---- views (pure) --------------------------------------------------------------------------


def dungeon_status(w: World, agent: str) -> dict[str, Any]:
    """A character's standing in the dungeon: tiers open and cleared, where it is, what is retained."""
    s = state(w)
    inst = inside_instance(w, agent)
    retained = s.retained.get(agent, {})
    return {
        "in_dungeon": inst is not None,
        "instance": inst.id if inst else None,
        "tier": inst.tier if inst else None,
        "unlocked": unlocked_tiers(w, agent),
        "cleared": list(s.cleared.get(agent, [])),
        "shadow_king_defeats": s.kings.get(agent, 0),
        "retained": [
            {"instance": iid, "tier": tier, "room": s.instances[iid].room + 1, "rooms": len(s.instances[iid].rooms),
             "cleared": s.instances[iid].cleared}
            for tier, iid in sorted(retained.items())
        ],
    }


def _enemy_view(w: World, e: Enemy) -> dict[str, Any]:
    moves = pattern(w, e)
    last, nxt = moves[e.pos], next_move(w, e)
    at = w.tick + 1
    return {
        "id": e.id,
        "kind": e.kind,
        "boss": e.boss,
        "hp": e.hp,
        "max_hp": w.content.enemies[e.kind].hp,
        "last_move": {"move": last.move, "text": last.text},
        "next": {"move": nxt.move, "at": at, "damage": nxt.damage, "vulnerable": nxt.vulnerable},
        "intent": {"move": nxt.move, "text": last.text, "damage": nxt.damage, "lands_at": at} if nxt.damage else None,
    }


def room_view(w: World, agent: str) -> dict[str, Any] | None:
    """What the character sees of its room inside the dungeon, or None outside."""
    inst = inside_instance(w, agent)
    if inst is None:
        return None
    c = w.chars[agent]
    last = len(inst.rooms) - 1
    boss = next(e for e in inst.rooms[last if not inst.altar else last - 1] if e.boss)
    op = w.ops.get(c.op) if c.op else None
    defending = None
    if op is not None and op.action in ("guard", "dodge"):
        defending = {"action": op.action, "from": op.started + 1, "to": op.ends}
    altar = None
    if inst.tier == altar_tier(w) and inst.cleared:
        altar = "activated" if inst.altar else "ready"
    view: dict[str, Any] = {
        "instance": inst.id,
        "tier": inst.tier,
        "tier_name": tier_names(w)[inst.tier - 1],
        "room": inst.room + 1,
        "rooms": len(inst.rooms),
        "fresh": inst.fresh,
        "cleared": inst.cleared,
        "room_clear": not living(inst.rooms[inst.room]),
        "enemies": [_enemy_view(w, e) for e in living(inst.rooms[inst.room])],
        "boss": {"id": boss.id, "kind": boss.kind, "hp": boss.hp, "max_hp": w.content.enemies[boss.kind].hp, "defeated": boss.hp == 0},
        "altar": altar,
        "shadow_king": None,
        "damage_taken": inst.damage_taken,
        "consumables_used": inst.consumables_used,
        "self": {"weapon_damage": weapon_damage(w, c), "defense": armour_defense(w, c), "defending": defending},
    }
    if inst.altar:
        king = inst.rooms[last][0]
        view["shadow_king"] = {"id": king.id, "hp": king.hp, "max_hp": w.content.enemies[king.kind].hp, "defeated": king.hp == 0}
    return view


# ---- actions -------------------------------------------------------------------------------


def _inside(w: World, c: Character) -> Instance | Rejected:
    inst = inside_instance(w, c.id)
    if inst is None:
        return Rejected("not_in_dungeon", "You are not inside the dungeon; enter_dungeon at its entrance first.")
    if c.health <= 0:
        return Rejected("knocked_down", "You are down and about to be carried out of the dungeon.")
    return inst


def _inside_ready(w: World, c: Character) -> str | None:
    """`_inside`'s refusal, which comes before anything an action inside the dungeon reads of its arguments: its code
    only (no sentence built), asked of every drawn action."""
    if w.states[DUNGEON.name].inside.get(c.id) is None:  # `state(w)` without its two calls
        return "not_in_dungeon"
    return "knocked_down" if c.health <= 0 else None


def _at_entrance(w: World, c: Character) -> Rejected | None:
    """Why no tier can be entered now, whichever is asked."""
    if c.id in state(w).inside:
        return Rejected("in_dungeon", "You are already inside the dungeon; leave_dungeon first.")
    if w.distance(c.pos, w.dungeon) > w.needs.reach:
        return Rejected("not_at_dungeon", f"The dungeon entrance is not within {w.needs.reach} tile of you; walk to it first.")
    return None


class TierArgs(ActionArgs):
    tier: int | str = Field(description="Tier number (1 outer_court, 2 inner_temple, 3 royal_tomb) or its name.")


class EnterDungeon:
    """Enter a dungeon tier from within reach of its entrance. Tier 1 is always open; tier n+1 opens once
    you have defeated tier n's boss. If you were knocked down in an instance of that tier, you resume it
    (its enemies as you left them; it is no longer fresh); otherwise a fresh instance is drawn. While
    inside you stand on the entrance tile, cannot walk, and night creatures cannot reach you."""

    name, category = "enter_dungeon", "movement"
    Args = TierArgs

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        if c.id in state(w).inside:  # `_at_entrance`'s refusal, no sentence built: asked of every drawn action
            return "in_dungeon"
        return "not_at_dungeon" if w.distance(c.pos, w.dungeon) > w.needs.reach else None

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        level = _tier_of(w, a["tier"])
        if isinstance(level, Rejected):
            return level
        bad = _at_entrance(w, c)
        if bad:
            return bad
        if level not in unlocked_tiers(w, c.id):
            return Rejected("tier_locked", f"Tier {level} opens once you have defeated the boss of tier {level - 1}.")
        return level

    @staticmethod
    def apply(w: World, c: Character, op: Operation, level: int) -> dict:
        s = state(w)
        kept = s.retained.get(c.id, {})
        iid = kept.pop(level, None)
        if not kept:
            s.retained.pop(c.id, None)
        inst = s.instances[iid] if iid is not None else _new_instance(w, c.id, level)
        if c.pos != w.dungeon:
            w.relocate(c, w.dungeon)
        s.inside[c.id] = inst.id
        w.emit("dungeon_entered", agent=c.id, instance=inst.id, tier=level, fresh=inst.fresh, resumed=iid is not None)
        _enter_room(w, c, inst)
        return {"instance": inst.id, "tier": level, "room": inst.room + 1, "rooms": len(inst.rooms), "resumed": iid is not None}


class LeaveDungeon:
    """Walk out of the dungeon, at any time. It takes a few ticks during which the enemies of your room
    keep acting. Leaving alive ends the instance: your next entry is a fresh one."""

    name, category = "leave_dungeon", "movement"
    ready = staticmethod(_inside_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Instance | Rejected:
        return _inside(w, c)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, inst: Instance) -> dict:
        _exit(w, c, inst, alive=True)
        return {"instance": inst.id, "tier": inst.tier, "cleared": inst.cleared}


class Advance:
    """Go on to the next room once every enemy in yours is defeated."""

    name, category = "advance", "movement"
    ready = staticmethod(_inside_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Instance | Rejected:
        inst = _inside(w, c)
        if isinstance(inst, Rejected):
            return inst
        room = inst.rooms[inst.room]
        if living(room):
            return Rejected("room_not_clear", f"Enemies still stand in this room: {_ids(room)}.")
        if inst.room == len(inst.rooms) - 1:
            hint = " activate_altar here to go on." if inst.tier == altar_tier(w) and inst.cleared and not inst.altar else " leave_dungeon to go out."
            return Rejected("no_next_room", f"This is the last room of the instance;{hint}")
        return inst

    @staticmethod
    def apply(w: World, c: Character, op: Operation, inst: Instance) -> dict:
        inst.room += 1
        _enter_room(w, c, inst)
        return {"room": inst.room + 1, "rooms": len(inst.rooms), "enemies": [e.id for e in living(inst.rooms[inst.room])]}


class EnemyArgs(ActionArgs):
    enemy: str = Field(description="Id of a living enemy in your room, as the observation lists it (e.g. \"e3\").")


class Strike:
    """Strike an enemy in your room with the weapon in hand (bare hands without one) plus your strength.
    It lands during the tick the action ends, before the enemies move; if the target's move of that tick
    is vulnerable (its `next` move in the observation: charging or recovering), the blow deals
    vulnerable_damage_pct of its damage."""

    name, category = "strike", "combat"
    ready = staticmethod(_inside_ready)
    Args = EnemyArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[Instance, Enemy] | Rejected:
        enemy = a["enemy"]
        inst = _inside(w, c)
        if isinstance(inst, Rejected):
            return inst
        room = inst.rooms[inst.room]
        e = next((e for e in living(room) if e.id == enemy), None)
        if e is None:
            return Rejected("no_enemy", f"No living enemy {enemy!r} in this room; living: {_ids(room)}.")
        return inst, e

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[Instance, Enemy]) -> dict:
        return _strike(w, c, *got)


def _defend(name: str):
    def plan(w: World, c: Character, a: dict[str, Any]) -> Instance | Rejected:
        return _inside(w, c)

    def apply(w: World, c: Character, op: Operation, inst: Instance) -> dict:
        setattr(inst, f"{name}_at", w.tick)
        return {"covers": [op.started + 1, op.ends]}

    return staticmethod(plan), staticmethod(apply)


class Guard:
    """Raise your guard: every enemy hit landing during the ticks this action occupies loses
    guard_reduction_pct of its damage (after armour)."""

    name, category = "guard", "combat"
    ready = staticmethod(_inside_ready)
    plan, apply = _defend("guard")


class Dodge:
    """Dodge: every telegraphed strike landing during the ticks this action occupies misses you
    entirely. A dodge when nothing lands does nothing and still costs its energy."""

    name, category = "dodge", "combat"
    ready = staticmethod(_inside_ready)
    plan, apply = _defend("dodge")


class ActivateAltar:
    """Activate the altar in the cleared boss room of the tier that holds it (the Royal Tomb): it opens a
    further room, where a hidden boss waits. advance to enter it."""

    name, category = "activate_altar", "combat"
    ready = staticmethod(_inside_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Instance | Rejected:
        inst = _inside(w, c)
        if isinstance(inst, Rejected):
            return inst
        if inst.tier != altar_tier(w):
            return Rejected("no_altar", f"There is no altar in tier {inst.tier}.")
        if inst.altar:
            return Rejected("altar_used", "This instance's altar is already activated.")
        if inst.room != len(inst.rooms) - 1:
            return Rejected("no_altar", "The altar stands in the tier's last room; clear your way there first.")
        if living(inst.rooms[inst.room]):
            return Rejected("room_not_clear", f"The altar is sealed while the boss stands: {_ids(inst.rooms[inst.room])}.")
        return inst

    @staticmethod
    def apply(w: World, c: Character, op: Operation, inst: Instance) -> dict:
        inst.altar = True
        inst.rooms.append([_new_enemy(w, inst, w.content.dungeon.shadow_king.enemy, True)])
        w.emit("altar_activated", agent=c.id, instance=inst.id)
        return {"rooms": len(inst.rooms)}


class ItemArgs(ActionArgs):
    item: str = Field(description="A consumable you carry (a healing potion, an energy tonic).")


class UseConsumable:
    """Use a consumable you carry: it restores the health, energy or satiety its item lists. Inside the
    dungeon each use counts toward the instance's consumables_used."""

    name, category = "use_consumable", "maintenance"
    Args = ItemArgs

    @staticmethod
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        """The items that are consumables."""
        content = w.content
        return {"item": per_content(content, "consumables", lambda: frozenset(
            n for n, i in content.items.items() if i.category == "consumable"))}

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        item = a["item"]
        bad = require_item(w, c, item)
        if bad:
            return bad
        if w.content.items[item].category != "consumable":
            return Rejected("not_consumable", f"{item} is not a consumable; food is eaten with eat.")
        if c.health <= 0:
            return Rejected("knocked_down", "You are down; it is too late to use anything.")
        return None

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        item = op.args["item"]
        spec = w.content.items[item]
        w.take(c.id, item, 1, "use_consumable")
        w.set_needs(c, f"consumable:{item}", c.health + spec.health, c.energy + spec.energy, c.satiety + spec.satiety)
        inst = inside_instance(w, c.id)
        if inst is not None:
            inst.consumables_used += 1
            w.emit("consumable_used", agent=c.id, instance=inst.id, item=item)
        return {"health": c.health, "energy": c.energy, "satiety": c.satiety}


# ---- the part ------------------------------------------------------------------------------


def _dump_enemy(e: Enemy) -> list:
    return [e.id, e.kind, e.hp, e.pos, e.boss]


def _dump_instance(i: Instance) -> dict[str, Any]:
    return {
        "id": i.id, "agent": i.agent, "tier": i.tier, "rooms": [[_dump_enemy(e) for e in room] for room in i.rooms],
        "room": i.room, "fresh": i.fresh, "cleared": i.cleared, "altar": i.altar, "king_defeated": i.king_defeated,
        "damage_taken": i.damage_taken, "consumables_used": i.consumables_used, "entered_at": i.entered_at,
        "guard_at": i.guard_at, "dodge_at": i.dodge_at, "enemies_made": i.enemies_made,
    }


def _load_instance(d: dict[str, Any]) -> Instance:
    rooms = [[Enemy(*e) for e in room] for room in d.pop("rooms")]
    return Instance(rooms=rooms, **d)



# The dungeon's own actions: always possible inside (the content lists the others).
DUNGEON_ACTIONS = frozenset({
    "enter_dungeon", "leave_dungeon", "advance", "strike", "guard", "dodge", "activate_altar", "use_consumable",
})

def _rules(c: Content) -> dict[str, Any]:
    """Tiers, rewards and enemies; each enemy's moves are listed by name, their order is learned by watching."""
    d = c.dungeon
    return {"dungeon": {
        "combat": {
            "unarmed_damage": d.unarmed_damage,
            "guard_reduction_pct": d.guard_reduction_pct,
            "vulnerable_damage_pct": d.vulnerable_damage_pct,
            "usable_inside": list(d.usable_inside),
            "rule": "Enemies act once per tick while you are in their room; every damaging move is announced in the "
            "observation (move, text, lands_at) at least a tick before it lands. A dodge during the tick a hit lands avoids it; "
            "a guard removes guard_reduction_pct of it after armour's defense; strikes during a vulnerable move deal "
            "vulnerable_damage_pct. Knocked down inside, you are carried out and the instance is kept as it was; "
            "entering that tier again resumes it.",
        },
        "tiers": {k: t.model_dump(mode="json") for k, t in d.tiers.items()},
        "hidden_boss": {"found_behind": f"the altar of the cleared {d.shadow_king.tier}", "reward": dict(d.shadow_king.reward)},
        "enemies": {
            k: {"description": e.description, "hp": e.hp,
                "moves": [list(m) for m in sorted({(m.move, m.damage, m.vulnerable) for m in e.pattern})]}
            for k, e in c.enemies.items()
        },
    }}


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    dungeon = doc["dungeon"]
    return [
        "## The dungeon",
        "",
        dungeon["combat"]["rule"],
        "",
        *settings({k: v for k, v in dungeon["combat"].items() if k != "rule"}),
        *table(
            ["tier", "level", "rooms before the boss", "enemies per room", "boss", "T-coins", "drops", "description"],
            [
                [f"`{k}`", t["level"], t["rooms"], t["enemies_per_room"], f"`{t['boss']}`", t["coins"],
                 {i: f"{d['chance']:g} x {d['qty']}" for i, d in t["drops"].items()}, t["description"]]
                for k, t in dungeon["tiers"].items()
            ],
        ),
        f"A hidden boss is found behind {dungeon['hidden_boss']['found_behind']}.",
        "",
        *table(
            ["enemy", "hp", "moves (name, damage, vulnerable)", "description"],
            [[f"`{k}`", e["hp"], "; ".join(f"{m} {dmg}{' vulnerable' if v else ''}" for m, dmg, v in e["moves"]), e["description"]]
             for k, e in dungeon["enemies"].items()],
        ),
    ]


class DungeonPart(Part[DungeonState]):
    name = "dungeon"
    tables = ("dungeon", "enemies", "items", "actions")
    codes_place = 7
    codes = {
        "held_in_place": "Not possible where the character is (inside the dungeon only fighting, healing and upkeep are; leave it first).",
        "not_at_dungeon": "The dungeon entrance is not within reach.",
        "unknown_tier": "No dungeon tier has that number or name.",
        "tier_locked": "That tier opens only after the character has defeated the previous tier's boss.",
        "in_dungeon": "The character is already inside the dungeon.",
        "not_in_dungeon": "The character is not inside the dungeon.",
        "no_enemy": "No living enemy with that id is in the character's room.",
        "room_not_clear": "Enemies still stand in the room; defeat them first.",
        "no_next_room": "There is no further room to advance to.",
        "no_altar": "There is no altar here (it stands in the cleared last room of the tier that holds it).",
        "altar_used": "The altar of this instance has already been activated.",
        "not_consumable": "That item is not a consumable.",
    }
    events = {
        "dungeon_entered": DungeonEntered,
        "room_entered": RoomEntered,
        "enemy_intent": EnemyIntent,
        "character_hit": CharacterHit,
        "enemy_hit": EnemyHit,
        "enemy_defeated": EnemyDefeated,
        "tier_cleared": TierCleared,
        "consumable_used": ConsumableUsed,
        "carried_out": CarriedOut,
        "dungeon_left": DungeonLeft,
        "altar_activated": AltarActivated,
        "shadow_king_defeated": ShadowKingDefeated,
    }
    actions = (EnterDungeon, LeaveDungeon, Advance, Strike, Guard, Dodge, ActivateAltar, UseConsumable)
    # The dungeon's section has always come first among the parts'.
    rules = (Section(10, _rules, _rules_markdown),)
    observation_fields = {
        "dungeon": {
            "description": "Your standing in the dungeon, and your room while inside it.",
            "fields": {
                "in_dungeon": "Whether you are inside the dungeon now.",
                "instance": "Id of the instance you are in, or null.",
                "tier": "Tier (1..3) of that instance, or null.",
                "unlocked": "Tiers you may enter: 1, and each tier after one whose boss you have defeated.",
                "cleared": "Tiers whose boss you have defeated, ever.",
                "shadow_king_defeats": "How many times you have defeated the Shadow King.",
                "retained": "Instances kept after you were knocked down in them: {instance, tier, room, rooms, cleared};"
                " enter_dungeon on that tier resumes one.",
                "room": "Inside only, else null: {instance, tier, tier_name, room (1 = first), rooms, fresh, cleared (tier boss"
                " defeated), room_clear, enemies, boss {id, kind, hp, max_hp, defeated}, altar (null, ready or activated),"
                " shadow_king (null until the altar is activated: {id, hp, max_hp, defeated}), damage_taken, consumables_used,"
                " self {weapon_damage, defense, defending: null or {action, from, to} ticks your guard or dodge covers}}."
                " Each enemy: {id, kind, boss, hp, max_hp, last_move {move, text}, next {move, at (tick), damage, vulnerable},"
                " intent (null, or the damaging move announced to land next tick: {move, text, damage, lands_at})}.",
            },
        },
    }

    def init(self, w: World) -> None:
        for action in TIMED_ACTIONS:
            if w.content.actions[action].duration < 1:
                raise ContentError("actions/dungeon.yaml", action, "must take at least one tick to meet an enemy move")
        super().init(w)

    def new_state(self, w: World) -> DungeonState:
        return DungeonState()

    def tick(self, w: World) -> None:
        """Enemies in each occupied room make their next move, in room order."""
        s = state(w)
        for agent in sorted(s.inside):
            inst = s.instances[s.inside[agent]]
            c = w.chars[agent]
            if w.tick <= inst.entered_at:
                continue
            for e in living(inst.rooms[inst.room]):
                if c.health <= 0:
                    break
                _enemy_acts(w, c, inst, e)

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        # What it shows outside holds while the dungeon's state does: every change of it emits one of the dungeon's
        # events (see `World.part_changes`), entering and leaving among them. Shared by the character's observations;
        # kept as None inside, where the room's intents change with the tick.
        stamp = w.part_changes[_NAME]
        kept = w.kept.dungeon_views
        if kept is None:
            kept = w.kept.dungeon_views = {}
        held = kept.get(c.id)
        if held is None or held[0] != stamp:
            outside = c.id not in state(w).inside
            held = kept[c.id] = (stamp, freeze({**dungeon_status(w, c.id), "room": None}) if outside else None)
        obs["dungeon"] = held[1] or freeze({**dungeon_status(w, c.id), "room": room_view(w, c.id)})

    def shelters(self, w: World, c: Character) -> bool:
        return c.id in state(w).inside

    def confines(self, w: World, c: Character, action: str) -> str | None:
        if c.id not in self.state(w).inside or action in DUNGEON_ACTIONS or action in w.content.dungeon.usable_inside:
            return None
        return f"You are inside the dungeon: {action} is not possible here; leave_dungeon first."

    def confined(self, w: World) -> Iterable[str]:
        return self.state(w).inside  # entering and leaving emit dungeon_entered and dungeon_left

    def before_knockdown(self, w: World, c: Character) -> None:
        inst = inside_instance(w, c.id)
        if inst is not None:
            _exit(w, c, inst, alive=False)


DUNGEON = DungeonPart()
_NAME = DUNGEON.name
