"""Frozen models of the rules as data; every number the world uses is read from these."""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PositiveInt, NonNegativeInt, model_validator


PACK = ("a content pack the entry belongs to: a random agent's draws over the whole catalogue leave packs out, so a pack "
        "added for the task suite never changes what the scripted scenarios play")


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(Spec):
    """What an item does when equipped in a slot."""

    slot: Literal["hand", "body"] = "hand"
    yield_bonus: dict[str, NonNegativeInt] = Field(default_factory=dict, description="node -> extra units per gather")
    damage: NonNegativeInt = Field(default=0, description="a weapon's strike damage in the dungeon (0: not a weapon)")
    defense: NonNegativeInt = Field(default=0, description="an armour's reduction of every enemy hit in the dungeon")


class ItemSpec(Spec):
    description: str
    category: Literal["material", "food", "tool", "placeable", "valuable", "consumable"]
    value_cents: NonNegativeInt = 0
    satiety: NonNegativeInt = 0
    health: int = 0
    energy: int = 0
    tool: ToolSpec | None = None
    places: str | None = Field(default=None, description="structure this item becomes when placed")
    pack: str | None = Field(default=None, description=PACK)


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


class BuildSpec(Spec):
    """Built in place from materials over ticks (walls, floors, doors, storehouses...)."""

    materials: dict[str, PositiveInt]
    duration: PositiveInt
    energy: NonNegativeInt


class RepairSpec(Spec):
    materials: dict[str, PositiveInt]
    hp: PositiveInt = Field(description="hit points restored by one repair")
    duration: PositiveInt
    energy: NonNegativeInt


class StructureSpec(Spec):
    description: str
    hp: PositiveInt
    walkable: bool
    shelter: bool = False
    station: bool = False
    bed: bool = False
    part: Literal["wall", "floor", "door", "chest", "storehouse", "workshop", "market_stall", "coop"] | None = Field(
        default=None, description="the building role this structure plays"
    )
    value_cents: NonNegativeInt = Field(default=0, description="wealth of an owned, intact structure (scaled by hp)")
    build: BuildSpec | None = None
    repair: RepairSpec | None = None
    demolish_refund: float = Field(default=0.5, ge=0, le=1, description="share of build materials returned, rounded down")
    lock_item: str | None = Field(default=None, description="item a door's owner uses up the first time it locks the door")


class RecipeSpec(Spec):
    kind: Literal["craft", "cook"]
    station: str | None = None
    inputs: dict[str, PositiveInt]
    outputs: dict[str, PositiveInt]
    duration: PositiveInt
    energy: NonNegativeInt
    pack: str | None = Field(default=None, description=PACK)


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


class CropSpec(Spec):
    description: str
    seed: str
    product: str
    yield_qty: PositiveInt
    stage_days: list[PositiveInt] = Field(min_length=1, description="days of watered growth each stage needs")
    seasons: list[str] = Field(min_length=1, description="seasons it grows in; out of season it dies")


class FarmingSpec(Spec):
    soil: list[str] = Field(min_length=1, description="terrain that can be tilled")
    till_tool: str
    water_tool: str
    fertilizer: str
    fertilized_growth_days: PositiveInt = Field(description="days of growth a fertilised crop gains per watered day")
    dry_days_to_wither: PositiveInt
    rain_waters: list[str] = Field(description="weathers that water every crop for the day they fall on")
    storm_weathers: list[str] = Field(description="weathers that may flatten mature crops standing through them")
    storm_damage_chance: float = Field(ge=0, le=1, description="chance a storm flattens an unharvested mature crop")
    coop_radius: PositiveInt = Field(description="an animal lives on a tile within this many tiles of a coop")


class AnimalSpec(Spec):
    description: str
    item: str = Field(description="the item that becomes this animal when settled beside a coop (settle_animal)")
    product: str
    product_qty: PositiveInt
    feed: str
    feed_qty: PositiveInt
    hungry_days_to_leave: PositiveInt


class ShopSpec(Spec):
    sells: dict[str, PositiveInt] = Field(default_factory=dict, description="item -> price in coins")
    buys: dict[str, PositiveInt] = Field(default_factory=dict, description="item -> price paid in coins")
    open_hours: tuple[int, int] = Field(default=(8, 18), description="[opens, closes]: open from the first hour up to the second (24 = midnight)")

    @model_validator(mode="after")
    def _hours(self) -> ShopSpec:
        opens, closes = self.open_hours
        if not (0 <= opens <= 23 and 1 <= closes <= 24 and opens != closes):
            raise ValueError("open_hours must be [opens 0..23, closes 1..24] and differ")
        return self


