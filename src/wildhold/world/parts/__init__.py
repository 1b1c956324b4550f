"""The world's subsystems, in the order their hooks run each tick."""

from wildhold.world.parts.base import Part

PARTS: list[Part] = []

__all__ = ["PARTS", "Part"]
