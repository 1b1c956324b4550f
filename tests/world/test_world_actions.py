"""Example checks of the world's actions and per-tick systems, one behaviour each, on the tiny scenario."""

from __future__ import annotations

import random
from collections import deque
from typing import Callable

import orjson
import pytest
from pydantic import BaseModel

from wildhold.agents.sampled import LegalRandomAgent, _ids
from wildhold.world.actions import DIRECTIONS, REGISTRY
from wildhold.world.actions.registry import ActionArgs, json_args
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.observe import observe
from wildhold.world.serialize import state_hash
from wildhold.world.world import World

SEED = 1


# ---- helpers -------------------------------------------------------------------------------


def make(content, agents: int = 1) -> tuple[World, list[str]]:
    w = World(content, "tiny", SEED)
    ids = [w.join(f"c{i}") for i in range(agents)]
    w.events.drain()
    return w, ids


def events(w: World, kind: str | None = None) -> list[dict]:
    """Drain the log and return the payloads of one kind (or all)."""
    out = [orjson.loads(e[3]) for e in w.events.drain()]
    return [e for e in out if kind is None or e["kind"] == kind]


def run(w: World, result: Accepted | Rejected) -> Accepted:
    """Step until an accepted operation's end tick."""
    assert isinstance(result, Accepted), result
    while w.tick < result.ends:
        w.step()
    return result


def direction(w: World, a: int, b: int) -> str:
    (ax, ay), (bx, by) = w.xy(a), w.xy(b)
    return next(d for d, step in DIRECTIONS.items() if step == (bx - ax, by - ay))


def route(w: World, start: int, arrived: Callable[[int], bool]) -> list[int]:
    """Shortest 8-way walk over walkable tiles (the true map) to the first tile that satisfies `arrived`."""
    parent: dict[int, int | None] = {start: None}
    queue = deque([start])
    while queue:
        p = queue.popleft()
        if arrived(p):
            path = []
            while parent[p] is not None:
                path.append(p)
                p = parent[p]
            return path[::-1]
        x, y = w.xy(p)
        for dx, dy in DIRECTIONS.values():
            q = w.pos(x + dx, y + dy)
            if q is not None and q not in parent and w.is_walkable(q):
                parent[q] = p
                queue.append(q)
    raise AssertionError("no route on this map")


def walk(w: World, agent: str, arrived: Callable[[int], bool]) -> int:
    """Walk with one `move` per tick to the nearest tile satisfying `arrived`; return where it stopped."""
    c = w.chars[agent]
    for p in route(w, c.pos, arrived):
        run(w, w.submit(agent, "move", {"direction": direction(w, c.pos, p)}))
        assert c.pos == p
    return c.pos


def around(w: World, p: int) -> list[int]:
    x, y = w.xy(p)
    return [q for dx, dy in DIRECTIONS.values() if (q := w.pos(x + dx, y + dy)) is not None]


def walk_next_to(w: World, agent: str, wanted: Callable[[int], bool]) -> int:
    """Walk next to the nearest tile satisfying `wanted`; return that tile."""
    here = walk(w, agent, lambda p: any(wanted(q) for q in around(w, p)))
    return next(q for q in around(w, here) if wanted(q))


def node_of(w: World, kind: str) -> Callable[[int], bool]:
    return lambda p: p in w.nodes and w.nodes[p].kind == kind and w.nodes[p].amount > 0


def at(w: World, p: int) -> dict[str, int]:
    x, y = w.xy(p)
    return {"x": x, "y": y}


def free_tile_next_to(w: World, p: int) -> int:
    return next(q for q in around(w, p) if w.is_walkable(q) and q not in w.structures and q not in w.nodes and q not in w.occupants)


# ---- movement ------------------------------------------------------------------------------


def test_move_onto_water_is_rejected_as_not_walkable(content):
    w, (a,) = make(content)
    water = walk_next_to(w, a, lambda p: w.terrain_names[w.terrain[p]] == "water")
    c = w.chars[a]
    before = c.pos
    result = w.submit(a, "move", {"direction": direction(w, c.pos, water)})
    assert isinstance(result, Rejected) and result.code == "not_walkable"
    assert c.pos == before


def test_move_to_an_unseen_tile_is_unknown_location(content):
    w, (a,) = make(content)
    c = w.chars[a]
    far = next(p for p in range(w.width * w.height) if w.is_walkable(p) and w.distance(c.pos, p) > content.needs.view_radius)
    assert far not in c.memory
    result = w.submit(a, "move_to", at(w, far))
    assert isinstance(result, Rejected) and result.code == "unknown_location"


