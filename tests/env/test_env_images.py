"""The view as an image: drawn from the colours and sprites in looks.yaml, written to a PNG a viewer opens."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import wildhold.env  # noqa: F401  (registers the ids)
from wildhold.content import default_content
from wildhold.content.loader import ContentError
from wildhold.looks import LOOKS_FILE, default_looks, load_looks, png_bytes


def _read_png(data: bytes) -> np.ndarray:
    """Decode the 8-bit RGB, unfiltered PNG `png_bytes` writes (enough to check it round-trips)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert size is not None
    w, h = size
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert not raw[:, 0].any()
    return raw[:, 1:].reshape(h, w, 3)


def test_an_image_observation_is_written_to_a_png(tmp_path: Path):
    env = gym.make("Wildhold/Tiny-v1", observation=("symbolic", "image"), render_mode="rgb_array")
    obs, info = env.reset(seed=4)
    image = obs["image"]
    spec = default_looks()
    assert image.shape == (9 * spec.tile_px, 9 * spec.tile_px, 3) and image.dtype == np.uint8
    assert np.array_equal(env.render(), image)
    centre = image[4 * spec.tile_px:5 * spec.tile_px, 4 * spec.tile_px:5 * spec.tile_px]
    person = np.array([[c == "#" for c in row] for row in spec.sprites[spec.self_.sprite]])
    assert (centre[person] == spec.self_.colour).all(), "the character stands at the centre, in its colour"
    view = env.unwrapped.seat.last["view"]
    glyph = view["rows"][0][0]  # the top-left tile of this view is inside the map, seen live
    terrain = next(name for name, t in env.unwrapped.content.terrain.items() if t.glyph == glyph)
    assert (view["x0"], view["y0"]) == (obs["status"][0] - 4, obs["status"][1] - 4), "this seed's view is not clipped"
    assert (image[:spec.tile_px, :spec.tile_px] == spec.terrain[terrain]).all(axis=-1).any(), "its terrain shows"
    path = tmp_path / "view.png"
    path.write_bytes(png_bytes(image.shape[1], image.shape[0], image.tobytes()))
    assert np.array_equal(_read_png(path.read_bytes()), image)


def test_every_thing_the_view_shows_needs_a_colour(tmp_path: Path):
    text = LOOKS_FILE.read_text().replace("  sand: [220, 200, 140]\n", "")
    broken = tmp_path / "looks.yaml"
    broken.write_text(text)
    with pytest.raises(ContentError, match="'sand' has no colour"):
        load_looks(broken, default_content())
