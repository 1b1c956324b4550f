"""Scripted baselines ask only for what the world can grant: move_to targets its path search reaches
(judged from what the character has observed), and sleep only in a bed that still stands."""

from __future__ import annotations

import collections
import dataclasses
import random

import orjson
import pytest

from wildhold.agents.base import AgentView
from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import _ids
from wildhold.agents.runner import ScriptedRun
from wildhold.agents.scripted import make_policy
from wildhold.world.actions import REGISTRY
from wildhold.world.actions.core import find_path, known_walkable
from wildhold.world.errors import Accepted
from wildhold.world.observe import observe, status
from wildhold.world.serialize import state_hash
from wildhold.world.parts.construction import CONSTRUCTION
from wildhold.world.setup import apply_setup
from wildhold.world.world import World


def clear_spot(w: World, r: int, away_from: int, free: set[tuple[int, int]]) -> tuple[int, int]:
    """A tile with walkable, unbuilt ground `r` tiles to each side and no berries growing there (its
    `free` offsets hold no node at all), more than a view's width from `away_from`, so nothing the
    character saw before competes."""
    for cy in range(r, w.height - r):
        for cx in range(r, w.width - r):
            if w.distance(w.pos(cx, cy), away_from) <= 2 * w.needs.view_radius + r:
                continue
            tiles = [w.pos(cx + dx, cy + dy) for dx in range(-r, r + 1) for dy in range(-r, r + 1)]
            if all(w.is_walkable(p) and p not in w.structures and p != w.dungeon
                   and (p not in w.nodes or w.content.nodes[w.nodes[p].kind].item != "berries") for p in tiles) \
                    and all(w.pos(cx + dx, cy + dy) not in w.nodes for dx, dy in free):
                return cx, cy
    raise AssertionError("no clear ground on this map")


def test_the_policies_map_agrees_with_the_worlds_path_search_door_locks_included(content):
    run = ScriptedRun.start("tiny", 1)
    run.run(until=run.world.tick + 300)
    w = run.world
    a1, a2 = sorted(w.chars)
    c = w.chars[a1]
    x, y = w.xy(c.pos)
    door = next((x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))
                if w.is_walkable(p := w.pos(x + dx, y + dy)) and p not in w.structures and p not in w.nodes)
    apply_setup(w, "place_structure", {"x": door[0], "y": door[1], "structure": "door", "owner": a2})
    CONSTRUCTION.state(w).locks[w.pos(*door)] = True  # as `lock` leaves it: only its owner passes
    apply_setup(w, "move_character", {"agent": a2, "x": x, "y": y})  # both see the door
    policy = make_policy("producer", content)
    checked = 0
    for agent in (a1, a2):
        ch = w.chars[agent]
        obs = observe(w, agent)
        known = policy.known(obs)
        here = (obs["self"]["x"], obs["self"]["y"])
        reach = policy.reachable(known, here)
        for xy in known.tiles:
            p = w.pos(*xy)
            assert known.can_stand(xy) == known_walkable(w, ch, p), (agent, xy)
            path = find_path(w, ch, p)
            assert (xy in reach) == (path is not None), (agent, xy)
            if path is not None:
                assert reach[xy] == len(path)
            checked += 1
    assert checked > 200
    assert not policy.known(observe(w, a1)).can_stand(door) and policy.known(observe(w, a2)).can_stand(door)


@pytest.mark.slow(seconds=8)
@pytest.mark.parametrize("scenario", ["season", "famine"])
def test_a_policy_sent_the_memorys_changes_decides_as_one_sent_the_whole_memory(content, scenario, tmp_path):
    """Every decision of a match's policies, each keeping its map across observations, equals that of
    a new policy seeing the whole memory at that tick: what a resumed match does."""
    run = ScriptedRun.start(scenario, 2, tmp_path / "m.sqlite")
    w, decided = run.world, 0
    for _ in range(700):
        for agent, policy in run.policies.items():
            if w.chars[agent].op is not None:
                continue
            decision = policy.decide(LocalClient(w).view(agent, policy))
            whole = AgentView(agent, w.tick, w.seed, lambda since, a=agent: observe(w, a), lambda a=agent: status(w, w.chars[a]))
            assert decision == make_policy(policy.name, content).decide(whole), (agent, w.tick)
            decided += 1
            if decision is not None:
                run.match.submit(agent, *decision)
        run.match.step()
    run.match.close()
    assert decided > 300


def test_a_map_refuses_changes_since_a_tick_it_does_not_show(content):
    w = World(content, "tiny", 1)
    a = w.join("walker")
    known = make_policy("survivor", content).known(observe(w, a))
    w.step()
    with pytest.raises(ValueError, match="changed since tick"):
        known.absorb(observe(w, a, memory_since=w.tick + 5))


