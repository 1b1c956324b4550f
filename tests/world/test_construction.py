"""Construction and homes: building, repair, demolition, doors and locks, chests, storehouse
deposits, homes and shelter, on the tiny scenario, one behaviour per test."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import validate_event
from wildhold.world.observe import observe
from wildhold.world.parts.construction import CONSTRUCTION, Home, damage_structure, deposits_of, find_home, home_of
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import apply_setup
from wildhold.world.state import Creature
from wildhold.world.world import GROUND, World

# ---- helpers -------------------------------------------------------------------------------


class Site:
    """A world with characters and a clear 5x5 block at (x0, y0) for a 3x3 home, plus two clear
    tiles west of the middle of its west side (where the door goes)."""

    def __init__(self, content, agents: int = 2):
        for seed in range(1, 50):
            w = World(content, "tiny", seed)
            spot = _clear_block(w)
            if spot is not None:
                break
        else:
            raise AssertionError("no clear block in any tried seed")
        self.w = w
        self.x0, self.y0 = spot
        self.ids = [w.join(f"c{i}") for i in range(agents)]
        self.log: list[dict[str, Any]] = []

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Events since the last call (all of them are also kept in `log`)."""
        new = [orjson.loads(e[3]) for e in self.w.events.drain()]
        self.log += new
        return [e for e in new if kind is None or e["kind"] == kind]

    def tile(self, dx: int, dy: int) -> int:
        return self.w.pos(self.x0 + dx, self.y0 + dy)

    def xy(self, dx: int, dy: int) -> dict[str, int]:
        return {"x": self.x0 + dx, "y": self.y0 + dy}

    # The home: walls on the ring of the 5x5 block, floors inside, the door at ring (0, 2).
    door = (0, 2)
    inside = (1, 2)
    outside = (-1, 2)
    far_outside = (-2, 2)

    def home(self, owner: str, missing_wall: tuple[int, int] | None = None, furnish: dict[tuple[int, int], str] | None = None) -> None:
        furnish = furnish or {}
        for dy in range(5):
            for dx in range(5):
                ring = dx in (0, 4) or dy in (0, 4)
                if (dx, dy) == missing_wall:
                    continue
                kind = ("door" if (dx, dy) == self.door else "wall") if ring else furnish.get((dx, dy), "floor")
                self.setup("place_structure", **self.xy(dx, dy), structure=kind, owner=owner)

    def setup(self, command: str, **args: Any) -> None:
        apply_setup(self.w, command, args)

    def put(self, agent: str, at: tuple[int, int]) -> None:
        self.setup("move_character", agent=agent, **self.xy(*at))

    def give(self, agent: str, item: str, qty: int = 1) -> None:
        self.setup("give_items", agent=agent, item=item, qty=qty)

    def act(self, agent: str, action: str, **args: Any) -> Accepted | Rejected:
        return self.w.submit(agent, action, args)

    def done(self, agent: str, action: str, **args: Any) -> dict[str, Any]:
        """Submit, step to the end, and return the operation's result (failing the test otherwise)."""
        result = self.act(agent, action, **args)
        assert isinstance(result, Accepted), result
        while self.w.tick < result.ends:
            self.w.step()
        ended = [e for e in self.events() if e["kind"] in ("operation_completed", "operation_failed") and e["data"]["op"] == result.op]
        assert ended and ended[0]["kind"] == "operation_completed", ended
        return ended[0]["data"]["result"]

    def locked_home(self, owner: str, furnish: dict[tuple[int, int], str] | None = None) -> None:
        self.home(owner, furnish=furnish)
        self.give(owner, "lock")
        self.put(owner, self.inside)
        self.done(owner, "lock", **self.xy(*self.door))


def _clear_block(w: World) -> tuple[int, int] | None:
    def clear(x: int, y: int) -> bool:
        p = w.pos(x, y)
        return not (
            p is None or not w.walkable_terrain[w.terrain[p]] or w.safe_terrain[w.terrain[p]] or p in w.nodes
            or p in w.structures or p in w.spawns or p in (w.dungeon, w.settlement)
        )

    for y0 in range(w.height):
        for x0 in range(w.width):
            if all(clear(x0 + dx, y0 + dy) for dy in range(5) for dx in range(5)) and clear(x0 - 1, y0 + 2) and clear(x0 - 2, y0 + 2):
                return x0, y0
    return None