class ScheduleEntry(Spec):
    start_hour: int = Field(ge=0, le=23)
    place: str = Field(description="a named spot of the settlement: home, shop, square, board, ...")


class UnlockSpec(Spec):
    level: PositiveInt
    recipes: list[str] = Field(default_factory=list)
    discount_pct: int = Field(default=0, ge=0, le=90)


NPC_LINES = ("greeting", "friend", "gift_loved", "gift_liked", "gift_neutral", "gift_disliked", "closed")


class NpcSpec(Spec):
    description: str
    role: str
    personality: str
    schedule: list[ScheduleEntry] = Field(min_length=1)
    shop: ShopSpec | None = None
    loves: list[str] = Field(default_factory=list)
    likes: list[str] = Field(default_factory=list)
    dislikes: list[str] = Field(default_factory=list)
    lines: dict[str, list[str]] = Field(description="situation -> lines it may say (greeting, gift_loved, ...)")
    unlocks: list[UnlockSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _complete(self) -> NpcSpec:
        missing = [k for k in NPC_LINES if not self.lines.get(k)]
        if missing:
            raise ValueError(f"lines needs at least one line for each of: {', '.join(missing)}")
        hours = [e.start_hour for e in self.schedule]
        if len(set(hours)) != len(hours):
            raise ValueError("schedule has two entries starting at the same hour")
        return self


class SocialSpec(Spec):
    talk_points: NonNegativeInt
    gift_points: dict[Literal["loved", "liked", "neutral", "disliked"], int]
    points_per_level: PositiveInt
    max_level: PositiveInt
    gifts_per_day: PositiveInt
    message_max_chars: PositiveInt
    board_max_posts: PositiveInt
    say_radius: PositiveInt
    places: dict[str, tuple[int, int]] = Field(description="named settlement spots as offsets from its centre")
    friend_line_level: PositiveInt = Field(description="friendship level from which a villager answers a talk with its friend lines")

    @model_validator(mode="after")
    def _levels(self) -> SocialSpec:
        if self.friend_line_level > self.max_level:
            raise ValueError("friend_line_level must not exceed max_level")
        return self


class QuestSpec(Spec):
    description: str
    kind: Literal["deliver", "gather", "hunt"]
    issuers: list[str] = Field(min_length=1, description="NPCs that post it")
    items: list[str] = Field(default_factory=list, description="items it may ask for (deliver, gather)")
    targets: list[str] = Field(default_factory=list, description="creatures it may ask to hunt")
    qty: tuple[PositiveInt, PositiveInt]
    reward_coins: tuple[NonNegativeInt, NonNegativeInt]
    friendship: NonNegativeInt
    days: PositiveInt = Field(description="days to complete once accepted")

    @model_validator(mode="after")
    def _ranges(self) -> QuestSpec:
        if self.qty[0] > self.qty[1] or self.reward_coins[0] > self.reward_coins[1]:
            raise ValueError("qty and reward_coins are [low, high] ranges with low <= high")
        if self.kind == "hunt" and not self.targets:
            raise ValueError("a hunt quest names its targets")
        if self.kind != "hunt" and not self.items:
            raise ValueError(f"a {self.kind} quest names its items")
        return self


class QuestBoardSpec(Spec):
    posts_per_day: PositiveInt
    max_active_per_character: PositiveInt
    kinds: list[Literal["deliver", "gather"]] = Field(
        min_length=1, description="quest kinds the board draws; hunt quests join once creatures can be defeated"
    )


class AttributeSpec(Spec):
    description: str
    max_level: PositiveInt
    train_ticks: PositiveInt = Field(description="ticks of training at a workshop per level")
    energy: NonNegativeInt
    coins_per_level: NonNegativeInt = 0
    yield_bonus: dict[str, NonNegativeInt] = Field(default_factory=dict, description="node -> extra units per level")
    damage_bonus: NonNegativeInt = 0


class EconomySpec(Spec):
    coin: str = Field(description="the item used as money")
    trade_max_ticks: PositiveInt
    contract_max_ticks: PositiveInt
    market_max_orders: PositiveInt
    reputation_trade: int
    reputation_contract: int
    reputation_default: int
    reputation_raid: int
    artwork_item: str
    artwork_materials: dict[str, PositiveInt]
    artwork_duration: PositiveInt
    artwork_title_max: PositiveInt
    artwork_text_max: PositiveInt
    inbox_max_messages: PositiveInt = Field(description="messages a character's inbox keeps; older ones drop off")


class ConflictSpec(Spec):
    structure_damage: PositiveInt
    character_damage: PositiveInt
    attack_duration: PositiveInt
    attack_energy: NonNegativeInt
    loot_fraction: float = Field(ge=0, le=1, description="share of each stack a raider takes from a character it knocks down")
    rubble_fraction: float = Field(ge=0, le=1, description="share of a destroyed structure's build materials left on its tile")


class WealthSpec(Spec):
    """Weights of the public wealth formula (seed 003), in cents so exact ties are exact."""

    reputation_cents: int
    attribute_level_cents: int


class EnemyMoveSpec(Spec):
    """One tick of an enemy's pattern; a move that deals damage is announced the tick before it lands."""

    move: str
    text: str = Field(description="what the character sees the enemy do")
    damage: NonNegativeInt = 0
    vulnerable: bool = Field(default=False, description="strikes landing during this move deal vulnerable_damage_pct")


class EnemySpec(Spec):
    description: str
    hp: PositiveInt
    pattern: list[EnemyMoveSpec] = Field(min_length=2, description="moves the enemy cycles through, one per tick")

    @model_validator(mode="after")
    def _telegraphed(self) -> EnemySpec:
        for i, m in enumerate(self.pattern):
            if m.damage and self.pattern[i - 1].damage:
                raise ValueError(f"pattern move {i} ({m.move}) deals damage right after another damaging move; put a telegraph move before it")
        return self


class DropSpec(Spec):
    chance: float = Field(ge=0, le=1)
    qty: tuple[PositiveInt, PositiveInt]

    @model_validator(mode="after")
    def _range(self) -> DropSpec:
        if self.qty[0] > self.qty[1]:
            raise ValueError("qty is a [low, high] range with low <= high")
        return self


class TierSpec(Spec):
    level: PositiveInt = Field(description="1 for the first tier; tier n+1 opens once tier n's boss is defeated")
    description: str
    rooms: PositiveInt = Field(description="rooms of ordinary enemies before the boss room")
    enemies_per_room: tuple[PositiveInt, PositiveInt]
    enemies: dict[str, PositiveInt] = Field(min_length=1, description="enemy kind -> relative weight when a room is filled")
    boss: str
    coins: tuple[NonNegativeInt, NonNegativeInt] = Field(description="T-coins given when the boss falls: [low, high]")
    drops: dict[str, DropSpec] = Field(default_factory=dict, description="item -> chance and quantity given when the boss falls")

    @model_validator(mode="after")
    def _ranges(self) -> TierSpec:
        if self.enemies_per_room[0] > self.enemies_per_room[1] or self.coins[0] > self.coins[1]:
            raise ValueError("enemies_per_room and coins are [low, high] ranges with low <= high")
        return self


class ShadowKingSpec(Spec):
    tier: str = Field(description="the tier whose cleared boss room holds the altar")
    enemy: str
    reward: dict[str, PositiveInt]


class DungeonSpec(Spec):
    coin: str = Field(description="the item T-coins are")
    unarmed_damage: PositiveInt = Field(description="strike damage with no weapon in hand")
    guard_reduction_pct: int = Field(ge=0, le=100, description="share of a hit's damage (after armour) a guard removes")
    vulnerable_damage_pct: int = Field(ge=100, description="strike damage, in percent, against an enemy in a vulnerable move")
    tiers: dict[str, TierSpec] = Field(min_length=1)
    shadow_king: ShadowKingSpec
    usable_inside: list[str] = Field(
        default_factory=list, description="actions besides the dungeon's own that a character may take inside"
    )

    @model_validator(mode="after")
    def _levels(self) -> DungeonSpec:
        if [t.level for t in self.tiers.values()] != list(range(1, len(self.tiers) + 1)):
            raise ValueError("tiers must be listed in order with levels 1, 2, 3, ...")
        if self.shadow_king.tier not in self.tiers:
            raise ValueError(f"shadow_king.tier: unknown tier '{self.shadow_king.tier}'")
        return self


# The trial's stages and each stage's requirements, in order (seed 000, Table 1). The code checks
# these keys; trial.yaml gives them names and the sentences trial_info shows.
TRIAL_STAGES: dict[str, tuple[str, ...]] = {
    "foothold": ("survival_day", "bed", "crafted_equipment"),
    "self_sufficiency": ("cooking", "bed", "crafted_equipment", "weapon_and_armour", "night_without_damage"),
    "home": ("locked_home",),
    "outer_court": ("solo_clear",),
    "inner_temple": ("solo_clear",),
    "steadiness": ("steady_clear",),
    "royal_tomb": ("solo_clear", "streak"),
    "hero": ("shadow_king",),
}


class TrialStageSpec(Spec):
    name: str
    requirements: dict[str, str] = Field(description="requirement key -> the sentence trial_info shows; {numbers} are filled from trial.yaml")


class TrialSpec(Spec):
    """The eight-stage trial and the production task's recipe. Revealed by trial_info, never by the rules document."""

    survival_ticks: PositiveInt = Field(description="Foothold: ticks in a row without a knockdown")
    streak_days: PositiveInt = Field(description="Royal Tomb: days in a row without a knockdown")
    home_min_area: PositiveInt = Field(description="Home: floor tiles of the locked home")
    steadiness_max_damage: NonNegativeInt
    steadiness_max_consumables: NonNegativeInt
    steadiness_tiers: list[PositiveInt] = Field(min_length=1)
    stage_tiers: dict[Literal["outer_court", "inner_temple", "royal_tomb"], PositiveInt] = Field(description="the dungeon tier each expedition stage needs")
    cooking_stations: list[str] = Field(min_length=1, description="a food recipe made at one of these counts as cooking")
    outfit_recipe: str = Field(description="the recipe whose completed operation is the production task")
    progress_rule: str = Field(description="how the stages add up to trial progress (the native cumulative rule)")
    stages: dict[str, TrialStageSpec]

    @model_validator(mode="after")
    def _stages(self) -> TrialSpec:
        if list(self.stages) != list(TRIAL_STAGES):
            raise ValueError(f"stages must be, in order: {', '.join(TRIAL_STAGES)}")
        for name, stage in self.stages.items():
            if list(stage.requirements) != list(TRIAL_STAGES[name]):
                raise ValueError(f"stages.{name}.requirements must be, in order: {', '.join(TRIAL_STAGES[name])}")
        if len(self.stage_tiers) != 3:
            raise ValueError("stage_tiers names outer_court, inner_temple and royal_tomb")
        return self

    @functools.cached_property
    def _numbers(self) -> dict[str, object]:
        return self.numbers()

    def numbers(self) -> dict[str, object]:
        """The values a requirement sentence may name as {field}; a list reads "a or b"."""
        out: dict[str, object] = {}
        for k, v in self.model_dump().items():
            if k != "stages":
                out[k] = " or ".join(str(x) for x in v) if isinstance(v, list) else v
        return out | {f"{k}_tier": v for k, v in self.stage_tiers.items()}

    def requirement(self, stage: str, key: str) -> str:
        return self.stages[stage].requirements[key].format(**self._numbers)  # content is frozen: built once


class ProgramsSpec(Spec):
    """Agent-written programs: how many, how large, and the budgets and limits every program runs under."""

    max_programs_per_agent: PositiveInt = Field(description="distinct program names one character may save")
    max_running_per_agent: PositiveInt = Field(description="programs one character may have running or waiting at once")
    max_revisions: PositiveInt = Field(description="revisions one program may have; every save is a new revision")
    max_source_bytes: PositiveInt = Field(description="the largest program source, in UTF-8 bytes")
    max_start_args_bytes: PositiveInt = Field(description="the largest start arguments of a run, as JSON bytes")
    host_calls_per_turn: PositiveInt = Field(description="world calls one program may make in one turn (one tick)")
    actions_per_tick: PositiveInt = Field(description="actions one program may submit in one turn")
    sleep_max_ticks: PositiveInt = Field(description="the furthest ahead sleep_until may wait")
    log_lines: PositiveInt = Field(description="lines kept in each program's log ring buffer")
    log_line_chars: PositiveInt = Field(description="a longer log line is cut to this many characters")
    max_memory_bytes: PositiveInt = Field(description="the interpreter heap of one program")
    max_recursion_depth: PositiveInt
    max_state_bytes: PositiveInt = Field(description="the saved state of a paused program (its snapshot)")
    call_wall_s: float = Field(gt=0, description="wall-clock seconds a program may compute between two world calls")
    turn_wall_s: float = Field(gt=0, description="wall-clock seconds one turn may take in all: the safety net")
    check_wall_s: float = Field(gt=0, description="wall-clock seconds a save's check may run the program's code")
    runner_workers: PositiveInt = Field(description="interpreter processes the runner keeps")
    runner_reply_grace_s: float = Field(gt=0, description="how long past a limit the world waits for the runner")
    frozen_clock: AwareDatetime = Field(description="the instant datetime and time report inside a program")

    @model_validator(mode="after")
    def _walls(self) -> ProgramsSpec:
        if self.call_wall_s > self.turn_wall_s:
            raise ValueError("call_wall_s may not exceed turn_wall_s")
        if self.actions_per_tick > self.host_calls_per_turn:
            raise ValueError("actions_per_tick may not exceed host_calls_per_turn")
        return self


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
    conflict: bool = Field(default=False, description="characters may raid structures and attack each other outside the settlement")
    npcs: bool = True
    settlement: SettlementSpec