def walled_off_bush(content) -> tuple[World, str, tuple[int, int]]:
    """A character between a berry bush 3 tiles east inside a ring of walls and an open one 4 tiles west."""
    w = World(content, "default", 1)
    a = w.join("forager")
    ring = {(3 + dx, dy) for dx in range(-2, 3) for dy in range(-2, 3) if max(abs(dx), abs(dy)) == 2}
    cx, cy = clear_spot(w, 5, w.chars[a].pos, ring | {(0, 0), (3, 0), (-4, 0)})
    apply_setup(w, "move_character", {"agent": a, "x": cx, "y": cy})
    walled, open_ = (cx + 3, cy), (cx - 4, cy)
    for node in (walled, open_):
        apply_setup(w, "place_resource", {"x": node[0], "y": node[1], "node": "berry_bush"})
    for x in range(walled[0] - 2, walled[0] + 3):
        for y in range(walled[1] - 2, walled[1] + 3):
            if max(abs(x - walled[0]), abs(y - walled[1])) == 2:
                apply_setup(w, "place_structure", {"x": x, "y": y, "structure": "wall"})
    for item, qty in w.chars[a].inventory.copy().items():  # hungry for berries: the forage comes first
        apply_setup(w, "take_items", {"agent": a, "item": item, "qty": qty})
    return w, a, open_


@pytest.mark.parametrize("policy", ["survivor", "producer", "raider"])
def test_a_forager_heads_for_the_bush_it_can_reach_not_the_nearer_one_walled_off(content, policy):
    w, a, open_ = walled_off_bush(content)
    chosen = make_policy(policy, content)
    decision = chosen.decide(LocalClient(w).view(a, chosen))
    assert decision is not None and decision[0] == "move_to", decision
    target = (decision[1]["x"], decision[1]["y"])
    assert max(abs(target[0] - open_[0]), abs(target[1] - open_[1])) == 1, target
    assert isinstance(w.submit(a, *decision), Accepted)


def broken_bed(content) -> tuple[World, str]:
    """A tired character at night on the tile where its bed stood until a raid broke it."""
    w = World(content, "tiny", 1)
    a = w.join("sleeper")
    x, y = clear_spot(w, 1, w.chars[a].pos, {(0, 0)})
    apply_setup(w, "move_character", {"agent": a, "x": x, "y": y})
    apply_setup(w, "place_structure", {"x": x, "y": y, "structure": "bed", "owner": a})
    w.remove_structure(w.pos(x, y))  # as a raid leaves it
    apply_setup(w, "set_time", {"day": 1, "hour": 23})
    apply_setup(w, "set_needs", {"agent": a, "energy": 40})
    assert observe(w, a)["self"]["bed"] is None  # the world no longer names the tile as its bed
    return w, a


@pytest.mark.parametrize("policy", ["survivor", "producer", "expedition"])
def test_a_character_whose_bed_was_broken_does_not_try_to_sleep_in_it(content, policy):
    w, a = broken_bed(content)
    chosen = make_policy(policy, content)
    decision = chosen.decide(LocalClient(w).view(a, chosen))
    assert decision is not None and decision[0] != "sleep", decision
    assert isinstance(w.submit(a, *decision), Accepted), decision


@pytest.mark.parametrize("scenario, seed, until", [("season", 6, 900), ("season", 8, 2100), ("famine", 2, 1300)])
def test_scripted_baselines_have_no_action_rejected(scenario, seed, until, tmp_path):
    """Matches where the baselines once asked for unreachable tiles, a locked door or a broken bed."""
    run = ScriptedRun.start(scenario, seed, tmp_path / "m.sqlite")
    run.run(until=until)
    events = [(kind, orjson.loads(payload)["data"]) for _, _, kind, payload, _ in run.match.store.events()]
    run.match.close()
    scripted = {a for a, p in run.policies.items() if p.name != "random"}
    rejected = [d for kind, d in events if kind == "action_rejected" and d["agent"] in scripted]
    assert rejected == []


def test_policies_reach_the_world_only_through_their_view():
    """The policies' modules import no world, registry, observation builder, match or host: a policy
    that plays in process plays the same through MCP, where it has only its view."""
    import ast
    from pathlib import Path

    import wildhold.agents.base
    import wildhold.agents.sampled
    import wildhold.agents.scripted

    allowed = {"wildhold.agents.base": None, "wildhold.agents.sampled": None, "wildhold.content": None,
               "wildhold.world.actions": {"DIRECTIONS"}}
    for module in (wildhold.agents.base, wildhold.agents.scripted, wildhold.agents.sampled):
        tree = ast.parse(Path(module.__file__).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("wildhold") for a in node.names), ast.unparse(node)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wildhold"):
                assert node.module in allowed, f"{module.__name__}: {ast.unparse(node)}"
                names = allowed[node.module]
                assert names is None or {a.name for a in node.names} <= names, f"{module.__name__}: {ast.unparse(node)}"


