"""Stable rejection codes: every face reports these, so clients can branch on them."""

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
    # construction and homes
    "unknown_structure": "No structure has that name.",
    "not_buildable": "That structure is not built in place (it is placed from an item, or part of the world).",
    "reserved_tile": "That tile is kept clear: a spawn point, the settlement centre or the dungeon entrance.",
    "no_structure": "There is no structure on that tile.",
    "wrong_structure": "The structure on that tile is not the kind this action needs.",
    "not_owner": "Only the structure's owner (or, where the rules say so, characters it allows) may do that.",
    "access_denied": "The structure's owner has not allowed this character.",
    "not_repairable": "That structure cannot be repaired.",
    "not_damaged": "The structure already has full hit points.",
    "not_demolishable": "That structure cannot be demolished (it was not built in place, or no one owns it).",
    "not_empty": "The chest or storehouse still holds items; empty it first.",
    "already_locked": "The door is already locked.",
    "not_locked": "The door is not locked.",
    "unknown_character": "No character has that id.",
    "already_allowed": "That character may already use the structure.",
    "not_on_allow_list": "That character is not on the structure's allow list.",
    "not_in_container": "The chest or deposit holds fewer of that item.",
    # settlement: villagers, shops, friendship, quests
    "unknown_npc": "No villager has that name (or this scenario has no villagers).",
    "gift_limit": "That villager has had all the gifts it takes from you today.",
    "no_shop": "That villager keeps no shop.",
    "shop_closed": "The villager's shop is closed at this hour.",
    "not_sold": "The shop does not sell that item.",
    "not_bought": "The shop does not buy that item.",
    "not_enough_coins": "The character does not carry enough coins.",
    "unknown_quest": "No such quest is on the board or in the character's active quests.",
    "too_many_quests": "The character already has as many active quests as it may.",
    "quest_incomplete": "The quest's requirement is not met yet.",
    "quest_overdue": "The quest's deadline would pass before the turn-in completes.",
    # farming: plots, crops and animals
    "not_soil": "That tile's terrain cannot be tilled.",
    "already_tilled": "That tile is already a tilled plot.",
    "not_tilled": "That tile is not a tilled plot; till it first.",
    "not_plot_owner": "The plot belongs to another character; only its owner plants and harvests there.",
    "not_a_seed": "That item is not the seed of any crop.",
    "already_planted": "A crop already grows on that plot.",
    "out_of_season": "That crop does not grow in the current season.",
    "not_planted": "Nothing grows on that plot.",
    "crop_mature": "The crop is ripe and needs no more care; harvest it.",
    "already_watered": "The crop is already watered today, by hand or by rain.",
    "already_fertilised": "The crop has already been fertilised; once per crop.",
    "not_mature": "The crop is not ripe yet.",
    "use_settle_animal": "Animals are not placed: settle them beside a coop with settle_animal.",
    "not_an_animal": "That item is not an animal.",
    "no_coop": "No coop the character may use stands close enough to that tile.",
    "no_animal": "No animal lives on that tile.",
    "already_fed": "The animal has already been fed today.",
    "not_animal_owner": "The animal belongs to another character; only its owner collects its products.",
    "nothing_to_collect": "The animal has no product waiting.",
    # economy and society: trades, contracts, market orders, attributes, artwork, messages, raids
    "self_target": "That needs another character, not the acting one.",
    "empty_trade": "A trade or contract must move at least one item each way it names.",
    "unknown_offer": "No open trade offer has that id (it was accepted, declined, cancelled or expired, or never existed).",
    "unknown_contract": "No open contract has that id (it was fulfilled, declined, cancelled, expired or defaulted, or never existed).",
    "unknown_order": "No open market order has that id (it was filled or cancelled, or never existed).",
    "not_party": "The character is not the party of that offer, contract or order who may do this.",
    "wrong_stage": "The contract is not at the stage this action needs (offered or accepted).",
    "own_order": "A character cannot fill its own market order; it may cancel it.",
    "exceeds_order": "The quantity is more than the order has left.",
    "too_many_orders": "The character has as many open market orders as it may.",
    "no_market": "There is no market stall on that tile.",
    "not_tradeable": "That item cannot be ordered at a market (orders are priced in it).",
    "unknown_attribute": "No attribute has that name.",
    "max_level": "The attribute is already at its maximum level.",
    "no_workshop": "No workshop is within reach.",
    "empty_message": "The message, title or text is empty.",
    "too_long": "The message, title or text is longer than the rules allow.",
    "conflict_off": "The scenario does not allow attacking characters or their structures.",
    "not_raidable": "Only another character's structure can be raided (not one's own, not an unowned one).",
    "safe_zone": "No one may be attacked on or from the settlement's safe ground.",
    # the dungeon: instances, rooms, telegraphed combat, the altar
    "held_in_place": "Not possible where the character is (inside the dungeon only fighting, healing and upkeep are; leave it first).",
    "not_at_dungeon": "The dungeon entrance is not within reach.",
    "unknown_tier": "No dungeon tier has that number or name.",
    "tier_locked": "That tier opens only after the character has defeated the previous tier's boss.",
    "in_dungeon": "The character is already inside the dungeon.",
    "not_in_dungeon": "The character is not inside the dungeon.",
    "no_enemy": "No living enemy with that id is in the character's room.",
    "room_not_clear": "Enemies still stand in the room; defeat them first.",
    "no_next_room": "There is no further room to advance to.",
    "no_altar": "There is no altar here (it stands in the cleared last room of the tier that holds it).",
    "altar_used": "The altar of this instance has already been activated.",
    "not_consumable": "That item is not a consumable.",
}


@dataclass(frozen=True, slots=True)
class Rejected:
    """A refusal made before anything changed: a stable code and a sentence a model can act on."""

    code: str
    message: str

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered rejection code {self.code!r}")


@dataclass(frozen=True, slots=True)
class Accepted:
    """An operation that was accepted and will complete or fail later with an event."""

    op: str
    action: str
    ends: int
