"""Typed views of the logged events that metrics read: one small NamedTuple per shape, named by the
event kinds it decodes, each a subset of the world's schema for those kinds (a test holds them to
`EVENT_TYPES`). The fold driver decodes an event once, into its kind's view, for every fold that reads it.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, NamedTuple

VIEWS: dict[str, type[tuple]] = {}  # event kind -> its view


def view(*kinds: str) -> Callable[[type], type]:
    """Register a NamedTuple as the view of these event kinds."""

    def register(cls: type) -> type:
        for kind in kinds:
            if kind in VIEWS:
                raise ValueError(f"event kind {kind!r} already has a view ({VIEWS[kind].__name__})")
            VIEWS[kind] = cls
        return cls

    return register


def values(kind: str) -> Callable[[dict[str, Any]], tuple | list]:
    """The function that reads an event's data as the values of its kind's view, in field order
    (`tuple.__new__(view, values(data))` is the view). Fields with a default may be missing from
    older archives (and from the hand-made logs of tests); the others are read by key, all at once, in C
    where possible."""
    cls = VIEWS[kind]
    fields, defaults = cls._fields, cls._field_defaults  # type: ignore[attr-defined]
    if defaults:
        return lambda data: [data.get(f, defaults[f]) if f in defaults else data[f] for f in fields]
    if len(fields) == 1:
        key = fields[0]
        return lambda data: (data[key],)
    return itemgetter(*fields)


def decode(kind: str, data: dict[str, Any]) -> tuple:
    """One event's data as its kind's view."""
    return tuple.__new__(VIEWS[kind], values(kind)(data))


# ---- characters and their actions --------------------------------------------------------------


@view("agent_spawned")
class Spawned(NamedTuple):
    agent: str
    name: str
    x: int
    y: int


@view("moved")
class Moved(NamedTuple):
    agent: str
    to: list[int]  # [x, y]


@view("needs")
class Needs(NamedTuple):
    agent: str
    health: int
    energy: int
    satiety: int


@view("knockdown")
class Knockdown(NamedTuple):
    agent: str
    respawn: list[int]  # [x, y]


@view("operation_started")
class Started(NamedTuple):
    agent: str
    op: str
    action: str
    issuer: str


@view("operation_completed", "operation_cancelled")
class Ended(NamedTuple):
    agent: str
    op: str
    action: str


@view("operation_failed")
class Failed(NamedTuple):
    agent: str
    op: str
    action: str
    code: str = ""
    message: str = ""


@view("action_rejected")
class Refused(NamedTuple):
    agent: str
    code: str
    action: str = ""
    message: str = ""


@view("agent_idle")
class Idle(NamedTuple):
    agent: str
    since_tick: int


@view("message_posted", "program_saved")
class Act(NamedTuple):
    """An event about one character that a metric only counts."""

    agent: str


@view("program_failed")
class ProgramFailed(NamedTuple):
    agent: str
    reason: str


@view("talked")
class Talked(NamedTuple):
    agent: str
    npc: str
    delta: int


@view("gift_given")
class Gift(NamedTuple):
    agent: str
    npc: str
    item: str
    delta: int


@view("bought", "sold")
class Dealt(NamedTuple):
    agent: str
    npc: str
    item: str
    qty: int
    total: int


@view("quest_completed")
class QuestDone(NamedTuple):
    agent: str
    kind: str
    issuer: str
    quest: str = ""


@view("plot_tilled")
class Tilled(NamedTuple):
    agent: str
    x: int
    y: int


@view("crop_planted", "crop_watered", "crop_fertilised")
class Tended(NamedTuple):
    agent: str
    crop: str


@view("crop_harvested")
class Harvested(NamedTuple):
    agent: str
    crop: str
    qty: int


@view("animal_settled", "animal_fed")
class Husbanded(NamedTuple):
    agent: str
    animal: str
    x: int = -1
    y: int = -1


@view("structure_built")
class Built(NamedTuple):
    agent: str
    structure: str
    x: int = -1
    y: int = -1


# ---- items and structures -----------------------------------------------------------------------


@view("item_gained", "item_lost")
class ItemMoved(NamedTuple):
    holder: str
    item: str
    qty: int
    source: str


@view("node_placed")
class NodeAt(NamedTuple):
    x: int
    y: int
    node: str


@view("structure_placed")
class Placed(NamedTuple):
    x: int
    y: int
    structure: str
    owner: str | None
    hp: int


@view("structure_damaged")
class Damaged(NamedTuple):
    x: int
    y: int
    owner: str | None
    hp: int
    by: str


@view("structure_repaired")
class Repaired(NamedTuple):
    x: int
    y: int
    hp: int
    agent: str = ""  # who repaired it and what (read by the task suite's evaluators)
    structure: str = ""


@view("structure_destroyed", "structure_demolished")
class Removed(NamedTuple):
    x: int
    y: int


@view("animal_left")
class AnimalLeft(NamedTuple):
    x: int
    y: int
    structure_removed: bool = False


# ---- society and the economy --------------------------------------------------------------------


@view("trade_offered")
class TradeOffered(NamedTuple):
    offer: str
    agent: str
    to: str


@view("trade_completed")
class TradeCompleted(NamedTuple):
    agent: str
    to: str
    offer: str = ""


@view("trade_closed")
class TradeClosed(NamedTuple):
    offer: str
    agent: str
    to: str
    reason: str


@view("contract_offered")
class ContractOffered(NamedTuple):
    contract: str
    payer: str
    deliverer: str


@view("contract_accepted", "contract_fulfilled")
class ContractFulfilled(NamedTuple):
    payer: str
    deliverer: str
    contract: str = ""


@view("contract_defaulted")
class ContractDefaulted(NamedTuple):
    defaulter: str
    contract: str = ""
    payer: str = ""


@view("order_posted")
class OrderPosted(NamedTuple):
    order: str
    agent: str


@view("order_filled")
class OrderFilled(NamedTuple):
    agent: str
    by: str
    order: str = ""


@view("reputation_changed")
class Reputation(NamedTuple):
    agent: str
    value: int
    delta: int
    reason: str  # what earned or cost it: "trade:<offer>", "contract:<contract>", "raid:<owner>", ...


@view("attribute_trained")
class Trained(NamedTuple):
    agent: str
    attribute: str
    level: int


@view("message_said")
class Said(NamedTuple):
    agent: str
    heard_by: list[str]


@view("message_whispered")
class Whispered(NamedTuple):
    agent: str
    to: str


@view("character_attacked")
class Attacked(NamedTuple):
    agent: str
    target: str
    health: int = -1


@view("looted")
class Looted(NamedTuple):
    agent: str
    victim: str
    items: dict[str, int]


@view("door_locked", "door_unlocked")
class Door(NamedTuple):
    agent: str
    x: int
    y: int


@view("access_changed")
class Access(NamedTuple):
    agent: str
    x: int
    y: int
    character: str
    allowed: bool


@view("plot_lost")
class PlotLost(NamedTuple):
    x: int
    y: int


@view("quest_accepted")
class QuestTaken(NamedTuple):
    agent: str
    quest: str


# ---- the dungeon ----------------------------------------------------------------------------------


@view("dungeon_entered")
class Entered(NamedTuple):
    agent: str
    tier: int
    instance: str


@view("altar_activated")
class Altar(NamedTuple):
    agent: str
    instance: str


@view("enemy_defeated")
class Defeated(NamedTuple):
    agent: str
    boss: bool
    kind: str = ""


@view("tier_cleared")
class Cleared(NamedTuple):
    agent: str
    tier: int
    damage_taken: int
    consumables_used: int


@view("shadow_king_defeated")
class KingDefeated(NamedTuple):
    agent: str
    damage_taken: int
    consumables_used: int
