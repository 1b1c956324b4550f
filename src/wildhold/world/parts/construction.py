"""Construction and homes: building, repairing and demolishing structures; doors, locks and allow
lists; chests; storehouse deposits; and the enclosed, locked home that shelters whoever is inside.

Rules, exactly:

- One structure per tile. `build` puts a structure with a `build` entry on an empty tile within
  reach (walkable terrain; no structure, resource node, spawn point, settlement centre or dungeon
  entrance). A structure that blocks movement also needs the tile free of characters and of items
  on the ground. Materials are checked when the build starts and taken only when it completes,
  after checking everything again. The builder owns the result.
- A floor is a floor tile and nothing else; a door stands on its own tile (no floor under it).
- A home is a connected region of interior tiles of one owner: its floors, plus any other
  structure it owns that is neither a wall nor a door (a bed, a chest, a stove: furnishings join
  the region but do not count toward its area). Characters step diagonally, so connection and
  enclosure count all eight neighbours: the region is enclosed when every tile touching it, side or
  corner, is a wall or a door of the same owner (no gap, no missing corner, no map edge), and it
  holds at least one floor and at least one door. It is complete when it is enclosed and every one of its doors is locked.
  Its area is its number of floor tiles. `home_of` answers with the largest complete home (ties:
  the lowest first tile), else the largest enclosed one, else None.
- Only a complete home shelters (the lock is what makes a home): anyone standing on one of its
  interior tiles, guests included, is safe from night creatures. An unlocked enclosure does not.
- A door's owner locks it; the first lock uses up the door's `lock_item`, after which `lock` and
  `unlock` toggle for free (a fitted lock is lost with its door). A locked door bars every
  character but its owner and the characters on its allow list from stepping onto it, for `move`
  and `move_to` alike; it is not locked while someone it would bar stands in the doorway.
- The owner of any structure manages its allow list (`allow`, `disallow`) from anywhere. Allowed
  characters pass the door when it is locked, use the chest, and repair the structure. No one but
  the owner locks, unlocks or demolishes.
- A chest's items are the holder `chest@<tile>`: its owner and allowed characters store and
  retrieve. A storehouse is open to all, and each depositor's items are its own holder
  `deposit@<tile>:<agent>`, which only that depositor withdraws from.
- `demolish` (owner only) returns floor(demolish_refund x quantity) of each build material and
  is refused while a chest or storehouse holds items. A structure damaged to 0 hit points
  (`damage_structure`) is destroyed: floor(rubble_fraction x quantity) of its build materials and
  everything it held fall on its tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Container, Mapping

from pydantic import Field

from wildhold.content import Content, ContentError
from wildhold.world.actions.registry import ActionArgs, CharacterName, Plan, Target, character_field, did_you_mean, require_item, structure_in_reach, target, unknown_character
from wildhold.world.actions.needs import Needs, per_content
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.parts.base import Part, Saved, saved
from wildhold.world.readonly import freeze
from wildhold.world.state import Character, Operation, Structure

if TYPE_CHECKING:
    from wildhold.world.world import World

CHEST = "chest@"
DEPOSIT = "deposit@"
WALL, FLOOR, DOOR = "wall", "floor", "door"


# ---- state -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Region:
    """A connected run of one owner's interior tiles (8-way, as characters move) and what bounds it."""

    owner: str
    floors: tuple[int, ...]
    interior: tuple[int, ...]
    doors: tuple[int, ...]
    enclosed: bool
    locked: bool

    @property
    def complete(self) -> bool:
        return self.enclosed and self.locked


@dataclass(frozen=True, slots=True)
class Home:
    """A character's enclosed building area: its floor tiles and doors, sorted."""

    tiles: list[int]
    doors: list[int]
    locked: bool
    complete: bool
    area: int


@dataclass(slots=True)
class ConstructionState(Saved):
    """This part's state on a world. `locks` and `access` are saved; the rest is a memo.

    The memo (regions and homes) is valid while no structure is placed or removed (`World.builds`)
    and no event of this part is emitted (`World.part_changes`: a lock fitted, locked or unlocked), so
    unchanged structures and locks; a fresh world loaded from a snapshot recomputes exactly what the
    memo held.
    """

    roles: dict[str, str | None]
    locks: dict[int, bool] = saved("pairs", dict)  # door tile -> locked; present once a lock is fitted
    access: dict[int, list[str]] = saved("pairs", dict)  # structure tile -> allowed character ids, sorted
    memo_key: tuple[int, int] = (-1, -1)
    regions: dict[int, Region] = field(default_factory=dict)
    homes: dict[str, Home | None] = field(default_factory=dict)


def state(w: World) -> ConstructionState:
    return CONSTRUCTION.state(w)


def _memo(w: World) -> ConstructionState:
    st = state(w)
    key = (w.builds, w.part_changes[CONSTRUCTION.name])
    if st.memo_key != key:
        st.memo_key = key
        st.regions.clear()
        st.homes.clear()
    return st


def _holder_tile(holder: str, prefix: str) -> int:
    return int(holder[len(prefix):].split(":", 1)[0])


# ---- homes -----------------------------------------------------------------------------------


# Characters step diagonally, so a home is bounded on all eight sides of each tile: a missing
# corner wall is a gap.
_AROUND = ((0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1))


