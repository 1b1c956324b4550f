"""`World.ready_code`: each action's precondition that reads no argument, declared beside its check. Whenever it
names a refusal, the world refuses that action whatever its arguments (an action mask and `legal_random` pass such an
action over unasked); and for every action that declares one, a state where it refuses and a state where some
argument passes are both reached, so a precondition that always refuses, or that refuses wrongly, fails here."""

from __future__ import annotations

import itertools
import math
import random
import types
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from play_support import play_legal_random

from wildhold.agents.sampled import ID_SOURCES, LegalRandomAgent, _ids
from wildhold.world.actions import REGISTRY
from wildhold.world.actions.registry import any_in_reach, reach_tiles, shortfall, structure_in_reach, target
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.observe import observe
from wildhold.world.parts import conflict, dungeon, farming, market
from wildhold.world.parts.dungeon import inside_instance, living
from wildhold.world.parts.farming import ANIMAL_HOLDER
from wildhold.world.parts.settlement import _villager, shop_open, village
from wildhold.world.setup import apply_setup
from wildhold.world.world import World

DECLARED = sorted(name for name, spec in REGISTRY.items() if spec.ready is not None)
# The actions the engine benchmark's honest load saw refused, nearly every time it drew them, on something that reads
# no argument (no dungeon around, no structure within reach, conflict off, no bed, nothing worn ...): each declares
# its precondition. The rest are refused on their arguments (an item not carried, a recipe of another kind).
ARGUMENT_FREE = {
    "advance", "activate_altar", "guard", "dodge", "leave_dungeon", "attack", "attack_structure", "sleep", "cancel",
    "enter_dungeon", "post_order", "train", "water", "till", "unlock", "demolish", "allow", "disallow", "withdraw",
    "deposit", "retrieve", "store", "repair", "lock", "feed", "collect", "talk", "gift", "buy", "sell", "pick_up",
    "unequip", "create_artwork",
}


def tried_arguments(w: World, agent: str, action: str, rng: random.Random, most: int = 400) -> list[dict[str, Any]]:
    """Arguments to put to the check: every combination of the values that matter for each field (tiles within
    two of the character and those of its structures, what it carries, the ids it sees, each content name, each
    choice), or `most` of them drawn at random, and a few drawn from the schema as `legal_random` draws them."""
    c, obs = w.chars[agent], observe(w, agent)
    schema = REGISTRY[action].json_schema()
    fields = {f: _values(w, c, obs, f, spec) for f, spec in schema.get("properties", {}).items()}
    if "x" in fields and "y" in fields:
        del fields["x"], fields["y"]
        fields["x,y"] = _tiles(w, c, rng)
    names, choices = list(fields), list(fields.values())
    total = math.prod(len(values) for values in choices)
    picked = range(total) if total <= most else rng.sample(range(total), most)
    out = [_unpack(dict(zip(names, _nth(choices, i)))) for i in picked]
    policy, seen = LegalRandomAgent(w.content), _ids(obs)
    drawn = (policy.arguments(schema, obs, seen, rng) for _ in range(10))
    return out + [args for args in drawn if args is not None]


def _nth(choices: list[list[Any]], i: int) -> list[Any]:
    """The i-th combination of the product of `choices`, the last varying fastest."""
    out = []
    for values in reversed(choices):
        i, k = divmod(i, len(values))
        out.append(values[k])
    return out[::-1]


def _unpack(args: dict[str, Any]) -> dict[str, Any]:
    if "x,y" in args:
        args["x"], args["y"] = args.pop("x,y")
    return args


def _tiles(w: World, c, rng: random.Random) -> list[tuple[int, int]]:
    x, y = w.xy(c.pos)
    near = [(x + dx, y + dy) for dy in range(-2, 3) for dx in range(-2, 3)]
    owned = [w.xy(p) for p, s in w.structures.items() if s.owner == c.id]
    anywhere = [(rng.randrange(w.width), rng.randrange(w.height)) for _ in range(3)]
    return near + owned + anywhere


