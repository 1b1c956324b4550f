"""Observations built from the pieces kept between calls equal observations built from nothing.

The observation builder keeps view squares, price lists, boards and each character's sections until the
world changes under them; these tests play worlds where characters move, gather, build, drop, post, talk
and trade, and compare every observation with one built after forgetting everything kept. They also
check that the comparison catches a change the builder is not told of.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.world.errors import Accepted
from wildhold.world.kept import Kept
from wildhold.world.observe import PATCHED_MOST, observe
from wildhold.world.parts import dealings, market, settlement, society
from wildhold.world.parts.dungeon import dungeon_status
from wildhold.world.parts.society import change_reputation
from wildhold.world.setup import apply_setup
from wildhold.world.state import Operation
from wildhold.world.world import SETUP_EVENT, TOUCHES_KEPT, World

pytestmark = pytest.mark.slow(seconds=6)


def fresh(w: World, agent: str, **kwargs: Any) -> str:
    """The observation built with nothing kept (and the kept pieces left as they were), as JSON: the
    order of keys counts, as it does on the faces."""
    kept, w.kept = w.kept, Kept()
    try:
        return json.dumps(observe(w, agent, **kwargs))
    finally:
        w.kept = kept


def built(w: World, agent: str, **kwargs: Any) -> str:
    """The observation built from the pieces kept, as JSON."""
    return json.dumps(observe(w, agent, **kwargs))


def first_difference(w: World, ids: list[str], ticks: int, content) -> tuple[str, int] | None:
    """Play `ticks` ticks with legal_random, comparing every observation (and, after each decision, the next
    character's) with one built from nothing: the first (agent, tick) where they differ, or None."""
    client, policy = LocalClient(w), LegalRandomAgent(content)
    for _ in range(ticks):
        for a in ids:
            if built(w, a) != fresh(w, a):
                return a, w.tick
            if client.idle(a):
                client.decide(a, policy)
                # the world changed under the squares already built this tick: the next ones must see it
                other = ids[(ids.index(a) + 1) % len(ids)]
                if built(w, other, memory=False) != fresh(w, other, memory=False):
                    return other, w.tick
        w.step()
    return None


@pytest.mark.parametrize(("scenario", "seed", "agents", "ticks"), [("default", 3, 12, 60), ("famine", 2, 6, 40)])
def test_every_observation_equals_one_built_from_nothing(content, scenario, seed, agents, ticks):
    w = World(content, scenario, seed)
    ids = [w.join(f"p{i}") for i in range(agents)]
    assert first_difference(w, ids, ticks, content) is None


def test_a_crowd_sees_the_same_as_from_nothing(content):
    """Forty characters around the spawn: squares shared and overlapping, trades and talks every tick."""
    w = World(content, "default", 5)
    ids = [w.join(f"p{i}") for i in range(40)]
    assert first_difference(w, ids, 40, content) is None


@pytest.mark.parametrize("touches", [1, PATCHED_MOST + 1, TOUCHES_KEPT + 1],
                         ids=["patched", "more than are patched", "more than are logged"])
def test_tiles_touched_between_observations_are_seen_as_from_nothing(content, touches):
    """Stones dropped one by one beside a character, then picked up: its view's tiles, kept and patched at the
    tiles touched since (or built again after many touches), are as from nothing each time."""
    w = World(content, "default", 3)
    a = w.join("a")
    x, y = w.xy(w.chars[a].pos)
    pile = f"ground@{w.pos(x + 1, y)}"
    built(w, a)
    for _ in range(touches):
        w.give(pile, "stone", 1, "test")
    assert built(w, a) == fresh(w, a)
    w.take(pile, "stone", touches, "test")
    assert built(w, a) == fresh(w, a)
    assert w.touched_since(w.touches - 2) == [w.pos(x + 1, y)] * 2
    assert (w.touched_since(0) is None) == (w.touches > TOUCHES_KEPT)


def _equipped(w: World, agent: str) -> None:
    apply_setup(w, "give_items", {"agent": agent, "item": "iron_sword", "qty": 1})
    built(w, agent)
    assert isinstance(w.submit(agent, "equip", {"item": "iron_sword"}), Accepted)
    while w.chars[agent].op is not None:
        w.step()


def _sheltered(w: World, agent: str) -> None:
    x, y = open_site(w, range(0, 1), range(0, 1), unsafe=True)
    apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})
    assert built(w, agent) and not w.is_sheltered(w.chars[agent])
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": sorted(w.sheltering)[0]})


def _moved(w: World, agent: str) -> None:
    """To another region (a status rebuilt after a move shows the new place, not the one it replaces)."""
    here = w.region[w.chars[agent].pos]
    x, y = next((p % w.width, p // w.width) for p in range(len(w.region))
                if w.region[p] != here and w.is_walkable(p) and p not in w.occupants)
    apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})


def _given(w: World, agent: str) -> None:
    w.give(agent, "stone", 1, "test")


def _set(field: str, value: Any):
    def apply(w: World, agent: str) -> None:
        setattr(w.chars[agent], field, value)
    return apply


@pytest.mark.parametrize("change", [_equipped, _sheltered, _moved, _given, _set("asleep", True), _set("knockdowns", 1),
                                    _set("bed", 0), _set("energy", 1), _set("op", "op0")],
                         ids=["equipped", "sheltered", "moved", "given", "asleep", "knocked down", "bed", "energy",
                              "operation"])
