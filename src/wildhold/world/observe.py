"""What a character perceives: its view square live, its memory of tiles out of view, itself.

Nothing else reaches an agent: every face builds its observations here.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from wildhold.world import kept
from wildhold.world.kept import Kept, KeptMismatch, first_difference
from wildhold.world.memory import IN_PAGE, PAGE, PAGE_BITS
from wildhold.world.parts import PARTS, Part
from wildhold.world.readonly import ReadOnlyDict, ReadOnlyList, freeze
from wildhold.world.world import CHUNK_BITS

if TYPE_CHECKING:
    from wildhold.world.state import Character
    from wildhold.world.world import World


def clock(w: World, show_end: bool = True) -> dict[str, Any]:
    """The time as a character reads it; without `show_end` (a match whose horizon is hidden) nothing says when it ends.
    Built once per tick and weather, copied for each caller."""
    return dict(_kept_clock(w, show_end))


def _kept_clock(w: World, show_end: bool) -> dict[str, Any]:
    """`clock` as kept for the tick and weather: observations share it (read-only)."""
    key = (w.tick, w.weather, w.end_tick, show_end)
    held = w.kept.clock
    if held is None or held[0] != key:
        held = w.kept.clock = (key, ReadOnlyDict(_clock(w, show_end)))
    return held[1]


def _clock(w: World, show_end: bool) -> dict[str, Any]:
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
    """What a tile holds (node, structure, items on the ground), added to `tile` in place (read-only records): observe
    runs this for every tile in view and every remembered one, so it builds no dict of its own."""
    _, node, amount, structure, owner, items = snapshot
    if node is not None:
        tile["node"] = ReadOnlyDict(kind=node, amount=amount)
    if structure is not None:
        tile["structure"] = ReadOnlyDict(kind=structure, owner=owner)
    if items:
        tile["items"] = ReadOnlyDict(items)
    return tile


def status(w: World, c: Character) -> dict[str, Any]:
    """The character's own state (read-only: shared by its observations). Kept per character while what it shows is the same: its place, needs, sleep,
    knockdowns, bed, operation (never changed once started), shelter, what it carries (`World.holdings`) and wears
    (compared as it is: equipping counts nowhere); about half the observations in a busy world find it so.
    Shelter is read from the terrain first: most characters stand on safe ground, and asking the world costs a call."""
    p = c.pos
    sheltered = w.safe_terrain[w.terrain[p]] or w.is_sheltered(c)
    key = StatusKey(p, c.health, c.energy, c.satiety, c.asleep, c.knockdowns, c.bed, c.op, w.holdings.get(c.id), sheltered)
    kept = w.kept.status
    if kept is None:
        kept = w.kept.status = {}
    held = kept.get(c.id)
    if held is None or held[0] != key or held[1]["equipment"] != c.equipment:
        held = kept[c.id] = (key, _status(w, c, sheltered, key, held))
    return held[1]


class StatusKey(NamedTuple):
    """What a character's status is kept for: while all of these and its equipment stay, it shows the same."""

    pos: int
    health: int
    energy: int
    satiety: int
    asleep: bool
    knockdowns: int
    bed: int | None
    op: str | None
    holdings: int | None  # `World.holdings`' count of changes to what it carries
    sheltered: bool


def _status(w: World, c: Character, sheltered: bool, key: StatusKey, before: tuple | None) -> dict[str, Any]:
    """`status` built anew; what the status it replaces (`before`, with its key) showed of the place, the inventory
    and the equipment is reused while those are the same (most rebuilds follow a new operation or need)."""
    if before is None:
        x, y = w.xy(c.pos)
        region = w.region_names[w.region[c.pos]]
        inventory = ReadOnlyDict(sorted(c.inventory.items()))
        equipment = ReadOnlyDict(sorted(c.equipment.items()))
    else:
        was_key, was = before
        if was_key.pos == key.pos:
            x, y, region = was["x"], was["y"], was["region"]
        else:
            x, y = w.xy(c.pos)
            region = w.region_names[w.region[c.pos]]
        inventory = was["inventory"] if was_key.holdings == key.holdings else ReadOnlyDict(sorted(c.inventory.items()))
        equipment = was["equipment"] if was["equipment"] == c.equipment else ReadOnlyDict(sorted(c.equipment.items()))
    op = w.ops.get(c.op) if c.op else None
    return ReadOnlyDict({
        "id": c.id,
        "name": c.name,
        "x": x,
        "y": y,
        "region": region,
        "health": c.health,
        "energy": c.energy,
        "satiety": c.satiety,
        "asleep": c.asleep,
        "sheltered": sheltered,
        "inventory": inventory,
        "equipment": equipment,
        "bed": ReadOnlyList(w.xy(c.bed)) if c.bed is not None else None,
        "knockdowns": c.knockdowns,
        "operation": None if op is None else ReadOnlyDict(op=op.id, action=op.action, args=freeze(op.args), started=op.started,
                                                          ends=op.ends),
    })