def _values(w: World, c, obs: dict[str, Any], field: str, spec: dict[str, Any]) -> list[Any]:
    content = w.content
    if "enum" in spec:
        return list(spec["enum"])
    if field in ("item", "seed"):
        return sorted(c.inventory) + ["no_such_item"]
    pools = {"recipe": content.recipes, "structure": content.structures, "attribute": content.attributes, "npc": content.npcs}
    if field in pools:
        return sorted(pools[field])
    if field in ID_SOURCES:
        listed = _ids(obs).get(field, [])
        return [*listed, *(sorted(w.chars) if field in ("character", "to") else []), "nobody"]
    if spec.get("type") == "object":
        return [{item: 1} for item in sorted(c.inventory)] + [{}]
    if "anyOf" in spec:
        return [1, 2, 3]
    if spec.get("type") == "string":
        return ["hello"]
    low = spec["exclusiveMinimum"] + 1 if "exclusiveMinimum" in spec else spec.get("minimum", 1)
    return [low, low + 1]


def assert_unready_refused(w: World, agent: str, rng: random.Random, most: int = 40) -> dict[str, str]:
    """For every action whose ready code is not None, the world refuses each argument tried; returns those codes."""
    codes = {}
    for action in REGISTRY:
        code = w.ready_code(agent, action)
        if code is None:
            continue
        codes[action] = code
        for args in tried_arguments(w, agent, action, rng, most):
            assert w.refusal_code(agent, action, args) is not None, (action, code, args)
    return codes


def passing_arguments(w: World, agent: str, action: str) -> dict[str, Any] | None:
    """Arguments the world accepts for this action now, among those tried, or None."""
    for args in tried_arguments(w, agent, action, random.Random(1), most=5000):
        if w.refusal_code(agent, action, args) is None:
            return args
    return None


# ---- random reachable states ---------------------------------------------------------------------------------------


def _near_something(w: World, rng: random.Random) -> tuple[int, int] | None:
    """A walkable tile near a place where preconditions turn: a structure, a node, a villager, the dungeon."""
    places = [w.dungeon, w.settlement, *rng.sample(sorted(w.structures), min(3, len(w.structures))),
              *rng.sample(sorted(w.nodes), min(3, len(w.nodes)))]
    if w.scenario.npcs:
        places += [p for _, p in village(w).villagers.values()]
    x, y = w.xy(rng.choice(places))
    for _ in range(20):
        p = w.pos(x + rng.randint(-2, 2), y + rng.randint(-2, 2))
        if p is not None and w.is_walkable(p):
            return w.xy(p)
    return None


