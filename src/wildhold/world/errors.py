"""Stable rejection codes: every face reports these, so clients can branch on them.

`CODES` holds the core's; each world part declares its own, added here when the part is installed."""

from __future__ import annotations

from dataclasses import dataclass

CODES: dict[str, str] = {
    "unknown_action": "No action has that name.",
    "bad_arguments": "The arguments do not match the action's schema.",
    "unknown_agent": "No character has that id.",
    "busy": "The character is still doing another operation; wait for it or cancel it.",
    "nothing_to_cancel": "There is no operation in progress.",
    "out_of_bounds": "The target is outside the map.",
    "out_of_range": "The target is beyond the character's reach.",
    "not_walkable": "That tile cannot be walked on.",
    "blocked": "A structure blocks that tile.",
    "unknown_location": "The character has never seen that tile.",
    "no_path": "No known walkable path leads there within the path limit.",
    "path_blocked": "The path became blocked on the way.",
    "no_node": "There is no resource node there.",
    "depleted": "The resource node is empty; it regrows later.",
    "missing_tool": "This needs a tool equipped in hand.",
    "unknown_recipe": "No recipe has that name.",
    "wrong_recipe_kind": "That recipe belongs to the other action (craft or cook).",
    "recipe_locked": "That recipe is not open to this character yet.",
    "no_station": "The recipe's station is not within reach.",
    "missing_materials": "The character does not carry what this needs.",
    "not_enough_energy": "The character has too little energy; eat, rest or sleep.",
    "unknown_item": "No item has that name.",
    "not_in_inventory": "The character does not carry that item.",
    "not_edible": "That item cannot be eaten.",
    "not_equippable": "That item cannot be equipped.",
    "slot_empty": "Nothing is equipped in that slot.",
    "not_placeable": "That item cannot be placed.",
    "occupied": "Something already stands on that tile.",
    "no_bed": "The character is not on a bed it may use.",
    "nothing_here": "There is no such item on the ground here.",
    "knocked_down": "The character was knocked down and the operation ended.",
}


_set = object.__setattr__  # how a frozen dataclass sets its fields


@dataclass(frozen=True, slots=True, init=False)
class Rejected:
    """A refusal made before anything changed: a stable code and a sentence a model can act on."""

    code: str
    message: str

    def __init__(self, code: str, message: str) -> None:
        """The frozen dataclass's own init and validation in one call: an action mask's check makes one for about
        every other candidate it refuses."""
        if code not in CODES:
            raise ValueError(f"unregistered rejection code {code!r}")
        _set(self, "code", code)
        _set(self, "message", message)


@dataclass(slots=True)
class Accepted:
    """An operation that was accepted and will complete or fail later with an event. Not frozen (nothing changes
    one once made): every accepted submission makes one, and a frozen one costs three times as much to make."""

    op: str
    action: str
    ends: int