def test_the_characters_own_state_is_seen_as_from_nothing(content, change):
    """The character's status, kept while what it shows is the same, follows each thing it shows."""
    w = World(content, "default", 3)
    a = w.join("a")
    w.ops["op0"] = Operation("op0", a, "rest", {}, w.tick, w.tick + 5, 0)
    before = built(w, a)
    change(w, a)
    assert built(w, a) == fresh(w, a) != before


def test_a_shelter_on_unsafe_ground_is_seen(content):
    """Shelter is read from the terrain first: off safe ground the character is still told of a structure over it."""
    w = World(content, "default", 3)
    a = w.join("a")
    _sheltered(w, a)
    assert observe(w, a)["self"]["sheltered"] is True


def test_characters_down_two_columns_are_seen_as_from_nothing(content):
    """Squares over the same columns cut their characters from bands of rows they share: forty characters standing
    down two columns of the map, over more rows than a band holds, each see the others above and below as from
    nothing."""
    w = World(content, "default", 3)
    ids = [w.join(f"p{i}") for i in range(40)]
    for i, agent in enumerate(ids):
        w.relocate(w.chars[agent], w.pos(30 + i % 2, 10 + i))
    for agent in ids:
        assert built(w, agent, memory=False) == fresh(w, agent, memory=False), agent


def _uncounted_part(part: str):
    def apply(w: World) -> None:
        w._owner_of = {kind: owner for kind, owner in w._owner_of.items() if owner != part}
    return apply


def _unmoved(w: World) -> None:
    w._moved = lambda p: None


def _unheld(w: World) -> None:
    w._held = lambda holder: None


def _untold_tiles(w: World) -> None:
    w.touched_since = lambda count: None if count < 0 else []


@pytest.mark.parametrize("forget", [_uncounted_part("market"), _uncounted_part("settlement"),
                                    _unmoved, _unheld, _untold_tiles],
                         ids=["market events", "settlement events", "characters entering blocks",
                              "items carried", "tiles touched"])
def test_a_change_the_builder_is_not_told_of_is_caught(content, forget):
    """With one kind of change left uncounted, some observation differs from one built from nothing:
    the comparison above would catch a stamp that is not bumped."""
    w = World(content, "default", 5)
    ids = [w.join(f"p{i}") for i in range(40)]
    forget(w)
    assert first_difference(w, ids, 40, content) is not None


def dungeon_trip(content, forget=None) -> tuple[str, int] | None:
    """A character goes into the dungeon, strikes, is knocked down (its instance retained) and goes back
    in, another standing outside: the first (agent, tick) whose observation differs from one built from
    nothing, or None."""
    w = World(content, "tiny", 4)
    hero, other = w.join("hero"), w.join("other")
    x, y = w.xy(w.dungeon)
    apply_setup(w, "move_character", {"agent": hero, "x": x, "y": y})
    apply_setup(w, "give_items", {"agent": hero, "item": "iron_sword", "qty": 1})
    if forget is not None:
        forget(w)

    def compared() -> tuple[str, int] | None:
        return next(((a, w.tick) for a in (hero, other) if built(w, a) != fresh(w, a)), None)

    def play(action: str, args: dict[str, Any]) -> tuple[str, int] | None:
        assert isinstance(w.submit(hero, action, args), Accepted), action
        while (found := compared()) is None and w.chars[hero].op is not None:
            w.step()
        return found

    for action, args in (("equip", {"item": "iron_sword"}), ("enter_dungeon", {"tier": 1})):
        if found := play(action, args):
            return found
    if found := play("strike", {"enemy": observe(w, hero)["dungeon"]["room"]["enemies"][0]["id"]}):
        return found
    c = w.chars[hero]
    w.set_needs(c, "test", 0, c.energy, c.satiety)  # not a set-up command: those count as every part's change
    w.step()
    assert dungeon_status(w, hero)["retained"]
    if found := compared():
        return found
    apply_setup(w, "move_character", {"agent": hero, "x": x, "y": y})
    return play("enter_dungeon", {"tier": 1})


def test_entering_fighting_in_and_leaving_the_dungeon_is_seen_as_from_nothing(content):
    """The dungeon's section, kept outside it, follows a character in, through a fight, out on a knockdown
    with its instance retained, and back in."""
    assert dungeon_trip(content) is None


def test_a_dungeon_change_the_builder_is_not_told_of_is_caught(content):
    assert dungeon_trip(content, _uncounted_part("dungeon")) is not None


