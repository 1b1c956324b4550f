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
    add_action,
    require_item,
    suggest,
    target,
)
from wildhold.world.actions import core
from wildhold.world.actions.core import find_path, known_walkable, neighbours, station_in_reach

for _action in core.ACTIONS:
    add_action(_action)

import wildhold.world.parts  # noqa: E402,F401  (installs the parts' actions, after the core's)

__all__ = [
    "DIRECTIONS", "REGISTRY", "ActionArgs", "ActionDef", "NoArgs", "Plan", "Target", "check_registry", "cost",
    "did_you_mean", "add_action", "require_item", "suggest", "target", "core", "find_path", "known_walkable",
    "neighbours", "station_in_reach",
]
