"""One colour per character, the same wherever it is drawn (the report, the replay viewer, the live page) and at
every tick: a digest of the character's name picks it, never its rank; a character whose colour a character that
joined before it already holds takes the next free one. Sweep pages colour configurations the same way."""

from __future__ import annotations

import hashlib
from typing import Iterable

# Distinguishable on white and on the map's greens, and for common colour-vision deficiencies (Okabe-Ito, then Tableau).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF")


def own_colour(name: str) -> int:
    """The palette index a name asks for: the same for the same name in every match and on every page."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % len(PALETTE)


def colours(names: Iterable[str]) -> dict[str, str]:
    """Each name's colour, the names in joining order: its own unless an earlier name holds it, then the next free
    one (once every colour is held, colours repeat)."""
    held: set[int] = set()
    out: dict[str, str] = {}
    for name in names:
        if name in out:
            continue
        i = own_colour(name)
        while i in held and len(held) < len(PALETTE):
            i = (i + 1) % len(PALETTE)
        held.add(i)
        out[name] = PALETTE[i]
    return out
