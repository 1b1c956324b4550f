"""What characters remember of the map, held in arrays.

A tile's contents (its node and amount, its structure and owner, the items on the ground) are recorded once per
change in the world's `Contents` table, which only grows; a character's `Memory` holds, for each tile of the map,
one more than the tick it last saw it (0: never) and the index of what the tile held then in that table (0: nothing).
It holds them in pages of consecutive tiles, each made when a tile of it is first remembered: a crowd of ten
thousand whose members each take a step on a 384x384 map holds a few rows each, where a whole map per character
would be 1.2 MB (12 GB for the crowd, and most of its step went to making them). A remembered tile is
`(tick, node, amount, structure, owner, items)`, as an observation shows it. A hundred characters who know the
whole default map hold under 10 MB between them (`wildhold bench engine`), where a dictionary per character held 75.
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import Callable, Iterator

import numpy as np

BARE = (None, 0, None, None, ())  # a tile holding nothing: index 0 of every table
RECENT_TICKS = 8  # ticks of remembering listed by tick (an agent asks for the changes since its last look)
RECENT_MOST = 1024  # tiles listed in all: past this (a long walk in one tick), `since` reads the pages until later ticks
PAGE_BITS = 8
PAGE = 1 << PAGE_BITS  # consecutive tiles a memory makes room for at once (see `Memory`)
IN_PAGE = PAGE - 1  # a tile's place in its page: `tile & IN_PAGE`
_EMPTY_PAGE = bytes(2 * PAGE * 4)  # a page's two arrays of int32, nothing remembered


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
    """One character's memory of the map, in pages of `PAGE` consecutive tiles made when it first remembers a tile
    of one: per tile, one more than the tick it was last seen (0: never) and, `PAGE` places on, what it held then
    (an index into `contents`). Beside them, how many tiles are remembered, the newest tick, and a count of the
    remembering done (a stamp for what observations keep). The tiles remembered in its last few ticks of remembering
    are also listed by tick (`recent`), so the changes since a recent tick are read from those, not from the map."""

    __slots__ = ("pages", "contents", "size", "newest", "stamp", "recent", "listed_from")

    def __init__(self, contents: Contents) -> None:
        self.pages: dict[int, array] = {}  # page (tile >> PAGE_BITS) -> [seen ticks + 1 | records held]
        self.contents = contents
        self.size = 0
        self.newest = -1
        self.stamp = 0
        # (tick, tiles remembered then) for its latest ticks of remembering from `listed_from` on: every tile
        # remembered at or after the first one's tick is in them (`World.remember_leaving` fills them)
        self.recent: deque[tuple[int, array]] = deque(maxlen=RECENT_TICKS)
        self.listed_from = 0

    def page(self, k: int) -> array:
        """Page `k`, made now if it was not (to remember into)."""
        got = self.pages.get(k)
        if got is None:
            got = self.pages[k] = array("i", _EMPTY_PAGE)
        return got

    def __len__(self) -> int:
        return self.size

    def __contains__(self, p: int) -> bool:
        got = self.pages.get(p >> PAGE_BITS)
        return got is not None and got[p & IN_PAGE] > 0

    def get(self, p: int) -> tuple | None:
        """The tile as remembered, `(tick, node, amount, structure, owner, items)`, or None if never seen."""
        got = self.pages.get(p >> PAGE_BITS)
        if got is None or not got[p & IN_PAGE]:
            return None
        return (got[p & IN_PAGE] - 1, *self.contents.records[got[PAGE + (p & IN_PAGE)]])

    def tiles(self) -> list[int]:
        """The remembered tiles, in tile order."""
        return self._where(lambda seen: seen > 0)

    def since(self, tick: int) -> list[int]:
        """The tiles remembered at or after `tick`, in tile order."""
        if self.newest < tick:
            return []
        recent = self.recent
        if recent and recent[0][0] <= tick:
            return sorted({p for at, tiles in recent if at >= tick for p in tiles})
        return self._where(lambda seen: seen > tick)

    def listed(self, tick: int) -> array:
        """The tiles remembered at `tick` (the newest), to add to. Past `RECENT_MOST` in all (a long walk in one
        tick), the lists are dropped and kept again from the next tick: until then `since` reads the pages."""
        recent = self.recent
        if recent and sum(len(tiles) for _, tiles in recent) > RECENT_MOST:
            recent.clear()
            self.listed_from = tick + 1
        if tick < self.listed_from:
            return array("i")  # not kept: this tick is read from the pages
        if not recent or recent[-1][0] != tick:
            recent.append((tick, array("i")))
        return recent[-1][1]

    def items(self) -> Iterator[tuple[int, tuple]]:
        """(tile, as remembered), in tile order."""
        pages, records = self.pages, self.contents.records
        for p in self.tiles():
            got, i = pages[p >> PAGE_BITS], p & IN_PAGE
            yield p, (got[i] - 1, *records[got[PAGE + i]])

    def remember(self, p: int, tick: int, held: int) -> None:
        """Tile `p`, seen at `tick`, held `held` (an index into `contents`)."""
        got, i = self.page(p >> PAGE_BITS), p & IN_PAGE
        if not got[i]:
            self.size += 1
        got[i] = tick + 1
        got[PAGE + i] = held
        self.newest = max(self.newest, tick)
        self.stamp += 1
        self.recent.clear()  # not listed: `since` reads the pages for this tick and before
        self.listed_from = max(self.listed_from, tick + 1)

    def copy(self) -> Memory:
        out = Memory.__new__(Memory)
        out.contents = self.contents
        out.pages = {k: array("i", got) for k, got in self.pages.items()}
        out.size, out.newest, out.stamp = self.size, self.newest, self.stamp
        out.recent = deque(((at, array("i", tiles)) for at, tiles in self.recent), maxlen=RECENT_TICKS)
        out.listed_from = self.listed_from
        return out

    def nbytes(self) -> int:
        return sum(got.itemsize * len(got) for got in self.pages.values())

    def _where(self, test: Callable[[np.ndarray], np.ndarray]) -> list[int]:
        """The tiles whose seen tick (plus one) passes `test`, in tile order, found page by page."""
        found = [np.flatnonzero(test(np.frombuffer(got, dtype=np.int32, count=PAGE))) + (k << PAGE_BITS)
                 for k, got in sorted(self.pages.items())]
        return np.concatenate(found).tolist() if found else []
