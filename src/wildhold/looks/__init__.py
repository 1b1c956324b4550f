"""A character's view drawn as an RGB image, from its observation alone and the colours and sprites of
`content/data/looks.yaml`; and a PNG writer. Pure Python (no imaging library): each distinct tile is drawn once
and kept, so a picture is a join of cached rows. The RL envs' image observations and the `view_image` query
draw with it, so every face shows the same picture.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from wildhold.content import Content, default_content
from wildhold.content.loader import ContentError, read_side_file

LOOKS_FILE = Path(__file__).parents[1] / "content" / "data" / "looks.yaml"
FILE = "looks.yaml"
Colour = tuple[int, int, int]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Look(Frozen):
    colour: Colour
    sprite: str

    @field_validator("colour")
    @classmethod
    def _rgb(cls, v: Colour) -> Colour:
        if not all(0 <= c <= 255 for c in v):
            raise ValueError("each colour component is 0..255")
        return v


class Looks(Frozen):
    tile_px: int = Field(ge=1, le=32)
    unknown: Colour
    character: Look
    self_: Look = Field(alias="self")
    terrain: dict[str, Colour]
    nodes: dict[str, Look]
    structures: dict[str, Look]
    creatures: dict[str, Look]
    sprites: dict[str, tuple[str, ...]]


def check_looks(looks: Looks, content: Content) -> None:
    """Every thing a view can show has a colour, every sprite named exists and is tile_px square."""
    for table in ("terrain", "nodes", "structures", "creatures"):
        for name in getattr(content, table):
            if name not in getattr(looks, table):
                raise ContentError(FILE, table, f"{name!r} has no colour: every {table} entry needs one")
    px = looks.tile_px
    for name, rows in looks.sprites.items():
        if len(rows) != px or any(len(row) != px or set(row) - {"#", "."} for row in rows):
            raise ContentError(FILE, f"sprites.{name}", f"a sprite is {px} rows of {px} '#' or '.'")
    for look in [looks.character, looks.self_, *looks.nodes.values(), *looks.structures.values(), *looks.creatures.values()]:
        if look.sprite not in looks.sprites:
            raise ContentError(FILE, "sprites", f"no sprite named {look.sprite!r}")


def load_looks(path: Path = LOOKS_FILE, content: Content | None = None) -> Looks:
    looks = read_side_file(path, FILE, Looks)
    check_looks(looks, content or default_content())
    return looks


@lru_cache(maxsize=1)
def default_looks() -> Looks:
    return load_looks()


ROWS_KEPT = 4096  # rows of glyphs whose terrain names are kept (a world repeats its rows; many worlds do not)
Tile = tuple[str | None, str | None, str | None, str | None, bool, bool]  # terrain, node, structure, creature, other, self


class Picture:
    """Draws observations of one content's worlds: `rgb(obs)` is (width, height, raw RGB bytes, row by row)."""

    def __init__(self, content: Content, looks: Looks | None = None):
        self.looks = looks = looks or default_looks()
        self.radius = content.needs.view_radius
        self.size = 2 * self.radius + 1
        self.px = looks.tile_px
        self.legend = {t.glyph: name for name, t in content.terrain.items()}
        self.masks = {n: [[c == "#" for c in row] for row in rows] for n, rows in looks.sprites.items()}
        self._tiles: dict[Tile, list[bytes]] = {}
        self._rows: dict[str, list[str | None]] = {}  # a row of glyphs -> its terrain names

    @property
    def width(self) -> int:
        return self.size * self.px

    def tile(self, key: Tile) -> list[bytes]:
        """The tile's pixel rows (each px * 3 bytes), drawn once per distinct tile."""
        rows = self._tiles.get(key)
        if rows is not None:
            return rows
        lk, px = self.looks, self.px
        terrain, node, structure, creature, other, me = key
        pixels = [[lk.terrain[terrain] if terrain else lk.unknown] * px for _ in range(px)]
        layers = [lk.nodes.get(node or ""), lk.structures.get(structure or ""), lk.creatures.get(creature or ""),
                  lk.character if other else None, lk.self_ if me else None]
        for look in layers:
            if look is None:
                continue
            for y, row in enumerate(self.masks[look.sprite]):
                for x, on in enumerate(row):
                    if on:
                        pixels[y][x] = look.colour
        rows = [bytes(c for colour in row for c in colour) for row in pixels]
        self._tiles[key] = rows
        return rows

    def keys(self, obs: dict[str, Any]) -> list[Tile]:
        """The tile keys of the view square, row by row, centred on the character (None terrain outside the map)."""
        r, s = self.radius, self.size
        me, view = obs["self"], obs["view"]
        bx, by = me["x"] - r, me["y"] - r
        terrain: list[str | None] = [None] * (s * s)
        x0 = view["x0"] - bx
        for k, row in enumerate(view["rows"]):
            names = self._rows.get(row)
            if names is None:
                if len(self._rows) >= ROWS_KEPT:
                    self._rows.clear()
                names = self._rows[row] = [self.legend.get(g) for g in row]
            start = (view["y0"] + k - by) * s + x0
            terrain[start:start + len(row)] = names
        extra: dict[int, list[Any]] = {}  # cell -> [node, structure, creature, another character]
        for t in view["tiles"]:
            if "node" in t or "structure" in t:
                cell = extra.setdefault((t["y"] - by) * s + t["x"] - bx, [None, None, None, False])
                if "node" in t:
                    cell[0] = t["node"]["kind"]
                if "structure" in t:
                    cell[1] = t["structure"]["kind"]
        for cr in view["creatures"]:
            extra.setdefault((cr["y"] - by) * s + cr["x"] - bx, [None, None, None, False])[2] = cr["kind"]
        for ch in view["characters"]:
            extra.setdefault((ch["y"] - by) * s + ch["x"] - bx, [None, None, None, False])[3] = True
        centre, bare = r * s + r, (None, None, None, False)
        return [(terrain[i], *(extra.get(i) or bare), i == centre) for i in range(s * s)]  # type: ignore[misc]

    def rgb(self, obs: dict[str, Any]) -> tuple[int, int, bytes]:
        keys, s, px, tile = self.keys(obs), self.size, self.px, self.tile
        out = []
        for y in range(s):
            tiles = [tile(key) for key in keys[y * s:(y + 1) * s]]
            out.extend(b"".join(t[k] for t in tiles) for k in range(px))
        return self.width, self.width, b"".join(out)

    def png(self, obs: dict[str, Any]) -> bytes:
        return png_bytes(*self.rgb(obs))


def png_bytes(width: int, height: int, rgb: bytes) -> bytes:
    """Raw RGB rows (8 bits a channel) as PNG bytes, unfiltered."""
    stride = width * 3
    if len(rgb) != stride * height:
        raise ValueError(f"{len(rgb)} bytes are not {width}x{height} RGB pixels")
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
