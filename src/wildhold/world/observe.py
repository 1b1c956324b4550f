"""What a character perceives: its view square live, its memory of tiles out of view, itself.

Nothing else reaches an agent: every face builds its observations here.
"""

from __future__ import annotations

from itertools import takewhile
from typing import TYPE_CHECKING, Any

from wildhold.world.parts import PARTS

if TYPE_CHECKING:
    from wildhold.world.state import Character
    from wildhold.world.world import World


def clock(w: World, show_end: bool = True) -> dict[str, Any]:
    """The time as a character reads it; without `show_end` (a match whose horizon is hidden) nothing says when it ends."""
    minute = w.tick % w.calendar.ticks_per_day
    out = {
        "tick": w.tick,
        "day": w.day,
        "hour": minute // 60,
        "minute": minute % 60,
        "night": w.is_night(),
        "season": w.season,
        "weather": w.weather,
    }
    if show_end:
        out["ends_at_tick"] = w.end_tick
    return out


def _add_features(tile: dict[str, Any], snapshot: tuple) -> dict[str, Any]:
    """What a tile holds (node, structure, items on the ground), added to `tile` in place: observe
    runs this for every tile in view and every remembered one, so it builds no dict of its own."""
    _, node, amount, structure, owner, items = snapshot
    if node is not None:
        tile["node"] = {"kind": node, "amount": amount}
    if structure is not None:
        tile["structure"] = {"kind": structure, "owner": owner}
    if items:
        tile["items"] = dict(items)
    return tile


def status(w: World, c: Character) -> dict[str, Any]:
    x, y = w.xy(c.pos)
    op = w.ops.get(c.op) if c.op else None
    return {
        "id": c.id,
        "name": c.name,
        "x": x,
        "y": y,
        "region": w.region_names[w.region[c.pos]],
        "health": c.health,
        "energy": c.energy,
        "satiety": c.satiety,
        "asleep": c.asleep,
        "sheltered": w.is_sheltered(c),
        "inventory": dict(sorted(c.inventory.items())),
        "equipment": dict(sorted(c.equipment.items())),
        "bed": list(w.xy(c.bed)) if c.bed is not None else None,
        "knockdowns": c.knockdowns,
        "operation": None if op is None else {"op": op.id, "action": op.action, "args": op.args, "started": op.started, "ends": op.ends},
    }


def observe(w: World, agent: str, memory: bool = True, memory_since: int | None = None,
            show_end: bool = True) -> dict[str, Any]:
    """The observation of one character: only what it sees now or has seen before (and, with `show_end`, the
    tick the match ends at).

    With `memory_since`, the memory holds only the tiles remembered at or after that tick (and
    `memory_since` says so): a caller that kept what it saw at that tick, view and memory, and lays
    these over it and the view over them, holds the whole memory, at a cost that does not grow as
    the memory fills.
    """
    c = w.chars[agent]
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    width = w.width
    glyphs = [w.content.terrain[n].glyph for n in w.terrain_names]
    rows, tiles, chars, creatures = [], [], [], []
    for y in range(y0, y1 + 1):
        row = []
        for x in range(x0, x1 + 1):
            p = y * width + x
            row.append(glyphs[w.terrain[p]])
            tile = _add_features({"x": x, "y": y}, w.tile_snapshot(p))
            if len(tile) > 2:
                tiles.append(tile)
            for other in sorted(w.occupants.get(p, ())):
                if other != agent:
                    chars.append({"id": other, "name": w.chars[other].name, "x": x, "y": y})
        rows.append("".join(row))
    for cr in w.creatures.values():
        cx, cy = w.xy(cr.pos)
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            creatures.append({"id": cr.id, "kind": cr.kind, "x": cx, "y": cy, "hp": cr.hp})
    obs: dict[str, Any] = {
        "time": clock(w, show_end),
        "self": status(w, c),
        "view": {"x0": x0, "y0": y0, "rows": rows, "tiles": tiles, "characters": chars, "creatures": creatures},
        "legend": {w.content.terrain[n].glyph: n for n in w.terrain_names},
    }
    if memory:
        if memory_since is None:
            obs["memory"] = remembered(w, c)
        else:
            obs["memory"] = remembered_since(w, c, memory_since)
            obs["memory_since"] = memory_since
    for part in PARTS:
        part.observe(w, c, obs)
    return obs


def remembered(w: World, c: Character) -> list[dict[str, Any]]:
    """Tiles seen before and out of view now, each with the tick it was last seen."""
    return _out_of_view(w, c, sorted(c.memory))


def remembered_since(w: World, c: Character, tick: int) -> list[dict[str, Any]]:
    """The tiles out of view now that were remembered at or after `tick`: the memory is kept in the
    order tiles were last seen, so they are read from its end and the rest is never touched."""
    recent = takewhile(lambda entry: entry[1][0] >= tick, reversed(c.memory.items()))
    return _out_of_view(w, c, sorted(p for p, _ in recent))


def _out_of_view(w: World, c: Character, tiles: list[int]) -> list[dict[str, Any]]:
    """These remembered tiles, in this order, less those in view now (an observation shows them live)."""
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    width, names, terrain, memory = w.width, w.terrain_names, w.terrain, c.memory
    out = []
    for p in tiles:
        y, x = divmod(p, width)
        if x0 <= x <= x1 and y0 <= y <= y1:
            continue
        snap = memory[p]
        out.append(_add_features({"x": x, "y": y, "terrain": names[terrain[p]], "seen_tick": snap[0]}, snap))
    return out


def known_tiles(w: World, c: Character) -> set[int]:
    """Every tile the character has seen: its memory plus its current view."""
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    view = {y * w.width + x for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
    return view | set(c.memory)
