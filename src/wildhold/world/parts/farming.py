"""Farming and animals: tilled plots and their crops, animals living beside coops, and the daily
growth, withering, storms, feeding and production that happen at each day start.

Water rule: a crop counts as watered for day D when someone waters it during D, or when the
weather is one of `farming.rain_waters` at day D's start or at any tick of D (the weather drawn at
D's midnight, or one a setup command sets later that day). At the midnight that ends D the crop
grows if it was watered for D; the weather drawn for the new day waters the new day only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Container

from pydantic import Field

from wildhold.content import ContentError
from wildhold.content.models import AnimalSpec, CropSpec
from wildhold.world.actions.registry import Target, did_you_mean, in_reach_of_kept, require_item, target
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import settings, table
from wildhold.world.parts.base import Part, Saved, Section, saved
from wildhold.world.readonly import freeze
from wildhold.world.state import Character, Operation, Structure

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.world import World

ANIMAL_HOLDER = "animal@"  # products wait in the container animal@<tile> until collected


# ---- state ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Plot:
    """A tilled tile; `crop` is None while it lies empty."""

    owner: str
    crop: str | None = None
    growth: int = 0
    watered_day: int | None = None
    dry_days: int = 0
    fertilised: bool = False


@dataclass(slots=True)
class Animal:
    kind: str
    owner: str
    fed_day: int | None = None
    hungry_days: int = 0


@dataclass(slots=True)
class FarmState(Saved):
    plots: dict[int, Plot] = saved("rows", dict, of=Plot)
    animals: dict[int, Animal] = saved("rows", dict, of=Animal)
    rain_day: int | None = saved("value")
    storm_day: int | None = saved("value")


def farm(w: World) -> FarmState:
    return FARMING.state(w)


# ---- rules ---------------------------------------------------------------------------------


def stage_of(spec: CropSpec, growth: int) -> int:
    """Stages completed after `growth` days of growth; `len(stage_days)` means ripe."""
    done, needed = 0, 0
    for days in spec.stage_days:
        needed += days
        if growth < needed:
            break
        done += 1
    return done


def is_mature(spec: CropSpec, growth: int) -> bool:
    return growth >= sum(spec.stage_days)


def watered_today(w: World, plot: Plot) -> bool:
    return plot.watered_day == w.day or farm(w).rain_day == w.day


def crop_for_seed(w: World, seed: str) -> str | None:
    return next((name for name, spec in w.content.crops.items() if spec.seed == seed), None)


def _animal_items(w: World) -> tuple[dict[str, str], str]:
    """Item -> the first animal (in content order) it is, and the animal items as a refusal names them: read once per
    world from its content (an action mask puts settle_animal to the check with whatever item is carried)."""
    held = w.kept.animal_items
    if held is None:
        kinds: dict[str, str] = {}
        for name, spec in w.content.animals.items():
            kinds.setdefault(spec.item, name)
        held = w.kept.animal_items = (kinds, ", ".join(a.item for a in w.content.animals.values()))
    return held


def animal_structure(w: World, spec: AnimalSpec) -> str:
    return w.content.items[spec.item].places  # type: ignore[return-value]  (checked at load)


def coop_near(w: World, p: int, owner: str) -> bool:
    """A standing coop within `coop_radius` of tile p, owned by `owner` or by no one."""
    r = w.content.farming.coop_radius
    x0, y0 = w.xy(p)
    structures, specs = w.structures, w.content.structures
    for y in range(y0 - r, y0 + r + 1):
        for x in range(x0 - r, x0 + r + 1):
            q = w.pos(x, y)
            s = structures.get(q) if q is not None and q != p else None
            if s is not None and specs[s.kind].part == "coop" and s.hp > 0 and s.owner in (None, owner):
                return True
    return False


def _covered(w: World, p: int) -> str | None:
    """What now covers a plot (built or placed over it), if anything: such a plot is lost at day start."""
    s = w.structures.get(p)
    if s is not None:
        return f"a {s.kind}"
    n = w.nodes.get(p)
    return f"a {n.kind}" if n is not None else None


def _holds(c: Character, tool: str) -> bool:
    """Whether the character holds the tool in hand: `_in_hand` refuses otherwise (a precondition asks it alone)."""
    return c.equipment.get("hand") == tool


def _in_hand(w: World, c: Character, tool: str, doing: str) -> Rejected | None:
    if _holds(c, tool):
        return None
    fix = f"equip your {tool} first" if c.inventory.get(tool) else f"you carry no {tool}"
    return Rejected("missing_tool", f"{doing} needs a {tool} equipped in hand; {fix}.")


def _hoe_in_hand(w: World, c: Character) -> Rejected | None:
    return _in_hand(w, c, w.content.farming.till_tool, "Tilling")


def _can_in_hand(w: World, c: Character) -> Rejected | None:
    return _in_hand(w, c, w.content.farming.water_tool, "Watering")


def _plot(w: World, c: Character, x: int, y: int) -> tuple[int, Plot] | Rejected:
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    plot = farm(w).plots.get(p)
    if plot is None:
        return Rejected("not_tilled", f"({x}, {y}) is not a tilled plot; till it with a {w.content.farming.till_tool} first.")
    cover = _covered(w, p)
    if cover:
        return Rejected("occupied", f"{cover} now stands on the plot at ({x}, {y}); the plot is lost at the next day start.")
    return p, plot


def _plot_ready(w: World, c: Character) -> str | None:
    """`_plot`'s refusal of every tile while no plot lies within reach."""
    # kept while farming emits no event: a plot is tilled or lost, an animal settles or leaves, only with one
    return None if in_reach_of_kept(w, c, "near_plots", w.part_changes[FARMING.name], farm(w).plots) else "not_tilled"


