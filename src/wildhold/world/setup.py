"""Setup commands: prepare a state for tests, scenarios and tasks. Never reachable by an agent.

Each command checks everything before it changes anything, emits the ordinary events of what it
changed, then a `setup` event naming itself; a replay re-applies it from the input log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wildhold.world.parts.dungeon import state as dungeon_state
from wildhold.world.parts.farming import Plot, farm
from wildhold.world.parts.settlement import _set_points
from wildhold.world.state import Node
from wildhold.world.world import SETUP_EVENT

if TYPE_CHECKING:
    from wildhold.world.world import World


class SetupError(ValueError):
    """A setup command that cannot apply; the world is unchanged."""

    def __init__(self, code: str, message: str):
        self.code, self.message = code, message
        super().__init__(f"{code}: {message}")


class SetupArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentItems(SetupArgs):
    agent: str
    item: str
    qty: int = Field(default=1, ge=1)


class Agent(SetupArgs):
    agent: str


class SetTime(SetupArgs):
    day: int = Field(ge=1)
    hour: int = Field(ge=0, le=23)
    minute: int = Field(default=0, ge=0, le=59)


class SetWeather(SetupArgs):
    weather: str


class SetDayWeather(SetupArgs):
    weather: str


class PlaceStructure(SetupArgs):
    x: int
    y: int
    structure: str
    owner: str | None = None
    hp: int | None = Field(default=None, ge=1)  # placed damaged, with this many hit points (to be repaired)
    recorded_when_set: ClassVar[tuple[str, ...]] = ("hp",)


class StageEnemy(SetupArgs):
    agent: str
    tier: int
    enemy: str


class PlaceResource(SetupArgs):
    x: int
    y: int
    node: str
    amount: int | None = Field(default=None, ge=0)


class MoveCharacter(SetupArgs):
    agent: str
    x: int
    y: int


class SetNeeds(SetupArgs):
    agent: str
    health: int | None = None
    energy: int | None = None
    satiety: int | None = None


class SetSeason(SetupArgs):
    season: str
    hour: int = Field(default=8, ge=0, le=23)


class SetFriendship(SetupArgs):
    agent: str
    npc: str
    level: int = Field(ge=0)


class UnlockTier(SetupArgs):
    agent: str
    tier: int = Field(ge=1)


class PlantCrop(SetupArgs):
    agent: str
    x: int
    y: int
    crop: str
    stage: int = Field(default=0, ge=0)


class BeginTask(SetupArgs):
    agent: str
    task: str = Field(min_length=1, max_length=200)
    repeat: int = Field(ge=0)
    player: str = Field(min_length=1, max_length=200)
    error: str | None = Field(default=None, max_length=2000)
    recorded_when_set: ClassVar[tuple[str, ...]] = ("error",)


@dataclass(frozen=True)
class SetupDef:
    name: str
    args: type[SetupArgs]
    doc: str
    apply: Callable[["World", Any], None]


def _char(w: World, agent: str):
    c = w.chars.get(agent)
    if c is None:
        raise SetupError("unknown_agent", f"No character has id {agent!r}.")
    return c


def _tile(w: World, x: int, y: int) -> int:
    p = w.pos(x, y)
    if p is None:
        raise SetupError("out_of_bounds", f"({x}, {y}) is outside the map.")
    return p


def _known(table: dict, kind: str, name: str) -> None:
    if name not in table:
        raise SetupError(f"unknown_{kind}", f"There is no {kind} {name!r}.")


def give_items(w: World, a: AgentItems) -> None:
    _char(w, a.agent)
    _known(w.content.items, "item", a.item)
    w.give(a.agent, a.item, a.qty, "setup")


def take_items(w: World, a: AgentItems) -> None:
    c = _char(w, a.agent)
    _known(w.content.items, "item", a.item)
    if c.inventory.get(a.item, 0) < a.qty:
        raise SetupError("not_in_inventory", f"{a.agent} carries fewer than {a.qty} {a.item}.")
    w.take(a.agent, a.item, a.qty, "setup")


def begin_task(w: World, a: BeginTask) -> None:
    """Changes nothing: its event puts in the chained log which task begins here, for which character, repeat and
    player (and why its set-up failed, if it did), so that a task's result is read from the log, not a label."""
    _char(w, a.agent)


def empty_pack(w: World, a: Agent) -> None:
    c = _char(w, a.agent)
    for item, qty in sorted(c.inventory.items()):
        w.take(a.agent, item, qty, "setup")