def observe(w: World, agent: str, memory: bool = True, memory_since: int | None = None,
            show_end: bool = True, parts: bool = True) -> dict[str, Any]:
    """The observation of one character: only what it sees now or has seen before (and, with `show_end`, the
    tick the match ends at).

    With `memory_since`, the memory holds only the tiles remembered at or after that tick (and
    `memory_since` says so): a caller that kept what it saw at that tick, view and memory, and lays
    these over it and the view over them, holds the whole memory, at a cost that does not grow as
    the memory fills.

    Without `parts`, the parts' sections (villages, market, construction, society, dungeon...) are left out, for
    a caller that reads only the view and the character (the RL faces' arrays); `observe_parts` adds them later,
    while the world is still as it was observed.

    An observation's records (a tile, a character in view, a quest, its own status) are built for observations and
    may be shared by observations of the same world, never by the world's own state: those that are shared are
    read-only (`wildhold.world.readonly`), so what one receiver writes no other sees. The dicts and lists made for
    this observation alone (the observation itself, its view, the characters in view) are the receiver's own.

    Checking what is kept (`world.kept`), each observation is built again with nothing kept and compared.
    """
    obs = _observe(w, agent, memory, memory_since, show_end, parts)
    if kept.CHECKING:
        _check_kept(w, agent, obs, memory, memory_since, show_end, parts)
    return obs


def _check_kept(w: World, agent: str, obs: dict[str, Any], *args: Any) -> None:
    """Raise `KeptMismatch` if this observation differs from one built with nothing kept (the order of keys counts,
    as on the faces); what is kept is left as it was."""
    held, w.kept = w.kept, Kept()
    try:
        fresh = _observe(w, agent, *args)
    finally:
        w.kept = held
    if json.dumps(obs) != json.dumps(fresh):
        raise KeptMismatch(f"{agent} at tick {w.tick}: {first_difference(obs, fresh)}")


def _observe(w: World, agent: str, memory: bool, memory_since: int | None, show_end: bool,
             parts: bool) -> dict[str, Any]:
    c = w.chars[agent]
    square = _square_at(w, c.pos)
    bounds = square.bounds
    if square.tiles_at != w.touches:  # a tile changed since the square's tiles were last brought up to date
        _update_tiles(w, square, bounds)
    x0, x1, y0, y1 = bounds
    # The clock, the legend and the square's rows and tiles are kept between observations and shared by them
    # (read-only: what is kept is replaced when it changes, never changed in place).
    obs: dict[str, Any] = {
        "time": _kept_clock(w, show_end),
        "self": status(w, c),
        "view": {"x0": x0, "y0": y0, "rows": square.rows, "tiles": square.tiles,
                 "characters": _characters_in(w, square, bounds, agent, c.pos), "creatures": _creatures_in(w, bounds) if w.creatures else []},
        "legend": square.legend,
    }
    if memory:
        if memory_since is None:
            obs["memory"] = remembered(w, c)
        else:
            obs["memory"] = remembered_since(w, c, memory_since)
            obs["memory_since"] = memory_since
    if parts:
        observe_parts(w, c, obs)
    return obs


