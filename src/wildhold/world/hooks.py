"""The running list of world parts, apart from the parts themselves.

The core actions consult the parts (yield bonuses, recipe locks) without importing them, so the
core registers its actions first and the parts theirs after, in `PARTS` order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wildhold.world.parts.base import Part

PARTS: list[Part] = []