def test_set_up_commands_are_seen_as_from_nothing(content):
    """A set-up command writes parts' state directly (a friendship within a level, a tier opened): every
    kept section is rebuilt after one."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    npc = next(iter(content.npcs))
    steps = [("set_friendship", {"agent": a, "npc": npc, "level": 1}), ("unlock_tier", {"agent": a, "tier": 2}),
             ("give_items", {"agent": b, "item": "berries", "qty": 3}), ("set_friendship", {"agent": a, "npc": npc, "level": 1})]
    for command, args in steps:
        built(w, a), built(w, b)
        apply_setup(w, command, args)
        for agent in (a, b):
            assert built(w, agent) == fresh(w, agent), (command, agent)


def open_site(w: World, xs: range, ys: range, unsafe: bool = False) -> tuple[int, int]:
    """The first (x, y) whose tiles at these offsets are all walkable and empty (and, with `unsafe`, off safe ground)."""

    def empty(p: int | None) -> bool:
        return (p is not None and w.is_walkable(p) and p not in w.structures and p not in w.nodes and p not in w.occupants
                and not (unsafe and w.safe_terrain[w.terrain[p]]))

    return next((x, y) for p in range(w.width * w.height) for x, y in [w.xy(p)]
                if all(empty(w.pos(x + dx, y + dy)) for dx in xs for dy in ys))


def chest_and_storehouse(content, forget=None) -> tuple[str, int] | None:
    """Beside a chest and a storehouse, one character stores in the chest, lets the other use it, and deposits
    and withdraws: the first (agent, tick) whose observation differs from one built from nothing, or None."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")

    x, y = open_site(w, range(-1, 2), range(-1, 2))
    (cx, cy), (sx, sy) = (x + 1, y), (x - 1, y)
    apply_setup(w, "place_structure", {"x": cx, "y": cy, "structure": "chest", "owner": a})
    apply_setup(w, "place_structure", {"x": sx, "y": sy, "structure": "storehouse"})
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 5})
    for agent in (a, b):
        apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})
    if forget is not None:
        forget(w)
    steps = [("store", {"x": cx, "y": cy, "item": "wood", "qty": 2}), ("allow", {"x": cx, "y": cy, "character": b}),
             ("store", {"x": cx, "y": cy, "item": "wood", "qty": 1}), ("deposit", {"x": sx, "y": sy, "item": "wood", "qty": 1}),
             ("withdraw", {"x": sx, "y": sy, "item": "wood", "qty": 1})]
    for action, args in steps:
        for agent in (a, b):
            built(w, agent)
        assert isinstance(w.submit(a, action, args), Accepted), action
        while True:
            for agent in (a, b):
                if built(w, agent) != fresh(w, agent):
                    return agent, w.tick
            if w.chars[a].op is None:
                break
            w.step()
    return None


def test_chests_and_storehouses_are_seen_as_from_nothing(content):
    assert chest_and_storehouse(content) is None


def _uncounted_kind(kind: str):
    """Changes of containers of this kind counted in `World.stored` but not in `World.stored_in`."""
    def apply(w: World) -> None:
        counted = w._stored

        def stored(holder: str) -> None:
            counted(holder)
            if holder.startswith(kind):
                w.stored_in[kind] -= 1
        w._stored = stored
    return apply


@pytest.mark.parametrize("forget", [_uncounted_part("construction"), _unheld, _uncounted_kind("chest@"), _uncounted_kind("deposit@")],
                         ids=["construction events", "container contents", "chests changed", "deposits changed"])
def test_a_container_change_the_builder_is_not_told_of_is_caught(content, forget):
    assert chest_and_storehouse(content, forget) is not None


def test_escrows_and_deposits_are_counted_apart(content):
    """`World.stored_in` counts each kind of container's changes, so what shows only chests and deposits keeps
    while escrows change."""
    w = World(content, "default", 3)
    a = w.join("a")
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 3})
    w.take(a, "wood", 2, "test")
    w.give("escrow@t1", "wood", 2, "test")
    w.take("escrow@t1", "wood", 1, "test")
    w.give(f"deposit@9:{a}", "wood", 1, "test")
    assert w.stored_in == {"escrow@": 2, "deposit@": 1}
    assert w.stored == 3


