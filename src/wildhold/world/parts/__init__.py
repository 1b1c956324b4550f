"""The world's subsystems, in the order their hooks run each tick."""

from wildhold.world.hooks import PARTS
from wildhold.world.parts.base import Part
from wildhold.world.parts.construction import CONSTRUCTION
from wildhold.world.parts.farming import FARMING
from wildhold.world.parts.settlement import SETTLEMENT
from wildhold.world.parts.economy import ECONOMY
from wildhold.world.parts.dungeon import DUNGEON
from wildhold.world.parts.trial import TRIAL

PARTS.extend([CONSTRUCTION, FARMING, SETTLEMENT, ECONOMY, DUNGEON, TRIAL])

__all__ = ["PARTS", "Part"]