@settings(max_examples=12, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(scenario=st.sampled_from(["default", "famine", "frontier"]), seed=st.integers(0, 2**16), ticks=st.integers(0, 40),
       moved=st.floats(0.0, 1.0))
def test_an_action_whose_ready_code_refuses_is_refused_whatever_its_arguments(content, scenario: str, seed: int, ticks: int,
                                                                            moved: float):
    w = World(content, scenario, seed)
    agents = [w.join(f"p{i}") for i in range(6)]
    rng = random.Random(seed)
    for a in agents:  # some characters go where a precondition turns: beside a structure, a node, a villager
        if rng.random() < moved and (xy := _near_something(w, rng)) is not None:
            apply_setup(w, "move_character", {"agent": a, "x": xy[0], "y": xy[1]})
    play_legal_random(w, agents, ticks)
    for a in agents:
        assert_unready_refused(w, a, rng)


SIFTED = sorted(name for name, spec in REGISTRY.items() if spec.sift is not None)


@settings(max_examples=10, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(scenario=st.sampled_from(["default", "famine", "season"]), seed=st.integers(0, 2**16), ticks=st.integers(0, 20),
       short=st.floats(0.0, 0.6))
def test_a_value_an_actions_sift_leaves_out_is_refused_whatever_the_other_arguments(content, scenario: str, seed: int,
                                                                                    ticks: int, short: float):
    """Characters given the materials of recipes and buildings (some one short), stations placed beside some: each
    argument value a `sift` leaves out is refused with every other argument tried."""
    _sifted_arguments_passed(content, scenario, seed, ticks, short)


def test_the_sifted_actions_pass_with_materials_at_hand(content):
    """The check above is not vacuous: with whole materials and stations at hand, sifted actions pass."""
    assert _sifted_arguments_passed(content, "default", 0, 0, 0.0) > 0


def _sifted_arguments_passed(content, scenario: str, seed: int, ticks: int, short: float) -> int:
    """Sets the state up and checks every sifted action's tried arguments; how many passed."""
    w = World(content, scenario, seed)
    agents = [w.join(f"p{i}") for i in range(3)]
    rng = random.Random(seed)
    wanted = [dict(r.inputs) for r in content.recipes.values()] + [
        dict(s.build.materials) for s in content.structures.values() if s.build is not None]
    stations = sorted({r.station for r in content.recipes.values() if r.station})
    for a in agents:
        for need in rng.sample(wanted, 6):
            given = {item: qty - (rng.random() < short) for item, qty in need.items()}
            _give(w, a, {item: qty for item, qty in given.items() if qty > 0})
        x, y = w.xy(w.chars[a].pos)
        for (dx, dy), station in zip(((1, 0), (0, 1), (-1, 0)), rng.sample(stations, len(stations))):
            p = w.pos(x + dx, y + dy)
            if p is not None and w.is_walkable(p) and p not in w.nodes and p not in w.occupants:
                _place(w, (x + dx, y + dy), station, None)
    play_legal_random(w, agents, ticks)
    passed = 0
    for a in agents:
        for action in SIFTED:
            kept = REGISTRY[action].sift(w, w.chars[a])
            for args in tried_arguments(w, a, action, rng, most=600):
                ok = w.refusal_code(a, action, args) is None
                left_out = [f for f, values in kept.items() if args.get(f) not in values]
                assert not (ok and left_out), (action, args, left_out)
                passed += ok
    assert SIFTED
    return passed


# ---- every declared precondition both refuses and lets through -----------------------------------------------------


def _world(content, scenario: str = "famine") -> tuple[World, str, str, tuple[int, int]]:
    """A world with two characters, the first on open meadow away from the settlement (nothing within two tiles of
    it: no structure, node, plot or villager), the second far off."""
    w = World(content, scenario, 3)
    a, b = w.join("a"), w.join("b")
    w.events.drain()
    soil = set(w.content.farming.soil)
    villagers = [p for _, p in village(w).villagers.values()] if w.scenario.npcs else []

    def open_around(p: int) -> bool:
        x, y = w.xy(p)
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                q = w.pos(x + dx, y + dy)
                if (q is None or w.terrain_names[w.terrain[q]] not in soil or w.safe_terrain[w.terrain[q]]
                        or q in w.structures or q in w.nodes or q in w.occupants or q in (w.dungeon, w.settlement)
                        or q in w.spawns or any(w.distance(q, v) <= 3 for v in villagers)):
                    return False
        return True

    centre = next(p for p in range(w.width * w.height) if open_around(p))
    x, y = w.xy(centre)
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    return w, a, b, (x, y)


def _play(w: World, agent: str, action: str, args: dict[str, Any] | None = None) -> None:
    """Submit an action the world must accept and step until it is done."""
    got = w.submit(agent, action, args or {})
    assert isinstance(got, Accepted), (action, args, got)
    while w.chars[agent].op is not None:
        w.step()


def _kind(w: World, part: str) -> str:
    return next(k for k, s in w.content.structures.items() if s.part == part)


def _place(w: World, at: tuple[int, int], kind: str, owner: str | None, **extra: Any) -> None:
    apply_setup(w, "place_structure", {"x": at[0], "y": at[1], "structure": kind, "owner": owner, **extra})


def _give(w: World, agent: str, items: dict[str, int]) -> None:
    for item, qty in items.items():
        apply_setup(w, "give_items", {"agent": agent, "item": item, "qty": qty})


def _equipped(w: World, agent: str, tool: str) -> None:
    _give(w, agent, {tool: 1})
    _play(w, agent, "equip", {"item": tool})


def _crop_in_season(w: World) -> str:
    return next(k for k, s in w.content.crops.items() if w.season in s.seasons)


def _dry_day(w: World) -> None:
    weather = next(k for k in w.calendar.weathers if k not in w.content.farming.rain_waters)
    apply_setup(w, "set_day_weather", {"weather": weather})


def _beside(w: World, agent: str, p: int) -> None:
    """Put the character on a walkable tile within reach of tile p."""
    x, y = w.xy(p)
    for dy, dx in itertools.product((0, -1, 1), repeat=2):
        q = w.pos(x + dx, y + dy)
        if q is not None and w.is_walkable(q):
            apply_setup(w, "move_character", {"agent": agent, "x": x + dx, "y": y + dy})
            return
    raise AssertionError("no walkable tile beside it")


def _inside(w: World, a: str) -> None:
    _beside(w, a, w.dungeon)
    _play(w, a, "enter_dungeon", {"tier": 1})


def _stage_villager(w: World, a: str, then: Callable[[str], None]) -> None:
    """Midday, the character beside a villager whose shop is open there."""
    apply_setup(w, "set_time", {"day": w.day, "hour": 12})
    w.step()
    npc = next(n for n, (_, p) in sorted(village(w).villagers.items())
               if (shop := w.content.npcs[n].shop) is not None and shop_open(shop, 12))
    _beside(w, a, village(w).villagers[npc][1])
    then(npc)


def _stage_animal(w: World, a: str, at: tuple[int, int], fed: bool) -> None:
    x, y = at
    _place(w, (x + 1, y), _kind(w, "coop"), None)
    animal = next(iter(w.content.animals.values()))
    _give(w, a, {animal.item: 1, animal.feed: animal.feed_qty})
    _play(w, a, "settle_animal", {"item": animal.item, "x": x + 1, "y": y + 1})
    if fed:
        _play(w, a, "feed", {"x": x + 1, "y": y + 1})
        apply_setup(w, "set_time", {"day": w.day, "hour": 23, "minute": 59})
        while not w.containers.get(f"{ANIMAL_HOLDER}{w.pos(x + 1, y + 1)}"):
            w.step()


def _stage_plot(w: World, a: str, at: tuple[int, int], stage: int | None) -> None:
    """A crop of the character's at `at` + (1, 0), at a stage (None: ripe)."""
    crop = _crop_in_season(w)
    ripe = len(w.content.crops[crop].stage_days)
    apply_setup(w, "plant_crop", {"agent": a, "x": at[0] + 1, "y": at[1], "crop": crop, "stage": ripe if stage is None else stage})


# For each action that declares `ready`: how to bring the first character to a state where some argument passes.
STAGES: dict[str, Callable[[World, str, str, tuple[int, int]], None]] = {
    "gather": lambda w, a, b, at: apply_setup(w, "place_resource", {"x": at[0] + 1, "y": at[1], "node": next(
        k for k, n in w.content.nodes.items() if n.requires_tool is None)}),
    "sleep": lambda w, a, b, at: _place(w, at, next(k for k, s in w.content.structures.items() if s.bed), a),
    "unequip": lambda w, a, b, at: _equipped(w, a, w.content.farming.till_tool),
    "pick_up": lambda w, a, b, at: _play(w, a, "drop", {"item": next(iter(w.chars[a].inventory)), "qty": 1}),
    "cancel": lambda w, a, b, at: w.submit(a, "rest", {"ticks": 30}),
    "repair": lambda w, a, b, at: (_place(w, (at[0] + 1, at[1]), "wall", a, hp=1),
                                   _give(w, a, w.content.structures["wall"].repair.materials)),
    "demolish": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), "wall", a),
    "lock": lambda w, a, b, at: (_place(w, (at[0] + 1, at[1]), _kind(w, "door"), a),
                                 _give(w, a, {w.content.structures[_kind(w, "door")].lock_item: 1})),
    "unlock": lambda w, a, b, at: (STAGES["lock"](w, a, b, at), _play(w, a, "lock", {"x": at[0] + 1, "y": at[1]})),
    "store": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), _kind(w, "chest"), a),
    "retrieve": lambda w, a, b, at: (STAGES["store"](w, a, b, at), _play(w, a, "store", {
        "x": at[0] + 1, "y": at[1], "item": next(iter(w.chars[a].inventory)), "qty": 1})),
    "deposit": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), _kind(w, "storehouse"), None),
    "withdraw": lambda w, a, b, at: (STAGES["deposit"](w, a, b, at), _play(w, a, "deposit", {
        "x": at[0] + 1, "y": at[1], "item": next(iter(w.chars[a].inventory)), "qty": 1})),
    "allow": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), "wall", a),
    "disallow": lambda w, a, b, at: (STAGES["allow"](w, a, b, at), _play(w, a, "allow", {"x": at[0] + 1, "y": at[1], "character": b})),
    "enter_dungeon": lambda w, a, b, at: _beside(w, a, w.dungeon),
    "leave_dungeon": lambda w, a, b, at: _inside(w, a),
    "guard": lambda w, a, b, at: _inside(w, a),
    "dodge": lambda w, a, b, at: _inside(w, a),
    "strike": lambda w, a, b, at: _inside(w, a),
    "advance": lambda w, a, b, at: (_inside(w, a), _cleared(w, a)),
    "activate_altar": lambda w, a, b, at: _inside(w, a),  # past the precondition only: see PAST_THE_PRECONDITION
    "attack_structure": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), "wall", b),
    "attack": lambda w, a, b, at: apply_setup(w, "move_character", {"agent": b, "x": at[0] + 1, "y": at[1]}),
    "till": lambda w, a, b, at: _equipped(w, a, w.content.farming.till_tool),
    "water": lambda w, a, b, at: (_equipped(w, a, w.content.farming.water_tool), _stage_plot(w, a, at, 0), _dry_day(w)),
    "plant": lambda w, a, b, at: (_equipped(w, a, w.content.farming.till_tool), _play(w, a, "till", {"x": at[0] + 1, "y": at[1]}),
                                  _give(w, a, {w.content.crops[_crop_in_season(w)].seed: 1})),
    "fertilise": lambda w, a, b, at: (_stage_plot(w, a, at, 0), _give(w, a, {w.content.farming.fertilizer: 1})),
    "harvest": lambda w, a, b, at: _stage_plot(w, a, at, None),
    "feed": lambda w, a, b, at: (_stage_animal(w, a, at, fed=False),
                                 _give(w, a, {next(iter(w.content.animals.values())).feed: 10})),
    "collect": lambda w, a, b, at: _stage_animal(w, a, at, fed=True),
    "post_order": lambda w, a, b, at: _place(w, (at[0] + 1, at[1]), _kind(w, "market_stall"), None),
    "talk": lambda w, a, b, at: _stage_villager(w, a, lambda npc: None),
    "gift": lambda w, a, b, at: _stage_villager(w, a, lambda npc: None),
    "buy": lambda w, a, b, at: _stage_villager(w, a, lambda npc: _give(w, a, {  # one carried, so it is an item tried
        w.content.economy.coin: 100, next(iter(w.content.npcs[npc].shop.sells)): 1})),
    "sell": lambda w, a, b, at: _stage_villager(w, a, lambda npc: _give(w, a, {next(iter(w.content.npcs[npc].shop.buys)): 1})),
    "accept_quest": lambda w, a, b, at: _until(w, lambda: village(w).board),
    "turn_in": lambda w, a, b, at: (_until(w, lambda: village(w).board),
                                    _play(w, a, "accept_quest", {"quest": next(iter(village(w).board))})),
    "train": lambda w, a, b, at: (_place(w, (at[0] + 1, at[1]), _kind(w, "workshop"), None),
                                  _give(w, a, {w.content.economy.coin: 100})),
    "create_artwork": lambda w, a, b, at: _give(w, a, w.content.economy.artwork_materials),
}
# Actions whose staged state gets past the precondition (the check refuses on something the precondition does not
# read) without reaching an argument that passes: the altar needs the Royal Tomb's boss room cleared, a turn-in the
# quest's items handed over at its issuer.
PAST_THE_PRECONDITION = {"activate_altar", "turn_in"}