def set_time(w: World, a: SetTime) -> None:
    tick = (a.day - 1) * w.calendar.ticks_per_day + a.hour * 60 + a.minute
    if tick < w.tick:
        raise SetupError("time_backwards", f"Tick {tick} is before the current tick {w.tick}; time only moves forward.")
    skipped = [t for t in w.regrow_due if t <= tick]
    for t in sorted(skipped):
        w.regrow_due.setdefault(tick + 1, []).extend(w.regrow_due.pop(t))
        for p in w.regrow_due[tick + 1]:
            if w.nodes.get(p) is not None and w.nodes[p].regrow_at is not None and w.nodes[p].regrow_at <= tick:
                w.nodes[p].regrow_at = tick + 1
    w.tick = tick


def set_season(w: World, a: SetSeason) -> None:
    seasons, length = w.calendar.seasons, w.calendar.days_per_season
    if a.season not in seasons:
        raise SetupError("unknown_season", f"There is no season {a.season!r}; seasons are {', '.join(seasons)}.")
    day = w.day
    while seasons[((day - 1) // length) % len(seasons)] != a.season or (day - 1) * w.calendar.ticks_per_day + a.hour * 60 < w.tick:
        day += 1
    set_time(w, SetTime(day=day, hour=a.hour))


def set_friendship(w: World, a: SetFriendship) -> None:
    _char(w, a.agent)
    _known(w.content.npcs, "npc", a.npc)
    social = w.content.social
    if a.level > social.max_level:
        raise SetupError("bad_level", f"Friendship levels run from 0 to {social.max_level}; {a.level} is beyond them.")
    _set_points(w, a.agent, a.npc, a.level * social.points_per_level)


def unlock_tier(w: World, a: UnlockTier) -> None:
    _char(w, a.agent)
    levels = sorted(t.level for t in w.content.dungeon.tiers.values())
    if a.tier not in levels:
        raise SetupError("unknown_tier", f"There is no dungeon tier {a.tier}; tiers are {', '.join(map(str, levels))}.")
    cleared = dungeon_state(w).cleared.setdefault(a.agent, [])
    cleared[:] = sorted({*cleared, *(t for t in levels if t < a.tier)})
    if not cleared:
        del dungeon_state(w).cleared[a.agent]


def stage_enemy(w: World, a: StageEnemy) -> None:
    _char(w, a.agent)
    tiers = {t.level: t for t in w.content.dungeon.tiers.values()}
    if a.tier not in tiers:
        raise SetupError("unknown_tier", f"There is no dungeon tier {a.tier}; tiers are {', '.join(map(str, sorted(tiers)))}.")
    if a.enemy not in tiers[a.tier].enemies:
        raise SetupError("unknown_enemy", f"Tier {a.tier}'s rooms hold {', '.join(tiers[a.tier].enemies)}; not {a.enemy!r}.")
    dungeon_state(w).staged.setdefault(a.agent, {})[a.tier] = a.enemy


def plant_crop(w: World, a: PlantCrop) -> None:
    _char(w, a.agent)
    p = _tile(w, a.x, a.y)
    _known(w.content.crops, "crop", a.crop)
    spec = w.content.crops[a.crop]
    if a.stage > len(spec.stage_days):
        raise SetupError("bad_stage", f"{a.crop} has stages 0 to {len(spec.stage_days)} (ripe); {a.stage} is beyond them.")
    terrain = w.terrain_names[w.terrain[p]]
    if terrain not in w.content.farming.soil:
        raise SetupError("not_soil", f"({a.x}, {a.y}) is {terrain}; crops grow only on {', '.join(w.content.farming.soil)}.")
    if p in farm(w).plots or p in w.structures or p in w.nodes:
        raise SetupError("occupied", f"({a.x}, {a.y}) already holds a plot, a structure or a node.")
    farm(w).plots[p] = Plot(a.agent, a.crop, sum(spec.stage_days[: a.stage]))
    w.emit("plot_tilled", agent=a.agent, x=a.x, y=a.y)
    w.emit("crop_planted", agent=a.agent, x=a.x, y=a.y, crop=a.crop)


def set_weather(w: World, a: SetWeather) -> None:
    _known(w.calendar.weathers, "weather", a.weather)
    w.weather = a.weather


def set_day_weather(w: World, a: SetDayWeather) -> None:
    _known(w.calendar.weathers, "weather", a.weather)
    f, s = w.content.farming, farm(w)
    w.weather = a.weather
    # the day is as if this weather had held since its start: rain (or a storm) it no longer had is forgotten
    s.rain_day = w.day if a.weather in f.rain_waters else (None if s.rain_day == w.day else s.rain_day)
    s.storm_day = w.day if a.weather in f.storm_weathers else (None if s.storm_day == w.day else s.storm_day)


def place_structure(w: World, a: PlaceStructure) -> None:
    p = _tile(w, a.x, a.y)
    _known(w.content.structures, "structure", a.structure)
    if a.owner is not None:
        _char(w, a.owner)
    if p in w.structures or p in w.nodes:
        raise SetupError("occupied", f"({a.x}, {a.y}) already holds a structure or node.")
    full = w.content.structures[a.structure].hp
    if a.hp is not None and a.hp > full:
        raise SetupError("bad_hp", f"A {a.structure} has at most {full} hit points; {a.hp} is beyond them.")
    placed = w.place_structure(p, a.structure, a.owner)
    if a.hp is not None and a.hp < full:
        placed.hp = a.hp
        w.emit("structure_damaged", x=a.x, y=a.y, structure=a.structure, owner=a.owner, damage=full - a.hp, hp=a.hp, by="setup")
    if a.owner is not None and w.content.structures[a.structure].bed:
        w.chars[a.owner].bed = p


def place_resource(w: World, a: PlaceResource) -> None:
    p = _tile(w, a.x, a.y)
    _known(w.content.nodes, "node", a.node)
    if p in w.structures or p in w.nodes:
        raise SetupError("occupied", f"({a.x}, {a.y}) already holds a structure or node.")
    amount = w.content.nodes[a.node].capacity if a.amount is None else a.amount
    w.nodes[p] = Node(a.node, amount)
    w.touched(p)
    w.emit("node_placed", x=a.x, y=a.y, node=a.node, amount=amount, source="setup")


def move_character(w: World, a: MoveCharacter) -> None:
    c = _char(w, a.agent)
    p = _tile(w, a.x, a.y)
    if not w.is_walkable(p):
        raise SetupError("not_walkable", f"({a.x}, {a.y}) cannot be stood on.")
    w.relocate(c, p)


def set_needs(w: World, a: SetNeeds) -> None:
    c = _char(w, a.agent)
    w.set_needs(
        c,
        "setup",
        c.health if a.health is None else a.health,
        c.energy if a.energy is None else a.energy,
        c.satiety if a.satiety is None else a.satiety,
    )


SETUP: dict[str, SetupDef] = {
    d.name: d
    for d in (
        SetupDef("give_items", AgentItems, "Give a character items.", give_items),
        SetupDef("take_items", AgentItems, "Take items a character carries.", take_items),
        SetupDef("empty_pack", Agent, "Take everything a character carries (what it started with too), so that a task asks it to come by what it needs.", empty_pack),
        SetupDef("set_time", SetTime, "Jump forward to a day and time (time never runs backwards).", set_time),
        SetupDef("set_season", SetSeason, "Jump forward to the first day of a season that is not past, at an hour (8 unless given).", set_season),
        SetupDef("set_friendship", SetFriendship, "Set a character's friendship with a villager to the start of a level.", set_friendship),
        SetupDef("unlock_tier", UnlockTier, "Open a dungeon tier to a character, as if it had defeated the bosses of the tiers before.", unlock_tier),
        SetupDef("plant_crop", PlantCrop, "Till a soil tile for a character and plant a crop there, grown to a stage (0 just sown).", plant_crop),
        SetupDef("set_weather", SetWeather, "Set today's weather.", set_weather),
        SetupDef("set_day_weather", SetDayWeather, "Set the weather today has had since it began: its rain waters today's crops only if it rains.", set_day_weather),
        SetupDef("stage_enemy", StageEnemy, "Make the first enemy of each ordinary room a character meets on its next entry into a tier this ordinary enemy of it.", stage_enemy),
        SetupDef("place_structure", PlaceStructure, "Put a structure on an empty tile, owned by a character or no one.", place_structure),
        SetupDef("place_resource", PlaceResource, "Put a resource node on an empty tile (full unless an amount is given).", place_resource),
        SetupDef("move_character", MoveCharacter, "Put a character on a walkable tile.", move_character),
        SetupDef("set_needs", SetNeeds, "Set a character's health, energy or satiety (clamped to the limits).", set_needs),
        SetupDef("begin_task", BeginTask, "Mark where a task begins: its id, repeat and player (and a failed set-up's "
                 "reason); its evaluator counts only what follows.", begin_task),
    )
}


def apply_setup(w: World, command: str, args: dict[str, Any]) -> None:
    """Apply one setup command, or raise SetupError before changing anything."""
    spec = SETUP.get(command)
    if spec is None:
        raise SetupError("unknown_command", f"There is no setup command {command!r}; known: {', '.join(SETUP)}.")
    try:
        parsed = spec.args.model_validate(args)
    except ValidationError as exc:
        raise SetupError("bad_arguments", f"{command}: {exc.errors()[0]['msg']}") from None
    spec.apply(w, parsed)
    # arguments added after a command was first recorded are written only when given, so older set-ups record as before
    unset = {k for k in getattr(parsed, "recorded_when_set", ()) if getattr(parsed, k) is None}
    w.emit(SETUP_EVENT, command=command, args=parsed.model_dump(mode="json", exclude=unset))
