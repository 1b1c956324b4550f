"""Setup commands prepare states for tests and tasks; they are recorded and replay exactly."""

import orjson
import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.service.match import replay
from wildhold.world.serialize import state_hash
from wildhold.world.setup import SETUP, SetupError, apply_setup
from wildhold.world.world import World


@pytest.fixture
def world(content):
    w = World(content, "tiny", 11)
    w.join("Ada")
    return w


def _free_tile(w):
    return next(p for p in range(w.width * w.height)
                if w.is_walkable(p) and p not in w.nodes and p not in w.structures and p not in w.occupants)


def test_give_and_take_items_emit_item_events(world):
    before = world.chars["a1"].inventory.get("wood", 0)
    apply_setup(world, "give_items", {"agent": "a1", "item": "wood", "qty": 5})
    apply_setup(world, "take_items", {"agent": "a1", "item": "wood", "qty": 2})
    assert world.chars["a1"].inventory["wood"] == before + 3
    kinds = [(e[2]) for e in world.events.drain()]
    assert kinds[-4:] == ["item_gained", "setup", "item_lost", "setup"]


def test_empty_pack_takes_everything_the_character_carries_with_item_events(world):
    apply_setup(world, "give_items", {"agent": "a1", "item": "stone_pickaxe"})
    carried = dict(world.chars["a1"].inventory)
    assert carried.get("berries") and carried.get("wood")  # the tiny scenario's starting items too
    world.events.drain()
    apply_setup(world, "empty_pack", {"agent": "a1"})
    assert not any(world.chars["a1"].inventory.values())
    lost = {d["item"]: d["qty"] for e in world.events.drain() if e[2] == "item_lost" for d in [orjson.loads(e[3])["data"]]}
    assert lost == {k: v for k, v in carried.items() if v}


@pytest.mark.parametrize("command,args,code", [
    ("give_items", {"agent": "a9", "item": "wood"}, "unknown_agent"),
    ("empty_pack", {"agent": "a9"}, "unknown_agent"),
    ("give_items", {"agent": "a1", "item": "gold"}, "unknown_item"),
    ("take_items", {"agent": "a1", "item": "wood", "qty": 99}, "not_in_inventory"),
    ("set_time", {"day": 1, "hour": 0}, "time_backwards"),
    ("set_weather", {"weather": "snow"}, "unknown_weather"),
    ("place_structure", {"x": -1, "y": 0, "structure": "bed"}, "out_of_bounds"),
    ("place_resource", {"x": 0, "y": 0, "node": "mithril"}, "unknown_node"),
    ("teleport", {}, "unknown_command"),
    ("set_needs", {"agent": "a1", "health": "lots"}, "bad_arguments"),
    ("set_season", {"season": "monsoon"}, "unknown_season"),
    ("set_friendship", {"agent": "a1", "npc": "zed", "level": 1}, "unknown_npc"),
    ("set_friendship", {"agent": "a1", "npc": "mara", "level": 99}, "bad_level"),
    ("unlock_tier", {"agent": "a1", "tier": 9}, "unknown_tier"),
    ("plant_crop", {"agent": "a1", "x": 0, "y": 0, "crop": "cactus"}, "unknown_crop"),
    ("plant_crop", {"agent": "a1", "x": 0, "y": 0, "crop": "wheat", "stage": 9}, "bad_stage"),
    ("set_day_weather", {"weather": "hail"}, "unknown_weather"),
    ("place_structure", {"x": 0, "y": 0, "structure": "wall", "hp": 0}, "bad_arguments"),
    ("place_structure", {"x": 0, "y": 0, "structure": "wall", "hp": 999}, "bad_hp"),
    ("stage_enemy", {"agent": "a1", "tier": 7, "enemy": "cultist"}, "unknown_tier"),
    ("stage_enemy", {"agent": "a1", "tier": 1, "enemy": "wraith"}, "unknown_enemy"),
    ("stage_enemy", {"agent": "a1", "tier": 1, "enemy": "gatekeeper"}, "unknown_enemy"),
    ("stage_enemy", {"agent": "a9", "tier": 1, "enemy": "cultist"}, "unknown_agent"),
])
def test_a_bad_setup_command_changes_nothing(world, command, args, code):
    before = state_hash(world)
    world.events.drain()
    with pytest.raises(SetupError) as err:
        apply_setup(world, command, args)
    assert err.value.code == code
    assert state_hash(world) == before
    assert world.events.drain() == []


def test_time_weather_structures_resources_moves_and_needs(world):
    p = _free_tile(world)
    x, y = world.xy(p)
    apply_setup(world, "set_time", {"day": 2, "hour": 22})
    assert world.day == 2 and world.is_night()
    apply_setup(world, "set_weather", {"weather": "storm"})
    assert world.weather == "storm"
    apply_setup(world, "place_structure", {"x": x, "y": y, "structure": "bed", "owner": "a1"})
    assert world.structures[p].kind == "bed" and world.chars["a1"].bed == p
    apply_setup(world, "move_character", {"agent": "a1", "x": x, "y": y})
    assert world.chars["a1"].pos == p and world.is_sheltered(world.chars["a1"])
    q = _free_tile(world)
    qx, qy = world.xy(q)
    apply_setup(world, "place_resource", {"x": qx, "y": qy, "node": "rock", "amount": 2})
    assert world.nodes[q].kind == "rock" and world.nodes[q].amount == 2
    apply_setup(world, "set_needs", {"agent": "a1", "satiety": 500, "energy": 3})
    c = world.chars["a1"]
    assert (c.satiety, c.energy) == (world.needs.max_satiety, 3)


