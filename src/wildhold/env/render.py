"""The character's view drawn as an RGB image: each tile its terrain's colour, then the sprites of what stands on
it (nodes, structures, creatures, characters, the character itself at the centre), colours and sprites from
`env.yaml`; and a PNG writer (numpy, zlib) so an image can be saved without an imaging library."""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING

import numpy as np

from wildhold.env.spec import Look, RenderSpec

if TYPE_CHECKING:
    from wildhold.env.observations import Encoder


class Renderer:
    def __init__(self, spec: RenderSpec, enc: Encoder):
        self.px = px = spec.tile_px
        names = list(spec.sprites)
        self.sprites = np.array([[[ch == "#" for ch in row] for row in spec.sprites[n]] for n in names], dtype=bool)
        sprite = {n: i for i, n in enumerate(names)}
        self.terrain = np.array([spec.unknown] + [spec.terrain[n] for n in enc.terrain], dtype=np.uint8)

        def layer(order: list[str], looks: dict[str, Look]) -> tuple[np.ndarray, np.ndarray]:
            colours = np.array([(0, 0, 0)] + [looks[n].colour for n in order], dtype=np.uint8)
            masks = np.zeros((len(order) + 1, px, px), dtype=bool)
            for i, n in enumerate(order):
                masks[i + 1] = self.sprites[sprite[looks[n].sprite]]
            return colours, masks

        # view channel -> (colours, masks) by code; characters are a count, drawn with one look
        self.layers = {1: layer(enc.structures, spec.structures), 2: layer(enc.nodes, spec.nodes),
                       3: layer(enc.creatures, spec.creatures)}
        self.character = layer(["c"], {"c": spec.character})
        self.me = self.sprites[sprite[spec.self_.sprite]], np.array(spec.self_.colour, dtype=np.uint8)
        self.centre = enc.radius

    def draw(self, view: np.ndarray) -> np.ndarray:
        """(size*px, size*px, 3) uint8 from the view channels (`Encoder.view`)."""
        s, px = view.shape[1], self.px
        img = np.broadcast_to(self.terrain[view[0]][:, None, :, None, :], (s, px, s, px, 3)).copy()
        for channel, (colours, masks) in ((2, self.layers[2]), (1, self.layers[1]), (3, self.layers[3]),
                                          (4, self.character)):
            codes = view[channel] if channel != 4 else (view[4] > 0).astype(np.uint8)
            if not codes.any():
                continue
            mask = masks[codes].transpose(0, 2, 1, 3)[..., None]  # (s, px, s, px, 1)
            img = np.where(mask, colours[codes][:, None, :, None, :], img)
        c = self.centre
        sprite, colour = self.me
        cell = img[c, :, c, :, :]
        cell[sprite] = colour
        return np.ascontiguousarray(img.reshape(s * px, s * px, 3))


def png_bytes(image: np.ndarray) -> bytes:
    """An (h, w, 3) uint8 image as PNG bytes (8-bit RGB, no filter)."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError("an image is (height, width, 3) uint8")
    h, w, _ = image.shape
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
