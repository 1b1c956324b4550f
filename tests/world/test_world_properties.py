"""Property checks of the world engine: determinism, rejection, fog of war, conservation, snapshots.

Each property runs random programs (joins, gifts, actions, steps, knockdowns) on the tiny
scenario and checks an invariant against an oracle rebuilt from the event stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from random import Random
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from play_support import play_legal_random
from pydantic import ValidationError

from wildhold.agents.sampled import LegalRandomAgent, _ids
from wildhold.content import default_content
from wildhold.world.actions import DIRECTIONS, REGISTRY, registry
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import EVENT_TYPES, GENESIS, validate_event, verify_chain
from wildhold.world.observe import observe
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world import world as world_module
from wildhold.world.world import GROUND, World

CONTENT = default_content()
SCENARIO = "tiny"
ITEMS = sorted(CONTENT.items)
RECIPES = sorted(CONTENT.recipes)
RADIUS = CONTENT.needs.view_radius
WIDTH, HEIGHT = CONTENT.scenario(SCENARIO).width, CONTENT.scenario(SCENARIO).height
TOO_MANY_TICKS = max(CONTENT.needs.max_sleep_ticks, CONTENT.needs.max_wait_ticks) + 1

PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---- programs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rel:
    """A coordinate given relative to the acting character, resolved when the action is submitted."""

    axis: str
    offset: int


NEAR_NODE = "near-node"  # args placeholder: the first resource node within reach, else one's own tile


def resolve(w: World, agent: str, args: Any) -> Any:
    if agent not in w.chars:
        return args
    x, y = w.xy(w.chars[agent].pos)
    if args == NEAR_NODE:
        near = [(x + dx, y + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if w.pos(x + dx, y + dy) in w.nodes]
        nx, ny = near[0] if near else (x, y)
        return {"x": nx, "y": ny}
    if not isinstance(args, dict):
        return args
    return {k: (x if v.axis == "x" else y) + v.offset if isinstance(v, Rel) else v for k, v in args.items()}


def target(lo: int, hi: int) -> st.SearchStrategy[dict[str, Rel]]:
    return st.builds(lambda dx, dy: {"x": Rel("x", dx), "y": Rel("y", dy)}, st.integers(lo, hi), st.integers(lo, hi))


def with_item(base: st.SearchStrategy[dict], items: st.SearchStrategy[str]) -> st.SearchStrategy[dict]:
    return st.builds(lambda d, item: {**d, "item": item}, base, items)


item_names = st.sampled_from(ITEMS)
placeables = st.sampled_from(sorted(k for k, v in CONTENT.items.items() if v.places))
ticks = st.fixed_dictionaries({"ticks": st.integers(1, 30)})
item_qty = st.fixed_dictionaries({"item": item_names, "qty": st.integers(1, 3)})

plausible_action = st.one_of(
    st.tuples(st.just("move"), st.fixed_dictionaries({"direction": st.sampled_from(sorted(DIRECTIONS))})),
    st.tuples(st.just("move_to"), target(-4, 4)),
    st.tuples(st.just("move_to"), target(-12, 12)),
    st.tuples(st.just("gather"), target(-1, 1)),
    st.tuples(st.just("gather"), st.just(NEAR_NODE)),
    st.tuples(st.just("gather"), st.just(NEAR_NODE)),
    st.tuples(st.sampled_from(["craft", "cook"]), st.fixed_dictionaries({"recipe": st.sampled_from(RECIPES)})),
    st.tuples(st.sampled_from(["eat", "equip"]), st.fixed_dictionaries({"item": item_names})),
    st.tuples(st.sampled_from(["sleep", "rest", "wait"]), ticks),
    st.tuples(st.just("unequip"), st.fixed_dictionaries({"slot": st.sampled_from(["hand", "body"])})),
    st.tuples(st.sampled_from(["drop", "pick_up"]), item_qty),
    st.tuples(st.just("place"), with_item(target(-1, 1), placeables)),
    st.tuples(st.just("cancel"), st.just({})),
)

junk_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=True),
    st.text(max_size=6), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
unknown_names = st.one_of(
    st.text(max_size=12).filter(lambda s: s not in REGISTRY),
    st.sampled_from(["mvoe", "gahter", "Move", "move ", "craft!", "sleeep", "pickup", ""]),
)


def _wrong_type(name: str) -> st.SearchStrategy[dict]:
    fields = list(REGISTRY[name].args.model_fields) or ["x"]
    return st.dictionaries(st.sampled_from(fields), junk_values, min_size=1)


def _extra_arg(pair: tuple[str, dict]) -> st.SearchStrategy[tuple[str, dict]]:
    name, args = pair
    if args == NEAR_NODE:
        args = {"x": Rel("x", 0), "y": Rel("y", 0)}
    return st.builds(lambda k, v: (name, {**args, k: v}), st.sampled_from(["bogus", "zz_extra", "X"]), junk_values)


# Each garbage strategy yields (action, args, must_be_rejected).
garbage_action = st.one_of(
    st.builds(lambda n, a: (n, a, True), unknown_names, st.dictionaries(st.text(max_size=3), junk_values, max_size=2)),
    st.sampled_from(sorted(REGISTRY)).flatmap(lambda n: st.tuples(st.just(n), _wrong_type(n), st.just(False))),
    st.sampled_from(sorted(n for n, d in REGISTRY.items() if any(f.is_required() for f in d.args.model_fields.values()))).map(lambda n: (n, {}, True)),
    plausible_action.flatmap(_extra_arg).map(lambda p: (*p, True)),
    st.builds(
        lambda n, x, y: (n, {"x": x, "y": y}, True),
        st.sampled_from(["move_to", "gather"]),
        st.one_of(st.integers(-200, -1), st.integers(WIDTH, WIDTH + 200)),
        st.integers(-200, HEIGHT + 200),
    ),
    st.builds(lambda n, item, q: (n, {"item": item, "qty": q}, True), st.sampled_from(["drop", "pick_up"]), item_names, st.integers(10**3, 10**9)),
    st.builds(lambda n, item: (n, {"item": item}, True), st.sampled_from(["eat", "equip", "drop"]), st.text(min_size=1, max_size=8).filter(lambda s: s not in ITEMS)),
    st.builds(lambda n, t: (n, {"ticks": t}, True), st.sampled_from(["sleep", "rest", "wait"]), st.one_of(st.integers(-5, 0), st.integers(TOO_MANY_TICKS, 10**9))),
    st.builds(lambda n, a: (n, a, True), st.sampled_from(sorted(REGISTRY)), st.one_of(st.lists(st.integers(), min_size=1), st.text(min_size=1), st.integers(1, 9), st.just(("x", 1)))),
    plausible_action.map(lambda p: (*p, False)),
)

gifts = st.dictionaries(item_names, st.integers(1, 6), max_size=5)


def program(n_agents: int, max_len: int = 40) -> st.SearchStrategy[list]:
    who = st.integers(0, n_agents - 1)
    act = st.builds(lambda i, a: ("act", i, *a), who, plausible_action)
    element = st.one_of(
        act, act, act, act,
        st.builds(lambda i, n: ("forage", i, n), who, st.integers(1, 12)),
        st.builds(lambda i, d, n: ("walk", i, d, n), who, st.sampled_from(sorted(DIRECTIONS)), st.integers(1, 10)),
        st.builds(lambda n: ("step", n), st.integers(1, 25)),
        st.builds(lambda n: ("step", n), st.integers(1, 25)),
        st.builds(lambda n: ("step", n), st.integers(100, 600)),
        st.builds(lambda i: ("knockdown", i), who),
        st.builds(lambda i, g: ("gift", i, g), who, gifts),
    )
    return st.lists(element, min_size=min(8, max_len), max_size=max_len)


@st.composite
def scenarios(draw, max_len: int = 40) -> tuple[int, int, list[dict[str, int]], list]:
    seed = draw(st.integers(0, 2**32 - 1))
    n_agents = draw(st.integers(1, 3))
    starting = draw(st.lists(gifts, min_size=n_agents, max_size=n_agents))
    return seed, n_agents, starting, draw(program(n_agents, max_len))


def build(seed: int, n_agents: int, starting: list[dict[str, int]]) -> tuple[World, list[str]]:
    w = World(CONTENT, SCENARIO, seed)
    agents = [w.join(f"c{i}") for i in range(n_agents)]
    for agent, items in zip(agents, starting):
        for item, qty in sorted(items.items()):
            w.give(agent, item, qty, "test")
    return w, agents


def run_element(w: World, agents: list[str], element: tuple) -> Accepted | Rejected | None:
    kind = element[0]
    if kind == "act":
        _, i, action, args = element
        return w.submit(agents[i], action, resolve(w, agents[i], args))
    if kind == "step":
        for _ in range(element[1]):
            w.step()
    elif kind == "walk":
        for _ in range(element[3]):
            w.submit(agents[element[1]], "move", {"direction": element[2]})
            w.step()
    elif kind == "forage":
        forage(w, agents[element[1]], element[2])
    elif kind == "knockdown":
        c = w.chars[agents[element[1]]]
        w.set_needs(c, "test", 0, c.energy, c.satiety)
        w.step()
    elif kind == "gift":
        for item, qty in sorted(element[2].items()):
            w.give(agents[element[1]], item, qty, "test")
    return None


def forage(w: World, agent: str, max_steps: int) -> None:
    """Walk up to `max_steps` moves towards the nearest stocked node, then try to gather from it a few times."""
    c = w.chars[agent]
    parent: dict[int, int | None] = {c.pos: None}
    frontier, goal = [c.pos], None
    while frontier and goal is None:
        nxt = []
        for p in frontier:
            node = w.nodes.get(p)
            if node is not None and node.amount > 0 and p != c.pos:
                goal = p
                break
            x, y = w.xy(p)
            for dx, dy in DIRECTIONS.values():
                q = w.pos(x + dx, y + dy)
                if q is not None and q not in parent and w.is_walkable(q):
                    parent[q] = p
                    nxt.append(q)
        frontier = nxt
    if goal is None:
        return
    path = [goal]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])
    for p in path[-2:0:-1][:max_steps]:
        (x, y), (px, py) = w.xy(c.pos), w.xy(p)
        step = next((d for d, delta in DIRECTIONS.items() if delta == (px - x, py - y)), None)
        if step is not None:
            w.submit(agent, "move", {"direction": step})
        w.step()
    for _ in range(4):
        w.submit(agent, "gather", dict(zip("xy", w.xy(goal))))
        for _ in range(w.content.actions["gather"].duration):
            w.step()


# ---- 1. determinism ----------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(scenarios())
def test_same_seed_and_actions_give_the_same_chain_and_state(case):
    seed, n_agents, starting, prog = case
    a, agents_a = build(seed, n_agents, starting)
    b, agents_b = build(seed, n_agents, starting)
    for element in prog:
        assert run_element(a, agents_a, element) == run_element(b, agents_b, element)
        assert a.events.head == b.events.head
    assert state_hash(a) == state_hash(b)
    assert [e[4] for e in a.events.drain()] == [e[4] for e in b.events.drain()]


@settings(max_examples=15, deadline=None, database=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2**32 - 1))
def test_different_seeds_give_different_worlds(seed, delta):
    a = World(CONTENT, SCENARIO, seed)
    b = World(CONTENT, SCENARIO, seed + delta)
    assert (a.terrain, sorted((p, n.kind) for p, n in a.nodes.items())) != (b.terrain, sorted((p, n.kind) for p, n in b.nodes.items()))
    assert state_hash(a) != state_hash(b)


# ---- 2. rejection changes nothing --------------------------------------------------------

actors = st.one_of(*[st.integers(0, 2)] * 6, st.sampled_from(["a99", "", "A1", "a0"]))


@settings(PROPERTY_SETTINGS, max_examples=40)
@given(scenarios(max_len=20), st.lists(st.tuples(actors, garbage_action), min_size=10, max_size=40), st.data())
def test_rejected_actions_leave_the_state_unchanged(case, probes, data):
    seed, n_agents, starting, prog = case
    w, agents = build(seed, n_agents, starting)
    for element in prog:
        run_element(w, agents, element)
    w.events.drain()
    for who, (action, args, must_reject) in probes:
        agent = agents[who % n_agents] if isinstance(who, int) else who
        must_reject = must_reject or agent not in w.chars
        before = state_hash(w)
        result = w.submit(agent, action, resolve(w, agent, args))
        emitted = w.events.drain()
        if isinstance(result, Rejected):
            assert state_hash(w) == before, (action, args, result)
            assert [e[2] for e in emitted] == ["action_rejected"]
            assert orjson.loads(emitted[0][3])["data"]["code"] == result.code
        else:
            assert not must_reject, (action, args, result)
            assert agent in w.chars
        if data.draw(st.booleans()):
            w.step()
            w.events.drain()


def test_rejection_codes_cover_every_garbage_category():
    w, (agent,) = build(3, 1, [{}])
    codes = {
        w.submit(agent, "teleport", {}).code,
        w.submit(agent, "move", {"direction": "up"}).code,
        w.submit(agent, "move", [1]).code,
        w.submit(agent, "gather", {"x": 500, "y": 0}).code,
        w.submit(agent, "eat", {"item": "wooden_axe"}).code,
        w.submit("a9", "wait", {"ticks": 1}).code,
    }
    assert codes == {"unknown_action", "bad_arguments", "out_of_bounds", "not_in_inventory", "unknown_agent"}



def test_an_unknown_agent_is_named_before_an_unknown_action_by_every_ask():
    """`ready_code`, `refusal_code` and `check` answer an unknown agent first, then an unknown action, as `submit` does."""
    w, (agent,) = build(3, 1, [{}])
    for who, action, code in (("a9", "teleport", "unknown_agent"), ("a9", "wait", "unknown_agent"),
                              (agent, "teleport", "unknown_action")):
        assert w.ready_code(who, action) == w.refusal_code(who, action, {}) == w.check(who, action, {}).code == code

# ---- 3. fog of war -----------------------------------------------------------------------


def square(w: World, p: int) -> tuple[int, int, int, int]:
    """The view square (x0, x1, y0, y1) computed here, independently of the engine."""
    x, y = w.xy(p)
    return max(0, x - RADIUS), min(w.width - 1, x + RADIUS), max(0, y - RADIUS), min(w.height - 1, y + RADIUS)


def inside(sq: tuple[int, int, int, int], x: int, y: int) -> bool:
    return sq[0] <= x <= sq[1] and sq[2] <= y <= sq[3]


class Shadow:
    """Tile contents, positions and memories rebuilt from events alone: the oracle for fog of war.

    A character remembers a tile when the tile leaves its view square (on `moved` and on a
    `knockdown`), as the tile stood at that moment according to the events so far.
    """

    def __init__(self, w: World):
        self.w = w
        self.nodes = {p: (n.kind, n.amount) for p, n in w.nodes.items()}
        self.structures = {p: (s.kind, s.owner) for p, s in w.structures.items()}
        self.ground: dict[int, dict[str, int]] = {}
        self.pos: dict[str, int] = {}
        self.visited: dict[str, set[int]] = {}
        self.memory: dict[str, dict[int, dict[str, Any]]] = {}

    def features(self, p: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if p in self.nodes:
            out["node"] = {"kind": self.nodes[p][0], "amount": self.nodes[p][1]}
        if p in self.structures:
            out["structure"] = {"kind": self.structures[p][0], "owner": self.structures[p][1]}
        if self.ground.get(p):
            out["items"] = dict(sorted(self.ground[p].items()))
        return out

    def relocate(self, agent: str, tick: int, old: int, new: int) -> None:
        w, old_sq, new_sq = self.w, square(self.w, old), square(self.w, new)
        for y in range(old_sq[2], old_sq[3] + 1):
            for x in range(old_sq[0], old_sq[1] + 1):
                if not inside(new_sq, x, y):
                    p = w.pos(x, y)
                    self.memory[agent][p] = {"x": x, "y": y, "terrain": w.terrain_names[w.terrain[p]], "seen_tick": tick, **self.features(p)}
        self.pos[agent] = new
        self.visited[agent].add(new)

    def feed(self, events: list[tuple]) -> None:
        w = self.w
        for _, tick, kind, payload, _ in events:
            d = orjson.loads(payload)["data"]
            if kind == "agent_spawned":
                p = w.pos(d["x"], d["y"])
                self.pos[d["agent"]], self.visited[d["agent"]], self.memory[d["agent"]] = p, {p}, {}
            elif kind == "moved":
                assert w.distance(self.pos[d["agent"]], w.pos(*d["to"])) == 1
                assert self.pos[d["agent"]] == w.pos(*d["from"])
                self.relocate(d["agent"], tick, w.pos(*d["from"]), w.pos(*d["to"]))
            elif kind == "knockdown":
                assert self.pos[d["agent"]] == w.pos(d["x"], d["y"])
                self.relocate(d["agent"], tick, w.pos(d["x"], d["y"]), w.pos(*d["respawn"]))
            elif kind == "node_changed":
                self.nodes[w.pos(d["x"], d["y"])] = (d["node"], d["amount"])
            elif kind == "structure_placed":
                self.structures[w.pos(d["x"], d["y"])] = (d["structure"], d["owner"])
            elif kind in ("item_gained", "item_lost") and d["holder"].startswith(GROUND):
                pile = self.ground.setdefault(int(d["holder"][len(GROUND):]), {})
                pile[d["item"]] = pile.get(d["item"], 0) + (d["qty"] if kind == "item_gained" else -d["qty"])
                if not pile[d["item"]]:
                    del pile[d["item"]]


def picture(obs: dict[str, Any], over: dict | None = None) -> dict[tuple[int, int], Any]:
    """What an observer holds after this observation: the memory it was sent laid over what it held
    (nothing, for a whole memory), and the view over that."""
    held = dict(over or {})
    for m in obs["memory"]:
        held[(m["x"], m["y"])] = m
    view = obs["view"]
    for dy, row in enumerate(view["rows"]):
        for dx, glyph in enumerate(row):
            held[(view["x0"] + dx, view["y0"] + dy)] = {"terrain": obs["legend"][glyph]}
    for t in view["tiles"]:
        held[(t["x"], t["y"])] = {"terrain": held[(t["x"], t["y"])]["terrain"], **t}
    return held


def check_memory_changes(w: World, agent: str, held: tuple[int, dict] | None) -> tuple[int, dict]:
    """The memory changed since an earlier observation, laid over what that one showed, is the whole
    memory; it lists only tiles remembered since then, and the rest of the observation is unchanged."""
    whole = observe(w, agent)
    mine = picture(whole)
    if held is not None:
        since, before = held
        changes = observe(w, agent, memory_since=since)
        assert changes["memory_since"] == since
        assert all(m["seen_tick"] >= since for m in changes["memory"])
        assert {k: v for k, v in changes.items() if k not in ("memory", "memory_since")} == {k: v for k, v in whole.items() if k != "memory"}
        assert picture(changes, before) == mine
    return w.tick, mine


def check_observation(w: World, shadow: Shadow, agent: str) -> None:
    c = w.chars[agent]
    assert shadow.pos[agent] == c.pos
    sq = square(w, c.pos)
    obs = observe(w, agent)
    view = obs["view"]
    assert (view["x0"], view["y0"]) == (sq[0], sq[2])
    assert len(view["rows"]) == sq[3] - sq[2] + 1
    assert all(len(row) == sq[1] - sq[0] + 1 for row in view["rows"])
    for tile in view["tiles"]:
        assert inside(sq, tile["x"], tile["y"])
        assert {k: v for k, v in tile.items() if k not in ("x", "y")} == shadow.features(w.pos(tile["x"], tile["y"]))
    listed = {(o["id"], o["x"], o["y"]) for o in view["characters"]}
    visible = {(o.id, *w.xy(o.pos)) for o in w.chars.values() if o.id != agent and inside(sq, *w.xy(o.pos))}
    assert listed == visible
    assert all(inside(sq, cr["x"], cr["y"]) for cr in view["creatures"])
    assert len(view["creatures"]) == sum(inside(sq, *w.xy(cr.pos)) for cr in w.creatures.values())

    visited_squares = [square(w, p) for p in shadow.visited[agent]]
    expected = {p: m for p, m in shadow.memory[agent].items() if not inside(sq, m["x"], m["y"])}
    for entry in obs["memory"]:
        p = w.pos(entry["x"], entry["y"])
        assert not inside(sq, entry["x"], entry["y"])
        assert p in c.memory
        assert any(inside(s, entry["x"], entry["y"]) for s in visited_squares)
        assert entry["seen_tick"] <= w.tick
        assert entry == expected.get(p), "memory differs from the tile as it was when last seen"
    assert len(obs["memory"]) == len(expected)


moving_action = st.one_of(
    st.tuples(st.just("move"), st.fixed_dictionaries({"direction": st.sampled_from(sorted(DIRECTIONS))})),
    st.tuples(st.just("move_to"), target(-12, 12)),
    st.tuples(st.just("gather"), target(-1, 1)),
    st.tuples(st.just("drop"), st.fixed_dictionaries({"item": st.sampled_from(["wood", "berries"])})),
    st.tuples(st.just("place"), with_item(target(-1, 1), placeables)),
)


@PROPERTY_SETTINGS
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 3),
    st.lists(
        st.one_of(
            st.builds(lambda i, a: ("act", i, *a), st.integers(0, 2), moving_action),
            st.builds(lambda i, a: ("act", i, *a), st.integers(0, 2), moving_action),
            st.builds(lambda i, n: ("forage", i, n), st.integers(0, 2), st.integers(1, 8)),
            st.builds(lambda i, d, n: ("walk", i, d, n), st.integers(0, 2), st.sampled_from(sorted(DIRECTIONS)), st.integers(1, 10)),
            st.builds(lambda n: ("step", n), st.integers(1, 15)),
            st.builds(lambda i: ("knockdown", i), st.integers(0, 2)),
        ),
        min_size=5,
        max_size=40,
    ),
)
def test_observations_show_only_the_view_and_true_memories(seed, n_agents, prog):
    w, agents = build(seed, n_agents, [{"bed": 1, "lean_to": 1, "wooden_axe": 1}] * n_agents)
    for agent in agents:
        w.submit(agent, "equip", {"item": "wooden_axe"})
    shadow = Shadow(w)
    held: dict[str, tuple[int, dict]] = {}
    for i, element in enumerate(prog):
        if element[0] != "step":
            element = (element[0], element[1] % n_agents, *element[2:])
        run_element(w, agents, element)
        w.step()
        shadow.feed(w.events.drain())
        if i == len(prog) // 2:  # a restored world keeps its memories in the order they were made
            w = loads(CONTENT, dumps(w))
            shadow.w = w
        for j, agent in enumerate(agents):
            check_observation(w, shadow, agent)
            if (i + j) % 3 or agent not in held:  # the changes since one, or since several, observations
                held[agent] = check_memory_changes(w, agent, held.get(agent))
            else:
                check_memory_changes(w, agent, held[agent])


# ---- 4. conservation ---------------------------------------------------------------------


def assert_counts_positive(w: World) -> None:
    n = w.needs
    for c in w.chars.values():
        assert all(q > 0 for q in c.inventory.values()), c.inventory
        assert 0 <= c.health <= n.max_health and 0 <= c.energy <= n.max_energy and 0 <= c.satiety <= n.max_satiety
        assert all(item in c.inventory for item in c.equipment.values())
    for pile in [*w.ground.values(), *w.containers.values()]:
        assert pile and all(q > 0 for q in pile.values())
    assert all(node.amount >= 0 for node in w.nodes.values())


@PROPERTY_SETTINGS
@given(scenarios())
def test_item_events_replay_to_every_inventory_and_pile(case):
    seed, n_agents, starting, prog = case
    w, agents = build(seed, n_agents, starting)
    assert w.ground == {}
    log = w.events.drain()
    for element in prog:
        run_element(w, agents, element)
        assert_counts_positive(w)
        log += w.events.drain()

    holders: dict[str, dict[str, int]] = {}
    for record in log:
        body = orjson.loads(record[3])
        if body["kind"] in ("item_gained", "item_lost"):
            d = body["data"]
            items = holders.setdefault(d["holder"], {})
            assert d["qty"] > 0
            items[d["item"]] = items.get(d["item"], 0) + (d["qty"] if body["kind"] == "item_gained" else -d["qty"])
            assert items[d["item"]] >= 0, f"{d['holder']} went below zero {d['item']}"
            if not items[d["item"]]:
                del items[d["item"]]
    inventories = {h: items for h, items in holders.items() if h in w.chars}
    piles = {int(h[len(GROUND):]): items for h, items in holders.items() if h.startswith(GROUND) and items}
    containers = {h: items for h, items in holders.items() if h not in w.chars and not h.startswith(GROUND) and items}
    assert inventories == {c.id: c.inventory for c in w.chars.values()}
    assert piles == w.ground
    assert containers == w.containers


@PROPERTY_SETTINGS
@given(scenarios())
def test_every_event_validates_and_the_chain_verifies(case):
    seed, n_agents, starting, prog = case
    w, agents = build(seed, n_agents, starting)
    log = w.events.drain()
    for element in prog:
        run_element(w, agents, element)
        log += w.events.drain()
    for i, (seq, tick, kind, payload, _) in enumerate(log, start=1):
        body = orjson.loads(payload)
        assert (body["seq"], body["tick"], body["kind"]) == (seq, tick, kind) and seq == i
        assert kind in EVENT_TYPES
        validate_event(kind, body["data"])
    ok, bad, head = verify_chain([(e[3], e[4]) for e in log])
    assert (ok, bad, head) == (True, -1, w.events.head)
    if log:
        tampered = [(e[3], e[4]) for e in log]
        tampered[-1] = (tampered[-1][0] + b" ", tampered[-1][1])
        assert verify_chain(tampered)[:2] == (False, len(log) - 1)
    else:
        assert w.events.head == GENESIS


def test_movement_events_match_their_schemas():
    """`moved` and `creature_moved` carry a "from" key: their schemas must accept it."""
    w, (agent,) = build(1, 1, [{}])
    w.events.drain()
    for direction in sorted(DIRECTIONS):
        if isinstance(w.submit(agent, "move", {"direction": direction}), Accepted):
            break
    w.step()
    moved = [orjson.loads(e[3])["data"] for e in w.events.drain() if e[2] == "moved"]
    assert moved
    validate_event("moved", moved[0])
    validate_event("creature_moved", {"creature": 1, "from": [0, 0], "to": [1, 1]})


# ---- 5. snapshots ------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(scenarios(max_len=30), program(3, max_len=30))
def test_snapshot_round_trip_resumes_the_same_world(case, further):
    seed, n_agents, starting, prog = case
    w, agents = build(seed, n_agents, starting)
    for element in prog:
        run_element(w, agents, element)
    blob = dumps(w)
    copy = loads(CONTENT, blob)
    assert state_hash(copy) == state_hash(w)
    assert dumps(copy) == blob
    assert copy.events.head == w.events.head
    for element in further:
        if element[0] != "step":
            element = (element[0], element[1] % n_agents, *element[2:])
        assert run_element(w, agents, element) == run_element(copy, agents, element)
        assert copy.events.head == w.events.head
    assert state_hash(copy) == state_hash(w)


# ---- arguments taken without building their model -----------------------------------------------

_SCALARS = st.one_of(st.integers(-3, 30), st.booleans(), st.floats(-2, 30, allow_nan=False), st.sampled_from(["", "5", "n", "sell", "hand", "wood", "hello"]),
                     st.none())
_VALUES = st.one_of(_SCALARS, st.dictionaries(st.sampled_from(["wood", "stone", "5"]), _SCALARS, max_size=2), st.lists(_SCALARS, max_size=2))
_ACTIONS = sorted(REGISTRY)


@st.composite
def _arguments(draw) -> tuple[str, dict[str, Any]]:
    """An action and arguments over its fields, of every JSON type, within and past its bounds."""
    action = draw(st.sampled_from(_ACTIONS))
    fields = sorted(REGISTRY[action].args.model_fields)
    keys = draw(st.lists(st.sampled_from(fields), unique=True)) if fields else []
    return action, {k: draw(_VALUES) for k in keys}


def exact_mismatch(action: str, args: dict[str, Any]) -> str | None:
    """What differs between the arguments `exact_args` takes without a model and the JSON of the model validation
    builds from them (None: the same, or `exact_args` leaves them to validation)."""
    model = REGISTRY[action].args
    exact = registry.exact_args(model, args)
    if exact is None:
        return None
    try:
        validated = registry.json_args(model.model_validate(args))
    except ValidationError as exc:
        return f"taken without a model, refused by validation: {exc.errors()[0]['msg']}"
    return None if list(exact.items()) == list(validated.items()) else f"{exact} != {validated}"


@settings(PROPERTY_SETTINGS, max_examples=400)
@given(_arguments())
def test_arguments_taken_without_their_model_are_what_validation_makes_of_them(drawn):
    """An action mask's check skips building the model only where validation would accept the arguments unchanged
    (defaults filled in, in field order): the same plan, the same refusal code."""
    action, args = drawn
    assert exact_mismatch(action, args) is None


@settings(PROPERTY_SETTINGS, max_examples=150)
@given(_arguments(), st.integers(0, 3))
def test_an_action_masks_check_answers_as_the_explained_one(drawn, who):
    """refusal_code (which skips the model where it may) answers the code `check` explains, candidate by candidate."""
    action, args = drawn
    w = _masked_world()
    agent = sorted(w.chars)[who]
    explained = w.check(agent, action, args)
    assert w.refusal_code(agent, action, args) == (None if explained is None else explained.code)


@cache
def _masked_world() -> World:
    """One world for every example: checks change nothing."""
    w = World(CONTENT, SCENARIO, 3)
    for i in range(4):
        w.join(f"m{i}")
    return w


@settings(PROPERTY_SETTINGS, max_examples=200)
@given(_arguments(), _VALUES)
def test_arguments_naming_a_field_the_action_does_not_take_are_left_to_validation(drawn, extra):
    """`exact_args` answers None when a field is unknown, whatever the others: the check asks it before it looks at
    the arguments' names (validation refuses them)."""
    action, args = drawn
    args["unknown"] = extra
    assert registry.exact_args(REGISTRY[action].args, args) is None
    assert exact_mismatch(action, args) is None