def rejected(s: Site, agent: str, action: str, code: str, **args: Any) -> None:
    """The action is refused with `code`, emits only its rejection, and leaves the state hash alone."""
    s.events()
    before = state_hash(s.w)
    result = s.act(agent, action, **args)
    assert isinstance(result, Rejected), result
    assert result.code == code, result
    assert state_hash(s.w) == before
    assert [e["kind"] for e in s.events()] == ["action_rejected"]


@pytest.fixture
def site(content) -> Site:
    return Site(content)


# ---- building --------------------------------------------------------------------------------


def test_build_takes_its_materials_only_when_it_completes(site):
    a, _ = site.ids
    site.put(a, (2, 2))
    site.give(a, "plank", 3)
    site.events()
    started = site.act(a, "build", structure="floor", **site.xy(3, 2))
    assert isinstance(started, Accepted)
    assert started.ends == site.w.tick + site.w.content.structures["floor"].build.duration
    while site.w.tick < started.ends - 1:
        site.w.step()
    assert site.w.chars[a].inventory["plank"] == 3
    assert site.tile(3, 2) not in site.w.structures
    site.w.step()
    assert site.w.chars[a].inventory["plank"] == 2
    s = site.w.structures[site.tile(3, 2)]
    assert (s.kind, s.owner, s.hp) == ("floor", a, site.w.content.structures["floor"].hp)
    built = site.events("structure_built")
    assert [e["data"] for e in built] == [{"agent": a, **site.xy(3, 2), "structure": "floor", "materials": {"plank": 1}}]


def test_build_fails_cleanly_when_the_materials_are_gone_at_completion(site):
    a, _ = site.ids
    site.put(a, (2, 2))
    site.give(a, "wood", 2)
    wood = site.w.chars[a].inventory["wood"]
    started = site.act(a, "build", structure="wall", **site.xy(3, 2))
    assert isinstance(started, Accepted)
    site.setup("take_items", agent=a, item="wood", qty=wood - 1)
    before = site.w.chars[a].inventory.copy()
    while site.w.tick < started.ends:
        site.w.step()
    failed = site.events("operation_failed")
    assert [e["data"]["code"] for e in failed] == ["missing_materials"]
    assert site.tile(3, 2) not in site.w.structures
    assert site.w.chars[a].inventory == before


def test_a_blocking_structure_is_not_built_where_someone_stands_but_a_floor_is(site):
    a, b = site.ids
    site.put(a, (2, 2))
    site.put(b, (3, 2))
    site.give(a, "wood", 2)
    site.give(a, "plank", 1)
    rejected(site, a, "build", "occupied", structure="wall", **site.xy(3, 2))
    rejected(site, a, "build", "occupied", structure="wall", **site.xy(2, 2))
    site.done(a, "build", structure="floor", **site.xy(3, 2))
    assert site.w.structures[site.tile(3, 2)].kind == "floor"


def test_build_rejections_change_nothing(site):
    a, _ = site.ids
    w = site.w
    site.put(a, (2, 2))
    site.give(a, "plank", 1)
    site.setup("place_structure", **site.xy(1, 1), structure="wall", owner=a)
    rejected(site, a, "build", "unknown_structure", structure="wal", **site.xy(3, 2))
    rejected(site, a, "build", "not_buildable", structure="bed", **site.xy(3, 2))
    rejected(site, a, "build", "out_of_range", structure="floor", **site.xy(4, 2))
    rejected(site, a, "build", "out_of_bounds", structure="floor", x=-1, y=0)
    rejected(site, a, "build", "occupied", structure="floor", **site.xy(1, 1))
    rejected(site, a, "build", "missing_materials", structure="door", **site.xy(3, 2))
    rejected(site, a, "build", "missing_materials", structure="stone_wall", **site.xy(3, 2))
    spawn = w.spawns[0]
    apply_setup(w, "move_character", {"agent": a, "x": w.xy(spawn)[0] + 1, "y": w.xy(spawn)[1]})
    rejected(site, a, "build", "reserved_tile", structure="floor", x=w.xy(spawn)[0], y=w.xy(spawn)[1])


# ---- repair and demolition -------------------------------------------------------------------


