"""What characters remember of the map, held in arrays.

A tile's contents (its node and amount, its structure and owner, the items on the ground) are recorded once per
change in the world's `Contents` table, which only grows; a character's `Memory` holds, for each tile of the map,
one more than the tick it last saw it (0: never) and the index of what the tile held then in that table (0: nothing):
both start at zero, so their pages cost nothing until a tile on them is remembered (a crowd of ten thousand whose
members each take a step remembers a few rows each of a 384x384 map, where filling whole arrays took most of the
step). A remembered tile is `(tick, node, amount, structure, owner, items)`, as an observation shows it. A hundred
characters who know the whole default map hold 7.7 MB between them (`wildhold bench engine`), where a dictionary per
character held 75.
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import Iterator

import numpy as np

BARE = (None, 0, None, None, ())  # a tile holding nothing: index 0 of every table
RECENT_TICKS = 8  # ticks of remembering listed by tick (an agent asks for the changes since its last look)
RECENT_MOST = 1024  # tiles listed in all: past this (a long walk in one tick), `since` reads the array until later ticks


class Contents:
    """Every distinct record of a tile's contents remembered so far, by index; index 0 is a bare tile. The world
    keeps, per tile, the index of what it holds now while the tile stays as it is (`World.touched` forgets it)."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[tuple] = [BARE]

    def add(self, record: tuple) -> int:
        self.records.append(record)
        return len(self.records) - 1


class Memory:
    """One character's memory of the map: `seen` (one more than the tick each tile was last seen, 0 never) and `held`
    (what it held then, an index into `contents`), with how many tiles are remembered, the newest tick, and a count of the
    remembering done (a stamp for what observations keep). The arrays are made when it first remembers a tile: a
    crowd that never moved holds none. The tiles remembered in its last few ticks of remembering are also listed
    by tick (`recent`), so the changes since a recent tick are read from those, not from the whole map."""

    __slots__ = ("tiles_in_map", "seen", "held", "contents", "size", "newest", "stamp", "recent", "listed_from")

    def __init__(self, tiles: int, contents: Contents) -> None:
        self.tiles_in_map = tiles
        self.seen = array("i")
        self.held = array("i")
        self.contents = contents
        self.size = 0
        self.newest = -1
        self.stamp = 0
        # (tick, tiles remembered then) for its latest ticks of remembering from `listed_from` on: every tile
        # remembered at or after the first one's tick is in them (`World.remember_leaving` fills them)
        self.recent: deque[tuple[int, array]] = deque(maxlen=RECENT_TICKS)
        self.listed_from = 0

    def arrays(self) -> tuple[memoryview, memoryview]:
        """`seen` and `held`, made now if they were not (to remember into): zeros the system hands out page by page
        as they are written."""
        if not self.seen:
            self.seen = memoryview(np.zeros(self.tiles_in_map, dtype=np.int32))
            self.held = memoryview(np.zeros(self.tiles_in_map, dtype=np.int32))
        return self.seen, self.held

    def __len__(self) -> int:
        return self.size

    def __contains__(self, p: int) -> bool:
        return self.size > 0 and self.seen[p] > 0

    def get(self, p: int) -> tuple | None:
        """The tile as remembered, `(tick, node, amount, structure, owner, items)`, or None if never seen."""
        tick = self.seen[p] - 1 if self.size else -1
        return None if tick < 0 else (tick, *self.contents.records[self.held[p]])

    def tiles(self) -> list[int]:
        """The remembered tiles, in tile order."""
        return np.flatnonzero(self._seen()).tolist() if self.size else []

    def since(self, tick: int) -> list[int]:
        """The tiles remembered at or after `tick`, in tile order."""
        if self.newest < tick:
            return []
        recent = self.recent
        if recent and recent[0][0] <= tick:
            return sorted({p for at, tiles in recent if at >= tick for p in tiles})
        return np.flatnonzero(self._seen() > tick).tolist()

    def listed(self, tick: int) -> array:
        """The tiles remembered at `tick` (the newest), to add to. Past `RECENT_MOST` in all (a long walk in one
        tick), the lists are dropped and kept again from the next tick: until then `since` reads the array."""
        recent = self.recent
        if recent and sum(len(tiles) for _, tiles in recent) > RECENT_MOST:
            recent.clear()
            self.listed_from = tick + 1
        if tick < self.listed_from:
            return array("i")  # not kept: this tick is read from the array
        if not recent or recent[-1][0] != tick:
            recent.append((tick, array("i")))
        return recent[-1][1]

    def items(self) -> Iterator[tuple[int, tuple]]:
        """(tile, as remembered), in tile order."""
        seen, held, records = self.seen, self.held, self.contents.records
        for p in self.tiles():
            yield p, (seen[p] - 1, *records[held[p]])

    def remember(self, p: int, tick: int, held: int) -> None:
        """Tile `p`, seen at `tick`, held `held` (an index into `contents`)."""
        seen, kept = self.arrays()
        if not seen[p]:
            self.size += 1
        seen[p] = tick + 1
        kept[p] = held
        self.newest = max(self.newest, tick)
        self.stamp += 1
        self.recent.clear()  # not listed: `since` reads the array for this tick and before
        self.listed_from = max(self.listed_from, tick + 1)

    def copy(self) -> Memory:
        out = Memory.__new__(Memory)
        out.tiles_in_map, out.contents = self.tiles_in_map, self.contents
        out.seen, out.held = _copied(self.seen), _copied(self.held)
        out.size, out.newest, out.stamp = self.size, self.newest, self.stamp
        out.recent = deque(((at, array("i", tiles)) for at, tiles in self.recent), maxlen=RECENT_TICKS)
        out.listed_from = self.listed_from
        return out

    def nbytes(self) -> int:
        return self.seen.itemsize * len(self.seen) + self.held.itemsize * len(self.held)

    def _seen(self) -> np.ndarray:
        return np.frombuffer(self.seen, dtype=np.int32)


def _copied(values: array | memoryview) -> array | memoryview:
    return memoryview(np.array(values, dtype=np.int32)) if values else array("i")
