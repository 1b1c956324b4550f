"""The world's parts, in one list: `PARTS` is the order their hooks run each tick and the order
their actions, events and observation keys are registered. A new part is a module and a place here."""

from wildhold.world.hooks import PARTS
from wildhold.world.parts.base import Part, install
from wildhold.world.parts.conflict import CONFLICT
from wildhold.world.parts.construction import CONSTRUCTION
from wildhold.world.parts.dungeon import DUNGEON
from wildhold.world.parts.farming import FARMING
from wildhold.world.parts.market import MARKET
from wildhold.world.parts.settlement import SETTLEMENT
from wildhold.world.parts.society import SOCIETY
from wildhold.world.parts.trial import TRIAL

# The market, society and conflict were one economy part: they keep its place in the tick, its
# order (expiries before the attack memo is cleared) and its section of the snapshot.
install([CONSTRUCTION, FARMING, SETTLEMENT, MARKET, SOCIETY, CONFLICT, DUNGEON, TRIAL], PARTS)

__all__ = ["PARTS", "Part"]
