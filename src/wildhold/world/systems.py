"""The per-tick systems, in the order `World.step` runs them. Each reads its numbers from content."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wildhold.world.actions import REGISTRY
from wildhold.world.errors import Rejected
from wildhold.world.parts import PARTS
from wildhold.world.state import Character, Creature, Operation

if TYPE_CHECKING:
    from wildhold.world.world import World


# ---- calendar ------------------------------------------------------------------------------


def start_day(w: World) -> None:
    weathers = w.calendar.weathers
    w.weather = w.rngs["weather"].choices(list(weathers), weights=list(weathers.values()))[0]
    w.emit("day_started", day=w.day, season=w.season, weather=w.weather)
    for part in PARTS:
        part.day_started(w)


def advance_calendar(w: World) -> None:
    cal = w.calendar
    t = w.tick % cal.ticks_per_day
    if t == 0:
        start_day(w)
    if t == cal.night_start:
        w.emit("night_started", day=w.day)
    elif t == cal.night_end:
        w.emit("night_ended", day=w.day)
        for cid in [i for i, cr in w.creatures.items() if w.content.creatures[cr.kind].nocturnal]:
            del w.creatures[cid]
            w.emit("creature_despawned", creature=cid, reason="dawn")


# ---- operations ----------------------------------------------------------------------------


def advance_operations(w: World) -> None:
    t, ops, chars = w.tick, w.ops, w.chars
    for op in list(ops.values()):
        if op.id not in ops:
            continue
        progress = REGISTRY[op.action].progress
        if progress is not None:
            failed = progress(w, chars[op.agent], op)
            if failed is not None:
                fail_operation(w, chars[op.agent], op, failed)
                continue
        if op.ends <= t:
            finish_operation(w, chars[op.agent], op)


def end_operation(w: World, c: Character, op: Operation) -> None:
    w.ops.pop(op.id, None)
    if c.op == op.id:
        c.op = None
    c.asleep = False


def fail_operation(w: World, c: Character, op: Operation, why: Rejected) -> None:
    end_operation(w, c, op)
    w.emit("operation_failed", agent=c.id, op=op.id, action=op.action, code=why.code, message=why.message)


def finish_operation(w: World, c: Character, op: Operation) -> None:
    result = REGISTRY[op.action].finish(w, c, op)
    if isinstance(result, Rejected):
        fail_operation(w, c, op, result)
        return
    end_operation(w, c, op)
    if op.energy:
        w.set_needs(c, op.action, c.health, c.energy - op.energy, c.satiety)
    w.emit("operation_completed", agent=c.id, op=op.id, action=op.action, result=result)


# ---- needs ---------------------------------------------------------------------------------


def decay_needs(w: World) -> None:
    n, t = w.needs, w.tick
    if t % n.satiety_decay_every == 0:
        for c in w.chars.values():
            if c.satiety > 0:
                w.set_needs(c, "hunger", c.health, c.energy, c.satiety - 1)
    if t % n.energy_decay_every == 0:
        for c in w.chars.values():
            if c.energy > 0 and not c.asleep:
                w.set_needs(c, "fatigue", c.health, c.energy - 1, c.satiety)
    if t % n.starving_damage_every == 0:
        for c in w.chars.values():
            if c.satiety == 0 and c.health > 0:
                w.set_needs(c, "starving", c.health - n.starving_damage, c.energy, c.satiety)
    if t % n.exhausted_damage_every == 0:
        for c in w.chars.values():
            if c.energy == 0 and c.health > 0:
                w.set_needs(c, "exhausted", c.health - n.exhausted_damage, c.energy, c.satiety)
    if t % n.regen_every == 0:
        for c in w.chars.values():
            if 0 < c.health < n.max_health and c.satiety >= n.regen_min_satiety and c.energy > 0:
                w.set_needs(c, "recovery", c.health + 1, c.energy, c.satiety)


# ---- night creatures -----------------------------------------------------------------------


def night_creatures(w: World) -> None:
    if not w.scenario.night_creatures:
        return
    if w.is_night():
        _spawn_creatures(w)
    if w.creatures:
        _hunt(w)


def _spawn_creatures(w: World) -> None:
    rng = w.rngs["creatures"]
    for kind, spec in w.content.creatures.items():
        if not (spec.hostile and spec.nocturnal):
            continue
        hunting: dict[str, int] = {}
        for cr in w.creatures.values():
            if cr.target is not None:
                hunting[cr.target] = hunting.get(cr.target, 0) + 1
        for c in w.chars.values():
            if w.is_sheltered(c) or hunting.get(c.id, 0) >= spec.max_per_character:
                continue
            if rng.random() >= spec.spawn_chance:
                continue
            x, y = w.xy(c.pos)
            d = spec.spawn_distance
            dx, dy = rng.randint(-d, d), rng.choice((-d, d))
            if rng.random() < 0.5:
                dx, dy = dy, dx
            p = w.pos(x + dx, y + dy)
            if p is None or not w.is_walkable(p) or w.safe_terrain[w.terrain[p]]:
                continue
            w.next_creature += 1
            cr = Creature(w.next_creature, kind, p, spec.hp, c.id)
            w.creatures[cr.id] = cr
            hunting[c.id] = hunting.get(c.id, 0) + 1
            w.emit("creature_spawned", creature=cr.id, kind=kind, x=x + dx, y=y + dy)


def _hunt(w: World) -> None:
    t = w.tick
    for cr in list(w.creatures.values()):
        spec = w.content.creatures[cr.kind]
        prey = w.chars.get(cr.target) if cr.target else None
        if prey is None or prey.health <= 0 or w.is_sheltered(prey) or w.distance(cr.pos, prey.pos) > spec.sight:
            cr.target = prey = None
        if prey is None:
            continue
        if w.distance(cr.pos, prey.pos) <= 1:
            if t % spec.attack_every == 0:
                health = max(prey.health - spec.damage, 0)
                w.set_needs(prey, f"attack:{cr.kind}", health, prey.energy, prey.satiety)
                w.emit("creature_attacked", creature=cr.id, agent=prey.id, damage=spec.damage, health=health)
        elif t % spec.move_every == 0:
            _creature_step(w, cr, prey.pos)


def _creature_barred(w: World, p: int) -> bool:
    return p in w.structures and any(part.blocks_creatures(w, p) for part in PARTS)


def _creature_step(w: World, cr: Creature, goal: int) -> None:
    x, y = w.xy(cr.pos)
    gx, gy = w.xy(goal)
    sx = (gx > x) - (gx < x)
    sy = (gy > y) - (gy < y)
    for dx, dy in ((sx, sy), (sx, 0), (0, sy)):
        if dx == dy == 0:
            continue
        p = w.pos(x + dx, y + dy)
        if p is not None and w.is_walkable(p) and not w.safe_terrain[w.terrain[p]] and not _creature_barred(w, p):
            w.emit("creature_moved", creature=cr.id, **{"from": (x, y)}, to=(x + dx, y + dy))
            cr.pos = p
            return


# ---- knockdowns ----------------------------------------------------------------------------


def resolve_knockdowns(w: World) -> None:
    for c in w.chars.values():
        if c.health <= 0:
            knock_down(w, c, "health reached 0")


def knock_down(w: World, c: Character, cause: str) -> None:
    """Health 0: the operation ends, part of every stack stays where the character fell, it wakes at its bed or the settlement."""
    if c.op is not None:
        fail_operation(w, c, w.ops[c.op], Rejected("knocked_down", "You were knocked down."))
    for part in PARTS:
        part.before_knockdown(w, c)
    fell = c.pos
    for item, qty in sorted(c.inventory.items()):
        lost = w.knockdown_drop(qty)
        if lost:
            w.take(c.id, item, lost, "knockdown")
            w.give(f"ground@{fell}", item, lost, f"knockdown:{c.id}")
    bed = w.structures.get(c.bed) if c.bed is not None else None
    home = c.bed if bed is not None and bed.owner == c.id and bed.hp > 0 else w.settlement
    c.knockdowns += 1
    x, y = w.xy(fell)
    w.emit("knockdown", agent=c.id, x=x, y=y, cause=cause, respawn=w.xy(home), count=c.knockdowns)
    w.relocate(c, home, event=False)
    n = w.needs
    w.set_needs(c, "respawn", n.respawn_health, max(c.energy, n.respawn_energy), max(c.satiety, n.respawn_satiety))
    for cr in w.creatures.values():
        if cr.target == c.id:
            cr.target = None


# ---- resources -----------------------------------------------------------------------------


def regrow_nodes(w: World) -> None:
    due = w.regrow_due.pop(w.tick, None)
    if not due:
        return
    for p in sorted(due):
        node = w.nodes.get(p)
        if node is not None and node.regrow_at == w.tick:
            node.regrow_at = None
            w.set_node(p, node, w.content.nodes[node.kind].capacity)
