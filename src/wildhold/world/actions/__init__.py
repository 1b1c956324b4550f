"""Actions, one module per subsystem, all registered in one `REGISTRY`."""

from wildhold.world.actions.registry import (
    DIRECTIONS,
    REGISTRY,
    ActionArgs,
    ActionDef,
    NoArgs,
    Plan,
    Target,
    check_registry,
    cost,
    did_you_mean,
    register,
    require_item,
    suggest,
    target,
)
from wildhold.world.actions import core  # noqa: E402  (registers the core actions)
from wildhold.world.actions.core import find_path, known_walkable, neighbours, station_in_reach
import wildhold.world.parts  # noqa: E402,F401  (the parts register their actions after the core's)

__all__ = [
    "DIRECTIONS", "REGISTRY", "ActionArgs", "ActionDef", "NoArgs", "Plan", "Target", "check_registry", "cost",
    "did_you_mean", "register", "require_item", "suggest", "target", "core", "find_path", "known_walkable",
    "neighbours", "station_in_reach",
]