def _crop(w: World, c: Character, x: int, y: int) -> tuple[int, Plot, CropSpec] | Rejected:
    got = _plot(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, plot = got
    if plot.crop is None:
        return Rejected("not_planted", f"Nothing grows on the plot at ({x}, {y}); plant a seed there first.")
    return p, plot, w.content.crops[plot.crop]


def _growing(w: World, c: Character, x: int, y: int) -> tuple[int, Plot, CropSpec] | Rejected:
    """A planted crop that still needs care (not yet ripe)."""
    got = _crop(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    _, plot, spec = got
    if is_mature(spec, plot.growth):
        return Rejected("crop_mature", f"The {plot.crop} at ({x}, {y}) is ripe and needs no more care; harvest it.")
    return got


def _animal(w: World, c: Character, x: int, y: int) -> tuple[int, Animal, AnimalSpec] | Rejected:
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    a = farm(w).animals.get(p)
    s = w.structures.get(p)
    if a is None or s is None or s.kind != animal_structure(w, w.content.animals[a.kind]):
        return Rejected("no_animal", f"No animal lives at ({x}, {y}).")
    return p, a, w.content.animals[a.kind]


def _animal_ready(w: World, c: Character) -> str | None:
    """`_animal`'s refusal of every tile while no animal lives within reach."""
    return None if in_reach_of_kept(w, c, "near_animals", w.part_changes[FARMING.name], farm(w).animals) else "no_animal"


# ---- actions: crops ------------------------------------------------------------------------


def _till_plan(w: World, c: Character, x: int, y: int) -> int | Rejected:
    f = w.content.farming
    bad = _hoe_in_hand(w, c)
    if bad:
        return bad
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    terrain = w.terrain_names[w.terrain[p]]
    if terrain not in f.soil:
        return Rejected("not_soil", f"({x}, {y}) is {terrain}; only {', '.join(f.soil)} can be tilled.")
    if p in farm(w).plots:
        return Rejected("already_tilled", f"({x}, {y}) is already a tilled plot.")
    cover = _covered(w, p)
    if cover:
        return Rejected("occupied", f"{cover} stands on ({x}, {y}); till an empty tile.")
    return p


class Till:
    """Till a soil tile within reach (no structure, no resource node) into a plot you own. Needs the hoe equipped in hand.

    Only the plot's owner may plant on it and harvest it; anyone may water or fertilise its crop.
    """

    name, category = "till", "production"

    class Args(Target):
        pass

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if _holds(c, w.content.farming.till_tool) else "missing_tool"

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _till_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, p: Any) -> dict:
        x, y = op.args["x"], op.args["y"]
        farm(w).plots[p] = Plot(c.id)
        w.emit("plot_tilled", agent=c.id, x=x, y=y)
        return {"x": x, "y": y}


class PlantArgs(Target):
    seed: str = Field(description="A seed item you carry, e.g. wheat_seed.")


def _plant_plan(w: World, c: Character, x: int, y: int, seed: str) -> tuple[int, Plot, str] | Rejected:
    if seed not in w.content.items:
        return Rejected("unknown_item", f"There is no item {seed!r}.{did_you_mean(seed, w.content.items)}")
    crop = crop_for_seed(w, seed)
    if crop is None:
        seeds = ", ".join(s.seed for s in w.content.crops.values())
        return Rejected("not_a_seed", f"{seed} is not a seed; seeds are {seeds}.")
    bad = require_item(w, c, seed)
    if bad:
        return bad
    got = _plot(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, plot = got
    if plot.owner != c.id:
        return Rejected("not_plot_owner", f"The plot at ({x}, {y}) belongs to {plot.owner}; till your own.")
    if plot.crop is not None:
        return Rejected("already_planted", f"{plot.crop} already grows at ({x}, {y}); harvest it or plant elsewhere.")
    seasons = w.content.crops[crop].seasons
    if w.season not in seasons:
        return Rejected("out_of_season", f"{crop} grows only in {', '.join(seasons)}; it is {w.season} now (day {w.day}).")
    return p, plot, crop


class PlantSeed:
    """Plant a seed you carry on an empty plot you own within reach. The crop must be in season.

    A crop grows at each midnight that ends a day on which it was watered: by hand (water), or by
    the weather, when a weather in rain_waters held at that day's start or at any tick of it. The
    weather drawn at a midnight waters the day it starts, never the day that ended. Each watered
    day adds one day of growth (fertilized_growth_days once fertilised); the crop passes through its
    stages and is ripe after the sum of its stage_days. A growing crop that ends dry_days_to_wither
    days in a row unwatered withers; a ripe crop needs no water and waits for its harvest. Any crop
    dies at a midnight that finds the season outside its seasons, and a ripe crop that stood
    through a day of a weather in storm_weathers is flattened at the next midnight with
    storm_damage_chance. A plot that a structure or node comes to cover is lost at the next midnight.
    """

    name, category = "plant", "production"
    Args = PlantArgs
    ready = staticmethod(_plot_ready)

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _plant_plan(w, c, args["x"], args["y"], args["seed"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        x, y, seed = op.args["x"], op.args["y"], op.args["seed"]
        _, plot, crop = got
        w.take(c.id, seed, 1, f"plant:{crop}")
        plot.crop, plot.growth, plot.watered_day, plot.dry_days, plot.fertilised = crop, 0, None, 0, False
        w.emit("crop_planted", agent=c.id, x=x, y=y, crop=crop)
        return {"crop": crop, "x": x, "y": y}


def _water_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Plot, CropSpec] | Rejected:
    bad = _can_in_hand(w, c)
    if bad:
        return bad
    got = _growing(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    _, plot, _ = got
    if farm(w).rain_day == w.day:
        return Rejected("already_watered", f"It rained today ({w.weather}): every crop is watered for day {w.day}.")
    if plot.watered_day == w.day:
        return Rejected("already_watered", f"The {plot.crop} at ({x}, {y}) is already watered for day {w.day}.")
    return got


class Water:
    """Water a growing crop within reach for today; needs the watering can equipped in hand.

    A crop watered during a day (or rained on that day) grows at the next midnight. Not needed on
    a day of rain, nor for a ripe crop.
    """

    name, category = "water", "production"

    class Args(Target):
        pass

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return _plot_ready(w, c) if _holds(c, w.content.farming.water_tool) else "missing_tool"

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _water_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        x, y = op.args["x"], op.args["y"]
        _, plot, _ = got
        plot.watered_day = w.day
        w.emit("crop_watered", agent=c.id, x=x, y=y, crop=plot.crop, day=w.day)
        return {"crop": plot.crop, "day": w.day}


def _fertilise_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Plot, CropSpec] | Rejected:
    got = _growing(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    _, plot, _ = got
    if plot.fertilised:
        return Rejected("already_fertilised", f"The {plot.crop} at ({x}, {y}) is already fertilised; once per crop.")
    return require_item(w, c, w.content.farming.fertilizer) or got


class Fertilise:
    """Work one fertilizer you carry into a growing crop within reach (anyone's; once per crop).

    From then on each watered day counts fertilized_growth_days days of growth instead of one.
    """

    name, category = "fertilise", "production"
    ready = staticmethod(_plot_ready)

    class Args(Target):
        pass

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _fertilise_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        x, y = op.args["x"], op.args["y"]
        _, plot, _ = got
        w.take(c.id, w.content.farming.fertilizer, 1, f"fertilise:{plot.crop}")
        plot.fertilised = True
        w.emit("crop_fertilised", agent=c.id, x=x, y=y, crop=plot.crop)
        return {"crop": plot.crop}


def _harvest_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Plot, CropSpec] | Rejected:
    got = _crop(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    _, plot, spec = got
    if plot.owner != c.id:
        return Rejected("not_plot_owner", f"The {plot.crop} at ({x}, {y}) grows on {plot.owner}'s plot; only its owner harvests it.")
    if not is_mature(spec, plot.growth):
        return Rejected(
            "not_mature",
            f"The {plot.crop} at ({x}, {y}) is at stage {stage_of(spec, plot.growth)} of {len(spec.stage_days)}"
            f" with {plot.growth} of {sum(spec.stage_days)} growth days; keep it watered.",
        )
    return got


class Harvest:
    """Harvest a ripe crop on your plot within reach: you get its yield of product and the plot lies tilled and empty again."""

    name, category = "harvest", "production"
    ready = staticmethod(_plot_ready)

    class Args(Target):
        pass

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _harvest_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        x, y = op.args["x"], op.args["y"]
        _, plot, spec = got
        crop = plot.crop
        _clear(plot)
        w.give(c.id, spec.product, spec.yield_qty, f"harvest:{crop}")
        w.emit("crop_harvested", agent=c.id, x=x, y=y, crop=crop, item=spec.product, qty=spec.yield_qty)
        return {"item": spec.product, "qty": spec.yield_qty}


def _clear(plot: Plot) -> None:
    plot.crop, plot.growth, plot.watered_day, plot.dry_days, plot.fertilised = None, 0, None, 0, False


# ---- actions: animals ----------------------------------------------------------------------


class SettleArgs(Target):
    item: str = Field(description="An animal item you carry (chicken, sheep, cow).")


def _settle_plan(w: World, c: Character, item: str, x: int, y: int) -> tuple[int, str] | Rejected:
    bad = require_item(w, c, item)
    if bad:
        return bad
    kinds, animals = _animal_items(w)
    kind = kinds.get(item)
    if kind is None:
        return Rejected("not_an_animal", f"{item} is not an animal; animals are {animals}.")
    p = target(w, c, x, y)
    if isinstance(p, Rejected):
        return p
    if not w.walkable_terrain[w.terrain[p]] or p == w.dungeon:
        return Rejected("not_walkable", f"No animal can live on ({x}, {y}).")
    cover = _covered(w, p)
    if cover:
        return Rejected("occupied", f"{cover} stands on ({x}, {y}).")
    if p in farm(w).plots:
        return Rejected("occupied", f"({x}, {y}) is a tilled plot; settle the animal on untilled ground.")
    if animal_structure(w, w.content.animals[kind]) in w.blocking and p in w.occupants:
        return Rejected("occupied", f"A character stands on ({x}, {y}); the {kind} would block it.")
    if not coop_near(w, p, c.id):
        r = w.content.farming.coop_radius
        return Rejected("no_coop", f"No coop of yours (or unowned) stands within {r} tile of ({x}, {y}); build one beside it first.")
    return p, kind


class SettleAnimal:
    """Settle an animal you carry on an empty tile within reach that has a coop (yours or unowned) within coop_radius of it. You own the animal.

    Feed it each day (feed): at the next midnight it leaves its product waiting for you to collect.
    An animal hungry hungry_days_to_leave midnights in a row, or left without a coop, leaves for good.
    """

    name, category = "settle_animal", "construction"
    Args = SettleArgs

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _settle_plan(w, c, args["item"], args["x"], args["y"])

    @staticmethod
    def sift(w: World, c: Character) -> dict[str, Container[Any]]:
        """The items that are animals."""
        return {"item": _animal_items(w)[0]}

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        item, x, y = op.args["item"], op.args["x"], op.args["y"]
        p, kind = got
        w.take(c.id, item, 1, "settle_animal")
        w.place_structure(p, animal_structure(w, w.content.animals[kind]), c.id)
        farm(w).animals[p] = Animal(kind, c.id)
        w.emit("animal_settled", agent=c.id, x=x, y=y, animal=kind)
        return {"animal": kind, "x": x, "y": y}


def _feed_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Animal, AnimalSpec] | Rejected:
    got = _animal(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    _, a, spec = got
    if a.fed_day == w.day:
        return Rejected("already_fed", f"The {a.kind} at ({x}, {y}) has been fed for day {w.day}.")
    have = c.inventory.get(spec.feed, 0)
    if have < spec.feed_qty:
        return Rejected("not_in_inventory", f"A {a.kind} eats {spec.feed_qty} {spec.feed} a day; you carry {have}.")
    return got


class Feed:
    """Feed an animal within reach its daily ration (anyone may). A fed animal gives its product at the next midnight."""

    name, category = "feed", "production"
    ready = staticmethod(_animal_ready)

    class Args(Target):
        pass

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _feed_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        x, y = op.args["x"], op.args["y"]
        _, a, spec = got
        w.take(c.id, spec.feed, spec.feed_qty, f"feed:{a.kind}")
        a.fed_day = w.day
        w.emit("animal_fed", agent=c.id, x=x, y=y, animal=a.kind, item=spec.feed, qty=spec.feed_qty, day=w.day)
        return {"animal": a.kind, "item": spec.feed, "qty": spec.feed_qty}


def _collect_plan(w: World, c: Character, x: int, y: int) -> tuple[int, Animal, dict[str, int]] | Rejected:
    got = _animal(w, c, x, y)
    if isinstance(got, Rejected):
        return got
    p, a, _ = got
    if a.owner != c.id:
        return Rejected("not_animal_owner", f"The {a.kind} at ({x}, {y}) belongs to {a.owner}; only its owner collects.")
    waiting = w.containers.get(f"{ANIMAL_HOLDER}{p}")
    if not waiting:
        return Rejected("nothing_to_collect", f"The {a.kind} at ({x}, {y}) has nothing waiting; fed today, it gives at midnight.")
    return p, a, waiting


class Collect:
    """Collect everything your animal within reach has produced and left waiting."""

    name, category = "collect", "production"
    ready = staticmethod(_animal_ready)

    class Args(Target):
        pass

    @staticmethod
    def plan(w: World, c: Character, args: dict[str, Any]) -> Any:
        return _collect_plan(w, c, args["x"], args["y"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: Any) -> dict:
        p, a, waiting = got
        items = dict(sorted(waiting.items()))
        for item, qty in items.items():
            w.take(f"{ANIMAL_HOLDER}{p}", item, qty, f"collect:{c.id}")
            w.give(c.id, item, qty, f"collect:{a.kind}")
        return {"animal": a.kind, "items": items}


# ---- day start -----------------------------------------------------------------------------


def note_weather(w: World) -> None:
    """Remember the days that had rain or storm at some tick: the next midnight reads them."""
    f, s = w.content.farming, farm(w)
    if w.weather in f.rain_waters or w.weather in f.storm_weathers:
        day = w.day
        if w.weather in f.rain_waters:
            s.rain_day = day
        if w.weather in f.storm_weathers:
            s.storm_day = day


def grow_crops(w: World, ended: int) -> None:
    """Midnight after day `ended`: each plot in tile order is checked for cover, storm, growth or
    dryness, then season; a crop can die of one cause only."""
    f, s = w.content.farming, farm(w)
    rained, stormy = s.rain_day == ended, s.storm_day == ended
    for p in sorted(s.plots):
        plot = s.plots[p]
        x, y = w.xy(p)
        cover = _covered(w, p)
        if cover:
            del s.plots[p]
            w.emit("plot_lost", x=x, y=y, owner=plot.owner, crop=plot.crop, cause=f"{cover} stands on it")
            continue
        if plot.crop is None:
            continue
        crop, spec = plot.crop, w.content.crops[plot.crop]
        total = sum(spec.stage_days)
        if plot.growth >= total:
            if stormy and w.rng("farming").random() < f.storm_damage_chance:
                _wither(w, p, plot, "storm")
                continue
        elif plot.watered_day == ended or rained:
            before = stage_of(spec, plot.growth)
            plot.growth = min(total, plot.growth + (f.fertilized_growth_days if plot.fertilised else 1))
            plot.dry_days = 0
            stage = stage_of(spec, plot.growth)
            w.emit(
                "crop_grew", x=x, y=y, crop=crop, stage=stage, stages=len(spec.stage_days),
                growth_days=plot.growth, new_stage=stage > before,
            )
            if plot.growth >= total:
                w.emit("crop_matured", x=x, y=y, crop=crop, owner=plot.owner)
        else:
            plot.dry_days += 1
            if plot.dry_days >= f.dry_days_to_wither:
                _wither(w, p, plot, "dry")
                continue
            w.emit("crop_dry", x=x, y=y, crop=crop, days_dry=plot.dry_days, withers_at=f.dry_days_to_wither)
        if w.season not in spec.seasons:
            _wither(w, p, plot, "out_of_season")


def _wither(w: World, p: int, plot: Plot, cause: str) -> None:
    crop = plot.crop
    _clear(plot)
    x, y = w.xy(p)
    w.emit("crop_withered", x=x, y=y, crop=crop, owner=plot.owner, cause=cause)


def tend_animals(w: World, ended: int) -> None:
    """Midnight after day `ended`: fed animals produce, hungry ones count the day, some leave."""
    s = farm(w)
    for p in sorted(s.animals):
        a = s.animals[p]
        spec = w.content.animals[a.kind]
        here = w.structures.get(p)
        x, y = w.xy(p)
        if here is None or here.kind != animal_structure(w, spec):
            _leave(w, p, a, "gone")
        elif not coop_near(w, p, a.owner):
            _leave(w, p, a, "no_coop")
        elif a.fed_day == ended:
            a.hungry_days = 0
            w.give(f"{ANIMAL_HOLDER}{p}", spec.product, spec.product_qty, f"produce:{a.kind}")
            w.emit("animal_produced", x=x, y=y, animal=a.kind, owner=a.owner, item=spec.product, qty=spec.product_qty)
        else:
            a.hungry_days += 1
            if a.hungry_days >= spec.hungry_days_to_leave:
                _leave(w, p, a, "hungry")
            else:
                w.emit("animal_hungry", x=x, y=y, animal=a.kind, owner=a.owner, hungry_days=a.hungry_days, leaves_at=spec.hungry_days_to_leave)


def _leave(w: World, p: int, a: Animal, cause: str) -> None:
    """The animal goes for good: its structure is removed, its waiting products fall on its tile."""
    s = farm(w)
    del s.animals[p]
    holder = f"{ANIMAL_HOLDER}{p}"
    for item, qty in sorted(w.containers.get(holder, {}).items()):
        w.take(holder, item, qty, f"animal_left:{a.kind}")
        w.give(f"ground@{p}", item, qty, f"animal_left:{a.kind}")
    here = w.structures.get(p)
    removed = here is not None and here.kind == animal_structure(w, w.content.animals[a.kind])
    if removed:
        w.remove_structure(p)
    x, y = w.xy(p)
    w.emit("animal_left", x=x, y=y, animal=a.kind, owner=a.owner, cause=cause, structure_removed=removed)


# ---- events --------------------------------------------------------------------------------


class PlotTilled(Ev):
    """A character tilled a soil tile into a plot it owns."""

    agent: str
    x: int
    y: int


class PlotLost(Ev):
    """A plot (and any crop on it) was lost at midnight because a structure or node now covers it."""

    x: int
    y: int
    owner: str
    crop: str | None
    cause: str


class CropPlanted(Ev):
    """A seed was planted on a plot."""

    agent: str
    x: int
    y: int
    crop: str


class CropWatered(Ev):
    """A crop was watered by hand for the given day."""

    agent: str
    x: int
    y: int
    crop: str
    day: int


class CropFertilised(Ev):
    """A crop was fertilised: each watered day now counts more days of growth."""

    agent: str
    x: int
    y: int
    crop: str


class CropGrew(Ev):
    """At midnight a crop watered the day before gained growth days; `stage` is its stage now."""

    x: int
    y: int
    crop: str
    stage: int
    stages: int
    growth_days: int
    new_stage: bool


class CropMatured(Ev):
    """A crop became ripe and can be harvested."""

    x: int
    y: int
    crop: str
    owner: str


class CropDry(Ev):
    """At midnight a growing crop had not been watered the day before."""

    x: int
    y: int
    crop: str
    days_dry: int
    withers_at: int


class CropWithered(Ev):
    """A crop died (cause: dry, out_of_season or storm); its plot lies tilled and empty."""

    x: int
    y: int
    crop: str
    owner: str
    cause: str


class CropHarvested(Ev):
    """A ripe crop was harvested; its product went to the harvester."""

    agent: str
    x: int
    y: int
    crop: str
    item: str
    qty: int


class AnimalSettled(Ev):
    """An animal was settled beside a coop; its structure stands on the tile."""

    agent: str
    x: int
    y: int
    animal: str


class AnimalFed(Ev):
    """An animal was fed its ration for the given day."""

    agent: str
    x: int
    y: int
    animal: str
    item: str
    qty: int
    day: int


class AnimalProduced(Ev):
    """At midnight an animal fed the day before left its product waiting to be collected."""

    x: int
    y: int
    animal: str
    owner: str
    item: str
    qty: int


class AnimalHungry(Ev):
    """At midnight an animal had not been fed the day before."""

    x: int
    y: int
    animal: str
    owner: str
    hungry_days: int
    leaves_at: int


class AnimalLeft(Ev):
    """An animal left for good (cause: hungry, no_coop, gone); its structure was removed and its waiting products fell on its tile."""

    x: int
    y: int
    animal: str
    owner: str
    cause: str
    structure_removed: bool


# ---- the part ------------------------------------------------------------------------------


def _rules(c: Content) -> dict[str, Any]:
    return {
        "farming": {**c.farming.model_dump(mode="json"), "crops": {k: v.model_dump(mode="json") for k, v in c.crops.items()}},
        "animals": {k: v.model_dump(mode="json") for k, v in c.animals.items()},
    }


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    farming = doc["farming"]
    return [
        "## Farming",
        "",
        *settings({k: v for k, v in farming.items() if k != "crops"}),
        *table(
            ["crop", "seed", "product", "yield", "watered days per stage", "seasons"],
            [[f"`{k}`", f"`{v['seed']}`", f"`{v['product']}`", v["yield_qty"], v["stage_days"], v["seasons"]] for k, v in farming["crops"].items()],
        ),
        "## Animals",
        "",
        *table(
            ["animal", "product", "per day", "feed", "feed per day", "hungry days before it leaves"],
            [[f"`{k}`", f"`{v['product']}`", v["product_qty"], f"`{v['feed']}`", v["feed_qty"], v["hungry_days_to_leave"]] for k, v in doc["animals"].items()],
        ),
    ]


class FarmingPart(Part[FarmState]):
    name = "farming"
    tables = ("farming", "crops", "animals", "calendar", "structures")
    codes_place = 3
    codes = {
        "not_soil": "That tile's terrain cannot be tilled.",
        "already_tilled": "That tile is already a tilled plot.",
        "not_tilled": "That tile is not a tilled plot; till it first.",
        "not_plot_owner": "The plot belongs to another character; only its owner plants and harvests there.",
        "not_a_seed": "That item is not the seed of any crop.",
        "already_planted": "A crop already grows on that plot.",
        "out_of_season": "That crop does not grow in the current season.",
        "not_planted": "Nothing grows on that plot.",
        "crop_mature": "The crop is ripe and needs no more care; harvest it.",
        "already_watered": "The crop is already watered today, by hand or by rain.",
        "already_fertilised": "The crop has already been fertilised; once per crop.",
        "not_mature": "The crop is not ripe yet.",
        "use_settle_animal": "Animals are not placed: settle them beside a coop with settle_animal.",
        "not_an_animal": "That item is not an animal.",
        "no_coop": "No coop the character may use stands close enough to that tile.",
        "no_animal": "No animal lives on that tile.",
        "already_fed": "The animal has already been fed today.",
        "not_animal_owner": "The animal belongs to another character; only its owner collects its products.",
        "nothing_to_collect": "The animal has no product waiting.",
    }
    events = {
        "plot_tilled": PlotTilled,
        "plot_lost": PlotLost,
        "crop_planted": CropPlanted,
        "crop_watered": CropWatered,
        "crop_fertilised": CropFertilised,
        "crop_grew": CropGrew,
        "crop_matured": CropMatured,
        "crop_dry": CropDry,
        "crop_withered": CropWithered,
        "crop_harvested": CropHarvested,
        "animal_settled": AnimalSettled,
        "animal_fed": AnimalFed,
        "animal_produced": AnimalProduced,
        "animal_hungry": AnimalHungry,
        "animal_left": AnimalLeft,
    }
    actions = (Till, PlantSeed, Water, Fertilise, Harvest, SettleAnimal, Feed, Collect)
    rules = (Section(20, _rules, _rules_markdown),)
    observation_fields = {
        "farming": {
            "description": "Plots and animals in view.",
            "fields": {
                "plots": "Tilled plots in view: {x, y, owner, crop}; with a crop also stage, stages, growth_days,"
                " days_to_ripe, mature, watered_today (by hand or rain), days_dry, fertilised.",
                "animals": "Animals in view: {x, y, animal, owner, fed_today, hungry_days, waiting (item -> quantity to collect)}.",
            },
        },
    }

    def structure_removed(self, w: World, p: int, s: Structure) -> None:
        """An animal whose structure was destroyed (a raid) leaves with it."""
        animal = farm(w).animals.get(p)
        if animal is not None:
            _leave(w, p, animal, "structure_lost")

    def init(self, w: World) -> None:
        c = w.content
        for weather in c.farming.storm_weathers:
            if weather not in c.calendar.weathers:
                raise ContentError("farming.yaml", "storm_weathers", f"unknown weather '{weather}'")
        if c.animals and not any(s.part == "coop" for s in c.structures.values()):
            raise ContentError("animals.yaml", "-", "animals need a structure with part: coop to live beside")
        super().init(w)

    def new_state(self, w: World) -> FarmState:
        return FarmState()

    def day_started(self, w: World) -> None:
        ended = w.day - 1
        grow_crops(w, ended)
        tend_animals(w, ended)
        note_weather(w)

    def tick(self, w: World) -> None:
        note_weather(w)

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        s = w.states[_NAME]
        if not s.plots and not s.animals:  # most worlds, most of the time: the world's one empty section, read-only
            empty = w.kept.nothing_farmed
            if empty is None:
                empty = w.kept.nothing_farmed = freeze({"plots": [], "animals": []})
            obs["farming"] = empty
            return
        plots: list[dict[str, Any]] = []
        animals: list[dict[str, Any]] = []
        x0, x1, y0, y1 = w.view_bounds(c.pos)
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                p = y * w.width + x
                plot = s.plots.get(p)
                if plot is not None:
                    plots.append(_plot_view(w, x, y, plot))
                a = s.animals.get(p)
                if a is not None:
                    waiting = w.containers.get(f"{ANIMAL_HOLDER}{p}", {})
                    animals.append({
                        "x": x, "y": y, "animal": a.kind, "owner": a.owner, "fed_today": a.fed_day == w.day,
                        "hungry_days": a.hungry_days, "waiting": dict(sorted(waiting.items())),
                    })
        obs["farming"] = {"plots": plots, "animals": animals}


def _plot_view(w: World, x: int, y: int, plot: Plot) -> dict[str, Any]:
    view: dict[str, Any] = {"x": x, "y": y, "owner": plot.owner, "crop": plot.crop}
    if plot.crop is None:
        return view
    spec = w.content.crops[plot.crop]
    total = sum(spec.stage_days)
    return {
        **view,
        "stage": stage_of(spec, plot.growth),
        "stages": len(spec.stage_days),
        "growth_days": plot.growth,
        "days_to_ripe": total - plot.growth,
        "mature": plot.growth >= total,
        "watered_today": watered_today(w, plot),
        "days_dry": plot.dry_days,
        "fertilised": plot.fertilised,
    }


FARMING = FarmingPart()
_NAME = FARMING.name