def test_every_setup_command_is_documented():
    for name, spec in SETUP.items():
        assert spec.doc and spec.args.model_json_schema()["properties"], name


def test_recorded_setup_commands_replay_to_the_same_state(tmp_path):
    run = ScriptedRun.start("tiny", 5, tmp_path / "m.sqlite")
    match = run.match
    match.setup("give_items", {"agent": "a1", "item": "stone_pickaxe"})
    match.setup("set_weather", {"weather": "rain"})
    match.setup("give_items", {"agent": "nobody", "item": "wood"})
    run.run(until=match.world.tick + 200)
    inputs = list(match.store.inputs())
    again = replay(match.world.content, "tiny", 5, inputs, match.world.tick)
    assert again.events.head == match.world.events.head
    assert state_hash(again) == state_hash(match.world)
    match.close()


def test_set_season_jumps_forward_to_the_seasons_first_day(world):
    apply_setup(world, "set_season", {"season": "autumn", "hour": 9})
    assert world.season == "autumn" and world.day == 2 * world.calendar.days_per_season + 1 and world.tick % 1440 == 540
    apply_setup(world, "set_season", {"season": "autumn", "hour": 10})
    assert world.day == 2 * world.calendar.days_per_season + 1  # already in it: the same day, later
    apply_setup(world, "set_season", {"season": "spring"})
    assert world.season == "spring" and world.day == 4 * world.calendar.days_per_season + 1


def test_set_friendship_opens_what_the_level_unlocks(world):
    from wildhold.world.parts import PARTS
    from wildhold.world.parts.settlement import friendship

    def locked() -> bool:
        return any(part.recipe_locked(world, world.chars["a1"], "cloth_from_fiber") for part in PARTS)

    assert locked()
    apply_setup(world, "set_friendship", {"agent": "a1", "npc": "ines", "level": 3})
    assert friendship(world, "a1", "ines")[1] == 3
    assert [e[2] for e in world.events.drain()][-2:] == ["friendship_level", "setup"]
    assert not locked()


def test_unlock_tier_opens_it_and_every_tier_before(world):
    from wildhold.world.parts.dungeon import unlocked_tiers

    assert unlocked_tiers(world, "a1") == [1]
    apply_setup(world, "unlock_tier", {"agent": "a1", "tier": 3})
    assert unlocked_tiers(world, "a1") == [1, 2, 3]


def test_plant_crop_puts_a_grown_crop_on_a_new_plot_and_refuses_a_taken_tile(world):
    from wildhold.world.parts.farming import farm, is_mature

    soil = world.content.farming.soil
    p = next(q for q in range(world.width * world.height) if world.terrain_names[world.terrain[q]] in soil
             and q not in world.nodes and q not in world.structures)
    x, y = world.xy(p)
    spec = world.content.crops["wheat"]
    apply_setup(world, "plant_crop", {"agent": "a1", "x": x, "y": y, "crop": "wheat", "stage": len(spec.stage_days)})
    plot = farm(world).plots[p]
    assert (plot.owner, plot.crop) == ("a1", "wheat") and is_mature(spec, plot.growth)
    before = state_hash(world)
    with pytest.raises(SetupError) as err:
        apply_setup(world, "plant_crop", {"agent": "a1", "x": x, "y": y, "crop": "turnip"})
    assert err.value.code == "occupied" and state_hash(world) == before


def test_set_day_weather_clears_the_days_rain_so_a_crop_can_be_watered(world):
    from wildhold.world.parts.farming import farm, watered_today

    apply_setup(world, "set_day_weather", {"weather": "rain"})
    assert farm(world).rain_day == world.day
    apply_setup(world, "set_weather", {"weather": "clear"})
    assert farm(world).rain_day == world.day  # a plain change of weather leaves the rain the day had
    soil = world.content.farming.soil
    p = next(q for q in range(world.width * world.height) if world.terrain_names[world.terrain[q]] in soil
             and q not in world.nodes and q not in world.structures)
    x, y = world.xy(p)
    apply_setup(world, "plant_crop", {"agent": "a1", "x": x, "y": y, "crop": "wheat"})
    assert watered_today(world, farm(world).plots[p])
    apply_setup(world, "set_day_weather", {"weather": "clear"})
    assert farm(world).rain_day is None and not watered_today(world, farm(world).plots[p])


def test_place_structure_damaged_records_hp_only_when_given(world):
    p, q = _free_tile(world), None
    x, y = world.xy(p)
    apply_setup(world, "place_structure", {"x": x, "y": y, "structure": "wall", "hp": 10})
    assert world.structures[p].hp == 10
    q = _free_tile(world)
    apply_setup(world, "place_structure", {"x": world.xy(q)[0], "y": world.xy(q)[1], "structure": "wall"})
    assert world.structures[q].hp == world.content.structures["wall"].hp
    setups = [orjson.loads(e[3])["data"] for e in world.events.drain() if e[2] == "setup"]
    assert [("hp" in s["args"]) for s in setups[-2:]] == [True, False]


def test_stage_enemy_puts_it_first_in_the_next_instance_only(world):
    from wildhold.world.parts.dungeon import _new_instance, state

    apply_setup(world, "stage_enemy", {"agent": "a1", "tier": 1, "enemy": "cultist"})
    saved = state(world).dump()
    assert saved["staged"] == [["a1", [[1, "cultist"]]]]
    first = _new_instance(world, "a1", 1)
    assert [room[0].kind for room in first.rooms[:-1]] == ["cultist"] * (len(first.rooms) - 1)
    assert state(world).staged == {} and "staged" not in state(world).dump()
    state(world).load(saved)
    assert state(world).staged == {"a1": {1: "cultist"}}
