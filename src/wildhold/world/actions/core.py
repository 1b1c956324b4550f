"""The first actions: movement, production, maintenance, placing, cancelling."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Container, Literal

from pydantic import Field

from wildhold.content import default_content
from wildhold.world.actions.registry import (
    DIRECTIONS,
    ActionArgs,
    Direction,
    Plan,
    Target,
    any_in_reach,
    cost,
    did_you_mean,
    reach_tiles,
    require_item,
    target,
)
from wildhold.world.actions.needs import Needs, per_content
from wildhold.world.errors import Rejected
from wildhold.world.hooks import PARTS
from wildhold.world.memory import IN_PAGE, PAGE, PAGE_BITS
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    from wildhold.world.world import World

# ---- movement ------------------------------------------------------------------------------


def _step_target(w: World, c: Character, direction: str) -> int | Rejected:
    dx, dy = DIRECTIONS[direction]
    x, y = w.xy(c.pos)
    p = w.pos(x + dx, y + dy)
    if p is None:
        return Rejected("out_of_bounds", f"Moving {direction} from ({x}, {y}) leaves the map.")
    if not w.walkable_terrain[w.terrain[p]]:
        return Rejected("not_walkable", f"({x + dx}, {y + dy}) is {w.terrain_names[w.terrain[p]]}, which cannot be walked on.")
    s = w.structures.get(p)
    if s is not None:
        if s.kind in w.blocking:
            return Rejected("blocked", f"A {s.kind} stands on ({x + dx}, {y + dy}).")
        why = w.barred(c, p)
        if why:
            return Rejected("blocked", why)
    return p


class Move:
    """Step one tile in a compass direction (n, ne, e, se, s, sw, w, nw). Takes one tick."""

    name, category = "move", "movement"

    class Args(ActionArgs):
        direction: Direction = Field(description="Compass direction of the step.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        return _step_target(w, c, a["direction"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: int) -> dict:
        w.relocate(c, p)
        return {"x": p % w.width, "y": p // w.width}


def known_walkable(w: World, c: Character, p: int) -> bool:
    """Walkable as far as the character knows: live in view, else as remembered."""
    return passable_for(w, c)(p)


def passable_for(w: World, c: Character) -> Callable[[int], bool]:
    """`known_walkable` for this character as it stands now, its lookups bound once for path search."""
    walkable, terrain, structures, blocking = w.walkable_terrain, w.terrain, w.structures, w.blocking
    memory, width, r = c.memory, w.width, w.needs.view_radius
    pages, records = memory.pages, memory.contents.records
    cx, cy = c.pos % width, c.pos // width

    def passable(p: int) -> bool:
        if not walkable[terrain[p]]:
            return False
        if abs(p % width - cx) <= r and abs(p // width - cy) <= r:
            s = structures.get(p)
            return s is None or (s.kind not in blocking and not w.barred(c, p))
        page = pages.get(p >> PAGE_BITS)
        if page is None or not page[p & IN_PAGE]:  # never seen (see `world.memory`)
            return False
        structure = records[page[PAGE + (p & IN_PAGE)]][2]
        return structure is None or structure not in blocking

    return passable


@lru_cache(maxsize=4)
def neighbours(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """For each tile, the tiles one step away in `DIRECTIONS` order; shared by every world of a size."""
    steps = tuple(DIRECTIONS.values())
    return tuple(
        tuple((y + dy) * width + x + dx for dx, dy in steps if 0 <= x + dx < width and 0 <= y + dy < height)
        for y in range(height)
        for x in range(width)
    )


def find_path(w: World, c: Character, goal: int, passable: Callable[[int], bool] | None = None) -> list[int] | None:
    """Shortest 8-way path over tiles the character knows, at most `max_path_length` steps; `passable` is
    `passable_for(w, c)` when the caller has it already.

    Breadth-first, one ring of depth at a time, neighbours in `DIRECTIONS` order: the same
    world always gives the same path. A tile found impassable is not judged again from its
    other sides, which on a coast or a wall is most of the work. A passable goal one step away is
    the first ring's answer whatever its other tiles: it is answered without judging them (most
    walks an action mask asks of are one step).
    """
    start = c.pos
    if start == goal:
        return []
    around = neighbours(w.width, w.height)
    if passable is None:
        passable = passable_for(w, c)
    if goal in around[start] and w.needs.max_path_length > 0:
        return [goal] if passable(goal) else None  # an impassable goal is reached by no path at all
    parent = {start: start}
    impassable: set[int] = set()
    ring = [start]
    for _ in range(w.needs.max_path_length):
        next_ring = []
        for p in ring:
            for q in around[p]:
                if q in parent or q in impassable:
                    continue
                if not passable(q):
                    impassable.add(q)
                    continue
                parent[q] = p
                if q == goal:
                    path = [q]
                    while parent[path[-1]] != start:
                        path.append(parent[path[-1]])
                    return path[::-1]
                next_ring.append(q)
        if not next_ring:
            return None
        ring = next_ring
    return None


class MoveTo:
    """Walk to a tile along the shortest path over tiles you have seen, one step per move_to duration.

    Fails with path_blocked if something blocks the way while walking; stops where it is.
    """

    name, category, timing = "move_to", "movement", "one tick per step"

    class Args(Target):
        pass

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        x, y = a["x"], a["y"]
        goal = w.pos(x, y)
        if goal is None:
            return Rejected("out_of_bounds", f"({x}, {y}) is outside the {w.width}x{w.height} map.")
        if goal == c.pos:
            return Rejected("no_path", "You are already there.")
        if goal not in c.memory and w.distance(c.pos, goal) > w.needs.view_radius:
            return Rejected("unknown_location", f"You have never seen ({x}, {y}); explore towards it first.")
        passable = passable_for(w, c)
        if not passable(goal):
            return Rejected("not_walkable", f"({x}, {y}) cannot be walked on as far as you know.")
        path = find_path(w, c, goal, passable)
        if path is None:
            return Rejected("no_path", f"No path over tiles you know reaches ({x}, {y}) within {w.needs.max_path_length} steps.")
        return cost(w, "move_to", {"path": path}, duration=len(path) * w.content.actions["move_to"].duration)

    @staticmethod
    def progress(w: World, c: Character, op: Operation) -> Rejected | None:
        if (w.tick - op.started) % w.content.actions["move_to"].duration:
            return None  # between steps: each step takes move_to's duration in ticks
        path = op.data["path"]
        nxt = path[op.data.get("i", 0)]
        if w.distance(c.pos, nxt) != 1 or not w.is_walkable(nxt) or w.barred(c, nxt):
            return Rejected("path_blocked", f"The way at {w.xy(nxt)} is blocked; you stopped at {w.xy(c.pos)}.")
        w.relocate(c, nxt)
        op.data["i"] = op.data.get("i", 0) + 1
        return None

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        x, y = w.xy(c.pos)
        return {"x": x, "y": y, "steps": len(op.data["path"])}


# ---- production ----------------------------------------------------------------------------


def _gather_plan(w: World, c: Character, x: int, y: int) -> tuple[int, int] | Rejected:
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    node = w.nodes.get(p)
    if node is None:
        return Rejected("no_node", f"There is no resource node at ({x}, {y}).")
    if node.amount <= 0:
        return Rejected("depleted", f"The {node.kind} at ({x}, {y}) is empty; it regrows later.")
    spec = w.content.nodes[node.kind]
    hand = c.equipment.get("hand")
    tool = w.content.items[hand].tool if hand else None
    bonus = tool.yield_bonus.get(node.kind) if tool else None
    if spec.requires_tool and bonus is None:
        return Rejected("missing_tool", f"A {node.kind} needs a {spec.requires_tool} (or better) equipped in hand.")
    extra = sum(part.yield_bonus(w, c, node.kind) for part in PARTS)
    return p, min(node.amount, spec.base_yield + (bonus or 0) + extra)


class Gather:
    """Gather from a resource node on your tile or next to it. Tools in hand raise the yield; some nodes need one."""

    name, category = "gather", "production"

    class Args(Target):
        pass

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if any_in_reach(w, c, w.nodes) else "no_node"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, int] | Rejected:
        return _gather_plan(w, c, a["x"], a["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, int]) -> dict:
        p, qty = got
        node = w.nodes[p]
        item = w.content.nodes[node.kind].item
        w.set_node(p, node, node.amount - qty)
        if node.amount == 0:
            due = w.tick + w.content.nodes[node.kind].regrow_ticks
            node.regrow_at = due
            w.regrow_due.setdefault(due, []).append(p)
        w.give(c.id, item, qty, f"gather:{node.kind}")
        for part in PARTS:
            part.gathered(w, c, item, qty)
        return {"item": item, "qty": qty}


def _recipe_plan(w: World, c: Character, name: str, kind: str) -> Rejected | Any:
    recipe = w.content.recipes.get(name)
    if recipe is None:
        return Rejected("unknown_recipe", f"There is no recipe {name!r}.{did_you_mean(name, w.content.recipes)}")
    if recipe.kind != kind:
        return Rejected("wrong_recipe_kind", f"{name} is made with {recipe.kind}, not {kind}.")
    for part in PARTS:
        why = part.recipe_locked(w, c, name)
        if why:
            return Rejected("recipe_locked", why)
    if recipe.station and not station_in_reach(w, c, recipe.station):
        return Rejected("no_station", f"{name} needs a {recipe.station} within {w.needs.reach} tile of you.")
    missing = {i: q - c.inventory.get(i, 0) for i, q in recipe.inputs.items() if c.inventory.get(i, 0) < q}
    if missing:
        need = ", ".join(f"{q} more {i}" for i, q in missing.items())
        return Rejected("missing_materials", f"{name} needs {need}.")
    return recipe


def _recipes_sift(kind: str):
    """The recipes of this kind the character may make now: its inputs carried, its station (if any) within reach.
    A recipe a part locks is kept: the check refuses it."""
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        recipes = w.content.recipes
        table = per_content(w.content, f"recipes:{kind}",
                            lambda: Needs({n: r.inputs for n, r in recipes.items() if r.kind == kind}))
        structures = w.structures
        stations = {s.kind for p in reach_tiles(w, c) if (s := structures.get(p)) is not None and s.hp > 0}
        return {"recipe": frozenset(n for n in table.affordable(c.inventory)
                                    if not recipes[n].station or recipes[n].station in stations)}
    return staticmethod(sift)


def station_in_reach(w: World, c: Character, kind: str) -> bool:
    structures = w.structures
    return any((s := structures.get(p)) is not None and s.kind == kind and s.hp > 0 for p in reach_tiles(w, c))


def _make(kind: str):
    def plan(w: World, c: Character, a: dict[str, Any]) -> Any:
        return _recipe_plan(w, c, a["recipe"], kind)

    def spend(w: World, a: dict[str, Any], recipe: Any) -> Plan:
        return Plan(recipe.duration, recipe.energy)

    def apply(w: World, c: Character, op: Operation, recipe: Any) -> dict:
        name = op.args["recipe"]
        for item, qty in recipe.inputs.items():
            w.take(c.id, item, qty, f"{kind}:{name}")
        for item, qty in recipe.outputs.items():
            w.give(c.id, item, qty, f"{kind}:{name}")
        return {"recipe": name, "outputs": dict(recipe.outputs)}

    return staticmethod(plan), staticmethod(spend), staticmethod(apply)


class RecipeArgs(ActionArgs):
    recipe: str = Field(description="Recipe name, as listed in the rules.")


class Craft:
    """Craft a recipe: its inputs must be carried and its station (if any) within reach. Time and energy come from the recipe."""

    name, category, timing = "craft", "production", "the recipe's duration"
    Args = RecipeArgs
    plan, spend, apply = _make("craft")
    sift = _recipes_sift("craft")


class Cook:
    """Cook a food recipe at a stove within reach. Time and energy come from the recipe."""

    name, category, timing = "cook", "production", "the recipe's duration"
    Args = RecipeArgs
    plan, spend, apply = _make("cook")
    sift = _recipes_sift("cook")


# ---- maintenance ---------------------------------------------------------------------------


class ItemArgs(ActionArgs):
    item: str = Field(description="Item name.")


class Eat:
    """Eat one food item you carry; it restores satiety (and some foods health or energy)."""

    name, category = "eat", "maintenance"
    Args = ItemArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        item = a["item"]
        bad = require_item(w, c, item)
        if bad:
            return bad
        if w.content.items[item].category != "food":
            return Rejected("not_edible", f"{item} is not food.")
        return None

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        item = op.args["item"]
        spec = w.content.items[item]
        w.take(c.id, item, 1, "eat")
        w.set_needs(c, "eat", c.health + spec.health, c.energy + spec.energy, c.satiety + spec.satiety)
        return {"satiety": c.satiety, "health": c.health, "energy": c.energy}


_NEEDS = default_content().needs  # the served content's bounds, stated in the schemas; each check holds its world's


class TicksArgs(ActionArgs):
    ticks: int = Field(ge=1, le=_NEEDS.max_sleep_ticks, description="How many ticks (minutes).")


class WaitTicks(ActionArgs):
    ticks: int = Field(ge=1, le=_NEEDS.max_wait_ticks, description="How many ticks (minutes).")


def _usable_bed(w: World, c: Character) -> bool:
    s = w.structures.get(c.pos)
    return s is not None and w.content.structures[s.kind].bed and s.hp > 0 and s.owner in (None, c.id)


class Sleep:
    """Sleep in a bed you stand on (your own or an unowned one): energy returns each tick and the bed shelters you."""

    name, category, timing = "sleep", "maintenance", "the ticks you ask for"
    Args = TicksArgs

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if _usable_bed(w, c) else "no_bed"

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        if a["ticks"] > w.needs.max_sleep_ticks:
            return Rejected("bad_arguments", f"sleep: ticks must be at most {w.needs.max_sleep_ticks}.")
        if not _usable_bed(w, c):
            return Rejected("no_bed", "You are not standing on a bed you may use; place one or rest instead.")
        return cost(w, "sleep", duration=a["ticks"])

    @staticmethod
    def begin(w: World, c: Character, op: Operation) -> None:
        c.asleep = True

    @staticmethod
    def progress(w: World, c: Character, op: Operation) -> Rejected | None:
        if not _usable_bed(w, c):
            return Rejected("no_bed", "Your bed is gone; you woke up.")
        w.set_needs(c, "sleep", c.health, c.energy + w.needs.sleep_energy_per_tick, c.satiety)
        return None

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        return {"energy": c.energy}


class Rest:
    """Rest where you stand: energy returns slowly. Resting outside at night leaves you exposed."""

    name, category, timing = "rest", "maintenance", "the ticks you ask for"
    Args = TicksArgs

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        if a["ticks"] > w.needs.max_sleep_ticks:
            return Rejected("bad_arguments", f"rest: ticks must be at most {w.needs.max_sleep_ticks}.")
        return cost(w, "rest", duration=a["ticks"])

    @staticmethod
    def progress(w: World, c: Character, op: Operation) -> Rejected | None:
        if (w.tick - op.started) % w.needs.rest_energy_every == 0:
            w.set_needs(c, "rest", c.health, c.energy + 1, c.satiety)
        return None

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        return {"energy": c.energy}


class Wait:
    """Do nothing for some ticks."""

    name, category, timing = "wait", "maintenance", "the ticks you ask for"
    Args = WaitTicks

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        if a["ticks"] > w.needs.max_wait_ticks:
            return Rejected("bad_arguments", f"wait: ticks must be at most {w.needs.max_wait_ticks}.")
        return cost(w, "wait", duration=a["ticks"])

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        return {}


class Equip:
    """Equip a tool you carry in its slot (a tool in hand raises yields and opens some nodes)."""

    name, category = "equip", "maintenance"
    Args = ItemArgs

    @staticmethod
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        """The items that are tools."""
        content = w.content
        return {"item": per_content(content, "tools", lambda: frozenset(
            name for name, item in content.items.items() if item.tool is not None))}

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        item = a["item"]
        bad = require_item(w, c, item)
        if bad:
            return bad
        if w.content.items[item].tool is None:
            return Rejected("not_equippable", f"{item} is not something you can equip.")
        return None

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        item = op.args["item"]
        slot = w.content.items[item].tool.slot
        c.equipment[slot] = item
        w.emit("equipped", agent=c.id, slot=slot, item=item)
        return {"slot": slot, "item": item}


class Unequip:
    """Empty an equipment slot (hand or body); the item stays in your inventory."""

    name, category = "unequip", "maintenance"

    class Args(ActionArgs):
        slot: Literal["hand", "body"] = Field(description="Equipment slot.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if c.equipment else "slot_empty"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        if a["slot"] not in c.equipment:
            return Rejected("slot_empty", f"Nothing is equipped in {a['slot']}.")
        return None

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        slot = op.args["slot"]
        del c.equipment[slot]
        w.emit("equipped", agent=c.id, slot=slot, item=None)
        return {"slot": slot}


class QtyArgs(ItemArgs):
    qty: int = Field(default=1, ge=1, description="How many.")


class Drop:
    """Drop items on your tile; anyone standing there may pick them up."""

    name, category = "drop", "maintenance"
    Args = QtyArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return require_item(w, c, a["item"], a["qty"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        item, qty = op.args["item"], op.args["qty"]
        w.take(c.id, item, qty, "drop")
        w.give(f"ground@{c.pos}", item, qty, f"drop:{c.id}")
        return {"item": item, "qty": qty}


def _ground_has(w: World, c: Character, item: str, qty: int) -> Rejected | None:
    have = w.ground.get(c.pos, {}).get(item, 0)
    if have < qty:
        return Rejected("nothing_here", f"There are {have} {item} on the ground here, not {qty}.")
    return None


class PickUp:
    """Pick up items lying on your tile."""

    name, category = "pick_up", "maintenance"
    Args = QtyArgs

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if w.ground.get(c.pos) else "nothing_here"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return _ground_has(w, c, a["item"], a["qty"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        item, qty = op.args["item"], op.args["qty"]
        w.take(f"ground@{c.pos}", item, qty, f"pick_up:{c.id}")
        w.give(c.id, item, qty, "pick_up")
        return {"item": item, "qty": qty}


# ---- construction --------------------------------------------------------------------------


class PlaceArgs(Target):
    item: str = Field(description="A placeable item you carry (a station, bed or shelter).")


def _place_plan(w: World, c: Character, item: str, x: int, y: int) -> int | Rejected:
    bad = require_item(w, c, item)
    if bad:
        return bad
    kind = w.content.items[item].places
    if kind is None:
        return Rejected("not_placeable", f"{item} cannot be placed.")
    if any(animal.item == item for animal in w.content.animals.values()):
        return Rejected("use_settle_animal", f"{item} is an animal: settle it beside a coop with settle_animal, not place.")
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    if not w.walkable_terrain[w.terrain[p]] or p == w.dungeon:
        return Rejected("not_walkable", f"Nothing can be built on ({x}, {y}).")
    if p in w.structures or p in w.nodes:
        return Rejected("occupied", f"({x}, {y}) already holds a structure or resource node.")
    if kind in w.blocking and p in w.occupants:
        return Rejected("occupied", f"A character stands on ({x}, {y}); a {kind} would block it.")
    return p


class Place:
    """Place a station, bed or shelter you carry on an empty tile within reach. You own it; a bed becomes where you wake after a knockdown."""

    name, category = "place", "construction"
    Args = PlaceArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        return _place_plan(w, c, a["item"], a["x"], a["y"])

    @staticmethod
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        """The items that place a structure, animals left out (they are settled)."""
        content = w.content
        return {"item": per_content(content, "placed", lambda: frozenset(
            name for name, item in content.items.items()
            if item.places is not None and all(animal.item != name for animal in content.animals.values())))}

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: int) -> dict:
        item = op.args["item"]
        kind = w.content.items[item].places
        w.take(c.id, item, 1, "place")
        w.place_structure(p, kind, c.id)
        if w.content.structures[kind].bed:
            c.bed = p
        x, y = w.xy(p)
        return {"structure": kind, "x": x, "y": y}


class Cancel:
    """Stop your current operation at once. Nothing it would have produced is produced."""

    name, category, while_busy = "cancel", "maintenance", True

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return "nothing_to_cancel" if c.op is None else None

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        if c.op is None:
            return Rejected("nothing_to_cancel", "You are not doing anything.")
        return cost(w, "cancel")

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        from wildhold.world.systems import end_operation

        cancelled = w.ops[c.op]
        end_operation(w, c, cancelled)
        w.emit("operation_cancelled", agent=c.id, op=cancelled.id, action=cancelled.action)
        return {"cancelled": cancelled.id}


# Registered in this order (the order faces list them), before the parts' actions.
ACTIONS = (Move, MoveTo, Gather, Craft, Cook, Eat, Sleep, Rest, Wait, Equip, Unequip, Drop, PickUp, Place, Cancel)
