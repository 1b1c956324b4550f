"""Loads the content files into one frozen `Content` and checks every cross-reference."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from wildhold.content.models import (
    ActionCost,
    AnimalSpec,
    AttributeSpec,
    CalendarSpec,
    ConflictSpec,
    CreatureSpec,
    CropSpec,
    DungeonSpec,
    EconomySpec,
    EnemySpec,
    FarmingSpec,
    ItemSpec,
    NeedsSpec,
    NodeSpec,
    NpcSpec,
    ProgramsSpec,
    QuestBoardSpec,
    QuestSpec,
    RecipeSpec,
    RegionNames,
    ScenarioSpec,
    SocialSpec,
    StructureSpec,
    TerrainSpec,
    TrialSpec,
    WealthSpec,
)

DATA_DIR = Path(__file__).parent / "data"


class ContentError(ValueError):
    """A content file is malformed or names something that does not exist."""

    def __init__(self, file: str, key: str, problem: str):
        self.file, self.key, self.problem = file, key, problem
        super().__init__(f"{file}: {key}: {problem}")


class Content(BaseModel):
    model_config = ConfigDict(frozen=True)

    items: dict[str, ItemSpec]
    terrain: dict[str, TerrainSpec]
    nodes: dict[str, NodeSpec]
    structures: dict[str, StructureSpec]
    recipes: dict[str, RecipeSpec]
    actions: dict[str, ActionCost]
    needs: NeedsSpec
    calendar: CalendarSpec
    creatures: dict[str, CreatureSpec]
    crops: dict[str, CropSpec]
    animals: dict[str, AnimalSpec]
    npcs: dict[str, NpcSpec]
    quests: dict[str, QuestSpec]
    attributes: dict[str, AttributeSpec]
    regions: RegionNames
    farming: FarmingSpec
    social: SocialSpec
    questboard: QuestBoardSpec
    economy: EconomySpec
    conflict: ConflictSpec
    wealth: WealthSpec
    enemies: dict[str, EnemySpec]
    dungeon: DungeonSpec
    trial: TrialSpec
    programs: ProgramsSpec
    scenarios: dict[str, ScenarioSpec]
    digest: str

    def scenario(self, name: str) -> ScenarioSpec:
        try:
            return self.scenarios[name]
        except KeyError:
            known = ", ".join(sorted(self.scenarios))
            raise ContentError("scenarios", name, f"unknown scenario; known: {known}") from None


_TABLES: dict[str, type[BaseModel]] = {
    "items": ItemSpec,
    "terrain": TerrainSpec,
    "nodes": NodeSpec,
    "structures": StructureSpec,
    "recipes": RecipeSpec,
    "actions": ActionCost,
    "creatures": CreatureSpec,
    "crops": CropSpec,
    "animals": AnimalSpec,
    "npcs": NpcSpec,
    "quests": QuestSpec,
    "attributes": AttributeSpec,
    "enemies": EnemySpec,
}
_SINGLES: dict[str, type[BaseModel]] = {
    "needs": NeedsSpec,
    "calendar": CalendarSpec,
    "regions": RegionNames,
    "farming": FarmingSpec,
    "social": SocialSpec,
    "questboard": QuestBoardSpec,
    "economy": EconomySpec,
    "conflict": ConflictSpec,
    "wealth": WealthSpec,
    "trial": TrialSpec,
    "dungeon": DungeonSpec,
    "programs": ProgramsSpec,
}


def _read(path: Path, raw_texts: list[bytes], data_dir: Path) -> Any:
    name = path.relative_to(data_dir).as_posix()
    text = path.read_bytes()
    raw_texts.append(name.encode() + b"\0" + text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ContentError(name, "-", f"not valid YAML: {exc}") from None


def validated(file: str, key: str, model: type[BaseModel], raw: Any) -> Any:
    """`raw` as `model`, or a ContentError naming the file and the key (and field) at fault."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ContentError(file, ".".join(k for k in (key, where) if k) or "-", first["msg"]) from None


def read_side_file(path: Path, file: str, model: type[BaseModel]) -> Any:
    """A data file read apart from the rules' content (so the content digest does not depend on it), as `model`,
    or a ContentError naming the file and the key at fault."""
    try:
        raw: Any = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ContentError(file, "-", f"not valid YAML: {exc}") from None
    return validated(file, "", model, raw)


def _table_files(data_dir: Path, table: str) -> list[Path]:
    """A table is `<table>.yaml`, plus one file per subsystem in `<table>/`, merged by key."""
    files = [data_dir / f"{table}.yaml"] if (data_dir / f"{table}.yaml").exists() else []
    files += sorted((data_dir / table).glob("*.yaml"))
    if not files:
        raise ContentError(f"{table}.yaml", "-", "missing: every table needs a file")
    return files