def _until(w: World, condition: Callable[[], Any], most: int = 3000) -> None:
    for _ in range(most):
        if condition():
            return
        w.step()
    raise AssertionError("the condition never came")


def test_the_tiles_within_reach_are_those_target_accepts(content):
    """On every tile of a small map, corners and edges included, before and after the tiles are first kept."""
    w = World(content, "tiny", 1)
    c = w.chars[w.join("a")]
    for _ in range(2):
        for p in range(w.width * w.height):
            c.pos = p  # only where it stands is read
            near = {q for q in range(w.width * w.height) if w.distance(p, q) <= w.needs.reach}
            assert set(reach_tiles(w, c)) == near
            assert {q for q in near | {p + 2, p - 2 * w.width} if 0 <= q < w.width * w.height
                    and not isinstance(target(w, c, *w.xy(q)), Rejected)} == near


def test_worlds_of_other_sizes_keep_their_own_tiles_within_reach(content):
    """A world keeps the table of tiles within reach it asks (a table made for another size names other rows' tiles):
    worlds of two sizes asked in turn, on corners, edges and inner tiles, each answer their own."""
    for scenario in ("tiny", "famine", "tiny", "famine"):
        w = World(content, scenario, 1)
        c = w.chars[w.join("a")]
        r = w.needs.reach
        for p in (0, w.width - 1, w.width + 1, w.width * w.height - 1, w.width * (w.height // 2) + 3):
            c.pos = p
            x, y = w.xy(p)
            near = {w.pos(x + dx, y + dy) for dx in range(-r, r + 1) for dy in range(-r, r + 1)} - {None}
            assert set(reach_tiles(w, c)) == near


def test_every_argument_free_refusal_of_the_honest_load_is_declared():
    assert ARGUMENT_FREE <= set(DECLARED)


def test_every_declared_precondition_refuses_on_a_bare_tile(content):
    """Away from everything (no structure, node, plot, animal, villager or other character within reach, nothing
    worn, nothing begun), each declared precondition refuses in a scenario with conflict or in one without; a quest
    is taken from the board anywhere, so accept_quest refuses once the board is empty."""
    refused: set[str] = set()
    for scenario in ("famine", "default"):
        w, a, _, _ = _world(content, scenario)
        refused |= set(assert_unready_refused(w, a, random.Random(2)))
    while village(w).board:  # others take every quest posted
        taker = w.join("taker")
        for quest in list(village(w).board)[:w.content.questboard.max_active_per_character]:
            _play(w, taker, "accept_quest", {"quest": quest})
    refused |= set(assert_unready_refused(w, a, random.Random(2)))
    assert set(DECLARED) - refused == set()


@pytest.mark.parametrize("action", DECLARED)
def test_a_declared_precondition_lets_through_the_state_it_is_staged_for(content, action: str):
    """From the bare tile, the state STAGES brings about has some argument of the action accepted, and its ready code
    is None there; every other action's precondition still holds its promise in that state."""
    w, a, b, at = _world(content, "famine")
    bare = _refusals(w, a, action)
    STAGES[action](w, a, b, at)
    assert w.ready_code(a, action) is None
    if action in PAST_THE_PRECONDITION:  # some argument now meets a refusal the bare state never gave
        assert _refusals(w, a, action) - bare
    else:
        assert passing_arguments(w, a, action) is not None, action
    assert_unready_refused(w, a, random.Random(4), most=15)


def _refusals(w: World, agent: str, action: str) -> set[str | None]:
    return {w.refusal_code(agent, action, args) for args in tried_arguments(w, agent, action, random.Random(1))}


def _cleared(w: World, a: str) -> None:
    """Strike the room's enemies until none stands, the character kept at full health and energy."""
    inst = inside_instance(w, a)
    for _ in range(200):
        room = living(inst.rooms[inst.room])
        if not room:
            return
        apply_setup(w, "set_needs", {"agent": a, "health": w.needs.max_health, "energy": w.needs.max_energy})
        _play(w, a, "strike", {"enemy": room[0].id})
    raise AssertionError("the room was never cleared")


# ---- preconditions that build no sentence answer the code of the check's own helper ------------------------------


def _code(got: Any) -> str | None:
    return got.code if isinstance(got, Rejected) else None


def _villager_code(w: World, c) -> str | None:
    if not w.scenario.npcs:
        return "unknown_npc"
    return _code(next((None for npc in w.content.npcs if _villager(w, c, npc) is None), Rejected("out_of_range", "")))


# For each precondition written apart from the helper its check calls (its code only, no sentence built, asked of
# every action a policy draws), the refusal code of that helper: what the precondition must answer in every state.
HELPER_CODES: dict[str, Callable[[World, Any], str | None]] = {
    "attack": lambda w, c: _code(conflict._conflict_on(w)) or (None if conflict._others_in_reach(w, c) else "out_of_range"),
    "attack_structure": lambda w, c: _code(conflict._conflict_on(w)) or (None if any_in_reach(w, c, w.structures) else "no_structure"),
    **{action: lambda w, c: _code(dungeon._inside(w, c)) for action in ("advance", "activate_altar", "guard", "dodge",
                                                                        "leave_dungeon", "strike")},
    "enter_dungeon": lambda w, c: _code(dungeon._at_entrance(w, c)),
    "till": lambda w, c: _code(farming._hoe_in_hand(w, c)),
    "water": lambda w, c: _code(farming._can_in_hand(w, c)) or farming._plot_ready(w, c),
    "create_artwork": lambda w, c: _code(shortfall(w, c, w.content.economy.artwork_materials, "An artwork")),
    **{action: _villager_code for action in ("talk", "gift", "buy", "sell")},
    "post_order": lambda w, c: None if any(market._stall_at(w, p) for p in reach_tiles(w, c)) else "no_market",
    "train": lambda w, c: None if any((s := w.structures.get(p)) is not None and s.hp > 0
                                      and w.content.structures[s.kind].part == "workshop" for p in reach_tiles(w, c)) else "no_workshop",
}


def assert_helper_codes(w: World) -> set[tuple[str, str | None]]:
    """Every character's precondition of each action in HELPER_CODES answers its helper's code, the character where it
    stands and on each tile within two of it (only where it stands is read: the edge of reach is crossed both ways);
    returns the (action, code) pairs seen."""
    seen = set()
    for c in w.chars.values():
        home = c.pos
        x, y = w.xy(home)
        for p in [home] + [q for dy in range(-2, 3) for dx in range(-2, 3) if (q := w.pos(x + dx, y + dy)) is not None]:
            c.pos = p
            for action, code in HELPER_CODES.items():
                expected = code(w, c)
                assert REGISTRY[action].ready(w, c) == expected, (action, c.id, w.xy(p))
                seen.add((action, expected))
        c.pos = home
    return seen


@pytest.mark.parametrize("staged", sorted(STAGES))
def test_a_precondition_answers_the_code_of_its_checks_helper(content, staged: str):
    """On the bare tile and in each staged state (inside the dungeon, beside a villager, a workshop, a stall, holding
    a tool ...), for both characters."""
    w, a, b, at = _world(content, "famine")
    assert_helper_codes(w)
    STAGES[staged](w, a, b, at)
    assert_helper_codes(w)


def test_the_staged_states_reach_each_answer_of_the_helpers(content):
    """The states above reach, for each precondition compared, both a refusal and a pass: a comparison that could
    never see one of them would prove nothing."""
    seen = assert_helper_codes(_world(content, "default")[0])  # no conflict there
    for staged in sorted(STAGES):
        w, a, b, at = _world(content, "famine")
        STAGES[staged](w, a, b, at)
        seen |= assert_helper_codes(w)
    for action in HELPER_CODES:
        assert None in {code for name, code in seen if name == action}, action
        assert {code for name, code in seen if name == action} - {None}, action


def test_the_villagers_stands_are_read_again_once_one_moves(content):
    """The villager actions' precondition keeps the tiles within reach of a villager while the village emits no event:
    a character left beside a villager's tile is out of range once the villager walks off at a new hour, as read from
    nothing (kept tiles not brought up to date would let it talk to the empty tile)."""
    w, a, _, _ = _world(content)
    apply_setup(w, "set_time", {"day": w.day, "hour": 6})
    w.step()
    npc, (_, stand) = sorted(village(w).villagers.items())[0]
    _beside(w, a, stand)
    c, answers = w.chars[a], []
    for _ in range(2000):
        answers.append(w.ready_code(a, "talk"))
        assert answers[-1] == _villager_code(w, c)
        if village(w).villagers[npc][1] != stand and answers[-1] == "out_of_range":
            break
        w.step()
    assert answers[0] is None and answers[-1] == "out_of_range"


def test_the_tiles_within_reach_of_a_structure_follow_what_is_placed_and_removed(content):
    """The structures' precondition keeps the tiles within reach of some structure while none is placed or removed: on
    every tile of the map, after each placement and removal, it answers as a look over the tiles within reach (kept
    tiles not brought up to date would miss the new structure or keep the removed one)."""
    w, _, _, (x, y) = _world(content)
    kind = _kind(w, "chest")

    def assert_as_looked_over() -> None:
        for p in range(w.width * w.height):
            here = types.SimpleNamespace(pos=p)
            assert structure_in_reach(w, here) == any_in_reach(w, here, w.structures), w.xy(p)

    assert_as_looked_over()
    _place(w, (x, y), kind, None)
    assert_as_looked_over()
    w.remove_structure(w.pos(x, y))
    assert_as_looked_over()


def test_the_tiles_within_reach_of_a_plot_or_an_animal_follow_the_farm(content):
    """The plots' and animals' preconditions keep the tiles within reach of one while farming emits no event: on every
    tile, after a plot is tilled, an animal settled and the animal gone (each with its event), they answer as a look
    over the tiles within reach."""
    w, a, _, at = _world(content)

    def assert_as_looked_over() -> None:
        f = farming.farm(w)
        for p in range(w.width * w.height):
            here = types.SimpleNamespace(pos=p)
            assert (farming._plot_ready(w, here) is None) == any_in_reach(w, here, f.plots), w.xy(p)
            assert (farming._animal_ready(w, here) is None) == any_in_reach(w, here, f.animals), w.xy(p)

    assert_as_looked_over()
    _equipped(w, a, w.content.farming.till_tool)
    _play(w, a, "till", {"x": at[0], "y": at[1] - 1})
    assert_as_looked_over()
    _stage_animal(w, a, at, fed=False)
    assert_as_looked_over()
    p = next(iter(farming.farm(w).animals))
    farming._leave(w, p, farming.farm(w).animals[p], "hungry")
    assert_as_looked_over()