def _creatures_in(w: World, bounds: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """The creatures in a view square (asked only when there are any: none by day)."""
    x0, x1, y0, y1 = bounds
    width = w.width
    creatures = []
    for cr in w.creatures.values():
        cy, cx = divmod(cr.pos, width)
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            creatures.append({"id": cr.id, "kind": cr.kind, "x": cx, "y": cy, "hp": cr.hp})
    return creatures


def observe_parts(w: World, c: Character, obs: dict[str, Any]) -> dict[str, Any]:
    """The parts' sections added to an observation of `c` built without them, at the same state of the world."""
    observers = w.kept.observers
    if observers is None:  # the parts that add something (as `World.listeners`: those of the world's making)
        observers = w.kept.observers = tuple(part for part in PARTS if type(part).observe is not Part.observe)
    for part in observers:
        part.observe(w, c, obs)
    return obs


def _statics(w: World) -> tuple[list[str], dict[str, str]]:
    """The map's glyph rows and the legend: terrain never changes, so they are built once per world."""
    got = w.kept.terrain
    if got is None:
        glyphs = [w.content.terrain[n].glyph for n in w.terrain_names]
        width, terrain = w.width, w.terrain
        rows = ["".join(glyphs[t] for t in terrain[y * width:(y + 1) * width]) for y in range(w.height)]
        got = w.kept.terrain = (rows, ReadOnlyDict({w.content.terrain[n].glyph: n for n in w.terrain_names}))
    return got


BAND_BITS = 5  # squares starting in the same 32 rows over the same columns share a band of characters (see `_present`)
PATCHED_MOST = 32  # the most touches since a square's tiles were built that they are patched with (see `_update_tiles`)


class _Square:
    """What was built for one view square: its bounds, glyph rows (terrain never changes) and legend, its tiles
    with the count of touches they are up to date with and the tile of each (a few tiles change in a tick, so the
    tiles are patched at those: see `World.touched_since`), and the characters in it with the stamp they were built
    at (the latest stamp of the blocks under the square: a block's stamp only grows, to the newest count, so the
    latest changes whenever one of them does) and the count of moves that stamp was last read at (no move since: no
    need to read it again)."""

    __slots__ = ("bounds", "blocks", "block_stamps", "rows", "legend", "tiles_at", "tiles", "tiles_on", "people_at", "people_moves", "people")

    def __init__(self, w: World, bounds: tuple[int, int, int, int]):
        x0, x1, y0, y1 = self.bounds = bounds
        across = (w.width >> CHUNK_BITS) + 1
        self.blocks = tuple(cy * across + cx for cy in range(y0 >> CHUNK_BITS, (y1 >> CHUNK_BITS) + 1)
                            for cx in range(x0 >> CHUNK_BITS, (x1 >> CHUNK_BITS) + 1))
        # The stamps of those blocks in one call (a square over one block is given its stamp in a tuple too).
        self.block_stamps = itemgetter(*self.blocks, self.blocks[0])
        glyph_rows, self.legend = _statics(w)
        self.rows = ReadOnlyList([glyph_rows[y][x0:x1 + 1] for y in range(y0, y1 + 1)])
        self.tiles_at = self.people_at = self.people_moves = -1
        self.tiles: list[dict[str, Any]] = ReadOnlyList()
        self.tiles_on: list[int] = []
        self.people: tuple[list[dict[str, Any]], list[str], list[int], int, int] = ([], [], [], 0, 0)


def _square_at(w: World, p: int) -> _Square:
    """The view square around tile `p`: kept per tile, as its bounds are (`World.view_bounds`)."""
    at = w.kept.square_at
    square = at.get(p)
    if square is None:
        square = at[p] = _square(w, w.view_bounds(p))
    return square


def _square(w: World, bounds: tuple[int, int, int, int]) -> _Square:
    squares = w.kept.squares
    if squares is None:
        squares = w.kept.squares = {}
    held = squares.get(bounds)
    if held is None:
        held = squares[bounds] = _Square(w, bounds)
    return held


def _changed_in(w: World, at: int, bounds: tuple[int, int, int, int]) -> list[int] | None:
    """The tiles of this square touched after count `at`, each once and in order, or None when so many were
    touched (or so long ago) that the square is better built again."""
    held = w.kept.touched_since
    if held is None or held[0] != at or held[1] != w.touches:  # found once for all the squares built at `at`
        since = w.touched_since(at)
        width = w.width
        found = None if since is None or len(since) > PATCHED_MOST else [(p, p % width, p // width) for p in sorted(set(since))]
        held = w.kept.touched_since = (at, w.touches, found)
    found = held[2]
    if found is None:
        return None
    x0, x1, y0, y1 = bounds
    return [p for p, x, y in found if x0 <= x <= x1 and y0 <= y <= y1]


def _update_tiles(w: World, square: _Square, bounds: tuple[int, int, int, int]) -> None:
    """The tiles holding something (node, structure, items) of one view square, row by row, brought up to the
    current count of touches: kept for the square and patched at the tiles changed since (see
    `World.touched_since`). Asked by `observe` only when the count moved on (most observations find it has not)."""
    changed = _changed_in(w, square.tiles_at, bounds)
    if changed is None:
        tiles, square.tiles_on = _tiles_in(w, bounds)
        square.tiles = ReadOnlyList(tiles)
    elif changed:
        tiles, square.tiles_on = _patched_tiles(w, square.tiles, square.tiles_on, changed)
        square.tiles = ReadOnlyList(tiles)
    square.tiles_at = w.touches


def _patched_tiles(w: World, tiles: list[dict[str, Any]], on: list[int], changed: list[int]) -> tuple[list[dict[str, Any]], list[int]]:
    """A square's tiles (and the tile of each) with these tiles as they are now: copies, since observations
    already given hold the old ones."""
    tiles, on = tiles[:], on[:]
    fresh = _fresh_tiles(w)
    for p in changed:
        tile = fresh.get(p, False)
        if tile is False:
            y, x = divmod(p, w.width)
            tile = fresh[p] = _tile_at(w, p, x, y)
        i = bisect_left(on, p)
        if i < len(on) and on[i] == p:
            if tile is None:
                del tiles[i], on[i]
            else:
                tiles[i] = tile
        elif tile is not None:
            tiles.insert(i, tile)
            on.insert(i, p)
    return tiles, on


def _fresh_tiles(w: World) -> dict[int, dict[str, Any] | None]:
    """The records of tiles changed, built at the current count of touches and shared by the squares over them."""
    held = w.kept.fresh_tiles
    if held is None or held[0] != w.touches:
        held = w.kept.fresh_tiles = (w.touches, {})
    return held[1]


def _tile_at(w: World, p: int, x: int, y: int) -> dict[str, Any] | None:
    """The record of tile `p` at (x, y) in a view, or None when it holds nothing to show."""
    if p in w.nodes or p in w.structures or p in w.ground:
        tile = _add_features({"x": x, "y": y}, w.tile_snapshot(p))
        if len(tile) > 2:
            return ReadOnlyDict(tile)
    return None


def _tiles_in(w: World, bounds: tuple[int, int, int, int]) -> tuple[list[dict[str, Any]], list[int]]:
    """The tiles holding something in a view square, row by row, and the tile of each.

    They come from blocks of the map, each built once until a tile in it changes and shared by every
    view square over it.
    """
    x0, x1, y0, y1 = bounds
    stamps, across, width = w.chunk_stamps(), (w.width >> CHUNK_BITS) + 1, w.width
    blocks = w.kept.blocks
    if blocks is None:
        blocks = w.kept.blocks = {}
    tiles: list[dict[str, Any]] = []
    on: list[int] = []
    columns = range(x0 >> CHUNK_BITS, (x1 >> CHUNK_BITS) + 1)
    for y in range(y0, y1 + 1):
        cy = y >> CHUNK_BITS
        for cx in columns:
            k = cy * across + cx
            held = blocks.get(k)
            if held is None or held[0] != stamps[k]:
                held = blocks[k] = (stamps[k], _block_tiles(w, cx, cy))
            row = held[1].get(y)
            if row is not None:
                ps, found = row
                a, b = bisect_left(ps, y * width + x0), bisect_right(ps, y * width + x1)
                tiles.extend(found[a:b])
                on.extend(ps[a:b])
    return tiles, on


def _block_tiles(w: World, cx: int, cy: int) -> dict[int, tuple[list[int], list[dict[str, Any]]]]:
    """The tiles holding something in one block of the map, by row: the tiles themselves and their records, in order."""
    width = w.width
    x0, y0 = cx << CHUNK_BITS, cy << CHUNK_BITS
    x1, y1 = min(x0 + (1 << CHUNK_BITS), width), min(y0 + (1 << CHUNK_BITS), w.height)
    rows: dict[int, tuple[list[int], list[dict[str, Any]]]] = {}
    for y in range(y0, y1):
        row = y * width
        ps, tiles = [], []
        for x in range(x0, x1):
            tile = _tile_at(w, row + x, x, y)
            if tile is not None:
                ps.append(row + x)
                tiles.append(tile)
        if tiles:
            rows[y] = (ps, tiles)
    return rows


def _characters_in(w: World, square: _Square, bounds: tuple[int, int, int, int], agent: str, p: int) -> list[dict[str, Any]]:
    """The other characters in a view square, row by row and by id on a tile, for `agent` standing on tile `p`.
    Everyone in a square is listed once per square until a character enters or leaves a block under it (see
    `World.chunk_moves`); characters sharing a square share the records. The agent is found among those on its
    tile (the list is by tile, and by id on a tile), not by reading the ids of all the others."""
    if square.people_moves != w.moves:  # someone moved since the square was last checked: was it under the square?
        stamps = w.chunk_moved or w.chunk_moves()
        at = max(square.block_stamps(stamps))
        if at != square.people_at:
            square.people, square.people_at = _present(w, bounds), at
        square.people_moves = w.moves
    records, ids, ps, a, b = square.people
    on_tile = bisect_right(ps, p, a, b)
    i = bisect_left(ids, agent, bisect_left(ps, p, a, b), on_tile)  # ids on a tile are in order: a crowd's is long
    if i == on_tile or ids[i] != agent:
        return records[a:b]
    others = records[a:b]
    del others[i - a]
    return others


def _present(w: World, bounds: tuple[int, int, int, int]) -> tuple[list[dict[str, Any]], list[str], list[int], int, int]:
    """The record of every character in a view square, row by row and by id on a tile, and their ids and tiles in
    the same order, as the lists holding them and where in those they are (from, to): read from the rows of the
    map's occupied tiles. At a count of moves, the first square over
    some columns starting in some `BAND_BITS` rows reads its own rows; the next ones cut theirs from a band of
    those columns over every row such a square may cover, built then: in a crowd many squares share their columns,
    and a square read alone costs what it did."""
    x0, x1, y0, y1 = bounds
    held = w.kept.occupied_rows
    if held is None or held[0] != w.moves:  # once per move
        held = w.kept.occupied_rows = (w.moves, _occupied_rows(w), {})
    by_row, bands = held[1], held[2]
    top = y0 >> BAND_BITS << BAND_BITS
    key = (x0, x1, top)
    band = bands.get(key, False)
    if band is False:
        bands[key] = None
        records, ids, ps = _rows_present(by_row, w.width, bounds)
        return records, ids, ps, 0, len(ids)
    if band is None:
        rows = range(top, top + (1 << BAND_BITS) + 2 * w.needs.view_radius)
        band = bands[key] = _band(by_row, w.width, x0, x1, rows)
    ps, ids, records = band  # shared by the squares cut from it, not copied (read-only)
    width = w.width
    return records, ids, ps, bisect_left(ps, y0 * width), bisect_left(ps, (y1 + 1) * width)


def _rows_present(by_row: dict[int, tuple[list[int], list[str], list[dict[str, Any]]]], width: int,
                  bounds: tuple[int, int, int, int]) -> tuple[list[dict[str, Any]], list[str], list[int]]:
    """`_present` read from the square's own rows."""
    x0, x1, y0, y1 = bounds
    records: list[dict[str, Any]] = []
    ids: list[str] = []
    ps: list[int] = []
    for y in range(y0, y1 + 1):
        row = by_row.get(y)
        if row is not None:
            row_ps, row_ids, row_records = row
            a, b = bisect_left(row_ps, y * width + x0), bisect_right(row_ps, y * width + x1)
            records.extend(row_records[a:b])
            ids.extend(row_ids[a:b])
            ps.extend(row_ps[a:b])
    return records, ids, ps


def _band(by_row: dict[int, tuple[list[int], list[str], list[dict[str, Any]]]], width: int, x0: int, x1: int,
          rows: range) -> tuple[list[int], list[str], list[dict[str, Any]]]:
    """The tile, id and record of every character in columns x0 to x1 of these rows, row by row."""
    ps: list[int] = []
    ids: list[str] = []
    records: list[dict[str, Any]] = []
    for y in rows:
        row = by_row.get(y)
        if row is not None:
            row_ps, row_ids, row_records = row
            a, b = bisect_left(row_ps, y * width + x0), bisect_right(row_ps, y * width + x1)
            if a < b:
                ps.extend(row_ps[a:b])
                ids.extend(row_ids[a:b])
                records.extend(row_records[a:b])
    return ps, ids, records


def _occupied_rows(w: World) -> dict[int, tuple[list[int], list[str], list[dict[str, Any]]]]:
    """For each row of the map with a character on it: the tile, id and record of each character on
    it, by column and by id on a tile. A character's record is kept while it stands still."""
    width, occupants, chars = w.width, w.occupants, w.chars
    records = w.kept.character_records
    if records is None:
        records = w.kept.character_records = {}
    by_row: dict[int, tuple[list[int], list[str], list[dict[str, Any]]]] = {}
    for p in sorted(occupants):
        y, x = divmod(p, width)
        row = by_row.get(y)
        if row is None:
            row = by_row[y] = ([], [], [])
        for other in sorted(occupants[p]):
            held = records.get(other)
            if held is None or held[0] != p:
                held = records[other] = (p, ReadOnlyDict(id=other, name=chars[other].name, x=x, y=y))
            row[0].append(p)
            row[1].append(other)
            row[2].append(held[1])
    return by_row


def remembered_page(w: World, c: Character, start: int, limit: int | None) -> tuple[list[dict[str, Any]], int]:
    """One page of the remembered tiles out of view, ordered by position, and how many there are: only the
    page's tiles are built."""
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    width = w.width
    out_of_view = [p for p in c.memory.tiles() if not (y0 <= p // width <= y1 and x0 <= p % width <= x1)]
    end = len(out_of_view) if limit is None else min(len(out_of_view), start + limit)
    return _out_of_view(w, c, out_of_view[start:end]), len(out_of_view)


def remembered(w: World, c: Character) -> list[dict[str, Any]]:
    """Tiles seen before and out of view now, each with the tick it was last seen."""
    return _out_of_view(w, c, c.memory.tiles())


def remembered_since(w: World, c: Character, tick: int) -> list[dict[str, Any]]:
    """The tiles out of view now that were remembered at or after `tick`, found in the memory's ticks seen.

    An agent asking for the changes since its last decision asks again each tick it is busy: the answer is kept
    per character with that tick, its place and the memory's stamp (which moves whenever it remembers), and given
    again while they are the same; kept only once the memory's newest tick is before now, as the memory may still
    change within this tick."""
    memory = c.memory
    if memory.newest < tick:
        return []  # nothing remembered since: most observations of a character standing still
    kept = w.kept.remembered_since
    held = kept.get(c.id)
    if held is not None and held[2] == memory.stamp and held[0] == tick and held[1] == c.pos:
        return held[3]
    out = _out_of_view(w, c, memory.since(tick))
    if memory.newest < w.tick:  # kept, so shared by its next observations: read-only
        out = freeze(out)
        kept[c.id] = (tick, c.pos, memory.stamp, out)
    return out


def _out_of_view(w: World, c: Character, tiles: list[int]) -> list[dict[str, Any]]:
    """These remembered tiles, in this order, less those in view now (an observation shows them live)."""
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    width, names, terrain, memory = w.width, w.terrain_names, w.terrain, c.memory
    pages, records = memory.pages, memory.contents.records
    out = []
    for p in tiles:
        y, x = divmod(p, width)
        if x0 <= x <= x1 and y0 <= y <= y1:
            continue
        page, i = pages[p >> PAGE_BITS], p & IN_PAGE
        tile = {"x": x, "y": y, "terrain": names[terrain[p]], "seen_tick": page[i] - 1}
        held = page[PAGE + i]
        if held:  # most remembered tiles hold nothing (record 0): no call
            _add_features(tile, (None, *records[held]))
        out.append(tile)
    return out


def known_tiles(w: World, c: Character) -> set[int]:
    """Every tile the character has seen: its memory plus its current view."""
    x0, x1, y0, y1 = w.view_bounds(c.pos)
    view = {y * w.width + x for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
    return view | set(c.memory.tiles())
