"""The contract of a world subsystem (construction, farming, the settlement, the economy, society).

A part keeps its own state on the world (created in `init`, saved by `dump`, restored by `load`),
registers its actions in the one registry, and joins the tick through the hooks below. Every
hook has a neutral default, so a part implements only what it changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wildhold.world.state import Character, Structure
    from wildhold.world.world import World


class Part:
    name: str = ""
    # Observation keys this part adds, described for the rules document: key -> {description, fields}.
    observation_fields: dict[str, dict] = {}

    def init(self, w: World) -> None:
        """Create this part's state on a new world (after worldgen, before anyone joins)."""

    def dump(self, w: World) -> Any:
        """This part's state as JSON-ready data with a stable order."""
        return None

    def load(self, w: World, data: Any) -> None:
        """Restore what `dump` wrote."""

    def joined(self, w: World, c: Character) -> None:
        """A character entered the world."""

    def day_started(self, w: World) -> None:
        """Midnight: daily growth, daily postings, deadlines counted in days."""

    def tick(self, w: World) -> None:
        """Once per tick, after the core systems."""

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        """Add what this character perceives of this part to its observation."""

    def shelters(self, w: World, c: Character) -> bool:
        """Whether this part protects the character from night hazards where it stands."""
        return False

    def bars(self, w: World, c: Character, p: int) -> str | None:
        """Why the character may not step onto tile `p` (a locked door), or None."""
        return None

    def blocks_creatures(self, w: World, p: int) -> bool:
        """Whether creatures may not step onto walkable tile `p` (a locked door)."""
        return False

    def yield_bonus(self, w: World, c: Character, node: str) -> int:
        """Extra units per gather this part grants (trained attributes)."""
        return 0

    def gathered(self, w: World, c: Character, item: str, qty: int) -> None:
        """The character gathered `qty` of `item` from a resource node (gather quests count these)."""

    def recipe_locked(self, w: World, c: Character, recipe: str) -> str | None:
        """Why the character may not use a recipe yet (a villager's friendship unlocks it), or None."""
        return None

    def structure_removed(self, w: World, p: int, s: Structure) -> None:
        """The structure on tile `p` is gone (demolished, destroyed, or an animal left): drop what you kept about it."""

    def before_knockdown(self, w: World, c: Character) -> None:
        """The character's health reached 0 and it is about to drop items and respawn."""

    def confines(self, w: World, c: Character, action: str) -> str | None:
        """Why this part does not let the character take `action` where it is now (inside the dungeon), or None."""
        return None

    def on_event(self, w: World, seq: int, kind: str, data: dict[str, Any]) -> None:
        """Every event, just after it is logged (a part that follows the whole record: the trial).

        Only parts that override this are called, each on every event once and in sequence order;
        an event a listener emits reaches the listeners after the one they are hearing. It must not
        change state other parts read."""