def test_repair_restores_hp_up_to_the_maximum_and_uses_its_materials(site):
    a, _ = site.ids
    site.put(a, (2, 2))
    site.setup("place_structure", **site.xy(3, 2), structure="wall", owner=a)
    p = site.tile(3, 2)
    spec = site.w.content.structures["wall"]
    damage_structure(site.w, p, 50, "test")
    assert site.w.structures[p].hp == spec.hp - 50
    site.give(a, "wood", 2)
    wood = site.w.chars[a].inventory["wood"]
    result = site.done(a, "repair", **site.xy(3, 2))
    assert site.w.structures[p].hp == result["hp"] == spec.hp - 50 + spec.repair.hp
    assert site.w.chars[a].inventory["wood"] == wood - spec.repair.materials["wood"]
    site.done(a, "repair", **site.xy(3, 2))
    assert site.w.structures[p].hp == spec.hp
    rejected(site, a, "repair", "not_damaged", **site.xy(3, 2))
    assert [e["data"]["hp"] for e in site.log if e["kind"] == "structure_repaired"] == [70, 80]


def test_only_the_owner_and_allowed_characters_repair(site):
    a, b = site.ids
    site.put(a, (2, 2))
    site.put(b, (2, 3))
    site.setup("place_structure", **site.xy(3, 2), structure="wall", owner=a)
    damage_structure(site.w, site.tile(3, 2), 10, "test")
    site.give(b, "wood", 1)
    rejected(site, b, "repair", "not_owner", **site.xy(3, 2))
    site.done(a, "allow", **site.xy(3, 2), character=b)
    site.done(b, "repair", **site.xy(3, 2))
    assert site.w.structures[site.tile(3, 2)].hp == site.w.content.structures["wall"].hp


def test_demolish_by_a_non_owner_is_refused(site):
    a, b = site.ids
    site.put(a, (2, 2))
    site.put(b, (2, 3))
    site.setup("place_structure", **site.xy(3, 2), structure="stone_wall", owner=a)
    rejected(site, b, "demolish", "not_owner", **site.xy(3, 2))
    site.done(a, "allow", **site.xy(3, 2), character=b)
    rejected(site, b, "demolish", "not_owner", **site.xy(3, 2))
    assert site.w.structures[site.tile(3, 2)].owner == a


def test_demolish_returns_the_refund_share_of_the_build_materials_to_the_owner(site):
    a, _ = site.ids
    site.put(a, (2, 2))
    site.setup("place_structure", **site.xy(3, 2), structure="stone_wall", owner=a)
    stone = site.w.chars[a].inventory.get("stone", 0)
    result = site.done(a, "demolish", **site.xy(3, 2))
    assert result["refund"] == {"stone": 1}  # floor(0.5 x 3)
    assert site.w.chars[a].inventory["stone"] == stone + 1
    assert site.tile(3, 2) not in site.w.structures
    assert [e["data"]["structure"] for e in site.log if e["kind"] == "structure_demolished"] == ["stone_wall"]


def test_unowned_and_placed_structures_are_not_demolished(site):
    a, _ = site.ids
    site.put(a, (2, 2))
    site.setup("place_structure", **site.xy(3, 2), structure="wall")
    site.setup("place_structure", **site.xy(3, 3), structure="bed", owner=a)
    rejected(site, a, "demolish", "not_demolishable", **site.xy(3, 2))
    rejected(site, a, "demolish", "not_demolishable", **site.xy(3, 3))
    rejected(site, a, "demolish", "no_structure", **site.xy(2, 1))


def test_a_chest_or_storehouse_holding_items_is_not_demolished(site):
    a, b = site.ids
    site.put(a, (2, 2))
    site.put(b, (2, 3))
    site.setup("place_structure", **site.xy(3, 2), structure="chest", owner=a)
    site.setup("place_structure", **site.xy(3, 3), structure="storehouse", owner=a)
    site.done(a, "store", **site.xy(3, 2), item="wood", qty=1)
    site.done(b, "deposit", **site.xy(3, 3), item="berries", qty=1)
    rejected(site, a, "demolish", "not_empty", **site.xy(3, 2))
    rejected(site, a, "demolish", "not_empty", **site.xy(3, 3))
    site.done(a, "retrieve", **site.xy(3, 2), item="wood", qty=1)
    site.done(b, "withdraw", **site.xy(3, 3), item="berries", qty=1)
    site.done(a, "demolish", **site.xy(3, 2))
    site.done(a, "demolish", **site.xy(3, 3))