@pytest.mark.parametrize("table", [{"wood": 0}, {"wood": -1}, {"wood": True}, {"wood": "1"}, {"wood": 1.0}, {"wood": None},
                                   {5: 1}, {"wood": 1, "stone": 0}, {"wood": 1, True: 1}])
def test_a_table_validation_refuses_is_left_to_it(table):
    """A table of items is taken without its model only when every key is a string and every quantity a positive
    integer: one bad entry, wherever it stands, leaves the whole to validation."""
    args = {"to": "a2", "give": {"stone": 2}, "want": table, "ticks": 5}
    assert registry.exact_args(REGISTRY["offer_trade"].args, args) is None
    assert registry.exact_args(REGISTRY["offer_trade"].args, {**args, "want": {"wood": 1, "stone": 3}}) is not None
    assert exact_mismatch("offer_trade", args) is None


def test_a_lax_argument_test_is_caught(monkeypatch):
    """Were an integer field to take true (a bool is an int to isinstance), the property above would fail."""
    monkeypatch.setattr(registry, "_EXACT", {REGISTRY["move"].args: None})
    model = REGISTRY["wait"].args
    fields = registry._exact_fields(model)
    lax = [(name, None, lambda v: isinstance(v, int), default) for name, _, _, default in fields]
    monkeypatch.setitem(registry._EXACT, model, lax)
    assert exact_mismatch("wait", {"ticks": True}) is not None


