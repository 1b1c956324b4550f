"""The content loader: shipped content loads, and every fault names its file and key."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from pydantic import ValidationError

from wildhold.content import ContentError, default_content, load_content
from wildhold.content.loader import DATA_DIR
from wildhold.world.actions import REGISTRY, check_registry
from wildhold.world.world import World


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped content files, free to edit."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def edit(data_dir: Path, file: str, change: Callable[[Any], None]) -> None:
    path = data_dir / file
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def load_fails(data_dir: Path) -> ContentError:
    with pytest.raises(ContentError) as info:
        load_content(data_dir)
    return info.value


# ---- the shipped content --------------------------------------------------------------------


def test_shipped_content_loads_and_matches_the_registry():
    content = load_content()
    assert content.items and content.recipes and content.nodes and content.structures
    assert {"default", "tiny"} <= set(content.scenarios)
    assert set(content.actions) == set(REGISTRY)
    check_registry(content)


def test_default_content_is_the_shipped_content_loaded_once():
    assert default_content() is default_content()
    assert default_content().digest == load_content().digest


def test_a_copy_of_the_data_has_the_same_digest(data_dir: Path):
    assert load_content(data_dir).digest == default_content().digest


def test_any_changed_byte_changes_the_digest(data_dir: Path):
    with (data_dir / "items.yaml").open("a") as f:
        f.write("\n# a comment\n")
    assert load_content(data_dir).digest != default_content().digest


def test_content_is_frozen():
    content = default_content()
    with pytest.raises(ValidationError):
        content.items["wood"].value_cents = 1  # type: ignore[misc]


def test_unknown_scenario_names_the_known_ones():
    with pytest.raises(ContentError) as info:
        default_content().scenario("nowhere")
    assert info.value.key == "nowhere"
    assert "default" in str(info.value) and "tiny" in str(info.value)


# ---- cross-references -----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["inputs", "outputs"])
def test_recipe_naming_an_unknown_item_fails_naming_file_and_key(data_dir: Path, field: str):
    edit(data_dir, "recipes.yaml", lambda d: d["wooden_axe"][field].update({"unobtainium": 1}))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("recipes.yaml", f"wooden_axe.{field}")
    assert "recipes.yaml" in str(err) and f"wooden_axe.{field}" in str(err) and "unobtainium" in str(err)


def test_recipe_at_a_structure_that_is_not_a_station_fails(data_dir: Path):
    edit(data_dir, "recipes.yaml", lambda d: d["wooden_axe"].update(station="bed"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("recipes.yaml", "wooden_axe.station")
    assert "not a station" in err.problem


def test_recipe_at_an_unknown_station_fails(data_dir: Path):
    edit(data_dir, "recipes.yaml", lambda d: d["wooden_axe"].update(station="anvil"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("recipes.yaml", "wooden_axe.station")
    assert "anvil" in err.problem


def test_node_requiring_a_tool_that_does_not_list_it_fails(data_dir: Path):
    edit(data_dir, "nodes.yaml", lambda d: d["tree"].update(requires_tool="sickle"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("nodes.yaml", "tree.requires_tool")
    assert "yield_bonus" in err.problem


def test_node_requiring_an_unknown_tool_fails(data_dir: Path):
    edit(data_dir, "nodes.yaml", lambda d: d["tree"].update(requires_tool="chainsaw"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("nodes.yaml", "tree.requires_tool")
    assert "chainsaw" in err.problem


def test_node_on_unknown_terrain_fails(data_dir: Path):
    edit(data_dir, "nodes.yaml", lambda d: d["tree"].update(terrain=["swamp"]))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("nodes.yaml", "tree.terrain")


def test_tool_bonus_for_an_unknown_node_fails(data_dir: Path):
    edit(data_dir, "items.yaml", lambda d: d["sickle"]["tool"]["yield_bonus"].update(cactus=1))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("items.yaml", "sickle.tool.yield_bonus")


def test_placeable_without_a_structure_fails(data_dir: Path):
    edit(data_dir, "items.yaml", lambda d: d["bed"].pop("places"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("items.yaml", "bed")


def test_tool_that_says_nothing_about_what_it_does_fails(data_dir: Path):
    edit(data_dir, "items.yaml", lambda d: d["sickle"].pop("tool"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("items.yaml", "sickle")


def test_scenario_start_item_must_exist(data_dir: Path):
    edit(data_dir, "scenarios/tiny.yaml", lambda d: d["start_items"].update(gold=3))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("scenarios/tiny.yaml", "start_items")


def test_night_must_start_within_the_day(data_dir: Path):
    edit(data_dir, "calendar.yaml", lambda d: d.update(night_start=d["ticks_per_day"]))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("calendar.yaml", "night_start")


# ---- malformed files and entries ------------------------------------------------------------


@pytest.mark.parametrize("file", ["items.yaml", "recipes.yaml", "needs.yaml"])
def test_malformed_yaml_fails_naming_the_file(data_dir: Path, file: str):
    (data_dir / file).write_text("wood: {description: [unclosed\n")
    err = load_fails(data_dir)
    assert err.file == file
    assert file in str(err) and "not valid YAML" in str(err)


def test_malformed_scenario_yaml_fails_naming_the_file(data_dir: Path):
    (data_dir / "scenarios" / "tiny.yaml").write_text("description: [unclosed\n")
    err = load_fails(data_dir)
    assert err.file == "scenarios/tiny.yaml"
    assert "not valid YAML" in str(err)


def test_a_table_that_is_not_a_mapping_fails(data_dir: Path):
    (data_dir / "items.yaml").write_text("- wood\n- stone\n")
    err = load_fails(data_dir)
    assert err.file == "items.yaml"
    assert "mapping" in err.problem


@pytest.mark.parametrize(
    ("file", "entry", "key"),
    [
        ("items.yaml", "wood", "wood.weight"),
        ("recipes.yaml", "wooden_axe", "wooden_axe.weight"),
        ("nodes.yaml", "tree", "tree.weight"),
        ("structures.yaml", "bed", "bed.weight"),
        ("creatures.yaml", "night_stalker", "night_stalker.weight"),
        ("actions.yaml", "gather", "gather.weight"),
    ],
)
def test_an_unknown_field_in_an_entry_fails_naming_file_and_key(data_dir: Path, file: str, entry: str, key: str):
    edit(data_dir, file, lambda d: d[entry].update(weight=3))
    err = load_fails(data_dir)
    assert (err.file, err.key) == (file, key)
    assert file in str(err) and key in str(err)


@pytest.mark.parametrize(("file", "key"), [("needs.yaml", "needs.weight"), ("scenarios/tiny.yaml", "tiny.weight")])
def test_an_unknown_field_in_a_single_file_fails(data_dir: Path, file: str, key: str):
    edit(data_dir, file, lambda d: d.update(weight=3))
    err = load_fails(data_dir)
    assert (err.file, err.key) == (file, key)


def test_a_wrong_type_fails_naming_the_field(data_dir: Path):
    edit(data_dir, "recipes.yaml", lambda d: d["wooden_axe"].update(duration="soon"))
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("recipes.yaml", "wooden_axe.duration")


# ---- content against the action registry ----------------------------------------------------


def test_a_registered_action_missing_from_actions_yaml_fails(data_dir: Path):
    edit(data_dir, "actions.yaml", lambda d: d.pop("gather"))
    content = load_content(data_dir)
    with pytest.raises(ContentError) as info:
        check_registry(content)
    assert (info.value.file, info.value.key) == ("actions.yaml", "gather")
    with pytest.raises(ContentError):
        World(content, "tiny", seed=0)


def test_an_unregistered_action_in_actions_yaml_fails_with_a_suggestion(data_dir: Path):
    edit(data_dir, "actions.yaml", lambda d: d.update(gathr={"duration": 1, "energy": 0}))
    with pytest.raises(ContentError) as info:
        check_registry(load_content(data_dir))
    assert (info.value.file, info.value.key) == ("actions.yaml", "gathr")
    assert "Did you mean 'gather'?" in str(info.value)


def test_a_table_merges_its_subsystem_files(data_dir: Path):
    (data_dir / "items").mkdir(exist_ok=True)
    (data_dir / "items" / "extra.yaml").write_text('relic: {description: "An old relic.", category: valuable, value_cents: 2500}\n')
    content = load_content(data_dir)
    assert content.items["relic"].value_cents == 2500 and "wood" in content.items


def test_an_entry_defined_in_two_files_names_both(data_dir: Path):
    (data_dir / "items").mkdir(exist_ok=True)
    (data_dir / "items" / "extra.yaml").write_text('wood: {description: "Again.", category: material}\n')
    err = load_fails(data_dir)
    assert (err.file, err.key) == ("items/extra.yaml", "wood")
    assert "already defined in items.yaml" in str(err)