def test_damage_to_zero_destroys_a_chest_leaving_rubble_and_its_contents_on_the_ground(site):
    a, _ = site.ids
    w = site.w
    site.put(a, (2, 2))
    site.setup("place_structure", **site.xy(3, 2), structure="chest", owner=a)
    site.done(a, "store", **site.xy(3, 2), item="berries", qty=2)
    p = site.tile(3, 2)
    assert damage_structure(w, p, 20, "a2") is False
    assert damage_structure(w, p, 500, "a2") is True
    assert p not in w.structures
    assert f"chest@{p}" not in w.containers
    # rubble: floor(0.25 x 3 planks) = 0; the two berries fall out
    assert w.ground[p] == {"berries": 2}
    kinds = [e["kind"] for e in site.events()]
    assert kinds.count("structure_damaged") == 2 and "structure_destroyed" in kinds
    site.setup("place_structure", **site.xy(3, 3), structure="storehouse", owner=a)
    damage_structure(w, site.tile(3, 3), 10**6, "a2")
    assert w.ground[site.tile(3, 3)] == {"stone": 1, "wood": 2}  # floor(0.25 x 6), floor(0.25 x 8)


# ---- doors and locks -------------------------------------------------------------------------


def test_a_locked_door_stops_others_but_not_its_owner_or_allowed_characters(content):
    site = Site(content, agents=3)
    owner, stranger, friend = site.ids
    site.locked_home(owner)
    site.put(stranger, site.outside)
    site.put(friend, site.far_outside)
    site.events()
    rejected(site, stranger, "move", "blocked", direction="e")
    rejected(site, stranger, "move_to", "not_walkable", **site.xy(*site.door))
    rejected(site, stranger, "move_to", "no_path", **site.xy(*site.inside))
    # the owner walks out through its own door and back in
    site.done(owner, "move", direction="w")
    site.done(owner, "move_to", **site.xy(2, 2))
    site.done(owner, "allow", **site.xy(*site.door), character=friend)
    site.done(friend, "move_to", **site.xy(2, 3))
    assert site.w.chars[friend].pos == site.tile(2, 3)
    site.done(owner, "disallow", **site.xy(*site.door), character=friend)
    site.done(friend, "move_to", **site.xy(1, 2))
    rejected(site, friend, "move", "blocked", direction="w")


def test_a_walk_through_a_door_locked_on_the_way_stops_with_path_blocked(content):
    site = Site(content, agents=2)
    owner, stranger = site.ids
    site.home(owner)
    site.give(owner, "lock")
    site.put(owner, site.inside)
    site.put(stranger, site.far_outside)
    lock = site.act(owner, "lock", **site.xy(*site.door))
    walk = site.act(stranger, "move_to", **site.xy(2, 2))
    assert isinstance(lock, Accepted) and isinstance(walk, Accepted)
    assert lock.ends < walk.ends
    while site.w.tick < walk.ends:
        site.w.step()
    assert [e["data"]["code"] for e in site.events("operation_failed")] == ["path_blocked"]
    assert CONSTRUCTION.state(site.w).locks == {site.tile(*site.door): True}
    stopped = site.w.chars[stranger].pos
    assert site.w.distance(stopped, site.tile(*site.door)) == 1 and stopped not in site.w.structures


def test_the_first_lock_uses_up_a_lock_item_and_later_locks_are_free(site):
    a, _ = site.ids
    site.home(a)
    site.put(a, site.inside)
    door = site.xy(*site.door)
    rejected(site, a, "lock", "missing_materials", **door)
    site.give(a, "lock")
    assert site.done(a, "lock", **door)["lock_fitted"] is True
    assert "lock" not in site.w.chars[a].inventory
    rejected(site, a, "lock", "already_locked", **door)
    site.done(a, "unlock", **door)
    rejected(site, a, "unlock", "not_locked", **door)
    assert site.done(a, "lock", **door)["lock_fitted"] is False
    kinds = [e["kind"] for e in site.log if e["kind"].startswith("door_")]
    assert kinds == ["door_locked", "door_unlocked", "door_locked"]


def test_a_door_is_not_locked_on_someone_standing_in_the_doorway(content):
    site = Site(content, agents=3)
    a, b, friend = site.ids
    site.home(a)
    site.give(a, "lock")
    site.put(a, site.inside)
    site.put(b, site.door)
    rejected(site, a, "lock", "occupied", **site.xy(*site.door))
    site.put(b, site.outside)
    site.done(a, "allow", **site.xy(*site.door), character=friend)
    site.put(friend, site.door)
    site.done(a, "lock", **site.xy(*site.door))