def test_a_lax_plain_argument_test_is_caught(monkeypatch):
    """Most actions need only a string or an integer per field, which `exact_args` tells by the value's type alone:
    were it to take true for an integer there, the property above would fail."""
    model = REGISTRY["say"].args
    assert registry.exact_args(model, {"text": "hi"}) == {"text": "hi"}  # (the first read fills the plain test)
    assert registry._PLAIN_EXACT[model] == (("text", str),)
    monkeypatch.setitem(registry._PLAIN_EXACT, model, (("text", bool),))
    assert exact_mismatch("say", {"text": True}) is not None


@cache
def _played_worlds() -> tuple[World, ...]:
    """Worlds in varied states, the characters idle or busy, beside structures, trades and orders: the default
    scenario after a few ticks of the legal random policy, whose submissions pass the check the examples put."""
    worlds = []
    for seed, ticks in ((1, 0), (2, 25), (3, 70)):
        w = World(CONTENT, "default", seed)
        play_legal_random(w, [w.join(f"p{i}") for i in range(8)], ticks)
        worlds.append(w)
    return tuple(worlds)


def _without_shortcut(w: World, agent: str, action: str, args: dict[str, Any], explain: bool):
    """`_check` as it answers when every argument builds its model (`exact_args` never answers)."""
    with mock.patch.object(world_module, "exact_args", lambda model, args: None):
        return w._check(agent, action, args, explain)


