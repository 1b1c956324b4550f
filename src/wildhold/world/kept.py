"""Everything the world keeps between uses that is derived from its state, declared in one place.

A `Kept` belongs to one `World` (`World.kept`). It is never saved, never hashed and may be dropped whole at any
moment (`World.forget`): every value in it is rebuilt from the state when it is missing. Each value below is
declared with the module that owns it (the only one that reads or writes it), what it holds and what invalidates
it: the owner compares that stamp before reusing what it holds, and holds nothing else.

The counters the stamps read live on the world and move with the state they watch: `World.builds` (a structure
placed or removed), `World.moves` (a character placed or moved), `World.touches` and the per-block stamps (a tile's
node, structure or ground items changed), `World.holdings` (one holder's items changed), `World.stored_in`
(containers of a kind changed) and `World.part_changes` (a part's events, in all and naming one character).

Checking: with `WILDHOLD_CHECK_KEPT=1` in the environment (or `CHECKING` set), every observation is built a second
time with nothing kept and the two are compared; a difference raises `KeptMismatch` naming the character, the tick
and the first section that differs. `tests/world/test_kept.py` plays a season so, and plays it again forgetting
everything kept before every decision and tick: the chain heads must agree.
"""

from __future__ import annotations

import os
from array import array
from typing import Any

CHECKING = os.environ.get("WILDHOLD_CHECK_KEPT", "") not in ("", "0")


class KeptMismatch(AssertionError):
    """What was kept differs from what the state gives when built again: a stamp misses a change."""