def test_only_the_owner_locks_unlocks_and_changes_access(site):
    a, b = site.ids
    site.home(a)
    site.put(a, site.inside)
    site.put(b, site.outside)
    site.give(b, "lock")
    door = site.xy(*site.door)
    rejected(site, b, "lock", "not_owner", **door)
    rejected(site, b, "allow", "not_owner", **door, character=b)
    rejected(site, a, "allow", "unknown_character", **door, character="a9")
    rejected(site, a, "allow", "already_allowed", **door, character=a)
    rejected(site, a, "disallow", "not_on_allow_list", **door, character=b)
    rejected(site, a, "lock", "wrong_structure", **site.xy(0, 1))


# ---- chests and storehouses ------------------------------------------------------------------


def test_chests_refuse_strangers_and_serve_their_owner_and_allowed_characters(site):
    a, b = site.ids
    site.put(a, (2, 2))
    site.put(b, (2, 3))
    site.setup("place_structure", **site.xy(3, 2), structure="chest", owner=a)
    chest = site.xy(3, 2)
    p = site.tile(3, 2)
    site.done(a, "store", **chest, item="wood", qty=3)
    assert site.w.containers[f"chest@{p}"] == {"wood": 3}
    rejected(site, b, "retrieve", "access_denied", **chest, item="wood", qty=1)
    rejected(site, b, "store", "access_denied", **chest, item="berries", qty=1)
    rejected(site, a, "retrieve", "not_in_container", **chest, item="wood", qty=4)
    rejected(site, a, "store", "not_in_inventory", **chest, item="wood", qty=50)
    site.done(a, "allow", **chest, character=b)
    site.done(b, "retrieve", **chest, item="wood", qty=2)
    assert site.w.containers[f"chest@{p}"] == {"wood": 1}


def test_a_deposit_stays_credited_to_its_depositor_and_only_they_withdraw_it(site):
    owner, guest = site.ids
    site.put(owner, (2, 2))
    site.put(guest, (2, 3))
    site.setup("place_structure", **site.xy(3, 2), structure="storehouse", owner=owner)
    house = site.xy(3, 2)
    p = site.tile(3, 2)
    site.done(guest, "deposit", **house, item="berries", qty=3)
    site.done(owner, "deposit", **house, item="wood", qty=1)
    assert site.w.containers[f"deposit@{p}:{guest}"] == {"berries": 3}
    assert deposits_of(site.w, guest) == {"berries": 3}
    assert deposits_of(site.w, owner) == {"wood": 1}
    rejected(site, owner, "withdraw", "not_in_container", **house, item="berries", qty=1)
    berries = site.w.chars[guest].inventory.get("berries", 0)
    site.done(guest, "withdraw", **house, item="berries", qty=2)
    assert site.w.chars[guest].inventory["berries"] == berries + 2
    assert deposits_of(site.w, guest) == {"berries": 1}
    assert observe(site.w, guest)["deposits"] == [{**house, "items": {"berries": 1}}]


# ---- homes and shelter -----------------------------------------------------------------------


def test_a_3x3_floor_walled_in_with_a_locked_door_is_a_complete_home_of_area_9(site):
    a, _ = site.ids
    site.locked_home(a)
    home = home_of(site.w, a)
    assert home == Home(
        tiles=sorted(site.tile(dx, dy) for dy in (1, 2, 3) for dx in (1, 2, 3)),
        doors=[site.tile(*site.door)],
        locked=True,
        complete=True,
        area=9,
    )


def test_find_home_over_plain_data_agrees_with_home_of(site):
    a, _ = site.ids
    site.locked_home(a, furnish={(2, 2): "bed"})
    w = site.w
    roles = {k: s.part for k, s in w.content.structures.items()}
    assert find_home(w.width, w.height, dict(w.structures), roles, dict(CONSTRUCTION.state(w).locks), a) == home_of(w, a)
    assert home_of(w, a).area == 8


