"""The suite: tasks generated from the template file over the content, plus hand-written tasks, plus the
Lite list; every reference checked at load, with an error naming the file and key.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn

import yaml
from pydantic import BaseModel, ValidationError

from wildhold.content import Content, default_content
from wildhold.content.loader import ContentError, validated as _model
from wildhold.tasks.attempt import NEAR
from wildhold.tasks.evaluators import EVALUATORS
from wildhold.tasks.spec import HandWritten, Task, TemplateFile
from wildhold.world.setup import SETUP

TASKS_DIR = Path(__file__).parents[1] / "content" / "data" / "tasks"


# ---- the content entries templates run over ----------------------------------------------------

RARE_DENSITY = 0.05  # nodes scarcer than this may lie beyond a short task's reach on a small map: set-ups put one beside


def _seeded(c: Content, items: Iterable[str]) -> list[dict[str, Any]]:
    """Set-up steps that put a node of each rare item (one only rare nodes yield) beside the character."""
    steps = []
    for item in items:
        nodes = [k for k, n in c.nodes.items() if n.item == item]
        if nodes and all(c.nodes[k].density < RARE_DENSITY for k in nodes):
            steps.append({"command": "place_resource", "args": {"node": nodes[0]}, "near": True})
    return steps


def _unlocks(c: Content, recipe: str) -> list[dict[str, Any]]:
    """Set-up steps that raise the friendship a recipe is unlocked at (the task is the recipe, not the friendship)."""
    return [{"command": "set_friendship", "args": {"npc": name, "level": u.level}}
            for name, npc in c.npcs.items() for u in npc.unlocks if recipe in u.recipes]


TOOLS = ("stone_pickaxe", "wooden_axe", "fishing_rod")  # what a from-the-land set-up hands over
RAW_TOOLS = ("stone_pickaxe", "wooden_axe")  # what a craft from the land starts with (but the tool it makes)


def _sourcing(c: Content, item: str) -> list[dict[str, Any]] | None:
    """Set-up steps that let a character get `item` from the land (the tools, a rare node, the one recipe's
    station and friendship beside or given), or None when the land cannot give it in one step."""
    tools = [{"command": "give_items", "args": {"item": t}} for t in TOOLS]
    if any(n.item == item for n in c.nodes.values()):
        return tools + _seeded(c, [item])
    for name, r in c.recipes.items():
        if item in r.outputs and all(any(n.item == i for n in c.nodes.values()) for i in r.inputs):
            station = [] if r.station is None else [{"command": "place_structure", "args": {"structure": r.station}, "near": True}]
            return tools + _seeded(c, r.inputs) + _unlocks(c, name) + station
    return None


def _gatherables(c: Content) -> Iterator[dict[str, Any]]:
    seen: set[str] = set()
    for name, node in c.nodes.items():
        if node.item in seen:
            continue
        seen.add(node.item)
        yield {"key": node.item, "item": node.item, "node": name, "tool": node.requires_tool or "none",
               "seeded": _seeded(c, [node.item])}


def _station_item(c: Content, station: str | None) -> str | None:
    """The item that puts this station down, when one does."""
    return next((k for k, i in c.items.items() if station is not None and i.places == station), None)


def _making(c: Content, name: str, times: int = 1) -> list[dict[str, Any]]:
    """Set-up steps that let a character make a recipe `times` over: its inputs, its friendship and its station beside."""
    r = c.recipes[name]
    inputs = [{"command": "give_items", "args": {"item": i, "qty": q * times}} for i, q in r.inputs.items()]
    station = [] if r.station is None else [{"command": "place_structure", "args": {"structure": r.station}, "near": True}]
    return inputs + _unlocks(c, name) + station


def _gathering(inputs: dict[str, int]) -> dict[str, Any]:
    """A task's gathering of `inputs` itself: the evaluator's terms (one per item) and the text ("2 wood and 1 stone")."""
    said = [f"{q} {i}" for i, q in inputs.items()]
    return {"gather_terms": [{"evaluator": "obtain", "params": {"item": i, "qty": q, "via": "gather"}} for i, q in inputs.items()],
            "gathered": said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"}


def _recipes(kind: str) -> Callable[[Content], Iterator[dict[str, Any]]]:
    def entries(c: Content) -> Iterator[dict[str, Any]]:
        for name, r in c.recipes.items():
            if r.kind != kind:
                continue
            inputs = [{"command": "give_items", "args": {"item": i, "qty": q}} for i, q in r.inputs.items()]
            raw = all(any(n.item == i for n in c.nodes.values()) for i in r.inputs)
            station = [] if r.station is None else [{"command": "place_structure", "args": {"structure": r.station}, "near": True}]
            carried = _station_item(c, r.station)
            item = next(iter(r.outputs))
            yield {"key": name, "recipe": name, "item": item, "station": r.station or "none", "via": kind,
                   "inputs": inputs, "raw": raw, "half": inputs[: max(1, len(inputs) // 2)], **_gathering(r.inputs),
                   "unlock": _unlocks(c, name), "beside": station, "seeded": _seeded(c, r.inputs),
                   "station_item": carried or "none",
                   "raw_tools": [{"command": "give_items", "args": {"item": t}} for t in RAW_TOOLS if t not in r.outputs],
                   "hold_station": [] if carried is None else [{"command": "give_items", "args": {"item": carried}}],
                   "thrice": [{"command": "give_items", "args": {"item": i, "qty": 3 * q}} for i, q in r.inputs.items()],
                   "made": 3 * r.outputs[item],
                   "public": r.station in c.scenario("tiny").settlement.stations}
    return entries


def _harvest_dishes(c: Content) -> Iterator[dict[str, Any]]:
    """Dishes whose inputs include crop produce: the crops ripe beside the character (in a season all of
    them grow in), whatever else the dish needs given, the stove beside."""
    produce = {crop.product: (name, crop) for name, crop in c.crops.items()}
    for name, r in c.recipes.items():
        grown = [i for i in r.inputs if i in produce]
        if r.kind != "cook" or not grown:
            continue
        seasons = [s for s in c.calendar.seasons if all(s in produce[i][1].seasons for i in grown)]
        if not seasons:
            continue
        steps: list[dict[str, Any]] = [{"command": "set_season", "args": {"season": seasons[0]}}]
        harvests = []
        for item, qty in r.inputs.items():
            if item in produce:
                crop_name, crop = produce[item]
                harvests.append({"evaluator": "harvest", "params": {"crop": crop_name, "qty": qty}})
                for _ in range(-(-qty // crop.yield_qty)):
                    steps.append({"command": "plant_crop", "args": {"crop": crop_name, "stage": len(crop.stage_days)}, "near": True})
            else:
                steps.append({"command": "give_items", "args": {"item": item, "qty": qty}})
        steps += _unlocks(c, name) + [{"command": "place_structure", "args": {"structure": r.station}, "near": True}]
        plots = {i: -(-r.inputs[i] // produce[i][1].yield_qty) for i in grown}
        crops = " and ".join(produce[i][0] if plots[i] == 1 else f"{produce[i][0]} on {plots[i]} plots" for i in grown)
        yield {"key": name, "recipe": name, "item": next(iter(r.outputs)), "crops": crops,
               "setup": steps, "harvest_terms": harvests}


def _crops(c: Content) -> Iterator[dict[str, Any]]:
    fertilizer = next(r for r in c.recipes.values() if c.farming.fertilizer in r.outputs)
    made = {f"fertilizer_{k}": v for k, v in _gathering(fertilizer.inputs).items()}
    for name, crop in c.crops.items():
        season = next(s for s in c.calendar.seasons if s in crop.seasons)
        yield {"key": name, "crop": name, "seed": crop.seed, "product": crop.product, "season": season, **made,
               "ripe": len(crop.stage_days), "in_season": [{"command": "set_season", "args": {"season": season}}],
               "dry": [{"command": "set_day_weather", "args": {"weather": _dry(c)}}], "two_yields": 2 * crop.yield_qty}


def _dry(c: Content) -> str:
    """A weather that waters nothing: watering tasks set the day to it, so rain cannot have done their work."""
    return next(w for w in c.calendar.weathers if w not in c.farming.rain_waters)


def _harvest_gifts(c: Content) -> Iterator[dict[str, Any]]:
    """Crop produce a villager loves or likes: the crop ripe beside the character, in its season."""
    for name, crop in c.crops.items():
        season = next(s for s in c.calendar.seasons if s in crop.seasons)
        for npc, spec in c.npcs.items():
            if crop.product in (*spec.loves, *spec.likes):
                yield {"key": f"{name}_{npc}", "crop": name, "item": crop.product, "npc": npc,
                       "setup": [{"command": "set_season", "args": {"season": season, "hour": 10}},
                                 {"command": "plant_crop", "args": {"crop": name, "stage": len(crop.stage_days)}, "near": True}]}


def _chains(c: Content) -> Iterator[dict[str, Any]]:
    """Crafts one of whose inputs is itself crafted (an intermediate): the intermediate's inputs and the
    rest given, each station beside."""
    for name, r in c.recipes.items():
        if r.kind != "craft":
            continue
        for part, qty in r.inputs.items():
            sub = next((k for k, q in c.recipes.items() if part in q.outputs and q.kind == "craft" and part not in q.inputs), None)
            if sub is None or any(n.item == part for n in c.nodes.values()):
                continue
            times = -(-qty // c.recipes[sub].outputs[part])
            steps = _making(c, sub, times)
            steps += [{"command": "give_items", "args": {"item": i, "qty": q}} for i, q in r.inputs.items() if i != part]
            steps += _unlocks(c, name)
            if r.station is not None and r.station != c.recipes[sub].station:
                steps.append({"command": "place_structure", "args": {"structure": r.station}, "near": True})
            yield {"key": f"{name}_{part}", "recipe": name, "item": next(iter(r.outputs)), "part": part, "part_qty": qty,
                   "setup": steps}
            break


def _crop_sales(c: Content) -> Iterator[dict[str, Any]]:
    """Crop produce a villager buys: the crop ripe beside the character, in its season."""
    for name, crop in c.crops.items():
        season = next(s for s in c.calendar.seasons if s in crop.seasons)
        for npc, spec in c.npcs.items():
            if spec.shop and crop.product in spec.shop.buys:
                yield {"key": f"{name}_{npc}", "crop": name, "item": crop.product, "npc": npc,
                       "setup": [{"command": "set_season", "args": {"season": season, "hour": 10}},
                                 {"command": "plant_crop", "args": {"crop": name, "stage": len(crop.stage_days)}, "near": True}]}


def _animals(c: Content) -> Iterator[dict[str, Any]]:
    coop = next(k for k, s in c.structures.items() if s.part == "coop")
    materials = [{"command": "give_items", "args": {"item": i, "qty": q}} for i, q in c.structures[coop].build.materials.items()]
    for name, a in c.animals.items():
        feed = next((r.kind for r in c.recipes.values() if a.feed in r.outputs), "none")
        yield {"key": name, "animal": name, "item": a.item, "product": a.product, "feed": a.feed, "feed_qty": a.feed_qty,
               "feed_via": feed, "coop": materials, "coop_structure": coop}


def _villagers(c: Content) -> Iterator[dict[str, Any]]:
    s = c.social
    for name, npc in c.npcs.items():
        for opinion, felt in (("loves", "loved"), ("likes", "liked")):
            for item in getattr(npc, opinion):
                source = _sourcing(c, item)
                seller = next((k for k, v in c.npcs.items() if v.shop and item in v.shop.sells), None)
                recipe = next((k for k, r in c.recipes.items() if item in r.outputs and r.kind == "cook"), None)
                yield {"key": f"{name}_{item}", "npc": name, "item": item, "opinion": opinion,
                       "points": s.talk_points + s.gift_points[felt], "source": source or [], "sourced": source is not None,
                       "seller": seller or "none", "coin": c.economy.coin,
                       "cooked": recipe is not None, "cook": _making(c, recipe) if recipe else []}


def _shop(side: str) -> Callable[[Content], Iterator[dict[str, Any]]]:
    def entries(c: Content) -> Iterator[dict[str, Any]]:
        for name, npc in c.npcs.items():
            for item, price in (getattr(npc.shop, side) if npc.shop else {}).items():
                source = _sourcing(c, item)
                yield {"key": f"{item}_{name}", "npc": name, "item": item, "price": price, "coin": c.economy.coin,
                       "source": source or [], "sourced": source is not None}
    return entries


def _npcs(c: Content) -> Iterator[dict[str, Any]]:
    for name, npc in c.npcs.items():
        # the hour after the villager's shop or workplace closes: where the schedule has it then
        entries = sorted(npc.schedule, key=lambda e: e.start_hour)
        evening = next((e.start_hour for e in entries if e.start_hour >= 17), 18)
        yield {"key": name, "npc": name, "evening": evening}


def _placeables(c: Content) -> Iterator[dict[str, Any]]:
    for name, item in c.items.items():
        if item.category == "placeable" and item.places and name not in c.animals:
            recipe = next((k for k, r in c.recipes.items() if name in r.outputs), None)
            r = c.recipes[recipe] if recipe else None
            raw = r is not None and all(any(n.item == i for n in c.nodes.values()) for i in r.inputs)
            from_land = [] if not raw else (
                [{"command": "give_items", "args": {"item": t}} for t in TOOLS] + _seeded(c, r.inputs) + _unlocks(c, recipe)
                + ([] if r.station is None else [{"command": "place_structure", "args": {"structure": r.station}, "near": True}]))
            yield {"key": name, "item": name, "structure": item.places, "made": recipe is not None,
                   "make": _making(c, recipe) if recipe else [], "raw": raw, "from_land": from_land,
                   "via": r.kind if r else "none", **_gathering(r.inputs if r else {})}


def _repairables(c: Content) -> Iterator[dict[str, Any]]:
    """Structures that can be repaired: one beside the character at a third of its hit points."""
    for name, s in c.structures.items():
        if s.repair is None:
            continue
        raw = all(any(n.item == i for n in c.nodes.values()) for i in s.repair.materials)
        give = [{"command": "give_items", "args": {"item": i, "qty": q}} for i, q in s.repair.materials.items()]
        damaged = [{"command": "place_structure", "args": {"structure": name, "hp": max(1, s.hp // 3)}, "near": True}]
        tools = [{"command": "give_items", "args": {"item": t}} for t in TOOLS] + _seeded(c, s.repair.materials)
        yield {"key": name, "structure": name, "materials": give, "damaged": damaged, "raw": raw, "tools": tools,
               **_gathering(s.repair.materials)}


def _terrains(c: Content) -> Iterator[dict[str, Any]]:
    for name, t in c.terrain.items():
        if t.walkable:
            yield {"key": name, "terrain": name, "what": t.description.rstrip(".").lower()}


def _nodes(c: Content) -> Iterator[dict[str, Any]]:
    """Nodes to find; a scarce one (no denser than RARE_DENSITY) may be missing from a small map, or only near the
    spawn: a set-up puts one down far enough."""
    for name, n in c.nodes.items():
        yield {"key": name, "node": name, "what": n.description.rstrip(".").lower(), "scarce": n.density <= RARE_DENSITY}


def _forage_pairs(c: Content) -> Iterator[dict[str, Any]]:
    """Two things the land gives, with the tools that open their nodes."""
    items = sorted({n.item for n in c.nodes.values()})
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            tools = sorted({n.requires_tool for n in c.nodes.values() if n.item in (a, b) and n.requires_tool})
            yield {"key": f"{a}_{b}", "a": a, "b": b,
                   "setup": [{"command": "give_items", "args": {"item": t}} for t in tools] + _seeded(c, [a, b])}


def _made_tools(c: Content) -> Iterator[dict[str, Any]]:
    """Gatherables behind a tool the character makes itself from what it carries, at a station beside it."""
    seen: set[str] = set()
    for name, node in c.nodes.items():
        if node.requires_tool is None or node.item in seen:
            continue
        recipe = next((k for k, r in c.recipes.items() if node.requires_tool in r.outputs), None)
        if recipe is None:
            continue
        seen.add(node.item)
        yield {"key": node.item, "item": node.item, "tool": node.requires_tool,
               "setup": _making(c, recipe) + _seeded(c, [node.item])}


def _made_wares(c: Content) -> Iterator[dict[str, Any]]:
    """Things a villager buys that a recipe makes from what the set-up gives, at a station beside."""
    for npc, spec in c.npcs.items():
        for item in (spec.shop.buys if spec.shop else {}):
            recipe = next((k for k, r in c.recipes.items() if item in r.outputs and item not in r.inputs), None)
            if recipe is not None:
                yield {"key": f"{item}_{npc}", "item": item, "npc": npc, "make": _making(c, recipe), "via": c.recipes[recipe].kind}


def _buildables(c: Content) -> Iterator[dict[str, Any]]:
    for name, s in c.structures.items():
        if s.build:
            give = [{"command": "give_items", "args": {"item": i, "qty": q}} for i, q in s.build.materials.items()]
            raw = all(any(n.item == i for n in c.nodes.values()) for i in s.build.materials)
            twice = [{"command": "give_items", "args": {"item": i, "qty": 2 * q}} for i, q in s.build.materials.items()]
            yield {"key": name, "structure": name, "materials": give, "materials_twice": twice, "raw": raw,
                   **_gathering(s.build.materials)}


def _tiers(c: Content) -> Iterator[dict[str, Any]]:
    for name, tier in c.dungeon.tiers.items():
        yield {"key": name, "name": name, "tier": tier.level, "boss": tier.boss,
               "unlock": [{"command": "unlock_tier", "args": {"tier": tier.level}}]}


def _enemies(c: Content) -> Iterator[dict[str, Any]]:
    for name, tier in c.dungeon.tiers.items():
        for enemy in [*tier.enemies, tier.boss]:
            boss = enemy == tier.boss
            stage = [] if boss else [{"command": "stage_enemy", "args": {"tier": tier.level, "enemy": enemy}}]
            yield {"key": enemy, "enemy": enemy, "tier": tier.level, "boss": boss,
                   "unlock": [{"command": "unlock_tier", "args": {"tier": tier.level}}, *stage]}


def _hardships(c: Content) -> Iterator[dict[str, Any]]:
    """Weathers to live through, each with each shelter a character can put down (and with none), and with
    the materials of each shelter it can make by hand (`made`)."""
    shelters = [k for k, i in c.items.items() if i.places and c.structures[i.places].shelter]
    for weather in c.calendar.weathers:
        for shelter in [*shelters, "none"]:
            give = [] if shelter == "none" else [{"command": "give_items", "args": {"item": shelter}}]
            yield {"key": f"{weather}_{shelter}", "weather": weather, "shelter": shelter, "named": shelter, "give": give,
                   "made": False}
        for shelter in shelters:
            recipe = next((k for k, r in c.recipes.items() if shelter in r.outputs and r.station is None), None)
            if recipe is not None:
                yield {"key": f"{weather}_{shelter}_made", "weather": weather, "shelter": shelter,
                       "named": f"{shelter}-made", "give": _making(c, recipe), "made": True}


ENTRIES: dict[str, Callable[[Content], Iterator[dict[str, Any]]]] = {
    "gatherables": _gatherables, "recipes": _recipes("craft"), "dishes": _recipes("cook"), "crops": _crops,
    "animals": _animals, "gifts": _villagers, "wares": _shop("sells"), "purchases": _shop("buys"), "villagers": _npcs,
    "placeables": _placeables, "buildables": _buildables, "tiers": _tiers, "enemies": _enemies,
    "hardships": _hardships, "harvest_dishes": _harvest_dishes, "crop_sales": _crop_sales, "repairables": _repairables,
    "terrains": _terrains, "nodes": _nodes, "forage_pairs": _forage_pairs, "made_tools": _made_tools,
    "made_wares": _made_wares, "harvest_gifts": _harvest_gifts, "chains": _chains,
}


# ---- loading -----------------------------------------------------------------------------------

QUANTITIES = ("qty", "ticks", "away")  # the argument and parameter names that hold a quantity


def _shape(value: Any) -> Any:
    """A value with every quantity blanked, so that two tasks differing only in quantities compare equal."""
    if isinstance(value, dict):
        return tuple(sorted((k, None if k in QUANTITIES else _shape(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_shape(v) for v in value)
    return value


class Suite(BaseModel):
    tasks: dict[str, Task]
    lite: tuple[str, ...]
    max_quantity_share: float = 1.0
    oracle_failures: dict[str, str] = {}  # task id -> why the oracle fails it

    def quantity_variants(self) -> list[list[str]]:
        """Groups of tasks that differ from each other only in a quantity (and in their id, text and limits)."""
        groups: dict[Any, list[str]] = {}
        for t in self.tasks.values():
            params = EVALUATORS[t.evaluator].params_model.model_validate(t.params).model_dump()  # defaults filled in
            key = (t.category, t.scenario, t.evaluator, _shape(params), _shape([s.model_dump() for s in t.setup]), t.clock)
            groups.setdefault(key, []).append(t.id)
        return [sorted(ids) for ids in groups.values() if len(ids) > 1]

    def check_breadth(self) -> None:
        """At most `max_quantity_share` of the tasks may differ from another only in a quantity."""
        groups = self.quantity_variants()
        share = sum(map(len, groups)) / max(1, len(self.tasks))
        if share > self.max_quantity_share:
            raise ContentError("tasks/templates.yaml", "max_quantity_share",
                               f"{share:.0%} of the tasks differ from another only in a quantity (at most "
                               f"{self.max_quantity_share:.0%}); for example {', '.join(groups[0])}")

    def disagreements(self, content: Content) -> list[tuple[str, str]]:
        """(task id, what its description says that its evaluator or set-up does not hold), for every task."""
        from wildhold.tasks.agreement import disagreements

        return [(t.id, problem) for t in self.tasks.values() for problem in disagreements(t, content)]

    def get(self, task_id: str) -> Task:
        """The task with this id; an unknown id names the closest ones."""
        try:
            return self.tasks[task_id]
        except KeyError:
            close = difflib.get_close_matches(task_id, list(self.tasks), n=3, cutoff=0.4)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise KeyError(f"no task {task_id!r}{hint}") from None

    def select(self, names: list[str]) -> list[Task]:
        """`lite`, `full`, or task ids."""
        if names == ["full"]:
            return list(self.tasks.values())
        if names == ["lite"]:
            return [self.tasks[t] for t in self.lite]
        return [self.get(n) for n in names]


def _yaml(path: Path, root: Path) -> Any:
    name = f"tasks/{path.relative_to(root).as_posix()}"
    try:
        return name, yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ContentError(name, "-", f"not valid YAML: {exc}") from None


def _fill(value: Any, entry: dict[str, Any]) -> Any:
    """A template value with `{field}` replaced from the entry: a whole-string field keeps its type."""
    if isinstance(value, str):
        if value.startswith("{") and value.endswith("}") and value[1:-1] in entry:
            return entry[value[1:-1]]
        return value.format(**entry)
    if isinstance(value, dict):
        return {k.format(**entry) if isinstance(k, str) else k: _fill(v, entry) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            filled = _fill(v, entry)
            # a field that holds set-up steps splices them in
            out.extend(filled) if isinstance(v, str) and isinstance(filled, list) else out.append(filled)
        return out
    return value


def _generate(file: str, spec: TemplateFile, content: Content) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, t in spec.templates.items():
        if t.over not in ENTRIES:
            raise ContentError(file, f"templates.{name}.over", f"unknown entries {t.over!r}; known: {', '.join(ENTRIES)}")
        for entry in ENTRIES[t.over](content):
            if any(entry.get(k) != v for k, v in t.only.items()) or any(entry.get(k) == v for k, v in t.unless.items()):
                continue
            for i, level in enumerate(t.levels):
                key = f"templates.{name}.levels.{i}"
                try:
                    raw = {
                        "id": f"{t.category}/{level.id.format(**entry)}", "category": t.category,
                        "difficulty": level.difficulty, "description": level.description.format(**entry),
                        "setup": _fill([s if isinstance(s, str) else s.model_dump() for s in level.setup], entry), "evaluator": t.evaluator,
                        "params": _fill(dict(level.params), entry),
                        "limits": (level.limits or spec.limits[level.difficulty]).model_dump(),
                        "source": f"{file}:{name}",
                    }
                except KeyError as exc:
                    raise ContentError(file, key, f"names an unknown field {exc} of {t.over}") from None
                yield key, raw


def check_task(file: str, key: str, task: Task, content: Content) -> None:
    """Every name the task gives must exist: scenario, set-up commands and their arguments, evaluator and parameters."""
    def refuse(where: str, problem: str) -> NoReturn:
        raise ContentError(file, f"{key}.{where}", problem)

    if task.scenario not in content.scenarios:
        refuse("scenario", f"unknown scenario {task.scenario!r}")
    tables = {"items": content.items, "structures": content.structures, "weather": content.calendar.weathers,
              "node": content.nodes, "npcs": content.npcs, "crops": content.crops}
    for i, step in enumerate(task.setup):
        spec = SETUP.get(step.command)
        if spec is None:
            refuse(f"setup.{i}.command", f"unknown set-up command {step.command!r}; known: {', '.join(SETUP)}")
        args = dict(step.args)
        if "agent" in spec.args.model_fields:
            args.setdefault("agent", "a1")
        if step.near:
            if step.command not in NEAR:
                refuse(f"setup.{i}.near", f"only {', '.join(NEAR)} can be put beside the character")
            args.update(x=0, y=0)
        if step.away is not None:
            if step.command != "place_resource" or step.near:
                refuse(f"setup.{i}.away", "only a place_resource not put beside the character can be put away from it")
            args.update(x=0, y=0)
        try:
            spec.args.model_validate(args)
        except ValidationError as exc:
            refuse(f"setup.{i}.args", exc.errors()[0]["msg"])
        for arg, table in (("item", "items"), ("structure", "structures"), ("weather", "weather"), ("node", "node"),
                           ("npc", "npcs"), ("crop", "crops")):
            if arg in args and args[arg] not in tables[table]:
                refuse(f"setup.{i}.args.{arg}", f"unknown {arg} {args[arg]!r}")
    _check_evaluator(refuse, "", task.evaluator, task.params, content)


def _check_evaluator(refuse: Callable[[str, str], NoReturn], where: str, name: str, params: dict[str, Any],
                     content: Content) -> None:
    """The evaluator exists and its parameters name only what exists; the terms of `all` likewise."""
    cls = EVALUATORS.get(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(EVALUATORS), n=1)
        refuse(f"{where}evaluator", f"unknown evaluator {name!r}" + (f"; did you mean {close[0]}?" if close else ""))
    try:
        model = cls.params_model.model_validate(params)
    except ValidationError as exc:
        first = exc.errors()[0]
        refuse(f"{where}params." + ".".join(str(p) for p in first["loc"]), first["msg"])
    for i, term in enumerate(getattr(model, "terms", ())):
        _check_evaluator(refuse, f"{where}params.terms.{i}.", term.evaluator, term.params, content)
    for field, table in cls.refs.items():
        value = getattr(model, field)
        for one in (value if isinstance(value, dict) else [value]):
            if one is not None and one not in getattr(content, table):
                refuse(f"{where}params.{field}", f"unknown {table.removesuffix('s')} {one!r}")
    tiers = {t.level for t in content.dungeon.tiers.values()}
    if getattr(model, "tier", None) is not None and model.tier not in tiers:
        refuse(f"{where}params.tier", f"unknown dungeon tier {model.tier}")
    kinds = {q.kind for q in content.quests.values()}
    if getattr(model, "quest", None) is not None and model.quest not in kinds:
        refuse(f"{where}params.quest", f"unknown quest kind {model.quest!r}")


def load_suite(root: Path = TASKS_DIR, content: Content | None = None, *, calibrated: bool = True,
               calibration: dict[str, Any] | None = None) -> Suite:
    """Generate the templates' tasks, read the hand-written ones and the Lite list; check them all. Each task's
    level and limits are those measured (calibration.yaml, or `calibration` when given; see `tasks.calibrate`);
    with `calibrated=False`, those its template declares, which is how `tasks calibrate` measures a task before
    it has been."""
    content = content or default_content()
    tasks: dict[str, Task] = {}
    origin: dict[str, str] = {}
    file, raw = _yaml(root / "templates.yaml", root)
    spec = _model(file, "", TemplateFile, raw)
    measured = (calibration or _calibration(root)) if calibrated else None

    def add(file: str, key: str, raw: dict[str, Any]) -> None:
        task = _model(file, key, Task, raw)
        if task.id in tasks:
            raise ContentError(file, key, f"task {task.id} is already defined in {origin[task.id]}")
        check_task(file, key, task, content)
        if measured is not None:
            task = task.model_copy(update=_measured(measured, task.id, task.category, spec))
        tasks[task.id], origin[task.id] = task, f"{file}:{key}"

    for key, task in _generate(file, spec, content):
        add(file, key, task)
    for path in sorted((root / "hand").glob("*.yaml")):
        file, raw = _yaml(path, root)
        if not isinstance(raw, dict):
            raise ContentError(file, "-", "expected a mapping of task ids to tasks")
        for task_id, body in raw.items():
            hand = _model(file, task_id, HandWritten, body)
            limits = hand.limits or spec.limits[hand.difficulty]
            add(file, task_id, {**hand.model_dump(), "id": task_id, "limits": limits.model_dump(), "source": file})
    if measured is not None:
        stale = sorted(set(measured["tasks"]) - set(tasks))
        if stale:
            raise ContentError(CALIBRATION, f"tasks.{stale[0]}", f"measures {len(stale)} tasks the suite no longer has; "
                               "run `wildhold tasks calibrate --write` again")
    file, raw = _yaml(root / "lite.yaml", root)
    lite = raw.get("tasks") if isinstance(raw, dict) else None
    if not isinstance(lite, list):
        raise ContentError(file, "tasks", "expected a list of task ids")
    for i, task_id in enumerate(lite):
        if task_id not in tasks:
            close = difflib.get_close_matches(str(task_id), list(tasks), n=1)
            raise ContentError(file, f"tasks.{i}", f"unknown task {task_id!r}" + (f"; did you mean {close[0]}?" if close else ""))
    file, raw = _yaml(root / "oracle_failures.yaml", root)
    failures = raw.get("failures") if isinstance(raw, dict) else None
    if not isinstance(failures, dict) or not all(isinstance(v, str) and v for v in failures.values()):
        raise ContentError(file, "failures", "expected a mapping of task ids to the reason the oracle fails each")
    for task_id in failures:
        if task_id not in tasks:
            close = difflib.get_close_matches(str(task_id), list(tasks), n=1)
            raise ContentError(file, f"failures.{task_id}", "unknown task" + (f"; did you mean {close[0]}?" if close else ""))
    return Suite(tasks=tasks, lite=tuple(lite), max_quantity_share=spec.max_quantity_share, oracle_failures=failures)


CALIBRATION = "tasks/calibration.yaml"


def _calibration(root: Path) -> dict[str, Any]:
    """What `tasks calibrate` measured: each task's effort, each category's cut-offs between levels."""
    path = root / "calibration.yaml"
    if not path.exists():
        raise ContentError(CALIBRATION, "-", "missing: run `wildhold tasks calibrate --suite full --write` to measure "
                           "every task's level and limits")
    _, raw = _yaml(path, root)
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), dict) or not isinstance(raw.get("levels"), dict):
        raise ContentError(CALIBRATION, "-", "expected `levels` (cut-offs by category) and `tasks` (measured by id)")
    return raw


def _measured(measured: dict[str, Any], task_id: str, category: str, spec: TemplateFile) -> dict[str, Any]:
    """A task's level and limits from its measured effort."""
    from wildhold.tasks.calibrate import level_of, limits_of

    entry = measured["tasks"].get(task_id)
    if not isinstance(entry, dict) or not {"turns", "ticks", "most_turns", "most_ticks"} <= set(entry):
        raise ContentError(CALIBRATION, f"tasks.{task_id}", "not measured: run `wildhold tasks calibrate --suite "
                           f"{task_id} --write` (or the whole suite) to measure its level and limits")
    cuts = measured["levels"].get(category)
    if cuts is None:
        raise ContentError(CALIBRATION, f"levels.{category}", "no cut-offs for this category: calibrate the suite again")
    level = level_of(task_id, entry, cuts)
    return {"difficulty": level, "limits": limits_of(entry, level, spec.calibration)}


@lru_cache(maxsize=1)
def default_suite() -> Suite:
    return load_suite()