def test_the_random_policy_picks_among_the_actions_its_view_names(content):
    w = World(content, "tiny", 1)
    a = w.join("walker")
    client = LocalClient(w)
    policy = make_policy("random", content)
    view = client.view(a, policy)
    assert set(client.actions) == set(REGISTRY) and len(client.actions) > 50
    picked = {policy.decide(AgentView(a, t, 1, view._observe, view._status, actions=("move", "rest")))[0] for t in range(40)}
    assert picked == {"move", "rest"}


def test_legal_random_names_only_listed_ids_not_its_own_each_as_often():
    """An id argument is drawn from the entries the observation lists, less one without an id and the character's
    own, each about as often as the others."""
    obs = {"self": {"id": "a1"}, "view": {"characters": [{"id": "a2"}, {"name": "no id"}, {"id": "a1"}, {"id": "a3"}]},
           "economy": {"orders": [{"id": "order1"}], "market": [{"id": "order2"}, {"id": "order3"}]}}
    rng = random.Random(4)
    seen = _ids(obs)
    drawn = [seen.pick("character", rng.random) for _ in range(3000)]
    assert {d: drawn.count(d) for d in set(drawn)}.keys() == {"a2", "a3"}
    assert abs(drawn.count("a2") - drawn.count("a3")) < 250
    orders = [seen.pick("order", rng.random) for _ in range(3000)]
    assert set(orders) == {"order1", "order2", "order3"} and min(orders.count(o) for o in set(orders)) > 850
    assert seen.pick("quest", rng.random) is None and _ids({"self": {"id": "a1"}, "view": {"characters": [{"id": "a1"}]}}).pick(
        "character", rng.random) is None


def test_the_legal_random_policy_submits_what_the_world_accepts(content):
    """Its candidates are put to the world's check first, so what it submits is accepted (the load the
    engine benchmark measures), across many kinds of action."""
    w = World(content, "default", 4)
    agents = [w.join(f"p{i}") for i in range(6)]
    client, policy = LocalClient(w), make_policy("legal_random", content)
    accepted = refused = 0
    kinds = set()
    for _ in range(300):
        for a in agents:
            if client.idle(a):
                action, args = policy.decide(client.view(a, policy))
                before = state_hash(w)
                outcome = w.submit(a, action, args)
                if isinstance(outcome, Accepted):
                    accepted += 1
                    kinds.add(action)
                else:
                    refused += 1
                    assert state_hash(w) == before
        w.step()
    assert refused == 0 and accepted > 300
    assert len(kinds) >= 15, sorted(kinds)
    assert 0 < policy.accepted_share < 1


def test_legal_random_passing_over_unready_actions_plays_the_same_actions_in_law(content):
    """Passing over an action the world refuses whatever its arguments (its ready code) before drawing them
    leaves the share of each action played unchanged: only candidates that could never pass are skipped. The
    same character in the same state decides many times with the ready codes and without them."""
    w = World(content, "famine", 2)
    agents = [w.join(f"p{i}") for i in range(6)]
    client, policy = LocalClient(w), make_policy("legal_random", content)
    for _ in range(15):
        for a in agents:
            if client.idle(a):
                client.decide(a, policy)
        w.step()
    a = next(a for a in agents if client.idle(a))
    view = client.view(a, policy)
    blind = dataclasses.replace(view, _ready=None)
    n = 3000
    plays = {}
    for name, v in (("ready", view), ("blind", blind)):
        picker = make_policy("legal_random", content)
        plays[name] = collections.Counter(picker.decide(v)[0] for _ in range(n))
    assert w.ready_code(a, "sleep") is not None and plays["ready"]["rest"] > 0  # some kinds are passed over, some played
    kinds = plays["ready"].keys() | plays["blind"].keys()
    distance = sum(abs(plays["ready"][k] - plays["blind"][k]) for k in kinds) / (2 * n)
    assert len(kinds) >= 8 and distance < 0.06, (distance, plays)


def test_a_views_asks_answer_as_its_ready_and_refusal(content):
    """`asks` gives the callables a policy calls in its candidate loop: they answer as the view's `ready` and
    `refusal` (the world's codes), and a view whose client cannot ask answers None to both."""
    w = World(content, "default", 4)
    a = w.join("p")
    client = LocalClient(w)
    view = client.view(a, make_policy("legal_random", content))
    ready, refusal = view.asks()
    codes = [ready(action) for action in client.actions]
    assert codes == [view.ready(action) for action in client.actions]
    assert codes == [w.ready_code(a, action) for action in client.actions]
    assert None in codes and set(codes) - {None}
    for args in ({"ticks": 1}, {"ticks": 0}, {}, {"ticks": 1, "more": 2}):
        assert refusal("rest", args) == view.refusal("rest", args) == w.refusal_code(a, "rest", args)
    assert refusal("rest", {"ticks": 0}) == "bad_arguments"
    blind_ready, blind_refusal = dataclasses.replace(view, _ready=None, _refusal=None).asks()
    assert blind_ready("sleep") is None and blind_refusal("rest", {"ticks": 0}) is None