def check_mismatch(w: World, agent: str, action: str, args: dict[str, Any]) -> str | None:
    """What differs between the check taken without a model (the action mask's, then reused by `submit`) and the
    check that validates the model: the refusal code, or for an accepted action its arguments as the operation
    records them (in order) and its plan. None: the same."""
    for explain in (False, True):
        fast, full = w._check(agent, action, args, explain), _without_shortcut(w, agent, action, args, explain)
        if isinstance(full, Rejected) or isinstance(fast, Rejected):
            if not (isinstance(fast, Rejected) and isinstance(full, Rejected) and fast.code == full.code):
                return f"explain={explain}: {fast} != {full}"
        elif list(fast[2].items()) != list(full[2].items()) or fast[3] != full[3]:
            return f"explain={explain}: {fast[2:]} != {full[2:]}"
    return None


@st.composite
def _candidates(draw) -> tuple[World, str, str, dict[str, Any]]:
    """A played world, one of its characters, an action and arguments: drawn as the legal random policy draws
    them from the character's observation (most pass, or are refused on the state), or of every JSON type, now and
    then with a field too many."""
    w = draw(st.sampled_from(_played_worlds()))
    agent = draw(st.sampled_from(sorted(w.chars)))
    if draw(st.booleans()):
        action, args = draw(_arguments())
        if draw(st.integers(0, 4)) == 0:  # now and then a field the action does not take
            args["unknown"] = draw(_VALUES)
        return w, agent, action, args
    action = draw(st.sampled_from(_ACTIONS))
    obs = observe(w, agent)
    args = LegalRandomAgent(CONTENT).arguments(REGISTRY[action].json_schema(), obs, _ids(obs), Random(draw(st.integers(0, 2**16))))
    return w, agent, action, args or {}


@settings(PROPERTY_SETTINGS, max_examples=400)
@given(_candidates())
def test_a_check_without_the_model_answers_as_the_one_with_it(drawn):
    """Over varied states and arguments, every action: the check that takes exact arguments as they are refuses
    with the same code, or accepts with the same recorded arguments and plan, as the check that builds the model."""
    assert check_mismatch(*drawn) is None


def test_a_check_that_reads_a_default_wrongly_is_caught(monkeypatch):
    """Were the empty table an offer_trade leaves out taken as something else, the property above would fail."""
    w = _played_worlds()[0]  # no one busy yet
    agent, other = sorted(w.chars)[:2]
    args = {"to": other, "give": {}, "ticks": 5}  # wants nothing: refused as empty
    assert check_mismatch(w, agent, "offer_trade", args) is None
    model = REGISTRY["offer_trade"].args
    wrong = [(name, plain, fits, {"wood": 1} if default is dict else default)
             for name, plain, fits, default in registry._exact_fields(model)]
    monkeypatch.setitem(registry._EXACT, model, wrong)
    assert check_mismatch(w, agent, "offer_trade", args) is not None