DECLARED: dict[str, tuple[str, str]] = {  # name: (its owner, what it holds; what invalidates it)
    "bounds": ("world.World.view_bounds",
               "{tile: bounds of the view square around it}; map geometry: never invalidated"),
    "contents_at": ("world.World.remember_leaving",
                    "array: per tile, its record in World.contents (-1: none yet); a tile's until it is touched"),
    "owners": ("world.World.structures_of", "(builds, {owner: [structure]}); until a structure is placed or removed"),
    "positions": ("world.World.positions",
                  "Positions: every character's tile by row, written by World.relocate as it moves one; until a character joins"),
    "reach": ("actions.registry.reach_tiles", "{tile: tiles within reach}; content and map size: never invalidated"),
    "near_structures": ("actions.registry.structure_in_reach",
                        "(builds, tiles within reach of a structure); until a structure is placed or removed"),
    "near_plots": ("parts.farming",
                   "(farming's event count, tiles within reach of a plot), read by actions.registry.in_reach_of_kept; until farming's next event"),
    "near_animals": ("parts.farming",
                     "(farming's event count, tiles within reach of an animal), read by actions.registry.in_reach_of_kept; until farming's next event"),
    "clock": ("observe._kept_clock",
              "((tick, weather, end tick, show_end), clock section); until any of the four changes"),
    "status": ("observe.status",
               "{character: (StatusKey, status)}; until a field of its StatusKey or its equipment changes"),
    "observers": ("observe.observe_parts", "the parts that add a section; code: never invalidated"),
    "terrain": ("observe._statics", "(glyph rows, legend); terrain never changes"),
    "square_at": ("observe._square_at",
                  "{tile: _Square around it}; map geometry: never invalidated (a square keeps its own stamps)"),
    "squares": ("observe._square", "{bounds: _Square}; likewise"),
    "touched_since": ("observe._changed_in",
                      "(from touch count, touch count, tiles touched between) for the squares built at one count"),
    "fresh_tiles": ("observe._fresh_tiles", "(touch count, {tile: record}); until a tile is touched"),
    "blocks": ("observe._tiles_in", "{block: (block stamp, its tiles by row)}; a block until its stamp moves"),
    "occupied_rows": ("observe._present",
                      "(moves, characters by row, bands of rows); until a character is placed or moves"),
    "character_records": ("observe._occupied_rows",
                          "{character: (tile, record)}; a record until its character stands elsewhere"),
    "remembered_since": ("observe.remembered_since",
                         "{character: (since, tile, newest snapshot, tiles)}; until any of the three changes"),
    "wealth": ("wealth.valued", "{character: _Valued}; each term keeps its own stamps (see `_Valued`)"),
    "artworks": ("parts.society.artworks_by",
                 "[the artworks list, how many are indexed, {author: artworks}]; extended as artworks are appended"),
    "inboxes": ("parts.society._inbox_copies",
                "{character: _KeptInbox}: copies of its inbox and of messages delivered since; an inbox only grows at the end and is trimmed at the front"),
    "board_copies": ("parts.society.Society.observe",
                     "(the board's last message, copies of the board); until a message is appended or dropped"),
    "dealings": ("parts.dealings.dealings",
                 "{character: (dealt stamp, Dealings)}; until a market event names it or no one"),
    "no_dealings": ("parts.dealings._dealings", "the empty Dealings shared by characters with none; never invalidated"),
    "market_parties": ("parts.dealings._parties",
                       "_Parties index of who is party to which record; until market's event count moves"),
    "market_due": ("parts.market._tick_expiries", "((market's event count, builds), soonest expiry tick)"),
    "economy": ("parts.market.Market.observe", "{character: _KeptEconomy}; each keeps its own EconomyStamps"),
    "orders_seen": ("parts.market._orders_seen",
                    "(market's event count, public orders, version); until market's event count moves"),
    "formula": ("parts.market._economy", "the wealth formula's one line; content: never invalidated"),
    "standing": ("parts.market._standing",
                 "{character: ((trained levels, artworks list, its length), attributes, artworks)}; until those change"),
    "dungeon_views": ("parts.dungeon.Dungeon.observe",
                      "{character: (dungeon's event count, section outside or None inside)}; until the dungeon's next event"),
    "deposits": ("parts.construction.deposit_holders",
                 "(deposit changes, {owner: deposits holding items}); until a deposit changes"),
    "building_views": ("parts.construction.Construction.observe",
                       "{character: _KeptBuildings}; until it moves, builds or construction's events or chests' and deposits' changes move"),
    "place_tiles": ("parts.settlement.place_tile", "(builds, {place: tile}); until a structure is placed or removed"),
    "recipe_unlocks": ("parts.settlement._unlocked_by", "{recipe: [(villager, level)]}; content: never invalidated"),
    "near_villagers": ("parts.settlement._near_villagers",
                       "(village's event count, tiles within reach of a villager)"),
    "quests": ("parts.settlement._public",
               "{quest id: (quest, public record)}; a quest's public fields never change"),
    "village_views": ("parts.settlement.Settlement.observe",
                      "{character: kept village sections}; each keeps its own stamps"),
    "quest_board": ("parts.settlement._board_view", "(village's event count, the board as shown); until it moves"),
    "discounts": ("parts.settlement._discounts", "{(villager, level): discount}; content: never invalidated"),
    "villagers_now": ("parts.settlement._villagers_now",
                      "(village's events naming no one, hour, villagers); until either moves"),
    "shop_prices": ("parts.settlement._price_list", "{(villager, discount): prices}; content: never invalidated"),
    "animal_items": ("parts.farming._animal_items",
                     "(animal kinds, their items in one line); content: never invalidated"),
    "nothing_farmed": ("parts.farming.Farming.observe",
                       "the empty farming section shared by characters with none; never invalidated"),
    "trial_reports": ("parts.trial._kept_report",
                      "{character: (its tracker record, report key, report)} and {report key: report} shared by characters with nothing attained"),
}


class Kept:
    """The derived values of one world, each under the name of what it is (see the module's docstring)."""

    __slots__ = tuple(DECLARED)

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, None)
        # the families filled entry by entry from the start
        self.bounds: dict[int, tuple[int, int, int, int]] = {}
        self.contents_at = array("i")  # sized on first use
        self.square_at: dict[int, Any] = {}
        self.remembered_since: dict[str, Any] = {}
        self.quests: dict[str, Any] = {}
        self.shop_prices: dict[tuple[str, int], dict[str, int]] = {}


def first_difference(kept: Any, fresh: Any, where: str = "") -> str:
    """Where two observations first differ, as a path of keys and indices (for `KeptMismatch`)."""
    if isinstance(kept, dict) and isinstance(fresh, dict):
        if list(kept) != list(fresh):
            return f"{where or 'the observation'}: keys {list(kept)} against {list(fresh)}"
        for key in kept:
            if kept[key] != fresh[key]:
                return first_difference(kept[key], fresh[key], f"{where}.{key}" if where else str(key))
    if isinstance(kept, list) and isinstance(fresh, list) and len(kept) == len(fresh):
        for i, (a, b) in enumerate(zip(kept, fresh)):
            if a != b:
                return first_difference(a, b, f"{where}[{i}]")
    return f"{where}: {kept!r} kept against {fresh!r} built anew"