def region_at(w: World, p: int) -> Region | None:
    """The interior region containing tile `p` (a floor or furnishing with an owner), or None."""
    st = _memo(w)
    found = st.regions.get(p)
    if found is not None:
        return found
    s = w.structures.get(p)
    if s is None or s.owner is None or st.roles.get(s.kind) in (WALL, DOOR):
        return None
    region = _flood(_around(w.width, w.height), w.structures, st.roles, st.locks, s.owner, p)
    for q in region.interior:
        st.regions[q] = region
    return region


@lru_cache(maxsize=4)
def _around(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """For each tile, its eight neighbours on the map; a tile at the edge has fewer."""
    return tuple(
        tuple((y + dy) * width + x + dx for dx, dy in _AROUND if 0 <= x + dx < width and 0 <= y + dy < height)
        for y in range(height)
        for x in range(width)
    )


def _flood(
    around: tuple[tuple[int, ...], ...], structures: Mapping[int, Any], roles: Mapping[str, str | None],
    locks: Mapping[int, bool], owner: str, start: int,
) -> Region:
    interior = {start}
    stack = [start]
    floors: list[int] = []
    doors: set[int] = set()
    leak = False
    while stack:
        p = stack.pop()
        if roles[structures[p].kind] == FLOOR:
            floors.append(p)
        near = around[p]
        if len(near) < 8:
            leak = True  # the map's edge
        for q in near:
            if q in interior:
                continue
            s = structures.get(q)
            if s is None or s.owner != owner:
                leak = True
                continue
            role = roles[s.kind]
            if role == WALL:
                continue
            if role == DOOR:
                doors.add(q)
                continue
            interior.add(q)
            stack.append(q)
    door_list = tuple(sorted(doors))
    return Region(
        owner,
        tuple(sorted(floors)),
        tuple(sorted(interior)),
        door_list,
        not leak and bool(floors) and bool(door_list),
        bool(door_list) and all(locks.get(d, False) for d in door_list),
    )


def _choose(structures: Mapping[int, Any], roles: Mapping[str, str | None], agent: str, region_of) -> Home | None:
    best: Region | None = None
    seen: set[int] = set()
    for p in sorted(p for p, s in structures.items() if s.owner == agent and roles.get(s.kind) == FLOOR):
        if p in seen:
            continue
        region = region_of(p)
        seen.update(region.interior)
        # Floors are visited in tile order, so on equal terms the region with the lowest first tile stays.
        if region.enclosed and (best is None or (region.complete, len(region.floors)) > (best.complete, len(best.floors))):
            best = region
    return None if best is None else Home(list(best.floors), list(best.doors), best.locked, best.complete, len(best.floors))


def home_of(w: World, agent: str) -> Home | None:
    """The character's home: its largest complete enclosure (ties: lowest first tile), else its
    largest enclosed but unlocked one, else None."""
    st = _memo(w)
    if agent not in st.homes:
        st.homes[agent] = _choose(w.structures, st.roles, agent, lambda p: region_at(w, p))
    return st.homes[agent]


def find_home(
    width: int, height: int, structures: Mapping[int, Any], roles: Mapping[str, str | None], locks: Mapping[int, bool], agent: str,
) -> Home | None:
    """`home_of` over plain data: structures (tile -> anything with kind and owner), each kind's
    building role, and door locks. For reports that rebuild the map from an archive's events."""
    around = _around(width, height)
    return _choose(structures, roles, agent, lambda p: _flood(around, structures, roles, locks, structures[p].owner, p))


def in_complete_home(w: World, p: int) -> bool:
    region = region_at(w, p)
    return region is not None and region.complete


# ---- access ----------------------------------------------------------------------------------


def may_use(w: World, c: Character, p: int, s: Structure) -> bool:
    """The owner, characters it allows, and anyone at all when no one owns it."""
    return s.owner is None or s.owner == c.id or c.id in state(w).access.get(p, ())


def door_barred(w: World, c: Character, p: int) -> str | None:
    if not state(w).locks.get(p):
        return None
    s = w.structures.get(p)
    if s is None or may_use(w, c, p, s):
        return None
    x, y = w.xy(p)
    return f"The door at ({x}, {y}) is locked; only its owner {s.owner} and the characters it allows pass."


def deposits_of(w: World, agent: str) -> dict[str, int]:
    """Everything the character has deposited in storehouses and not withdrawn, summed."""
    out: dict[str, int] = {}
    containers = w.containers
    for holder in deposit_holders(w, agent):
        for item, qty in containers.get(holder, {}).items():
            out[item] = out.get(item, 0) + qty
    return dict(sorted(out.items()))


def deposit_holders(w: World, agent: str) -> list[str]:
    """The storehouse deposits of one character that hold items, found from an index of every deposit by
    owner built once per change to a deposit (the wealth formula and observations ask every tick; escrows change
    far more often)."""
    held = w.kept.deposits
    changes = w.stored_in.get(DEPOSIT, 0)
    if held is None or held[0] != changes:
        index: dict[str, list[str]] = {}
        for holder, items in w.containers.items():
            if holder.startswith(DEPOSIT) and items:
                index.setdefault(holder.rsplit(":", 1)[1], []).append(holder)
        held = w.kept.deposits = (changes, index)
    return held[1].get(agent, [])


def _held_at(w: World, p: int) -> list[str]:
    """The holders of items inside the structure at `p`: its chest, or every deposit there."""
    chest = f"{CHEST}{p}"
    prefix = f"{DEPOSIT}{p}:"
    return sorted(h for h, items in w.containers.items() if items and (h == chest or h.startswith(prefix)))


# ---- removal ---------------------------------------------------------------------------------


def _remove(w: World, p: int) -> Structure:
    """Take the structure off its tile (its lock and allow list go with it); callers emit the event."""
    return w.remove_structure(p)


def damage_structure(w: World, p: int, amount: int, by: str) -> bool:
    """Lower a structure's hit points (raids); at 0 it is destroyed. Returns whether it was.

    A destroyed structure leaves floor(rubble_fraction x quantity) of each build material on its
    tile, and whatever its chest or storehouse deposits held falls there too.
    """
    if amount <= 0:
        raise ValueError("damage must be positive")
    s = w.structures[p]
    x, y = w.xy(p)
    hp = max(s.hp - amount, 0)
    dealt = s.hp - hp
    s.hp = hp
    w.emit("structure_damaged", x=x, y=y, structure=s.kind, owner=s.owner, damage=dealt, hp=hp, by=by)
    if hp > 0:
        return False
    held = _held_at(w, p)
    _remove(w, p)
    w.emit("structure_destroyed", x=x, y=y, structure=s.kind, owner=s.owner, by=by)
    ground = f"ground@{p}"
    build = w.content.structures[s.kind].build
    fraction = w.content.conflict.rubble_fraction
    for item, qty in (build.materials.items() if build else ()):
        w.give(ground, item, math.floor(qty * fraction), f"rubble:{s.kind}")
    for holder in held:
        for item, qty in sorted(w.containers.get(holder, {}).items()):
            w.take(holder, item, qty, f"destroyed:{s.kind}")
            w.give(ground, item, qty, f"spilled:{holder}")
    return True


# ---- events ----------------------------------------------------------------------------------


class StructureBuilt(Ev):
    agent: str
    x: int
    y: int
    structure: str
    materials: dict[str, int]


class StructureRepaired(Ev):
    agent: str
    x: int
    y: int
    structure: str
    restored: int
    hp: int


class StructureDamaged(Ev):
    x: int
    y: int
    structure: str
    owner: str | None
    damage: int
    hp: int
    by: str


class StructureDestroyed(Ev):
    x: int
    y: int
    structure: str
    owner: str | None
    by: str


class StructureDemolished(Ev):
    agent: str
    x: int
    y: int
    structure: str
    refund: dict[str, int]


class DoorLocked(Ev):
    agent: str
    x: int
    y: int
    lock_fitted: bool


class DoorUnlocked(Ev):
    agent: str
    x: int
    y: int


class AccessChanged(Ev):
    agent: str
    x: int
    y: int
    structure: str
    character: str
    allowed: bool


# ---- shared checks ---------------------------------------------------------------------------


def _structure_in_reach(w: World, c: Character, x: int, y: int, role: str | None = None) -> tuple[int, Structure] | Rejected:
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    s = w.structures.get(p)
    if s is None:
        return Rejected("no_structure", f"There is no structure at ({x}, {y}).")
    if role is not None and state(w).roles.get(s.kind) != role:
        return Rejected("wrong_structure", f"The {s.kind} at ({x}, {y}) is not a {role}.")
    return p, s


def _structure_ready(w: World, c: Character) -> str | None:
    """`_structure_in_reach`'s refusal of every tile while no structure stands within reach."""
    return None if structure_in_reach(w, c) else "no_structure"


def _missing(c: Character, materials: dict[str, int], what: str) -> Rejected | None:
    short = {i: q - c.inventory.get(i, 0) for i, q in materials.items() if c.inventory.get(i, 0) < q}
    if not short:
        return None
    need = ", ".join(f"{q} more {i}" for i, q in short.items())
    return Rejected("missing_materials", f"{what} needs {need}.")


def _xy(w: World, p: int) -> dict[str, int]:
    x, y = w.xy(p)
    return {"x": x, "y": y}


# ---- building --------------------------------------------------------------------------------


class BuildArgs(ActionArgs):
    structure: str = Field(description="Structure to build: one with a build entry in the structures table (wall, floor, door, chest, ...).")
    x: int = Field(description="Target tile column (0 is the west edge).")
    y: int = Field(description="Target tile row (0 is the north edge).")


def _build_plan(w: World, c: Character, name: str, x: int, y: int) -> int | Rejected:
    spec = w.content.structures.get(name)
    if spec is None:
        return Rejected("unknown_structure", f"There is no structure {name!r}.{did_you_mean(name, w.content.structures)}")
    if spec.build is None:
        return Rejected("not_buildable", f"A {name} is not built in place; if an item places it, use place.")
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    if not w.walkable_terrain[w.terrain[p]]:
        return Rejected("not_walkable", f"({x}, {y}) is {w.terrain_names[w.terrain[p]]}; nothing can be built on it.")
    if p == w.dungeon or p == w.settlement or p in w.spawns:
        return Rejected("reserved_tile", f"({x}, {y}) is kept clear (a spawn point, the settlement centre or the dungeon entrance).")
    if p in w.structures or p in w.nodes:
        return Rejected("occupied", f"({x}, {y}) already holds a structure or resource node.")
    if not spec.walkable:
        if p in w.occupants:
            return Rejected("occupied", f"A character stands on ({x}, {y}); a {name} would block it.")
        if w.ground.get(p):
            return Rejected("occupied", f"Items lie on ({x}, {y}); pick them up before a {name} covers them.")
    return _missing(c, spec.build.materials, f"A {name}") or p


class Build:
    """Build a structure (wall, floor, door, chest, storehouse, ...) on an empty tile within reach; you own it.

    Time and energy are the structure's build entry (its recipe). Its materials must be carried when
    you start and are taken only when the build completes; if they are gone by then, the build
    fails and nothing is taken. Blocking structures need the tile free of characters and items.
    """

    name, category, timing = "build", "construction", "set by its content entry"
    Args = BuildArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        return _build_plan(w, c, a["structure"], a["x"], a["y"])

    @staticmethod
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        """The structures built in place whose materials the character carries."""
        table = per_content(w.content, "build", lambda: Needs({
            name: spec.build.materials for name, spec in w.content.structures.items() if spec.build is not None}))
        return {"structure": table.affordable(c.inventory)}

    @staticmethod
    def spend(w: World, a: dict[str, Any], _: int) -> Plan:
        b = w.content.structures[a["structure"]].build
        return Plan(b.duration, b.energy)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: int) -> dict:
        name = op.args["structure"]
        materials = dict(w.content.structures[name].build.materials)
        for item, qty in materials.items():
            w.take(c.id, item, qty, f"build:{name}")
        # A tile's lock and allow list belong to the structure on it; never to a new one.
        state(w).locks.pop(p, None)
        state(w).access.pop(p, None)
        s = w.place_structure(p, name, c.id)
        w.emit("structure_built", agent=c.id, **_xy(w, p), structure=name, materials=materials)
        return {"structure": name, **_xy(w, p), "hp": s.hp}