def load_content(data_dir: Path = DATA_DIR) -> Content:
    """Read every content file under `data_dir`; raise `ContentError` naming file and key on any fault."""
    raw_texts: list[bytes] = []
    parts: dict[str, Any] = {}
    for table, model in _TABLES.items():
        entries: dict[str, Any] = {}
        origin: dict[str, str] = {}
        for path in _table_files(data_dir, table):
            file = path.relative_to(data_dir).as_posix()
            raw = _read(path, raw_texts, data_dir)
            if not isinstance(raw, dict):
                raise ContentError(file, "-", "expected a mapping of names to entries")
            for key, value in raw.items():
                if key in origin:
                    raise ContentError(file, key, f"already defined in {origin[key]}")
                origin[key] = file
                entries[key] = validated(file, key, model, value)
        parts[table] = entries
    for single, model in _SINGLES.items():
        file = f"{single}.yaml"
        parts[single] = validated(file, single, model, _read(data_dir / file, raw_texts, data_dir))
    scenarios = {}
    for path in sorted((data_dir / "scenarios").glob("*.yaml")):
        scenarios[path.stem] = validated(f"scenarios/{path.name}", path.stem, ScenarioSpec, _read(path, raw_texts, data_dir))
    parts["scenarios"] = scenarios
    parts["digest"] = hashlib.sha256(b"\1".join(sorted(raw_texts))).hexdigest()
    content = Content(**parts)
    check_references(content)
    return content


def check_references(c: Content) -> None:
    """Every name a content entry mentions must exist; the error names the file and key."""

    def need(file: str, key: str, kind: str, name: str | None, table: dict) -> None:
        if name is not None and name not in table:
            raise ContentError(file, key, f"unknown {kind} '{name}'")

    for name, item in c.items.items():
        need("items.yaml", f"{name}.places", "structure", item.places, c.structures)
        if item.category == "placeable" and item.places is None:
            raise ContentError("items.yaml", name, "a placeable item must name the structure it places")
        if item.tool:
            for node in item.tool.yield_bonus:
                need("items.yaml", f"{name}.tool.yield_bonus", "node", node, c.nodes)
        if item.category == "tool" and item.tool is None:
            raise ContentError("items.yaml", name, "a tool must say what it does (tool:)")
    for name, node in c.nodes.items():
        need("nodes.yaml", f"{name}.item", "item", node.item, c.items)
        need("nodes.yaml", f"{name}.requires_tool", "item", node.requires_tool, c.items)
        tool = c.items[node.requires_tool].tool if node.requires_tool else None
        if node.requires_tool and (tool is None or name not in tool.yield_bonus):
            raise ContentError("nodes.yaml", f"{name}.requires_tool", "that tool must list this node in its yield_bonus")
        for terrain in node.terrain:
            need("nodes.yaml", f"{name}.terrain", "terrain", terrain, c.terrain)
    for name, recipe in c.recipes.items():
        need("recipes.yaml", f"{name}.station", "structure", recipe.station, c.structures)
        if recipe.station and not c.structures[recipe.station].station:
            raise ContentError("recipes.yaml", f"{name}.station", f"'{recipe.station}' is not a station")
        for field in ("inputs", "outputs"):
            for item in getattr(recipe, field):
                need("recipes.yaml", f"{name}.{field}", "item", item, c.items)
    for file, scenario in c.scenarios.items():
        where = f"scenarios/{file}.yaml"
        for item in scenario.start_items:
            need(where, "start_items", "item", item, c.items)
        for station in scenario.settlement.stations:
            need(where, "settlement.stations", "structure", station, c.structures)
    _check_breadth(c, need)
    _check_trial(c, need)
    _check_dungeon(c, need)
    for required in ("meadow", "forest", "hills", "water", "sand", "settlement", "dungeon_entrance"):
        need("terrain.yaml", required, "terrain (the world generator needs it)", required, c.terrain)
    cal = c.calendar
    for key in ("night_start", "night_end"):
        if getattr(cal, key) >= cal.ticks_per_day:
            raise ContentError("calendar.yaml", key, "must be less than ticks_per_day")