def test_trial_info_says_the_home_is_lost_once_its_only_door_is_demolished_as_it_does_for_a_bed(site):
    """trial_info shows which requirements hold now: a home demolished is no longer one (the stage stays attained)."""
    a, _ = site.ids
    site.locked_home(a)

    def home_stage() -> dict[str, Any]:
        return next(s for s in site.done(a, "trial_info")["stages"] if s["stage"] == "home")

    assert [r["met"] for r in home_stage()["requirements"]] == [True]
    site.put(a, site.outside)
    site.done(a, "demolish", **site.xy(*site.door))
    assert home_of(site.w, a) is None
    after = home_stage()
    assert [r["met"] for r in after["requirements"]] == [False] and after["attained_tick"] is not None


def test_the_same_home_with_its_door_unlocked_is_not_complete(site):
    a, _ = site.ids
    site.locked_home(a)
    site.done(a, "unlock", **site.xy(*site.door))
    home = home_of(site.w, a)
    assert (home.area, home.locked, home.complete) == (9, False, False)


def test_a_home_with_a_wall_missing_is_not_enclosed(site):
    a, _ = site.ids
    site.home(a, missing_wall=(4, 3))
    assert home_of(site.w, a) is None


def test_a_home_missing_a_corner_wall_is_not_enclosed_since_characters_step_diagonally(site):
    a, b = site.ids
    site.locked_home(a)
    assert home_of(site.w, a).complete
    site.put(a, (3, 3))
    site.done(a, "demolish", **site.xy(4, 4))
    assert home_of(site.w, a) is None
    site.put(b, (4, 4))
    site.done(b, "move", direction="nw")
    assert site.w.chars[b].pos == site.tile(3, 3)


def test_walls_of_another_owner_do_not_enclose_a_home(site):
    a, b = site.ids
    site.home(a, missing_wall=(4, 3))
    site.setup("place_structure", **site.xy(4, 3), structure="wall", owner=b)
    assert home_of(site.w, a) is None


def test_furnishings_join_a_home_without_counting_toward_its_area(site):
    a, _ = site.ids
    site.home(a, furnish={(3, 3): "bed", (3, 1): "chest"})
    home = home_of(site.w, a)
    assert (home.area, home.complete) == (7, False)


def test_a_character_inside_a_complete_home_is_sheltered_at_night(content):
    site = Site(content, agents=2)
    a, out = site.ids
    w = site.w
    site.locked_home(a)
    site.put(a, (2, 2))
    site.put(out, site.far_outside)
    site.setup("set_time", day=1, hour=21, minute=30)
    assert w.is_night() and w.is_sheltered(w.chars[a]) and not w.is_sheltered(w.chars[out])
    assert observe(w, a)["self"]["sheltered"] is True
    # a creature already hunting it loses the trail at once
    w.next_creature += 1
    w.creatures[w.next_creature] = Creature(w.next_creature, "night_stalker", site.tile(2, 0) - w.width, 30, a)
    w.step()
    assert w.creatures[w.next_creature].target is None
    health = w.chars[a].health
    site.events()
    for _ in range(400):
        w.step()
    spawned = [e["data"] for e in site.events("creature_spawned")]
    attacked = [e["data"]["agent"] for e in site.log if e["kind"] == "creature_attacked"]
    assert spawned, "the character outside drew creatures"
    assert all(cr.target != a for cr in w.creatures.values())
    assert a not in attacked
    assert w.chars[a].health >= health


def test_an_unlocked_enclosure_does_not_shelter(site):
    a, _ = site.ids
    site.home(a)
    site.put(a, (2, 2))
    site.setup("set_time", day=1, hour=22)
    assert not site.w.is_sheltered(site.w.chars[a])


def test_home_of_answers_the_largest_complete_home(content):
    site = Site(content, agents=1)
    (a,) = site.ids
    site.locked_home(a)
    # a second, one-tile enclosure elsewhere, unlocked
    w = site.w
    far = next(
        p for p in range(w.width * w.height)
        if all(
            (q := w.pos(w.xy(p)[0] + dx, w.xy(p)[1] + dy)) is not None and w.walkable_terrain[w.terrain[q]]
            and q not in w.structures and q not in w.nodes and q not in w.spawns and w.distance(q, site.tile(2, 2)) > 4
            for dx in (-1, 0, 1) for dy in (-1, 0, 1)
        )
    )
    fx, fy = w.xy(far)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            kind = "floor" if (dx, dy) == (0, 0) else "door" if (dx, dy) == (1, 0) else "wall"
            apply_setup(w, "place_structure", {"x": fx + dx, "y": fy + dy, "structure": kind, "owner": a})
    assert home_of(w, a).area == 9
    site.done(a, "unlock", **site.xy(*site.door))
    assert (home_of(w, a).area, home_of(w, a).complete) == (9, False)