def _repair_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Structure] | Rejected:
    got = _structure_in_reach(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, s = got
    spec = w.content.structures[s.kind]
    if spec.repair is None:
        return Rejected("not_repairable", f"A {s.kind} cannot be repaired.")
    if not may_use(w, c, p, s):
        return Rejected("not_owner", f"The {s.kind} at ({x}, {y}) belongs to {s.owner}; only it and the characters it allows repair it.")
    if s.hp >= spec.hp:
        return Rejected("not_damaged", f"The {s.kind} at ({x}, {y}) has full hit points ({s.hp}).")
    missing = _missing(c, spec.repair.materials, f"Repairing a {s.kind}")
    return missing or (p, s)


class Repair:
    """Repair a damaged structure within reach: restores the hit points of its repair entry, up to its maximum.

    Time, energy and materials are the structure's repair entry. Its owner, the characters the owner
    allows, and anyone for an unowned structure may repair.
    """

    name, category, timing = "repair", "construction", "set by its content entry"
    Args = Target
    ready = staticmethod(_structure_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _repair_plan(w, c, a["x"], a["y"])

    @staticmethod
    def spend(w: World, a: dict[str, Any], got: tuple[int, Structure]) -> Plan:
        r = w.content.structures[got[1].kind].repair
        return Plan(r.duration, r.energy)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        p, s = got
        spec = w.content.structures[s.kind]
        for item, qty in spec.repair.materials.items():
            w.take(c.id, item, qty, f"repair:{s.kind}")
        before = s.hp
        s.hp = min(spec.hp, s.hp + spec.repair.hp)
        w.emit("structure_repaired", agent=c.id, **_xy(w, p), structure=s.kind, restored=s.hp - before, hp=s.hp)
        return {"structure": s.kind, **_xy(w, p), "hp": s.hp, "max_hp": spec.hp}


def _demolish_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Structure] | Rejected:
    got = _structure_in_reach(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, s = got
    if w.content.structures[s.kind].build is None or s.owner is None:
        return Rejected("not_demolishable", f"The {s.kind} at ({x}, {y}) was not built by a character and cannot be demolished.")
    if s.owner != c.id:
        return Rejected("not_owner", f"The {s.kind} at ({x}, {y}) belongs to {s.owner}; only its owner demolishes it.")
    if _held_at(w, p):
        return Rejected("not_empty", f"The {s.kind} at ({x}, {y}) still holds items; they must be taken out first.")
    return p, s


class Demolish:
    """Tear down a structure you own within reach; you get back part of its build materials (its demolish_refund share of each, rounded down).

    A chest or storehouse must be empty first (every depositor's items withdrawn).
    """

    name, category = "demolish", "construction"
    Args = Target
    ready = staticmethod(_structure_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _demolish_plan(w, c, a["x"], a["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        p, s = got
        spec = w.content.structures[s.kind]
        refund = {i: math.floor(q * spec.demolish_refund) for i, q in spec.build.materials.items()}
        refund = {i: q for i, q in refund.items() if q}
        _remove(w, p)
        w.emit("structure_demolished", agent=c.id, **_xy(w, p), structure=s.kind, refund=refund)
        for item, qty in refund.items():
            w.give(c.id, item, qty, f"demolish:{s.kind}")
        return {"structure": s.kind, **_xy(w, p), "refund": refund}


# ---- doors and access ------------------------------------------------------------------------


def _own_door(w: World, c: Character, x: int, y: int) -> tuple[int, Structure] | Rejected:
    got = _structure_in_reach(w, c, x, y, DOOR)
    if isinstance(got, Rejected):
        return got
    p, s = got
    if s.owner != c.id:
        return Rejected("not_owner", f"The door at ({x}, {y}) belongs to {s.owner}; only its owner locks and unlocks it.")
    return got


def _lock_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Structure] | Rejected:
    got = _own_door(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, s = got
    locks = state(w).locks
    if locks.get(p):
        return Rejected("already_locked", f"The door at ({x}, {y}) is already locked.")
    in_doorway = [o for o in w.occupants.get(p, ()) if not may_use(w, w.chars[o], p, s)]
    if in_doorway:
        return Rejected("occupied", f"{in_doorway[0]} stands in the doorway at ({x}, {y}); a door is not locked on someone it would bar.")
    item = w.content.structures[s.kind].lock_item
    if p not in locks and item is not None:
        missing = _missing(c, {item: 1}, "Fitting a lock to this door")
        if missing:
            return missing
    return got


class Lock:
    """Lock a door you own within reach. The first time uses up one lock item (the door's lock_item); after that lock and unlock are free.

    A locked door bars everyone but you and the characters you allow (see allow).
    """

    name, category = "lock", "construction"
    Args = Target
    ready = staticmethod(_structure_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _lock_plan(w, c, a["x"], a["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        p, s = got
        locks = state(w).locks
        fitted = p not in locks
        item = w.content.structures[s.kind].lock_item
        if fitted and item is not None:
            w.take(c.id, item, 1, "lock")
        locks[p] = True
        w.emit("door_locked", agent=c.id, **_xy(w, p), lock_fitted=fitted)
        return {**_xy(w, p), "locked": True, "lock_fitted": fitted}


def _unlock_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Structure] | Rejected:
    got = _own_door(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    if not state(w).locks.get(got[0]):
        return Rejected("not_locked", f"The door at ({x}, {y}) is not locked.")
    return got


class Unlock:
    """Unlock a locked door you own within reach; anyone may pass it until you lock it again (free: the lock stays fitted)."""

    name, category = "unlock", "construction"
    Args = Target
    ready = staticmethod(_structure_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _unlock_plan(w, c, a["x"], a["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        p, _ = got
        state(w).locks[p] = False
        w.emit("door_unlocked", agent=c.id, **_xy(w, p))
        return {**_xy(w, p), "locked": False}


class AccessArgs(Target):
    character: CharacterName = character_field("The character.")


def _access_plan(w: World, c: Character, a: dict[str, Any], allow: bool) -> tuple[int, Structure] | Rejected:
    x, y, who = a["x"], a["y"], a["character"]
    p = w.pos(x, y)
    if p is None:
        return Rejected("out_of_bounds", f"({x}, {y}) is outside the {w.width}x{w.height} map.")
    s = w.structures.get(p)
    if s is None:
        return Rejected("no_structure", f"There is no structure at ({x}, {y}).")
    if s.owner != c.id:
        return Rejected("not_owner", f"The {s.kind} at ({x}, {y}) is not yours; only its owner changes who may use it.")
    if who not in w.chars:
        return unknown_character(w, who)
    listed = who in state(w).access.get(p, ())
    if allow and (listed or who == c.id):
        return Rejected("already_allowed", f"{who} may already use the {s.kind} at ({x}, {y}).")
    if not allow and not listed:
        return Rejected("not_on_allow_list", f"{who} is not on the allow list of the {s.kind} at ({x}, {y}).")
    return p, s


def _access_ready(w: World, c: Character) -> str | None:
    """`_access_plan`'s refusal of every tile while the character owns no structure (it works from anywhere)."""
    return None if w.structures_of(c.id) else "not_owner"


def _change_access(w: World, c: Character, op: Operation, got: tuple[int, Structure], allow: bool) -> dict:
    p, s = got
    who = op.args["character"]
    access = state(w).access
    names = set(access.get(p, ()))
    if allow:
        names.add(who)
    else:
        names.discard(who)
    if names:
        access[p] = sorted(names)
    else:
        del access[p]
    w.emit("access_changed", agent=c.id, **_xy(w, p), structure=s.kind, character=who, allowed=allow)
    return {**_xy(w, p), "structure": s.kind, "allowed": list(access.get(p, []))}


class Allow:
    """Let a character pass your locked door, use your chest and repair your structure; works from anywhere, on any structure you own."""

    name, category = "allow", "social"
    Args = AccessArgs
    ready = staticmethod(_access_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _access_plan(w, c, a, True)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        return _change_access(w, c, op, got, True)


class Disallow:
    """Take a character off the allow list of a structure you own; works from anywhere."""

    name, category = "disallow", "social"
    Args = AccessArgs
    ready = staticmethod(_access_ready)

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, Structure] | Rejected:
        return _access_plan(w, c, a, False)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, Structure]) -> dict:
        return _change_access(w, c, op, got, False)


# ---- chests and storehouses ------------------------------------------------------------------


class ContainerArgs(Target):
    item: str = Field(description="Item name.")
    qty: int = Field(default=1, ge=1, description="How many.")


def _container_plan(w: World, c: Character, a: dict[str, Any], role: str, putting: bool) -> tuple[int, str] | Rejected:
    """The holder the items move to or from, or why not: chests by access, storehouses per depositor."""
    got = _structure_in_reach(w, c, a["x"], a["y"], role)
    if isinstance(got, Rejected):
        return got
    p, s = got
    if role == "chest" and not may_use(w, c, p, s):
        return Rejected("access_denied", f"The chest at ({a['x']}, {a['y']}) belongs to {s.owner}, who has not allowed you.")
    holder = f"{CHEST}{p}" if role == "chest" else f"{DEPOSIT}{p}:{c.id}"
    item, qty = a["item"], a["qty"]
    if putting:
        bad = require_item(w, c, item, qty)
        return bad or (p, holder)
    if item not in w.content.items:
        return Rejected("unknown_item", f"There is no item {item!r}.")
    have = w.containers.get(holder, {}).get(item, 0)
    if have < qty:
        where = "the chest" if role == "chest" else "your deposit in this storehouse"
        return Rejected("not_in_container", f"{where.capitalize()} holds {have} {item}, not {qty}.")
    return p, holder


def _container_action(name: str, role: str, putting: bool):
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, str] | Rejected:
        return _container_plan(w, c, a, role, putting)

    def apply(w: World, c: Character, op: Operation, got: tuple[int, str]) -> dict:
        p, holder = got
        item, qty = op.args["item"], op.args["qty"]
        src, dst = (c.id, holder) if putting else (holder, c.id)
        w.take(src, item, qty, f"{name}:{dst}")
        w.give(dst, item, qty, f"{name}:{src}")
        return {**_xy(w, p), "item": item, "qty": qty, "holds": w.containers.get(holder, {}).get(item, 0)}

    return staticmethod(plan), staticmethod(apply)


class Store:
    """Put items you carry into a chest within reach; only the chest's owner and the characters it allows use it."""

    name, category = "store", "maintenance"
    Args = ContainerArgs
    ready = staticmethod(_structure_ready)
    plan, apply = _container_action("store", "chest", True)


class Retrieve:
    """Take items out of a chest within reach; only the chest's owner and the characters it allows use it."""

    name, category = "retrieve", "maintenance"
    Args = ContainerArgs
    ready = staticmethod(_structure_ready)
    plan, apply = _container_action("retrieve", "chest", False)


class Deposit:
    """Deposit items you carry in a storehouse within reach (anyone's). They stay yours: only you withdraw them, and they count in your wealth."""

    name, category = "deposit", "maintenance"
    Args = ContainerArgs
    ready = staticmethod(_structure_ready)
    plan, apply = _container_action("deposit", "storehouse", True)


class Withdraw:
    """Withdraw items you deposited in a storehouse within reach."""

    name, category = "withdraw", "maintenance"
    Args = ContainerArgs
    ready = staticmethod(_structure_ready)
    plan, apply = _container_action("withdraw", "storehouse", False)


# ---- the part --------------------------------------------------------------------------------


def _check_content(w: World) -> None:
    for name, spec in w.content.structures.items():
        if spec.lock_item is not None and spec.lock_item not in w.content.items:
            raise ContentError("structures", f"{name}.lock_item", f"unknown item '{spec.lock_item}'")
        if spec.lock_item is not None and spec.part != DOOR:
            raise ContentError("structures", f"{name}.lock_item", "only a door takes a lock")


def rules(c: Content) -> list[str]:
    """The construction rules as sentences for the rules document, with their numbers from content."""
    buildable = [k for k, s in c.structures.items() if s.build]
    locks = sorted({s.lock_item for s in c.structures.values() if s.lock_item})
    return [
        f"build puts a structure with a build entry ({', '.join(buildable)}) on a tile within reach: walkable terrain "
        "with no structure or resource node, not a spawn point, the settlement centre or the dungeon entrance. "
        "A structure that blocks movement also needs the tile free of characters and of items on the ground.",
        "A build takes its structure's build duration and energy; the materials are checked when it starts and "
        "taken when it completes, after every condition is checked again. The builder owns the structure.",
        "One structure stands on a tile: a floor is a floor tile, a door stands on its own tile.",
        "repair restores a structure's repair hp (up to its maximum) for its repair materials, duration and energy; "
        "its owner, the characters the owner allows, and anyone for an unowned structure may repair.",
        "demolish (owner only, on structures built in place) returns floor(demolish_refund x quantity) of each "
        "build material; a chest or storehouse must be empty first.",
        f"A structure at 0 hp is destroyed: floor({c.conflict.rubble_fraction:g} x quantity) of each build material "
        "and everything it held are left on its tile.",
        f"lock and unlock are for the door's owner. The first lock uses up one {' or '.join(locks) or 'lock item'}; "
        "then locking and unlocking are free. A fitted lock is lost with its door.",
        "A locked door bars every character except its owner and the characters on its allow list (move and move_to). "
        "It is not locked while someone it would bar stands in the doorway.",
        "allow and disallow (owner only, from anywhere) edit a structure's allow list: allowed characters pass its "
        "door when locked, use its chest and repair it.",
        "A chest's items are used by its owner and allowed characters (store, retrieve). A storehouse takes "
        "deposits from anyone; each deposit stays its depositor's, who alone withdraws it and whose wealth it counts in.",
        "A home is a connected region (8-way) of one owner's floors and furnishings (its other structures that are "
        "neither walls nor doors) whose every neighbouring tile, side or corner, is that owner's wall or door, with at "
        "least one floor and one door. Its area is its number of floors. It is complete when all its doors are locked.",
        "Anyone standing inside a complete home is sheltered; an enclosure with an unlocked door shelters no one.",
    ]


def _structure_view(w: World, c: Character, p: int, s: Structure, shown: list[str]) -> dict[str, Any]:
    """A structure in view as an observation shows it; `shown` gets the containers whose contents it shows."""
    st = state(w)
    spec = w.content.structures[s.kind]
    out: dict[str, Any] = {**_xy(w, p), "kind": s.kind, "owner": s.owner, "hp": s.hp, "max_hp": spec.hp}
    role = st.roles.get(s.kind)
    if role == DOOR:
        out["locked"] = bool(st.locks.get(p))
        out["may_pass"] = door_barred(w, c, p) is None
    if s.owner == c.id:
        out["allowed"] = list(st.access.get(p, []))
    if role == "chest" and may_use(w, c, p, s):
        holder = f"{CHEST}{p}"
        shown.append(holder)
        out["contents"] = dict(sorted(w.containers.get(holder, {}).items()))
    if role == "storehouse":
        holder = f"{DEPOSIT}{p}:{c.id}"
        shown.append(holder)
        out["your_deposit"] = dict(sorted(w.containers.get(holder, {}).items()))
    return out


class ConstructionPart(Part[ConstructionState]):
    """Building, doors and locks, chests, storehouse deposits and homes."""

    name = "construction"
    tables = ("structures", "items", "conflict")
    codes_place = 1
    codes = {
        "unknown_structure": "No structure has that name.",
        "not_buildable": "That structure is not built in place (it is placed from an item, or part of the world).",
        "reserved_tile": "That tile is kept clear: a spawn point, the settlement centre or the dungeon entrance.",
        "no_structure": "There is no structure on that tile.",
        "wrong_structure": "The structure on that tile is not the kind this action needs.",
        "not_owner": "Only the structure's owner (or, where the rules say so, characters it allows) may do that.",
        "access_denied": "The structure's owner has not allowed this character.",
        "not_repairable": "That structure cannot be repaired.",
        "not_damaged": "The structure already has full hit points.",
        "not_demolishable": "That structure cannot be demolished (it was not built in place, or no one owns it).",
        "not_empty": "The chest or storehouse still holds items; empty it first.",
        "already_locked": "The door is already locked.",
        "not_locked": "The door is not locked.",
        "unknown_character": "No character has that id.",
        "already_allowed": "That character may already use the structure.",
        "not_on_allow_list": "That character is not on the structure's allow list.",
        "not_in_container": "The chest or deposit holds fewer of that item.",
    }
    events = {
        "structure_built": StructureBuilt,
        "structure_repaired": StructureRepaired,
        "structure_damaged": StructureDamaged,
        "structure_destroyed": StructureDestroyed,
        "structure_demolished": StructureDemolished,
        "door_locked": DoorLocked,
        "door_unlocked": DoorUnlocked,
        "access_changed": AccessChanged,
    }
    actions = (Build, Repair, Demolish, Lock, Unlock, Allow, Disallow, Store, Retrieve, Deposit, Withdraw)
    world_rules = {"construction": rules}
    observation_fields = {
        "home": {
            "description": "The character's home, or null: its largest complete home (enclosed and every door locked), "
            "else its largest enclosed one.",
            "fields": {
                "area": "Number of floor tiles.",
                "complete": "Enclosed and every door locked: it shelters whoever stands inside.",
                "locked": "Every door of it is locked.",
                "tiles": "[x, y] of each floor tile.",
                "doors": "Its doors: {x, y, locked}.",
            },
        },
        "structures": {
            "description": "Structures in view, with their state.",
            "fields": {
                "x": "Column.",
                "y": "Row.",
                "kind": "Structure kind.",
                "owner": "Owner's id, or null.",
                "hp": "Hit points now.",
                "max_hp": "Hit points when intact.",
                "locked": "Doors: whether it is locked.",
                "may_pass": "Doors: whether this character may step onto it now.",
                "allowed": "Structures this character owns: ids of the characters it allows.",
                "contents": "Chests this character may use: item -> quantity inside.",
                "your_deposit": "Storehouses: item -> quantity this character has deposited there.",
            },
        },
        "deposits": {
            "description": "This character's storehouse deposits, wherever they are: {x, y, items}.",
            "fields": {},
        },
    }

    def structure_removed(self, w: World, p: int, s: Structure) -> None:
        state(w).locks.pop(p, None)
        state(w).access.pop(p, None)

    def init(self, w: World) -> None:
        _check_content(w)
        super().init(w)

    def new_state(self, w: World) -> ConstructionState:
        return ConstructionState(roles={k: s.part for k, s in w.content.structures.items()})

    def shelters(self, w: World, c: Character) -> bool:
        s = w.structures.get(c.pos)
        return s is not None and s.owner is not None and in_complete_home(w, c.pos)

    def bars(self, w: World, c: Character, p: int) -> str | None:
        return door_barred(w, c, p)

    def blocks_creatures(self, w: World, p: int) -> bool:
        return bool(state(w).locks.get(p))

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        # A character's sections are kept (read-only: shared by its observations) while no structure is placed or
        # removed, no event of this part is emitted (hit points, locks, access, homes), it stands where it did and no
        # chest or deposit changed: most observations find them so (see `_kept_buildings` for what is looked into
        # otherwise).
        kept = w.kept.building_views
        if kept is None:
            kept = w.kept.building_views = {}
        held = kept.get(c.id)
        stored_in = w.stored_in
        if (held is None or held.pos != c.pos or held.builds != w.builds or held.changes != w.part_changes[_NAME]
                or held.stored != stored_in.get(CHEST, 0) + stored_in.get(DEPOSIT, 0)):
            held = _kept_buildings(w, c, kept, held, obs["view"]["tiles"])
        obs["home"], obs["structures"], obs["deposits"] = held.home, held.seen, held.deposits


def _kept_buildings(w: World, c: Character, kept: dict[str, _KeptBuildings], held: _KeptBuildings | None,
                    tiles: list[dict[str, Any]]) -> _KeptBuildings:
    """A character's sections brought up to date (`held`: as kept, or None), `tiles` those of its view. With no
    structure placed or removed and no event of this part, they still hold when the same structures are in view
    (looked for only once it moved: most steps keep them) and no container they show changed (`World.holdings`; its
    deposits' list). They show chests and deposits only, so other containers' changes (escrows) are not looked into."""
    me, stored_in = c.id, w.stored_in
    stored = stored_in.get(CHEST, 0) + stored_in.get(DEPOSIT, 0)  # both only grow: the sum changes with either
    builds, changes = w.builds, w.part_changes[_NAME]
    if held is not None and held.builds == builds and held.changes == changes:
        if held.pos != c.pos and held.at == _structures_in(w, tiles):
            held.pos = c.pos
        if held.pos == c.pos and (held.stored == stored or held.holds(w, deposit_holders(w, me))):
            held.stored = stored
            return held
    shown: list[str] = []
    mine = deposit_holders(w, me)
    at = _structures_in(w, tiles)
    home, seen, deposits = _sections(w, c, at, mine, shown)
    counts = [(h, w.holdings.get(h)) for h in shown]
    held = kept[me] = _KeptBuildings(builds, changes, c.pos, at, stored, list(mine), counts, home, seen, deposits)
    return held


class _KeptBuildings:
    """A character's home, structures in view and deposits, with what they hold under: `builds` (structures placed
    or removed) and `changes` (this part's events); the tiles of the structures in view (`at`) once the character
    left `pos`; and, once a chest or deposit changed since `stored` (the sum of their `World.stored_in` counts), its
    deposits' list and the `World.holdings` counts of the containers they show."""

    __slots__ = ("builds", "changes", "pos", "at", "stored", "mine", "shown", "home", "seen", "deposits")

    def __init__(self, builds: int, changes: int, pos: int, at: list[int], stored: int, mine: list[str],
                 shown: list[tuple[str, int | None]], home: dict[str, Any] | None, seen: list[dict[str, Any]],
                 deposits: list[dict[str, Any]]):
        self.builds, self.changes, self.pos, self.at, self.stored = builds, changes, pos, at, stored
        self.mine, self.shown = mine, shown
        self.home, self.seen, self.deposits = freeze(home), freeze(seen), freeze(deposits)  # shared by observations

    def holds(self, w: World, mine: list[str]) -> bool:
        """Whether the sections still show what they did: the same deposits, and no shown container changed."""
        if mine != self.mine:
            return False
        holdings = w.holdings
        for holder, count in self.shown:
            if holdings.get(holder) != count:
                return False
        return True


def _structures_in(w: World, tiles: list[dict[str, Any]]) -> list[int]:
    """The tiles of the structures in a view, in order: the view's tiles (built just before the parts observe)
    name every one."""
    width = w.width
    return [t["y"] * width + t["x"] for t in tiles if "structure" in t]


def _sections(w: World, c: Character, at: list[int], mine: list[str], shown: list[str]) -> tuple:
    """A character's home, the structures on tiles `at` (those in its view) and its deposits, as observations show
    them; `shown` gets the containers whose contents they show."""
    home = home_of(w, c.id)
    locks = state(w).locks
    home_view = None if home is None else {
        "area": home.area,
        "complete": home.complete,
        "locked": home.locked,
        "tiles": [list(w.xy(p)) for p in home.tiles],
        "doors": [{**_xy(w, p), "locked": bool(locks.get(p))} for p in home.doors],
    }
    structures = w.structures
    seen = [_structure_view(w, c, p, structures[p], shown) for p in at]
    shown.extend(mine)
    deposits = [{**_xy(w, p), "items": dict(sorted(items.items()))}
                for p, items in sorted((_holder_tile(h, DEPOSIT), w.containers[h]) for h in mine)]
    return home_view, seen, deposits


CONSTRUCTION = ConstructionPart()
_NAME = CONSTRUCTION.name