def test_move_to_a_remembered_tile_walks_there_one_tile_per_tick(content):
    w, (a,) = make(content)
    c = w.chars[a]
    home = c.pos
    walk(w, a, lambda p: w.distance(p, home) == content.needs.view_radius + 3)
    assert home in c.memory
    events(w)
    accepted = w.submit(a, "move_to", at(w, home))
    assert isinstance(accepted, Accepted)
    steps = accepted.ends - w.tick
    trail = [c.pos]
    while w.tick < accepted.ends:
        w.step()
        assert w.distance(trail[-1], c.pos) == 1, "one tile per tick"
        trail.append(c.pos)
    assert c.pos == home and len(trail) - 1 == steps
    log = events(w)
    assert [e["data"]["to"] for e in log if e["kind"] == "moved"] == [list(w.xy(p)) for p in trail[1:]]
    done = [e for e in log if e["kind"] == "operation_completed" and e["data"]["op"] == accepted.op]
    assert done and done[0]["data"]["result"]["steps"] == steps


def test_each_step_remembers_exactly_the_tiles_that_left_the_view(content):
    """Stepping off one tile by each way, and by each way near the map's corner, records the tiles in view before
    the step and not after it, row by row, as they are now."""
    w, (a,) = make(content, agents=1)
    c, r = w.chars[a], content.needs.view_radius

    def in_view(p: int) -> set[int]:
        return {q for q in range(w.width * w.height) if w.distance(p, q) <= r}

    for start in (c.pos, w.pos(1, 1)):
        for dx, dy in ((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy):
            x, y = w.xy(start)
            w.relocate(c, start, event=False)
            c.memory = w.new_memory()
            w.relocate(c, w.pos(x + dx, y + dy), event=False)
            assert c.memory.tiles() == sorted(in_view(start) - in_view(c.pos))
            assert all(seen == w.tile_snapshot(p) for p, seen in c.memory.items())


def test_memory_keeps_a_tile_as_it_was_last_seen(content):
    w, (a, b) = make(content, agents=2)
    bush = walk_next_to(w, a, node_of(w, "berry_bush"))
    run(w, w.submit(a, "gather", at(w, bush)))
    seen = w.nodes[bush].amount
    assert seen > 0
    walk(w, a, lambda p: w.distance(p, bush) > content.needs.view_radius + 1)
    left = w.tick

    def remembered() -> dict:
        x, y = w.xy(bush)
        return next(m for m in observe(w, a)["memory"] if (m["x"], m["y"]) == (x, y))

    assert remembered()["node"] == {"kind": "berry_bush", "amount": seen}
    walk(w, b, lambda p: w.distance(p, bush) == 1)
    while w.nodes[bush].amount > 0:
        run(w, w.submit(b, "gather", at(w, bush)))
    assert w.distance(w.chars[a].pos, bush) > content.needs.view_radius
    memory = remembered()
    assert memory["node"]["amount"] == seen and memory["seen_tick"] <= left < w.tick
    walk(w, a, lambda p: w.distance(p, bush) == 1)
    x, y = w.xy(bush)
    live = next(t for t in observe(w, a)["view"]["tiles"] if (t["x"], t["y"]) == (x, y))
    assert live["node"]["amount"] == 0


# ---- production ----------------------------------------------------------------------------


def test_gather_rock_without_a_pickaxe_is_missing_tool(content):
    w, (a,) = make(content)
    rock = walk_next_to(w, a, node_of(w, "rock"))
    result = w.submit(a, "gather", at(w, rock))
    assert isinstance(result, Rejected) and result.code == "missing_tool"


def test_gather_tree_yields_wood_when_the_action_duration_ends(content):
    w, (a,) = make(content)
    tree = walk_next_to(w, a, node_of(w, "tree"))
    c, node = w.chars[a], w.nodes[tree]
    wood, amount = c.inventory.get("wood", 0), node.amount
    events(w)
    accepted = w.submit(a, "gather", at(w, tree))
    assert isinstance(accepted, Accepted)
    assert accepted.ends == w.tick + content.actions["gather"].duration
    while w.tick < accepted.ends - 1:
        w.step()
        assert c.inventory.get("wood", 0) == wood
    w.step()
    completed = [e for e in events(w, "operation_completed") if e["data"]["op"] == accepted.op]
    assert completed and completed[0]["data"]["result"] == {"item": "wood", "qty": 1}
    assert c.inventory["wood"] == wood + 1
    assert node.amount == amount - 1


def test_equipped_axe_raises_wood_yield(content):
    w, (a,) = make(content)
    tree = walk_next_to(w, a, node_of(w, "tree"))
    c = w.chars[a]
    w.give(a, "wooden_axe", 1, "test")
    run(w, w.submit(a, "equip", {"item": "wooden_axe"}))
    assert c.equipment == {"hand": "wooden_axe"}
    wood = c.inventory.get("wood", 0)
    run(w, w.submit(a, "gather", at(w, tree)))
    bonus = content.items["wooden_axe"].tool.yield_bonus["tree"]
    assert bonus > 0
    assert c.inventory["wood"] == wood + content.nodes["tree"].base_yield + bonus


def test_craft_without_its_station_in_reach_is_no_station(content):
    w, (a,) = make(content)
    bench = next(p for p, s in w.structures.items() if s.kind == "workbench")
    walk(w, a, lambda p: w.distance(p, bench) > content.needs.reach)
    assert content.recipes["wooden_axe"].station == "workbench"
    result = w.submit(a, "craft", {"recipe": "wooden_axe"})
    assert isinstance(result, Rejected) and result.code == "no_station"


def test_craft_next_to_a_public_workbench_consumes_inputs(content):
    w, (a,) = make(content)
    bench = walk_next_to(w, a, lambda p: p in w.structures and w.structures[p].kind == "workbench")
    assert w.structures[bench].owner is None
    c, recipe = w.chars[a], content.recipes["wooden_axe"]
    w.give(a, "wood", 1, "test")
    before = dict(c.inventory)
    run(w, w.submit(a, "craft", {"recipe": "wooden_axe"}))
    for item, qty in recipe.inputs.items():
        assert c.inventory.get(item, 0) == before[item] - qty
    for item, qty in recipe.outputs.items():
        assert c.inventory[item] == before.get(item, 0) + qty


def test_depleted_node_regrows_after_its_regrow_ticks(content):
    w, (a,) = make(content)
    bush = walk_next_to(w, a, node_of(w, "berry_bush"))
    node, spec = w.nodes[bush], content.nodes["berry_bush"]
    while node.amount > 0:
        run(w, w.submit(a, "gather", at(w, bush)))
    emptied = w.tick
    rejected = w.submit(a, "gather", at(w, bush))
    assert isinstance(rejected, Rejected) and rejected.code == "depleted"
    while w.tick < emptied + spec.regrow_ticks - 1:
        w.step()
    assert node.amount == 0
    w.step()
    assert node.amount == spec.capacity
    assert any(e["data"]["amount"] == spec.capacity for e in events(w, "node_changed"))


# ---- operations ----------------------------------------------------------------------------


def test_second_action_while_busy_is_rejected_and_cancel_ends_the_first(content):
    w, (a,) = make(content)
    c = w.chars[a]
    waiting = w.submit(a, "wait", {"ticks": 10})
    assert isinstance(waiting, Accepted)
    w.step()
    busy = w.submit(a, "move", {"direction": "s"})
    assert isinstance(busy, Rejected) and busy.code == "busy"
    assert isinstance(w.submit(a, "cancel", {}), Accepted)
    assert c.op is None and waiting.op not in w.ops
    log = events(w)
    assert any(e["kind"] == "operation_cancelled" and e["data"]["op"] == waiting.op for e in log)
    for _ in range(12):
        w.step()
    assert not any(e["kind"] == "operation_completed" and e["data"]["op"] == waiting.op for e in events(w))
    assert isinstance(w.submit(a, "wait", {"ticks": 1}), Accepted)


def test_unknown_action_suggests_a_close_name(content):
    w, (a,) = make(content)
    result = w.submit(a, "mvoe", {"direction": "n"})
    assert isinstance(result, Rejected) and result.code == "unknown_action"
    assert "Did you mean 'move'?" in result.message


@pytest.mark.parametrize("args", [[], "", 0])
def test_falsy_non_object_arguments_are_rejected(content, args):
    w, (a,) = make(content)
    assert isinstance(w.submit(a, "wait", {"ticks": 5}), Accepted)
    result = w.submit(a, "cancel", args)
    assert isinstance(result, Rejected) and result.code == "bad_arguments"


@pytest.mark.parametrize(("action", "args"), [
    ("move_to", {"x": True, "y": 3}), ("move_to", {"x": "31", "y": 3}), ("move_to", {"x": 3.0, "y": 3}),
    ("wait", {"ticks": "5"}), ("wait", {"ticks": False}), ("move", {"direction": 1}),
])
def test_arguments_are_taken_as_their_schema_types_never_coerced(content, action, args):
    """true is not 1 and "31" is not 31: an argument of another JSON type is refused, and nothing changes."""
    w, (a,) = make(content)
    before = state_hash(w)
    result = w.submit(a, action, args)
    assert isinstance(result, Rejected) and result.code == "bad_arguments", result
    assert state_hash(w) == before


def test_every_limit_an_action_checks_on_its_arguments_is_in_its_schema(content):
    w, (a,) = make(content)
    bound = REGISTRY["wait"].json_schema()["properties"]["ticks"]["maximum"]
    assert bound == content.needs.max_wait_ticks
    assert isinstance(w.submit(a, "wait", {"ticks": bound}), Accepted)
    assert w.submit(a, "cancel", {}) and isinstance(w.submit(a, "wait", {"ticks": bound + 1}), Rejected)


# ---- needs, beds and knockdowns --------------------------------------------------------------


def test_eat_restores_satiety(content):
    w, (a,) = make(content)
    c = w.chars[a]
    w.set_needs(c, "test", c.health, c.energy, 40)
    berries = c.inventory["berries"]
    run(w, w.submit(a, "eat", {"item": "berries"}))
    ate = [e["data"] for e in events(w, "needs") if e["data"]["cause"] == "eat"]
    assert ate and ate[0]["satiety"] >= 40 - 1 + content.items["berries"].satiety
    assert c.satiety > 40
    assert c.inventory["berries"] == berries - 1


def test_sleep_without_a_bed_is_no_bed(content):
    w, (a,) = make(content)
    result = w.submit(a, "sleep", {"ticks": 30})
    assert isinstance(result, Rejected) and result.code == "no_bed"


def place_bed(w: World, agent: str) -> int:
    c = w.chars[agent]
    w.give(agent, "bed", 1, "test")
    bed = free_tile_next_to(w, c.pos)
    run(w, w.submit(agent, "place", {**at(w, bed), "item": "bed"}))
    assert w.structures[bed].kind == "bed" and w.structures[bed].owner == agent
    return bed


def test_sleep_in_a_placed_bed_restores_energy(content):
    w, (a,) = make(content)
    c = w.chars[a]
    bed = place_bed(w, a)
    run(w, w.submit(a, "move", {"direction": direction(w, c.pos, bed)}))
    w.set_needs(c, "test", c.health, 20, c.satiety)
    ticks = 60
    sleeping = w.submit(a, "sleep", {"ticks": ticks})
    assert isinstance(sleeping, Accepted)
    w.step()
    assert c.asleep
    run(w, sleeping)
    assert not c.asleep
    assert c.energy >= 20 + ticks * content.needs.sleep_energy_per_tick - 1


def test_placing_a_bed_sets_the_respawn_point(content):
    w, (a,) = make(content)
    c = w.chars[a]
    assert c.bed is None
    bed = place_bed(w, a)
    assert c.bed == bed
    assert observe(w, a)["self"]["bed"] == list(w.xy(bed))


def test_a_removed_bed_is_no_longer_the_characters_bed(content):
    w, (a,) = make(content)
    bed = place_bed(w, a)
    w.remove_structure(bed)
    assert w.chars[a].bed is None and observe(w, a)["self"]["bed"] is None


def test_knockdown_drops_part_of_each_stack_and_respawns_at_the_bed(content):
    w, (a,) = make(content)
    c = w.chars[a]
    bed = place_bed(w, a)
    w.give(a, "stone", 5, "test")
    fell = walk(w, a, lambda p: w.distance(p, bed) == 3)
    carried = dict(c.inventory)
    events(w)
    w.set_needs(c, "test", 0, c.energy, c.satiety)
    w.step()
    dropped = {item: w.knockdown_drop(qty) for item, qty in carried.items()}
    assert all(0 < q <= carried[item] for item, q in dropped.items())
    assert w.ground[fell] == dropped
    assert c.inventory == {item: qty - dropped[item] for item, qty in carried.items() if qty > dropped[item]}
    assert c.pos == bed and c.knockdowns == 1
    assert c.health == content.needs.respawn_health
    (knock,) = events(w, "knockdown")
    assert knock["data"]["respawn"] == list(w.xy(bed)) and knock["data"]["count"] == 1
    w.set_needs(c, "test", 0, c.energy, c.satiety)
    w.step()
    assert c.knockdowns == 2 and c.pos == bed


# ---- night -------------------------------------------------------------------------------


def test_exposed_character_is_attacked_at_night_but_one_in_the_settlement_is_not(content):
    w, (out, home) = make(content, agents=2)
    safe = [w.safe_terrain[t] for t in w.terrain]
    walk(w, out, lambda p: w.terrain_names[w.terrain[p]] == "meadow" and all(not safe[q] for q in around(w, p)) and w.distance(p, w.settlement) >= 8)
    assert not w.is_sheltered(w.chars[out]) and w.is_sheltered(w.chars[home])
    day, dawn = content.calendar.ticks_per_day, content.calendar.night_end
    attacked: list[tuple[str, int]] = []
    for _ in range(3 * day):
        w.step()
        attacked += [(e["data"]["agent"], e["tick"]) for e in events(w, "creature_attacked")]
        if w.tick % day == dawn:
            if attacked:
                break
            for c in w.chars.values():
                w.set_needs(c, "test", c.health, content.needs.max_energy, content.needs.max_satiety)
    assert any(agent == out for agent, _ in attacked), "an exposed character should be attacked within three nights"
    assert all(agent == out and w.is_night(tick) for agent, tick in attacked)


# ---- arguments as the checks read them -------------------------------------------------------


def test_every_action_reads_its_arguments_as_their_json_dump(content):
    """A check reads validated arguments as their JSON dump, taken from the fields when they are JSON already:
    the same values, keys and order for every registered action, and a table copied, not shared."""
    w, ids = make(content, 3)
    for _ in range(30):
        w.step()
    policy, rng = LegalRandomAgent(content), random.Random(5)
    obs = observe(w, ids[0])
    read = 0
    for name, spec in REGISTRY.items():
        for _ in range(20):
            args = policy.arguments(spec.args.model_json_schema(), obs, _ids(obs), rng)
            try:
                parsed = spec.args.model_validate(args)
            except ValueError:
                continue
            got, dumped = json_args(parsed), parsed.model_dump(mode="json")
            assert (got, list(got)) == (dumped, list(dumped)), name
            assert all(got[k] is not v for k, v in parsed if isinstance(v, dict)), name
            read += 1
    assert read > 500


def test_arguments_of_a_type_json_does_not_hold_are_dumped():
    class Inner(BaseModel):
        n: int

    class Odd(ActionArgs):
        pair: tuple[int, int]
        inner: Inner

    odd = Odd.model_validate({"pair": (1, 2), "inner": {"n": 3}})
    assert json_args(odd) == {"pair": [1, 2], "inner": {"n": 3}}


def test_arguments_a_model_takes_beyond_its_fields_are_dumped():
    class Open(ActionArgs):
        model_config = {**ActionArgs.model_config, "extra": "allow"}
        n: int

    assert json_args(Open.model_validate({"n": 1, "more": "x"})) == {"n": 1, "more": "x"}


def _stale_check_trials(content, forget: bool = False) -> list[Accepted | Rejected]:
    """Each time a check passes, then something changes before the same action is submitted: the world's own
    change (items taken by a set-up command, a tick's systems finishing an operation) or the arguments changed by
    the caller. The submissions' answers; with `forget`, the world does not see that anything changed, and only
    the first is tried (a stale cancel would end no operation)."""
    from wildhold.world.setup import apply_setup

    w, (a,) = make(content)
    if forget:
        w._moment = lambda: (0,)
    out = []
    assert w.refusal_code(a, "eat", {"item": "berries"}) is None
    apply_setup(w, "take_items", {"agent": a, "item": "berries", "qty": w.chars[a].inventory["berries"]})
    out.append(w.submit(a, "eat", {"item": "berries"}))  # nothing left to eat
    if forget:
        return out
    apply_setup(w, "give_items", {"agent": a, "item": "berries", "qty": 1})
    assert w.refusal_code(a, "wait", {"ticks": 2}) is None
    assert isinstance(w.submit(a, "wait", {"ticks": 2}), Accepted)
    assert w.refusal_code(a, "cancel", {}) is None
    w.step(), w.step()
    out.append(w.submit(a, "cancel", {}))  # the wait ended on its own
    args = {"item": "berries"}
    assert w.refusal_code(a, "eat", args) is None
    args["item"] = "stone"
    out.append(w.submit(a, "eat", args))  # the caller changed what it asked for
    return out


def test_a_submission_after_a_passed_check_is_checked_again_when_anything_changed(content):
    """A submission may reuse the check an action mask just passed, only while nothing the check read changed."""
    answers = _stale_check_trials(content)
    assert [a.code if isinstance(a, Rejected) else "accepted" for a in answers] == [
        "not_in_inventory", "nothing_to_cancel", "not_in_inventory"]
    w, (a,) = make(content)
    assert w.refusal_code(a, "wait", {"ticks": 2}) is None
    assert isinstance(w.submit(a, "wait", {"ticks": 2}), Accepted)


def test_a_world_blind_to_changes_would_accept_a_stale_check(content):
    """The test above would catch a submission reusing a check across a change of state."""
    assert isinstance(_stale_check_trials(content, forget=True)[0], Accepted)
