"""Where every character stands, as one array in the order characters joined (a character's row never changes:
characters are never removed). Who stands within a distance of a tile is then one pass in numpy, not a loop over
characters: a `say` in a crowd of thousands asked it of every character for each word said."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from wildhold.world.state import Character


class Positions:
    """`ids` (a numpy array of the character ids, by row), `row` (id -> row) and `tiles` (the tile each stands on,
    by row). `World.relocate`, the only writer of positions, writes `tiles` as it moves a character."""

    __slots__ = ("ids", "row", "tiles")

    def __init__(self, chars: dict[str, Character]) -> None:
        self.ids = np.array(list(chars), dtype=object)
        self.row = {agent: i for i, agent in enumerate(chars)}
        self.tiles = np.fromiter((c.pos for c in chars.values()), dtype=np.int64, count=len(chars))

    def same_as(self, other: Positions) -> bool:
        return self.row == other.row and np.array_equal(self.tiles, other.tiles)

    def within(self, p: int, radius: int, width: int, but: str | None = None) -> np.ndarray:
        """The rows of the characters within `radius` of tile `p` by `World.distance` (Chebyshev), but `but`, in
        row order: the rows y +- radius are one span of tile indexes, the columns are then x +- radius."""
        x, y = p % width, p // width
        tiles = self.tiles
        rows = np.flatnonzero((tiles >= (y - radius) * width) & (tiles < (y + radius + 1) * width))
        columns = tiles[rows] % width
        rows = rows[(columns >= x - radius) & (columns <= x + radius)]
        if but is not None:
            rows = rows[rows != self.row[but]]
        return rows