# ---- observation, snapshots, conservation ----------------------------------------------------


def test_observation_shows_the_home_structure_hp_and_doors(content):
    site = Site(content, agents=2)
    a, b = site.ids
    site.locked_home(a)
    site.put(b, site.outside)
    damage_structure(site.w, site.tile(0, 1), 5, "test")
    mine, theirs = observe(site.w, a), observe(site.w, b)
    assert mine["home"]["area"] == 9 and mine["home"]["complete"] is True
    assert mine["home"]["doors"] == [{**site.xy(*site.door), "locked": True}]
    assert theirs["home"] is None
    door_a = next(s for s in mine["structures"] if (s["x"], s["y"]) == tuple(site.xy(*site.door).values()))
    door_b = next(s for s in theirs["structures"] if (s["x"], s["y"]) == tuple(site.xy(*site.door).values()))
    assert door_a["may_pass"] is True and door_b["may_pass"] is False and door_b["locked"] is True
    assert "allowed" in door_a and "allowed" not in door_b
    wall = next(s for s in theirs["structures"] if (s["x"], s["y"]) == tuple(site.xy(0, 1).values()))
    assert (wall["hp"], wall["max_hp"]) == (75, 80)


def test_a_snapshot_round_trip_keeps_locks_and_allow_lists(content):
    site = Site(content, agents=2)
    a, b = site.ids
    site.locked_home(a)
    site.done(a, "allow", **site.xy(*site.door), character=b)
    site.done(a, "allow", **site.xy(2, 2), character=b)
    copy = loads(content, dumps(site.w))
    assert state_hash(copy) == state_hash(site.w)
    assert CONSTRUCTION.state(copy).locks == CONSTRUCTION.state(site.w).locks == {site.tile(*site.door): True}
    assert CONSTRUCTION.state(copy).access == CONSTRUCTION.state(site.w).access
    assert home_of(copy, a) == home_of(site.w, a)
    for _ in range(30):
        site.w.step()
        copy.step()
    assert copy.events.head == site.w.events.head


def test_item_moves_conserve_items_and_replay_from_events(content):
    site = Site(content, agents=2)
    w = site.w
    a, b = site.ids
    site.locked_home(a, furnish={(3, 1): "chest", (3, 3): "storehouse"})
    site.put(b, (2, 2))
    site.give(a, "plank", 4)
    site.put(a, (2, 1))
    site.done(a, "store", **site.xy(3, 1), item="plank", qty=2)
    site.done(b, "deposit", **site.xy(3, 3), item="berries", qty=2)
    site.done(a, "retrieve", **site.xy(3, 1), item="plank", qty=1)
    site.done(b, "withdraw", **site.xy(3, 3), item="berries", qty=1)
    site.done(a, "demolish", **site.xy(2, 0))
    damage_structure(w, site.tile(3, 1), 10**6, b)
    damage_structure(w, site.tile(3, 3), 10**6, b)
    site.events()
    holders: dict[str, dict[str, int]] = {}
    for e in site.log:
        if e["kind"] in ("item_gained", "item_lost"):
            validate_event(e["kind"], e["data"])
            d = e["data"]
            items = holders.setdefault(d["holder"], {})
            items[d["item"]] = items.get(d["item"], 0) + (d["qty"] if e["kind"] == "item_gained" else -d["qty"])
    actual = {c.id: c.inventory for c in w.chars.values()}
    actual |= {f"{GROUND}{p}": items for p, items in w.ground.items()}
    actual |= w.containers
    replayed = {h: {i: q for i, q in items.items() if q} for h, items in holders.items()}
    assert {h: items for h, items in replayed.items() if items} == {h: dict(items) for h, items in actual.items() if items}


def test_every_construction_event_matches_its_model(content):
    site = Site(content, agents=2)
    a, b = site.ids
    site.locked_home(a)
    site.done(a, "allow", **site.xy(*site.door), character=b)
    damage_structure(site.w, site.tile(0, 1), 10**6, b)
    site.events()
    kinds = {e["kind"] for e in site.log}
    assert {"door_locked", "access_changed", "structure_damaged", "structure_destroyed"} <= kinds
    for e in site.log:
        validate_event(e["kind"], e["data"])
