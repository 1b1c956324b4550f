"""Frozen models of the rules as data; every number the world uses is read from these."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, NonNegativeInt


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(Spec):
    """What an item does when equipped in a slot."""

    slot: Literal["hand", "body"] = "hand"
    yield_bonus: dict[str, NonNegativeInt] = Field(default_factory=dict, description="node -> extra units per gather")


class ItemSpec(Spec):
    description: str
    category: Literal["material", "food", "tool", "placeable", "valuable"]
    value_cents: NonNegativeInt = 0
    satiety: NonNegativeInt = 0
    health: int = 0
    energy: int = 0
    tool: ToolSpec | None = None
    places: str | None = Field(default=None, description="structure this item becomes when placed")


class TerrainSpec(Spec):
    description: str
    walkable: bool
    glyph: str = Field(min_length=1, max_length=1)
    safe: bool = Field(default=False, description="characters here count as sheltered")


class NodeSpec(Spec):
    description: str
    item: str
    base_yield: PositiveInt
    capacity: PositiveInt
    regrow_ticks: PositiveInt
    requires_tool: str | None = None
    terrain: list[str] = Field(min_length=1, description="terrain kinds the node grows on")
    density: float = Field(ge=0, le=1, description="chance per eligible tile at worldgen")


class StructureSpec(Spec):
    description: str
    hp: PositiveInt
    walkable: bool
    shelter: bool = False
    station: bool = False
    bed: bool = False


class RecipeSpec(Spec):
    kind: Literal["craft", "cook"]
    station: str | None = None
    inputs: dict[str, PositiveInt]
    outputs: dict[str, PositiveInt]
    duration: PositiveInt
    energy: NonNegativeInt


class ActionCost(Spec):
    duration: NonNegativeInt
    energy: NonNegativeInt


class NeedsSpec(Spec):
    """Character limits, decay and recovery; intervals are in ticks."""

    max_health: PositiveInt
    max_energy: PositiveInt
    max_satiety: PositiveInt
    satiety_decay_every: PositiveInt
    energy_decay_every: PositiveInt
    starving_damage: PositiveInt
    starving_damage_every: PositiveInt
    exhausted_damage: PositiveInt
    exhausted_damage_every: PositiveInt
    regen_every: PositiveInt
    regen_min_satiety: NonNegativeInt
    sleep_energy_per_tick: PositiveInt
    rest_energy_every: PositiveInt
    view_radius: PositiveInt
    reach: PositiveInt
    respawn_health: PositiveInt
    respawn_energy: PositiveInt
    respawn_satiety: PositiveInt
    knockdown_drop_fraction: float = Field(ge=0, le=1)
    max_sleep_ticks: PositiveInt
    max_wait_ticks: PositiveInt
    max_path_length: PositiveInt


class CalendarSpec(Spec):
    ticks_per_day: PositiveInt
    night_start: NonNegativeInt
    night_end: NonNegativeInt
    days_per_season: PositiveInt
    seasons: list[str] = Field(min_length=1)
    weathers: dict[str, PositiveInt] = Field(min_length=1, description="weather -> relative weight per day")


class CreatureSpec(Spec):
    description: str
    hostile: bool
    hp: PositiveInt
    damage: PositiveInt
    attack_every: PositiveInt
    move_every: PositiveInt
    sight: PositiveInt
    spawn_chance: float = Field(ge=0, le=1, description="per exposed character per tick at night")
    spawn_distance: PositiveInt
    max_per_character: PositiveInt
    nocturnal: bool = True


class RegionNames(Spec):
    first: list[str] = Field(min_length=4)
    second: list[str] = Field(min_length=4)


class SettlementSpec(Spec):
    radius: PositiveInt
    stations: list[str] = Field(default_factory=list)


class ScenarioSpec(Spec):
    description: str
    width: PositiveInt = 96
    height: PositiveInt = 96
    regions: PositiveInt = 9
    days: PositiveInt = 3
    agents: PositiveInt = 4
    policies: list[str] = Field(default_factory=lambda: ["producer", "survivor", "random", "producer"])
    start_items: dict[str, PositiveInt] = Field(default_factory=dict)
    start_hour: NonNegativeInt = 6
    node_density_scale: float = Field(default=1.0, gt=0)
    night_creatures: bool = True
    snapshot_every: PositiveInt = 720
    min_dungeon_distance: PositiveInt = 40
    settlement: SettlementSpec