def _check_breadth(c: Content, need) -> None:
    """Cross-references of construction, farming, the settlement and the economy."""
    for name, s in c.structures.items():
        need("structures", f"{name}.lock_item", "item", s.lock_item, c.items)
        for spec_name in ("build", "repair"):
            spec = getattr(s, spec_name)
            for item in (spec.materials if spec else {}):
                need("structures", f"{name}.{spec_name}.materials", "item", item, c.items)
    for name, crop in c.crops.items():
        need("crops.yaml", f"{name}.seed", "item", crop.seed, c.items)
        need("crops.yaml", f"{name}.product", "item", crop.product, c.items)
        for season in crop.seasons:
            if season not in c.calendar.seasons:
                raise ContentError("crops.yaml", f"{name}.seasons", f"unknown season '{season}'")
    f = c.farming
    for terrain in f.soil:
        need("farming.yaml", "soil", "terrain", terrain, c.terrain)
    for key in ("till_tool", "water_tool", "fertilizer"):
        need("farming.yaml", key, "item", getattr(f, key), c.items)
    for weather in f.rain_waters:
        need("farming.yaml", "rain_waters", "weather", weather, c.calendar.weathers)
    for name, animal in c.animals.items():
        for key in ("item", "product", "feed"):
            need("animals.yaml", f"{name}.{key}", "item", getattr(animal, key), c.items)
        need("animals.yaml", f"{name}.item", "structure (the placed animal)", c.items[animal.item].places, c.structures)
    for name, npc in c.npcs.items():
        for entry in npc.schedule:
            need("npcs.yaml", f"{name}.schedule", "place", entry.place, c.social.places)
        for key in ("loves", "likes", "dislikes"):
            for item in getattr(npc, key):
                need("npcs.yaml", f"{name}.{key}", "item", item, c.items)
        if npc.shop:
            for item in [*npc.shop.sells, *npc.shop.buys]:
                need("npcs.yaml", f"{name}.shop", "item", item, c.items)
        for unlock in npc.unlocks:
            for recipe in unlock.recipes:
                need("npcs.yaml", f"{name}.unlocks", "recipe", recipe, c.recipes)
    for name, quest in c.quests.items():
        for npc in quest.issuers:
            need("quests.yaml", f"{name}.issuers", "villager", npc, c.npcs)
        for item in quest.items:
            need("quests.yaml", f"{name}.items", "item", item, c.items)
        for creature in quest.targets:
            need("quests.yaml", f"{name}.targets", "creature", creature, c.creatures)
    for name, attr in c.attributes.items():
        for node in attr.yield_bonus:
            need("attributes.yaml", f"{name}.yield_bonus", "node", node, c.nodes)
    e = c.economy
    need("economy.yaml", "coin", "item", e.coin, c.items)
    need("economy.yaml", "artwork_item", "item", e.artwork_item, c.items)
    for item in e.artwork_materials:
        need("economy.yaml", "artwork_materials", "item", item, c.items)


def _check_dungeon(c: Content, need) -> None:
    """Cross-references of the dungeon: enemy kinds, drops, rewards, weapons and consumables."""
    d = c.dungeon
    need("dungeon.yaml", "coin", "item", d.coin, c.items)
    for name, tier in d.tiers.items():
        need("dungeon.yaml", f"tiers.{name}.boss", "enemy", tier.boss, c.enemies)
        for kind in tier.enemies:
            need("dungeon.yaml", f"tiers.{name}.enemies", "enemy", kind, c.enemies)
        for item in tier.drops:
            need("dungeon.yaml", f"tiers.{name}.drops", "item", item, c.items)
    need("dungeon.yaml", "shadow_king.enemy", "enemy", d.shadow_king.enemy, c.enemies)
    for item in d.shadow_king.reward:
        need("dungeon.yaml", "shadow_king.reward", "item", item, c.items)
    for name, item in c.items.items():
        if item.category == "consumable" and not (item.health or item.energy or item.satiety):
            raise ContentError("items", name, "a consumable must restore health, energy or satiety")


def _check_trial(c: Content, need) -> None:
    """The trial's recipe and stations exist, and its requirement sentences name only its numbers."""
    t = c.trial
    need("trial.yaml", "outfit_recipe", "recipe", t.outfit_recipe, c.recipes)
    for station in t.cooking_stations:
        need("trial.yaml", "cooking_stations", "structure", station, c.structures)
    numbers = t.numbers()
    for name, stage in t.stages.items():
        for key, text in stage.requirements.items():
            try:
                text.format(**numbers)
            except (KeyError, IndexError, ValueError) as exc:
                raise ContentError("trial.yaml", f"stages.{name}.requirements.{key}", f"names an unknown number {exc}") from None


@lru_cache(maxsize=1)
def default_content() -> Content:
    """The content shipped with the package, loaded once per process."""
    return load_content()