def test_one_tile_remembered_twice_in_a_tick_as_it_was_each_time(content):
    """Two characters leave a tile's view in the same tick, an item dropped on it between: each remembers the
    tile as it was when it left, kept pieces or not."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    ca, cb = w.chars[a], w.chars[b]
    start = w.pos(20, 20)
    tile = w.pos(20 - w.needs.view_radius, 20)  # the west edge of both views
    away = w.pos(21, 20)  # one step east: the west edge leaves the view
    for c in (ca, cb):
        w.relocate(c, start)
    w.step()
    since = w.tick
    w.relocate(ca, away)
    w.give(f"ground@{tile}", "stone", 2, "test")
    w.relocate(cb, away)
    shown = {}
    for agent in (a, b):
        kept = json.loads(built(w, agent, memory_since=since))
        assert kept == json.loads(fresh(w, agent, memory_since=since))
        shown[agent] = next(t for t in kept["memory"] if (t["x"], t["y"]) == w.xy(tile))
    assert "items" not in shown[a] and shown[b]["items"] == {"stone": 2}


def market_day(content, forget=None) -> tuple[str, int] | None:
    """Beside a market stall and a workshop, one character posts an order the next fills in part, a third walks
    until the stall comes into its view, and the first trains, makes an artwork and gains reputation (from outside
    the market): the first (agent, tick) whose observation differs from one built from nothing, or None."""
    w = World(content, "default", 3)
    a, b, c = w.join("a"), w.join("b"), w.join("c")
    r = w.needs.view_radius

    x, y = open_site(w, range(-1, r + 4), range(-1, 2))
    apply_setup(w, "place_structure", {"x": x + 1, "y": y, "structure": "market_stall"})
    apply_setup(w, "place_structure", {"x": x - 1, "y": y, "structure": "workshop"})
    e = content.economy
    for item, qty in {"wood": 3, "coin": content.attributes["woodcraft"].coins_per_level, **e.artwork_materials}.items():
        apply_setup(w, "give_items", {"agent": a, "item": item, "qty": qty})
    apply_setup(w, "give_items", {"agent": b, "item": "coin", "qty": 5})
    for agent, (px, py) in ((a, (x, y)), (b, (x + 1, y + 1)), (c, (x + r + 2, y))):  # c a step from seeing the stall
        apply_setup(w, "move_character", {"agent": agent, "x": px, "y": py})
    if forget is not None:
        forget(w)

    order = f"order{market.state(w).next_id['order'] + 1}"
    steps = [(a, "post_order", {"x": x + 1, "y": y, "side": "sell", "item": "wood", "qty": 2, "price": 1}),
             (b, "fill_order", {"order": order, "qty": 1}), (c, "move", {"direction": "w"}),
             (a, "train", {"attribute": "woodcraft"}), (a, "create_artwork", {"title": "Dawn", "text": "Light."})]
    if found := played(w, (a, b, c), steps):
        return found
    assert any(o["agent"] == a for o in observe(w, c)["economy"]["market"]), "the stall never came into c's view"
    change_reputation(w, a, 2, "test")  # not an action: the section must see reputation itself, no market event naming a
    return differing(w, (a, b, c))


def differing(w: World, agents: tuple[str, ...]) -> tuple[str, int] | None:
    """The first of these characters (with the tick) whose observation differs from one built from nothing, or None."""
    return next(((agent, w.tick) for agent in agents if built(w, agent) != fresh(w, agent)), None)


def played(w: World, agents: tuple[str, ...], steps: list[tuple[str, str, dict[str, Any]]]) -> tuple[str, int] | None:
    """Each step (agent, action, arguments) submitted and played to its end, these characters' observations compared
    with ones built from nothing after every tick: the first (agent, tick) where they differ, or None."""
    for agent, action, args in steps:
        for other in agents:
            built(w, other)
        assert isinstance(w.submit(agent, action, args), Accepted), action
        while (found := differing(w, agents)) is None and w.chars[agent].op is not None:
            w.step()
        if found:
            return found
    return None


@pytest.mark.parametrize(("forget", "caught"), [(None, False), (_uncounted_part("market"), True), (_unheld, True)],
                         ids=["all counted", "market events uncounted", "items carried uncounted"])
def test_orders_training_artworks_and_reputation_are_seen_as_from_nothing(content, forget, caught):
    """With every change counted each observation equals one built from nothing; with one kind left uncounted, the
    comparison catches a difference."""
    assert (market_day(content, forget) is not None) == caught


def test_orders_in_view_are_seen_as_from_nothing_as_orders_open_and_close_around_a_walker(content):
    """While no order is open the section's orders in view (none) are kept wherever the character walks; an order
    posted at a stall it then walks into view of, out of and back into, then filled in part while it stands and
    cancelled, is each time seen as from nothing."""
    w = World(content, "default", 3)
    a, b, c = w.join("a"), w.join("b"), w.join("c")
    r = w.needs.view_radius
    x, y = open_site(w, range(-1, r + 5), range(-1, 2))
    apply_setup(w, "place_structure", {"x": x + 1, "y": y, "structure": "market_stall"})
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 3})
    apply_setup(w, "give_items", {"agent": b, "item": "coin", "qty": 5})
    for agent, (px, py) in ((a, (x, y)), (b, (x + 1, y + 1)), (c, (x + r + 3, y))):  # c two steps from seeing the stall
        apply_setup(w, "move_character", {"agent": agent, "x": px, "y": py})
    order = f"order{market.state(w).next_id['order'] + 1}"
    post = {"x": x + 1, "y": y, "side": "sell", "item": "wood", "qty": 2, "price": 1}
    assert played(w, (a, b, c), [(c, "move", {"direction": "w"}), (a, "post_order", post)]) is None
    assert observe(w, c)["economy"]["market"] == []  # one step out of view
    steps = [(c, "move", {"direction": "w"}), (c, "move", {"direction": "e"}), (c, "move", {"direction": "w"}),
             (b, "fill_order", {"order": order, "qty": 1})]
    assert played(w, (a, b, c), steps) is None
    assert [(o["id"], o["qty"]) for o in observe(w, c)["economy"]["market"]] == [(order, 1)]
    assert played(w, (a, b, c), [(a, "cancel_order", {"order": order})]) is None
    assert observe(w, c)["economy"]["market"] == []


def test_a_market_change_counted_as_no_ones_is_seen_as_from_nothing(content):
    """A set-up command counts as every part's event naming no one: one that wrote the market's state directly (here
    a character's defaults) is seen in every section built after it."""
    w = World(content, "default", 3)
    a = w.join("a")
    built(w, a)
    market.state(w).defaults[a] = 1
    w.emit(SETUP_EVENT, command="test", args={})
    assert built(w, a) == fresh(w, a)


def test_an_escrow_written_by_a_set_up_command_is_seen_in_its_owners_wealth_as_from_nothing(content):
    """An escrow's items count in its owner's wealth, which is revalued after a market event naming it or no one: a
    set-up command that put items into an open offer's escrow (no market event names its owner) is seen too."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 2})
    assert isinstance(w.submit(a, "offer_trade", {"to": b, "give": {"wood": 1}, "want": {"stone": 1}, "ticks": 50}), Accepted)
    while w.chars[a].op is not None:
        w.step()
    built(w, a)
    offer = next(iter(market.state(w).trades))
    w.give(market.escrow_holder(offer), "wood", 3, "test")
    w.emit(SETUP_EVENT, command="test", args={})
    assert built(w, a) == fresh(w, a)


def test_an_offer_removed_by_a_set_up_command_leaves_both_parties_dealings(content):
    """A character's dealings and the escrows its wealth counts are kept with the counts of market events naming it
    and naming no one, which its economy section reads and hands on: an offer removed by a set-up command (no market
    event names its parties) is gone from both parties' sections built after it."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    apply_setup(w, "give_items", {"agent": a, "item": "wood", "qty": 2})
    built(w, a), built(w, b)  # their sections kept from before the offer: the offer refreshes them
    assert isinstance(w.submit(a, "offer_trade", {"to": b, "give": {"wood": 1}, "want": {"stone": 1}, "ticks": 50}), Accepted)
    while w.chars[a].op is not None:
        w.step()
    assert observe(w, a)["economy"]["trades"] and observe(w, b)["economy"]["trades"]
    del market.state(w).trades[next(iter(market.state(w).trades))]
    w.emit(SETUP_EVENT, command="test", args={})
    assert not observe(w, b)["economy"]["trades"]
    assert (built(w, a), built(w, b)) == (fresh(w, a), fresh(w, b))


def test_posts_on_a_full_board_are_seen_as_from_nothing(content):
    """The board's copies are kept while its last post stays: on a full board a new post drops the oldest, so its
    length stays the same; every observation after one still equals one built from nothing."""
    w = World(content, "default", 3)
    a = w.join("a")
    board = society.state(w).board
    board.extend({"tick": w.tick, "from": a, "text": f"post {i}"} for i in range(content.social.board_max_posts))
    for i in range(2):
        built(w, a)
        assert isinstance(w.submit(a, "post", {"text": f"more {i}"}), Accepted)
        while w.chars[a].op is not None:
            w.step()
        assert len(board) == content.social.board_max_posts and board[-1]["text"] == f"more {i}"
        assert built(w, a) == fresh(w, a)


def test_a_raided_structure_is_seen_in_its_owners_wealth_as_from_nothing(content):
    """A structure's hit points count in its owner's wealth: a raid changes them with no event of the market."""
    w = World(content, "famine", 2)
    raider, victim = w.join("raider"), w.join("victim")

    x, y = open_site(w, range(0, 2), range(-1, 2), unsafe=True)
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": "storehouse", "owner": victim})
    apply_setup(w, "move_character", {"agent": raider, "x": x + 1, "y": y - 1})
    apply_setup(w, "move_character", {"agent": victim, "x": x + 1, "y": y + 1})
    before = built(w, victim)
    assert isinstance(w.submit(raider, "attack_structure", {"x": x, "y": y}), Accepted)
    while w.chars[raider].op is not None:
        w.step()
    assert built(w, victim) == fresh(w, victim) != before


def others_at_work(content, forget=None) -> tuple[str, int] | None:
    """One character has an offer open and a storehouse; a second builds a wall, raids that storehouse and makes an
    artwork (a structure placed, construction events and an artwork elsewhere: counters every character's section
    once rebuilt on), then the first cancels its offer: the first (agent, tick) whose observation differs from one
    built from nothing, or None."""
    w = World(content, "famine", 2)
    owner, other, worker = w.join("owner"), w.join("other"), w.join("worker")
    x, y = open_site(w, range(0, 3), range(-1, 2), unsafe=True)
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": "storehouse", "owner": owner})
    apply_setup(w, "give_items", {"agent": owner, "item": "wood", "qty": 2})
    for item, qty in {"wood": content.structures["wall"].build.materials["wood"], **content.economy.artwork_materials}.items():
        apply_setup(w, "give_items", {"agent": worker, "item": item, "qty": qty})
    apply_setup(w, "move_character", {"agent": worker, "x": x + 1, "y": y - 1})
    apply_setup(w, "move_character", {"agent": owner, "x": x + 1, "y": y + 1})
    if forget is not None:
        forget(w)

    offer = f"trade{market.state(w).next_id['trade'] + 1}"
    steps = [(owner, "offer_trade", {"to": other, "give": {"wood": 1}, "want": {"stone": 1}, "ticks": 500}),
             (worker, "build", {"structure": "wall", "x": x + 2, "y": y - 1}),
             (worker, "attack_structure", {"x": x, "y": y}),
             (worker, "create_artwork", {"title": "Dusk", "text": "Ash."}),
             (owner, "cancel_trade", {"offer": offer})]
    return played(w, (owner, other, worker), steps)


def test_others_building_raiding_and_making_art_are_seen_as_from_nothing(content):
    """A structure placed, a raid and an artwork elsewhere leave a section's other fields as they were; the raided
    owner's wealth follows its storehouse's hit points, and its own offer's escrow coming back is seen too."""
    assert others_at_work(content) is None


def test_a_raid_the_wealth_is_not_told_of_is_caught(content):
    assert others_at_work(content, _uncounted_part("construction")) is not None


def test_villagers_through_a_day_are_seen_as_from_nothing(content):
    """A shopkeeper's record is shared by the characters at the same discount: two standing by it, at different
    friendship levels, each see it as from nothing every hour of a day, as it moves and its shop opens and closes."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    name = next(n for n, npc in content.npcs.items() if npc.shop is not None and npc.unlocks)
    apply_setup(w, "set_friendship", {"agent": a, "npc": name, "level": content.social.max_level})
    villagers, seen = w.states["settlement"].villagers, 0
    for _ in range(24):
        p = villagers[name][1]
        near = [q for q in (p, p + 1, p - 1, p + w.width, p - w.width) if 0 <= q < w.width * w.height and w.is_walkable(q)]
        for agent in (a, b):
            x, y = w.xy(near[0])
            apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})
        for agent in (a, b):
            assert built(w, agent) == fresh(w, agent), (agent, w.tick)
            seen += any(v["npc"] == name for v in observe(w, agent)["villagers"])
        for _ in range(60):
            w.step()
    assert seen == 48


def beside_the_shop(w: World, agent: str) -> None:
    """Put a character on a free tile next to the settlement's shop (where Mara keeps hers from 8 to 18)."""
    x, y = w.xy(settlement.place_tile(w, "shop"))
    near = next((x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if (p := w.pos(x + dx, y + dy)) is not None and w.is_walkable(p) and p not in w.occupants)
    apply_setup(w, "move_character", {"agent": agent, "x": near[0], "y": near[1]})


def test_a_shop_opening_where_its_keeper_stands_is_seen_as_from_nothing(content):
    """A shop opening in an hour its keeper does not move (here Mara's at 10, two hours after she reaches it): with no
    event of the village the hour alone changes what the villager shows; every tick from 9:55 to 10:05 is compared."""
    npc = "mara"
    later = content.npcs[npc].model_copy(update={"shop": content.npcs[npc].shop.model_copy(update={"open_hours": (10, 18)})})
    w = World(content.model_copy(update={"npcs": {**content.npcs, npc: later}}), "default", 3)
    a = w.join("a")
    apply_setup(w, "set_time", {"day": 1, "hour": 9, "minute": 55})
    w.step()  # the villagers go where the hour puts them
    beside_the_shop(w, a)
    shown = []
    while w.tick % w.calendar.ticks_per_day < 10 * 60 + 5:
        assert built(w, a) == fresh(w, a), w.tick
        shown += [v["shop"]["open"] for v in observe(w, a)["villagers"] if v["npc"] == npc]
        w.step()
    assert shown[0] is False and shown[-1] is True


def test_villagers_moving_after_a_jump_in_time_are_seen_as_from_nothing(content):
    """After a jump in time the villagers stay where they were until the next tick moves them, within the same hour:
    the observations before and after that move are each as from nothing."""
    w = World(content, "default", 3)
    a = w.join("a")
    beside_the_shop(w, a)
    built(w, a)
    apply_setup(w, "set_time", {"day": 1, "hour": 9, "minute": 30})
    assert built(w, a) == fresh(w, a)
    w.step()
    assert built(w, a) == fresh(w, a)
    assert any(v["npc"] == "mara" and v["place"] == "shop" for v in observe(w, a)["villagers"])


def test_an_animal_leaving_is_seen_in_its_owners_wealth_as_from_nothing(content):
    """An animal's structure counts in its owner's wealth: one left hungry leaves at a midnight and its structure
    goes with it, with no item of its owner's moved and no event of the market."""
    w = World(content, "tiny", 4)
    a = w.join("farmer")

    x, y = open_site(w, range(-1, 2), range(-1, 2))
    apply_setup(w, "place_structure", {"x": x + 1, "y": y - 1, "structure": "coop", "owner": a})
    apply_setup(w, "give_items", {"agent": a, "item": "chicken", "qty": 1})
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    assert isinstance(w.submit(a, "settle_animal", {"item": "chicken", "x": x + 1, "y": y}), Accepted)
    while w.chars[a].op is not None:
        w.step()
    animal = w.pos(x + 1, y)
    assert animal in w.structures
    while animal in w.structures:
        assert w.day < 10, "the animal never left"
        built(w, a)
        w.step()
    assert built(w, a) == fresh(w, a)


def overflowing_inboxes(content) -> tuple[str, int] | None:
    """With inboxes of three messages, one character says and whispers none to five messages between the others'
    observations (one of them looking only every other round): the first (agent, tick) whose observation differs
    from one built from nothing, or None. Each round also checks the inboxes hold the latest messages."""
    small = content.model_copy(update={"economy": content.economy.model_copy(update={"inbox_max_messages": 3})})
    w = World(small, "default", 3)
    a, b, c = w.join("a"), w.join("b"), w.join("c")
    x, y = open_site(w, range(-1, 2), range(-1, 2))
    for agent, px in ((a, x - 1), (b, x), (c, x + 1)):
        apply_setup(w, "move_character", {"agent": agent, "x": px, "y": y})
    said: list[str] = []
    for n in (0, 1, 2, 3, 4, 5, 1, 3):
        for i in range(n):
            text = f"word {len(said)}"
            action, args = ("whisper", {"to": b, "text": text}) if i == 1 else ("say", {"text": text})
            assert isinstance(w.submit(a, action, args), Accepted), action
            while w.chars[a].op is not None:
                w.step()
            said.append(text)
        for agent in (b, c) if len(said) % 2 else (b,):
            if built(w, agent) != fresh(w, agent):
                return agent, w.tick
        assert [m["text"] for m in observe(w, b)["messages"]["inbox"]] == said[-3:]
    return None


def test_inboxes_overflowing_between_observations_are_seen_as_from_nothing(content):
    assert overflowing_inboxes(content) is None


def test_a_message_the_inbox_copies_are_not_told_of_is_caught(content, monkeypatch):
    """With deliveries not handed to the kept copies, the copies of an inbox fall behind: the comparison catches it."""
    monkeypatch.setattr(society, "_hand_copies", lambda *handed: None)
    assert overflowing_inboxes(content) is not None


def test_the_clock_follows_the_weather_and_whether_the_end_is_shown(content):
    """The clock is kept for the tick; within a tick it still follows the weather and the caller's `show_end`."""
    w = World(content, "default", 3)
    a = w.join("a")
    built(w, a)
    w.weather = "rain" if w.weather != "rain" else "clear"
    assert built(w, a) == fresh(w, a)
    assert built(w, a, show_end=False) == fresh(w, a, show_end=False)
    assert "ends_at_tick" not in observe(w, a, show_end=False)["time"]
    built(w, a)
    w.end_tick += 60
    assert built(w, a) == fresh(w, a)
    w.step()
    assert built(w, a) == fresh(w, a)


def test_a_midnight_within_an_hour_is_seen_as_from_nothing(content):
    """With a day of 1430 ticks, midnight falls at ten to the hour: a character that talked with a villager before
    it, and stays still, sees that it has not talked today from the first tick after it on, though no quest is
    posted (nor any event of the village emitted) then."""
    calendar = content.calendar.model_copy(update={"ticks_per_day": 1430})
    board = content.questboard.model_copy(update={"posts_per_day": 0})
    w = World(content.model_copy(update={"calendar": calendar, "questboard": board}), "default", 3)
    a = w.join("a")
    apply_setup(w, "set_time", {"day": 1, "hour": 23, "minute": 20})
    w.step()  # the villagers go where the hour puts them
    npc, (_, p) = next(iter(w.states["settlement"].villagers.items()))
    x, y = next(w.xy(q) for q in (p + 1, p - 1, p + w.width, p - w.width) if w.is_walkable(q) and q not in w.occupants)
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    assert isinstance(w.submit(a, "talk", {"npc": npc}), Accepted)
    while w.chars[a].op is not None:
        w.step()
    assert observe(w, a)["friendship"][npc]["talked_today"]
    day = w.day
    while w.day == day or w.tick % 60 < 55:
        assert built(w, a) == fresh(w, a), w.tick
        w.step()
    assert not observe(w, a)["friendship"][npc]["talked_today"]


def test_structures_another_part_removes_are_seen_as_from_nothing(content):
    """A structure removed by another part (an animal leaving, a raid) comes with that part's event, not one of
    construction's: the count of structures placed or removed tells what was kept. Beside three chests a character
    sees one go, then another go as a third is filled (a chest's contents changing, though none it is shown: they
    are another's)."""
    w = World(content, "default", 3)
    a, b = w.join("a"), w.join("b")
    x, y = open_site(w, range(-1, 2), range(-1, 2))
    chests = [w.pos(x + 1, y), w.pos(x - 1, y), w.pos(x, y + 1)]
    for p in chests:
        apply_setup(w, "place_structure", {"x": p % w.width, "y": p // w.width, "structure": "chest", "owner": b})
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    assert sum(s["kind"] == "chest" for s in observe(w, a)["structures"]) == 3
    w.remove_structure(chests[0])
    assert built(w, a) == fresh(w, a)
    w.remove_structure(chests[1])
    w.give(f"chest@{chests[2]}", "wood", 1, "test")
    assert built(w, a) == fresh(w, a)
    assert sum(s["kind"] == "chest" for s in observe(w, a)["structures"]) == 1


def test_the_memory_since_each_decision_is_seen_as_from_nothing_through_play(content):
    """Each character asks for the memory changed since its last decision, as a policy that keeps a map does (the
    answer kept while it is the same): every one equals one built from nothing, busy characters' included."""
    w = World(content, "default", 5)
    ids = [w.join(f"p{i}") for i in range(20)]
    client, policy = LocalClient(w), LegalRandomAgent(content)
    asked = 0
    for _ in range(40):
        for a in ids:
            since = policy.memory_since(a)
            kept = built(w, a, memory_since=since)
            assert kept == fresh(w, a, memory_since=since), (a, w.tick)
            asked += since is not None and bool(json.loads(kept)["memory"])
            if client.idle(a):
                client.decide(a, policy)
        w.step()
    assert asked > 100


def _walker(content) -> tuple[World, str, Any]:
    w = World(content, "default", 3)
    a = w.join("a")
    return w, a, w.chars[a]


def _walk(w: World, c, *tiles: tuple[int, int]) -> None:
    for x, y in tiles:
        w.relocate(c, w.pos(x, y))


def _walked(w: World, c, *tiles: tuple[int, int]) -> int:
    """Walk to these tiles, then step: the tick after."""
    _walk(w, c, *tiles)
    w.step()
    return w.tick


def _memory(w: World, agent: str, since: int) -> list[dict[str, Any]]:
    """The memory since `since` as built from the pieces kept, checked against one built from nothing."""
    kept = json.loads(built(w, agent, memory_since=since))
    assert kept == json.loads(fresh(w, agent, memory_since=since))
    return kept["memory"]


def test_the_memory_since_a_tick_follows_the_tick_asked(content):
    """Tiles left at two ticks: asking since the later one, then the earlier, answers each (the kept answer is
    for the tick it was asked with)."""
    w, a, c = _walker(content)
    first = _walked(w, c, (20, 20))
    second = _walked(w, c, (21, 20))
    _walked(w, c, (22, 20))
    later, earlier = _memory(w, a, second), _memory(w, a, first)
    assert later and len(earlier) > len(later)


def test_the_memory_since_a_tick_follows_the_characters_place(content):
    """At the map's west edge a step east leaves no tile (the view only grows): the memory is the same, but the
    column that came back into view is shown live, not remembered."""
    w, a, c = _walker(content)
    r = w.needs.view_radius
    since = _walked(w, c, (1, 20))
    _walked(w, c, (0, 20))  # the column r + 1 leaves the view
    assert {t["x"] for t in _memory(w, a, since)} == {r + 1}
    remembered = {k: bytes(page) for k, page in c.memory.pages.items()}
    _walk(w, c, (1, 20))
    assert {k: bytes(page) for k, page in c.memory.pages.items()} == remembered  # nothing remembered
    assert _memory(w, a, since) == []


def test_the_memory_since_a_tick_follows_a_tile_remembered_later(content):
    """A step there and back after the answer was kept: the same place, but the tiles left on the way back are in
    the next answer."""
    w, a, c = _walker(content)
    since = _walked(w, c, (20, 20))
    _walked(w, c, (21, 20))
    before = _memory(w, a, since)
    _walk(w, c, (22, 20), (21, 20))
    assert len(_memory(w, a, since)) > len(before)


def test_the_memory_since_a_tick_is_not_kept_in_the_tick_it_changed(content):
    """Within one tick a character steps east, is asked, goes far off and back and steps east again: the tile it
    remembers last is the same, bare and seen in the same tick, but the tiles left far off are new; an answer kept
    in the tick of its newest tile would hide them."""
    w, a, c = _walker(content)
    r = w.needs.view_radius
    # the tile a step east remembers last (the old view's west column, its last row) holds nothing
    x, y = next((x, y) for y in range(20, 60) for x in range(20, 60)
                if w.pos(x - r, y + r) not in w.nodes and w.pos(x - r, y + r) not in w.structures
                and not w.ground.get(w.pos(x - r, y + r)))
    since = _walked(w, c, (x, y))
    _walk(w, c, (x + 1, y))
    last = w.pos(x - r, y + r)
    newest = c.memory.get(last)
    first = _memory(w, a, since)
    _walk(w, c, (x + 1 + 4 * r, y), (x, y), (x + 1, y))
    assert c.memory.get(last) == newest == (w.tick, None, 0, None, None, ())
    assert len(_memory(w, a, since)) > len(first)


def test_each_character_sees_every_other_in_its_square_and_not_itself(content):
    """Characters crowded three to a tile, on the edges of each other's views and over more rows than a band holds:
    each sees exactly the others in its view square, row by row, by column and by id on a tile (read straight from
    the characters' places)."""
    w = World(content, "default", 3)
    ids = [w.join(f"p{i}") for i in range(60)]
    r = w.needs.view_radius
    for i, agent in enumerate(ids):
        w.relocate(w.chars[agent], w.pos(30 + (0, 1, r, r + 1)[(i // 3) % 4], 10 + 3 * (i // 12) + i % 2))
    for agent in ids:
        x0, x1, y0, y1 = w.view_bounds(w.chars[agent].pos)
        others = sorted((c.pos // w.width, c.pos % w.width, c.id) for c in w.chars.values()
                        if c.id != agent and x0 <= c.pos % w.width <= x1 and y0 <= c.pos // w.width <= y1)
        seen = observe(w, agent, memory=False, parts=False)["view"]["characters"]
        assert [(ch["y"], ch["x"], ch["id"]) for ch in seen] == others, agent


def test_a_character_party_to_no_record_shows_its_own_world_s_empty_dealings(content):
    """The empty dealings of characters party to no record are shared within a world, never across worlds: a caller
    writing into an observation cannot reach another match played in the same process."""
    worlds = [World(content, "default", seed) for seed in (1, 2)]
    shown = []
    for w in worlds:
        agents = [w.join("a"), w.join("b")]
        mine = [dealings.dealings(w, a, dealings.dealt_stamp(w, a)) for a in agents]
        assert mine[0].trades == [] and mine[0] is mine[1]
        shown.append(mine[0])
    assert shown[0] is not shown[1] and shown[0].trades is not shown[1].trades
