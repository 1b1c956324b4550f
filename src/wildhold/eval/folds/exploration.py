"""Where characters went: tiles moved, and the map they saw under fog of war."""

from __future__ import annotations

from typing import Iterable

from wildhold.eval.events import Knockdown, Moved, Spawned
from wildhold.eval.fold import Fold, MatchInfo, fold, on


@fold
class Exploration(Fold):
    """Moves, and the tiles and regions within the view radius of every tile a character stood on
    (its spawn, each move, each respawn), over the seed's worldgen."""

    writes = ("moves", "tiles_seen", "regions_seen")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.width = match.width
        self.positions: dict[str, set[int]] = {}

    @on("agent_spawned")
    def spawned(self, tick: int, ev: Spawned) -> None:
        self.positions[ev.agent] = {ev.y * self.width + ev.x}

    @on("moved")
    def moved(self, tick: int, ev: Moved) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.moves += 1
            x, y = ev.to
            self.positions[ev.agent].add(y * self.width + x)

    @on("knockdown")
    def knockdown(self, tick: int, ev: Knockdown) -> None:
        positions = self.positions.get(ev.agent)
        if positions is not None:
            x, y = ev.respawn
            positions.add(y * self.width + x)

    def finish(self) -> None:
        region, names = self.match.regions
        radius = self.match.content.needs.view_radius
        for a, am in self.agents.items():
            am.tiles_seen, seen = coverage(self.positions[a], self.width, self.match.height, radius, region)
            am.regions_seen = [names[r] for r in sorted(seen)]


def coverage(positions: Iterable[int], width: int, height: int, radius: int, region: bytes) -> tuple[int, set[int]]:
    """Tiles and regions within `radius` (a square) of any position: what the character has seen.

    Each map row is an int bitmask: positions are dilated along the row by shifts, then across rows.
    """
    rows = [0] * height
    for p in positions:
        rows[p // width] |= 1 << (p % width)
    full = (1 << width) - 1
    wide = []
    for bits in rows:
        grown = bits
        for k in range(1, radius + 1):
            grown |= (bits << k) | (bits >> k)
        wide.append(grown & full)
    seen_rows = [0] * height
    for y, bits in enumerate(wide):
        if bits:
            for yy in range(max(0, y - radius), min(height - 1, y + radius) + 1):
                seen_rows[yy] |= bits
    tiles = sum(bits.bit_count() for bits in seen_rows)
    regions: set[int] = set()
    for y, bits in enumerate(seen_rows):
        row = y * width
        while bits:
            low = bits & -bits
            x0 = low.bit_length() - 1
            run = (bits >> x0) & ~((bits >> x0) + 1)  # the run of set bits starting at x0
            length = run.bit_length()
            regions.update(region[row + x0:row + x0 + length])
            bits &= ~(run << x0)
    return tiles, regions
