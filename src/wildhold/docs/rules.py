"""The rules document agents read, built from content and the registries, never by hand.

`rules_json` gathers every rule as data; `rules_markdown` renders that same dict, so the
two cannot disagree; `rules_digest` fingerprints it. Rules are described, never advised.
For a match whose horizon is hidden the document says nothing of when a match ends: no scenario's
length or description (descriptions state lengths), no end tick among the observation's fields.
The service calls these with the reads it offers programs (`program_reads`): this package
documents the service's registries without importing the service.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any, Callable

import wildhold
from wildhold.content import Content
from wildhold.content.models import NeedsSpec, ProgramsSpec
from wildhold.programs.api import OP_RESULT_FIELDS, Reads, api_functions, reference_markdown
from wildhold.world.actions import REGISTRY, ActionDef, check_registry
from wildhold.world.errors import CODES
from wildhold.world.events import EVENT_TYPES
from wildhold.world.markdown import bullets, table
from wildhold.world.parts import PARTS
from wildhold.world.parts.base import Section, section_of
from wildhold.world.wealth import formula_summary
from wildhold.world.world import World

RULES_FORMAT = 1
MINUTES_PER_HOUR = 60


HIDDEN_SCENARIO_KEYS = ("days", "length_ticks", "description")  # what tells a scenario's length (or how a run is read)


def rules_json(content: Content, program_reads: Reads, horizon: str = "visible") -> dict[str, Any]:
    """Every rule of the world as JSON-ready data: the machine-readable design document (as a match of
    this horizon serves it)."""
    check_registry(content)
    doc = {
        "version": {"wildhold": wildhold.__version__, "content_digest": content.digest, "rules_format": RULES_FORMAT},
        "world": _world(content),
        "terrain": {name: t.model_dump() for name, t in content.terrain.items()},
        "items": _items(content),
        "nodes": _nodes(content),
        "structures": _structures(content),
        "recipes": {name: r.model_dump() for name, r in content.recipes.items()},
        "creatures": {name: c.model_dump() for name, c in content.creatures.items()},
        "actions": {name: _action(content, a) for name, a in REGISTRY.items()},
        "rejection_codes": dict(CODES),
        "event_envelope": {
            "seq": "Sequence number of the event in its match, from 1.",
            "tick": "Tick at which the event happened.",
            "kind": "One of the event kinds below.",
            "data": "The kind's fields.",
            "hash": "Chain hash stored with the event: blake2b-128 of the previous event's hash and this event's canonical JSON.",
        },
        "events": {kind: _event(model) for kind, model in EVENT_TYPES.items()},
        "observation": _observation(content),
        "scenarios": _scenarios(content),
        **{key: value for section in part_sections() for key, value in section.data(content).items()},
        "wealth": wealth_formula(content),
        "programs": _programs(content, program_reads),
    }
    return _without_horizon(doc) if horizon == "hidden" else doc


def _without_horizon(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with nothing that says when a match ends or how long a scenario lasts."""
    time = doc["world"]["time"]
    time["rules"] = [MATCH_STARTS if line == MATCH_STARTS_AND_ENDS else line for line in time["rules"]]
    for name, scenario in doc["scenarios"].items():
        doc["scenarios"][name] = {k: v for k, v in scenario.items() if k not in HIDDEN_SCENARIO_KEYS}
    clock = doc["observation"]["fields"]["time"]["fields"]
    clock.pop("ends_at_tick")
    return doc


def part_sections() -> list[Section]:
    """The parts' sections of the document, in the order they are rendered."""
    return sorted((section for part in PARTS for section in part.rules), key=lambda section: section.place)


def _world_rules(topic: str, c: Content) -> list[str]:
    """The sentences the parts add to one of the world's topics."""
    return [line for part in PARTS if topic in part.world_rules for line in part.world_rules[topic](c)]


def wealth_formula(c: Content) -> dict[str, Any]:
    """The public wealth formula (seed 003) with every weight, and its one-line summary."""
    w = c.wealth
    return {
        "summary": formula_summary(c),
        "terms": [
            "carried items: every item in the character's inventory, at its value_cents",
            "escrowed items: items the character put into escrow (open trade offers, contracts it pays, market orders), at value_cents",
            "owned intact structures: each structure the character owns, at its value_cents x hp / max hp, rounded down",
            "net storehouse deposits: items the character deposited in any storehouse and has not withdrawn (a deposit counts for the depositor, never the storehouse owner)",
            f"reputation x {w.reputation_cents} cents",
            f"sum of trained attribute levels x {w.attribute_level_cents} cents",
        ],
        "ties": "Characters with exactly equal wealth share a rank (standard competition ranking: 1, 1, 3).",
        "item_values_cents": {k: i.value_cents for k, i in c.items.items()},
        "structure_values_cents": {k: s.value_cents for k, s in c.structures.items() if s.value_cents},
    }


def rules_digest(content: Content, program_reads: Reads, horizon: str = "visible") -> str:
    """sha256 of the canonical JSON (sorted keys) of `rules_json`: a stable fingerprint."""
    canonical = json.dumps(rules_json(content, program_reads, horizon), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


# ---- the world ------------------------------------------------------------------------------


def _clock(tick: int) -> str:
    hours, minutes = divmod(tick, MINUTES_PER_HOUR)
    return f"{hours:02d}:{minutes:02d}"


def _plural(n: int | float, word: str) -> str:
    return f"{n:g} {word}" if n == 1 else f"{n:g} {word}s"


MATCH_STARTS = "A match starts at its scenario's start hour on day 1."
MATCH_STARTS_AND_ENDS = "A match starts at its scenario's start hour on day 1 and ends after its number of days."


def _world(c: Content) -> dict[str, Any]:
    cal, n = c.calendar, c.needs
    total_weight = sum(cal.weathers.values())
    night_ticks = (cal.night_end - cal.night_start) % cal.ticks_per_day
    safe = [name for name, t in c.terrain.items() if t.safe]
    shelters = [name for name, s in c.structures.items() if s.shelter]
    busy_ok = [name for name, a in REGISTRY.items() if a.while_busy]
    with_creatures = [name for name, s in c.scenarios.items() if s.night_creatures]
    time = {
        "tick": "1 tick = 1 in-game minute.",
        "ticks_per_day": cal.ticks_per_day,
        "night_start_tick": cal.night_start,
        "night_end_tick": cal.night_end,
        "night_start": _clock(cal.night_start),
        "night_end": _clock(cal.night_end),
        "night_ticks": night_ticks,
        "days_per_season": cal.days_per_season,
        "seasons": list(cal.seasons),
        "weather_odds": {
            w: {"weight": weight, "probability": round(weight / total_weight, 4)} for w, weight in cal.weathers.items()
        },
        "rules": [
            f"Tick t is minute t mod {cal.ticks_per_day} of day t div {cal.ticks_per_day} + 1; hour = minute div {MINUTES_PER_HOUR}.",
            f"Night lasts from {_clock(cal.night_start)} (minute {cal.night_start}) to {_clock(cal.night_end)} "
            f"(minute {cal.night_end}) of the day: {_plural(night_ticks, 'tick')}.",
            f"Each season lasts {_plural(cal.days_per_season, 'day')}; the seasons run in the order "
            f"{', '.join(cal.seasons)} and then repeat.",
            "The weather is drawn at the start of each day (and when a match starts) with the odds listed.",
            MATCH_STARTS_AND_ENDS,
        ],
    }
    fog = {
        "view_radius": n.view_radius,
        "view_size": 2 * n.view_radius + 1,
        "reach": n.reach,
        "rules": [
            f"A character sees the tiles within {n.view_radius} of it: a {2 * n.view_radius + 1}x"
            f"{2 * n.view_radius + 1} square centred on it, cut off at the map's edges.",
            "Distances are Chebyshev distances: a diagonal step counts as one.",
            "Tiles in view are observed as they are now. A tile that leaves the view is remembered as it was "
            "on the last tick it was in view (resource node and amount, structure and owner, items on the "
            "ground), with that tick as seen_tick. Terrain never changes.",
            "Other characters and creatures are shown only while they are in view.",
            f"move_to plans paths only over tiles the character has seen, as it knows them, of at most "
            f"{_plural(n.max_path_length, 'step')}; its target must be in view or remembered.",
            "x is the column (0 is the west edge) and y the row (0 is the north edge): moving n lowers y.",
        ],
    }
    knockdown = [
        "When health reaches 0 the character is knocked down. Its operation fails with code knocked_down.",
        f"Of each carried stack, ceil({n.knockdown_drop_fraction:g} x quantity) units stay on the ground where it fell.",
        "It wakes on its own bed if that bed still stands, otherwise at the settlement.",
        f"It wakes with health {n.respawn_health}, energy at least {n.respawn_energy} and satiety at least "
        f"{n.respawn_satiety}. Creatures hunting it lose their target.",
        "Each knockdown is counted (self.knockdowns in observations; a knockdown event).",
    ]
    night = [
        f"A character is sheltered when it stands on safe terrain ({', '.join(safe) or 'none'}) or on a "
        f"sheltering structure ({', '.join(shelters) or 'none'}).",
        f"In scenarios with night creatures ({', '.join(with_creatures) or 'none'}), on each tick of night each "
        "hostile nocturnal creature kind may appear near each unsheltered character: with its spawn_chance, "
        "spawn_distance tiles away, on a walkable tile that is not safe terrain, while fewer than "
        "its max_per_character creatures hunt that character.",
        "A creature hunts its character while that character is within its sight, unsheltered and not "
        "knocked down; otherwise it loses the target.",
        "A creature next to its target deals its damage on ticks that are multiples of attack_every; "
        "otherwise it steps toward the target on ticks that are multiples of move_every. Creatures never "
        "enter safe terrain or blocking structures.",
        f"Nocturnal creatures vanish when night ends ({_clock(cal.night_end)}).",
    ]
    operations = [
        "An action is submitted for a character and is either rejected at once with a code and a sentence "
        "(nothing changes) or accepted as an operation with an id, ending at the current tick plus its duration.",
        f"A character runs one operation at a time; while one runs, only actions allowed while busy "
        f"({', '.join(busy_ok) or 'none'}) are accepted, others are rejected with code busy.",
        "An action whose energy cost exceeds the character's energy is rejected with code not_enough_energy; "
        "the cost is paid when the operation completes.",
        "An operation's conditions are checked again when it completes; if they no longer hold it fails with "
        "the matching code and nothing it would have produced is produced.",
        "An operation with duration 0 completes in the tick it is submitted.",
        "Outcomes are events: operation_completed (with a result), operation_failed (with a code) or "
        "operation_cancelled.",
    ]
    gathering = [
        f"gather takes from a resource node on a tile within reach ({n.reach}).",
        "Units per gather = the node's base_yield plus the yield bonus for that node of the tool equipped in "
        "hand, at most the amount the node holds.",
        "A node with requires_tool can be gathered only while the hand holds a tool whose yield bonus lists "
        "that node (a bonus of 0 counts).",
        "A node regrows to its full capacity regrow_ticks after it was emptied; a partly gathered node does not regrow.",
    ]
    crafting = [
        "craft and cook take a recipe name; the recipe's kind (craft or cook) must match the action.",
        f"All inputs must be carried. If the recipe names a station, a structure of that kind with hit points "
        f"above 0 must stand within reach ({n.reach}), whoever owns it; a recipe without a station needs none.",
        "On completion the inputs are taken and the outputs given; the recipe sets duration and energy.",
    ]
    construction = [
        "place puts one placeable item the character carries onto a tile within reach whose terrain is "
        "walkable, that is not the dungeon entrance and that holds no structure and no resource node; a "
        "blocking structure cannot be placed where a character stands.",
        "The character that places a structure owns it; placing a bed makes it that character's bed.",
        "A bed can be slept in by its owner, or by anyone if it has no owner. The settlement's stations have no owner.",
        "Structures that are not walkable block movement.",
        *_world_rules("construction", c),
    ]
    start = [
        f"A character joins at a spawn point in the settlement with health {n.max_health}, energy "
        f"{n.max_energy}, satiety {n.max_satiety} and its scenario's start items.",
        "The settlement's stations, listed per scenario, stand in the settlement from the start.",
    ]
    equipment = [
        "equip puts a tool the character carries into its slot (hand or body), replacing what the slot held; "
        "the item stays in the inventory and is unequipped if the character no longer carries it.",
        "Items dropped lie on the tile; anyone on that tile may pick them up.",
    ]
    return {
        "time": time,
        "needs": _needs(c),
        "knockdown": knockdown,
        "night": night,
        "fog_of_war": fog,
        "operations": operations,
        "gathering": gathering,
        "crafting": crafting,
        "construction": construction,
        "equipment": equipment,
        "start": start,
        "tick_order": _tick_order(),
    }


_NEEDS_MEANING: dict[str, Callable[[NeedsSpec, int], str]] = {
    "max_health": lambda n, d: f"Health runs from 0 to {n.max_health}; a character starts with full health, and at 0 it is knocked down.",
    "max_energy": lambda n, d: f"Energy runs from 0 to {n.max_energy}; a character starts with full energy.",
    "max_satiety": lambda n, d: f"Satiety runs from 0 to {n.max_satiety}; a character starts with full satiety.",
    "satiety_decay_every": lambda n, d: f"Satiety falls by 1 every {_plural(n.satiety_decay_every, 'tick')} ({d / n.satiety_decay_every:g} a day).",
    "energy_decay_every": lambda n, d: f"Energy falls by 1 every {_plural(n.energy_decay_every, 'tick')} while not asleep ({d / n.energy_decay_every:g} a day).",
    "starving_damage": lambda n, d: f"At 0 satiety, health falls by {n.starving_damage} every {_plural(n.starving_damage_every, 'tick')}.",
    "starving_damage_every": lambda n, d: f"Interval of starving damage: {_plural(n.starving_damage_every, 'tick')}.",
    "exhausted_damage": lambda n, d: f"At 0 energy, health falls by {n.exhausted_damage} every {_plural(n.exhausted_damage_every, 'tick')}.",
    "exhausted_damage_every": lambda n, d: f"Interval of exhaustion damage: {_plural(n.exhausted_damage_every, 'tick')}.",
    "regen_every": lambda n, d: f"Health rises by 1 every {_plural(n.regen_every, 'tick')} while satiety is at least {n.regen_min_satiety} and energy is above 0.",
    "regen_min_satiety": lambda n, d: f"Satiety needed for health to recover: {n.regen_min_satiety}.",
    "sleep_energy_per_tick": lambda n, d: f"Sleeping in a usable bed restores {n.sleep_energy_per_tick} energy each tick.",
    "rest_energy_every": lambda n, d: f"Resting restores 1 energy every {_plural(n.rest_energy_every, 'tick')}.",
    "view_radius": lambda n, d: f"A character sees tiles within {n.view_radius} of it (a {2 * n.view_radius + 1}x{2 * n.view_radius + 1} square).",
    "reach": lambda n, d: f"Actions on a tile (gather, place) and stations for recipes must be within {n.reach} of the character, diagonals included.",
    "respawn_health": lambda n, d: f"Health after a knockdown: {n.respawn_health}.",
    "respawn_energy": lambda n, d: f"Energy after a knockdown: at least {n.respawn_energy}.",
    "respawn_satiety": lambda n, d: f"Satiety after a knockdown: at least {n.respawn_satiety}.",
    "knockdown_drop_fraction": lambda n, d: f"On a knockdown, ceil({n.knockdown_drop_fraction:g} x quantity) of each carried stack stays where the character fell.",
    "max_sleep_ticks": lambda n, d: f"One sleep or rest operation lasts at most {_plural(n.max_sleep_ticks, 'tick')}.",
    "max_wait_ticks": lambda n, d: f"One wait operation lasts at most {_plural(n.max_wait_ticks, 'tick')}.",
    "max_path_length": lambda n, d: f"move_to follows paths of at most {_plural(n.max_path_length, 'step')}.",
}


def _needs(c: Content) -> dict[str, Any]:
    n, day = c.needs, c.calendar.ticks_per_day
    out = {}
    for field, info in NeedsSpec.model_fields.items():
        meaning = _NEEDS_MEANING.get(field)
        out[field] = {
            "value": getattr(n, field),
            "meaning": meaning(n, day) if meaning else (info.description or field.replace("_", " ")),
        }
    return out


def _tick_order() -> list[str]:
    """The systems `World.step` runs, in order: the core systems, then each world part."""
    # Parts that share a section of the snapshot were split from one part and run as it did, in one step.
    sections = dict.fromkeys(section_of(part) for part in PARTS)
    return [system.__name__ for system in World.SYSTEMS] + [f"{name} (part)" for name in sections]


# ---- things ---------------------------------------------------------------------------------


def _items(c: Content) -> dict[str, Any]:
    out = {}
    for name, item in c.items.items():
        food = item.satiety or item.health or item.energy or item.category == "food"
        out[name] = {
            "description": item.description,
            "category": item.category,
            "value_cents": item.value_cents,
            "food": {"satiety": item.satiety, "health": item.health, "energy": item.energy} if food else None,
            "tool": item.tool.model_dump() if item.tool else None,
            "places": item.places,
        }
    return out


def _nodes(c: Content) -> dict[str, Any]:
    out = {}
    for name, node in c.nodes.items():
        tools = {t: i.tool.yield_bonus[name] for t, i in c.items.items() if i.tool and name in i.tool.yield_bonus}
        out[name] = {**node.model_dump(), "tool_bonus": tools}
    return out


def _structures(c: Content) -> dict[str, Any]:
    out = {}
    for name, s in c.structures.items():
        out[name] = {
            **s.model_dump(),
            "placed_from": [i for i, item in c.items.items() if item.places == name],
            "station_for": [r for r, recipe in c.recipes.items() if recipe.station == name],
        }
    return out


def _scenarios(c: Content) -> dict[str, Any]:
    out = {}
    for name, s in c.scenarios.items():
        out[name] = {
            **s.model_dump(),
            "start_tick": s.start_hour * MINUTES_PER_HOUR,
            "length_ticks": s.days * c.calendar.ticks_per_day,
        }
    return out


# ---- actions and events ---------------------------------------------------------------------


def _fixed(d: int, e: int) -> dict[str, Any]:
    rule = "Completes at once" if d == 0 else f"Takes {_plural(d, 'tick')}"
    return {"duration": d, "energy": e, "rule": f"{rule}; costs {e} energy."}


def _per_step(d: int, e: int) -> dict[str, Any]:
    return {"duration_per_step": d, "energy": e, "rule": f"Takes {_plural(d, 'tick')} per step of the path; costs {e} energy."}


def _from_recipe(d: int, e: int) -> dict[str, Any]:
    return {"duration_from": "recipe", "energy_from": "recipe", "rule": "Takes the recipe's duration and costs the recipe's energy."}


def _from_ticks(d: int, e: int) -> dict[str, Any]:
    return {"duration_from": "ticks", "energy": e, "rule": f"Takes as many ticks as its ticks argument; costs {e} energy."}


def _from_content(d: int, e: int) -> dict[str, Any]:
    return {"duration_from": "content", "energy": e,
            "rule": f"Takes the time its content entry names (see the sections below); costs {e} energy unless stated there."}


TIMING_RULES: dict[str, Callable[[int, int], dict[str, Any]]] = {
    "set by its content entry": _from_content,
    "fixed": _fixed,
    "one tick per step": _per_step,
    "the recipe's duration": _from_recipe,
    "the ticks you ask for": _from_ticks,
}


def _action(c: Content, a: ActionDef) -> dict[str, Any]:
    base = c.actions[a.name]
    render = a.cost_rule or TIMING_RULES.get(a.timing)
    if render is None:
        cost = {"duration": base.duration, "energy": base.energy, "rule": f"{a.timing}; base {base.duration} ticks, {base.energy} energy."}
    else:
        cost = render(base.duration, base.energy)
    return {
        "category": a.category,
        "description": a.doc,
        "arguments": a.json_schema(),
        "cost": {"timing": a.timing, **cost},
        "while_busy": a.while_busy,
    }


def _type_name(s: dict[str, Any]) -> str:
    if "anyOf" in s:
        return " | ".join(_type_name(x) for x in s["anyOf"])
    if "enum" in s:
        return "one of " + ", ".join(str(v) for v in s["enum"])
    if "$ref" in s:
        return s["$ref"].rsplit("/", 1)[-1]
    kind = s.get("type", "any")
    if kind == "array":
        if "prefixItems" in s:
            return "[" + ", ".join(_type_name(x) for x in s["prefixItems"]) + "]"
        return f"list of {_type_name(s['items'])}" if "items" in s else "list"
    if kind == "object" and isinstance(s.get("additionalProperties"), dict):
        return f"map of string to {_type_name(s['additionalProperties'])}"
    return str(kind)


def _event(model: type) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    fields = {name: _type_name(prop) for name, prop in schema.get("properties", {}).items()}
    doc = model.__dict__.get("__doc__")
    return {"description": inspect.cleandoc(doc) if doc else None, "fields": fields}


# ---- programs -------------------------------------------------------------------------------

PROGRAM_ISSUER = "program:<name>@<revision>"


def _sandbox_refusals(p: ProgramsSpec) -> dict[str, str]:
    """What the sandbox does with each kind of escape attempt: the cases of the escape suite in tests/."""
    return {
        "reading or writing files (`open`, `os.listdir`), reading `os.environ`": "PermissionError (a plain `open()` call is "
        "refused at save, as a type error)",
        "importing `socket`, `subprocess`, `ctypes`, `builtins` or any module outside the interpreter's own": "ModuleNotFoundError",
        "`os.system` and other process calls": "AttributeError: the os module has no such function",
        "`__import__`, `globals()`, `eval` of either": "NameError (refused at save when written plainly)",
        "introspection: `__class__`, `__subclasses__`, `__globals__`, `__code__`, `__traceback__`, `sys._getframe`": "AttributeError",
        "`sys`": "imports, but holds no host path, environment, module table or frame",
        "an endless loop, or printing without end": f"TimeoutError with reason wall_clock after {p.call_wall_s:g} s "
                                                   "(the safety net)",
        "a memory bomb": f"MemoryError with reason limit ({p.max_memory_bytes // (1 << 20)} MiB)",
        "deep recursion": f"RecursionError with reason limit (depth {p.max_recursion_depth})",
        "passing the world a value too large to carry (megabytes in one call)": "ValueError: the value is too large",
        "flooding actions": f"at most {p.actions_per_tick} actions a turn; the program goes on at the next tick",
        "flooding the log": f"the log keeps {p.log_lines} lines, each cut to {p.log_line_chars} characters; older "
                            "lines are dropped and counted",
        "acting as another character": "an `agent` argument is a type error at save and bad_arguments when it runs; "
                                       "every action is the program's own character's",
        "a runner frame with another program's capability": "refused: the program fails with reason capability",
    }


def _programs(c: Content, reads: Reads) -> dict[str, Any]:
    """The program API and every number programs run under (programs.yaml), with the rules that use them."""
    p = c.programs
    values = p.model_dump(mode="json")
    limits = {name: {"value": values[name], "meaning": field.description or name.replace("_", " ")}
              for name, field in ProgramsSpec.model_fields.items()}
    return {
        "summary": "A program is Python source an agent saves and starts; it runs inside the world on the agent's "
                   "character's behalf at every tick boundary, between the agent's own calls, until it finishes, "
                   "fails or is stopped.",
        "limits": limits,
        "rules": [
            f"A character keeps at most {p.max_programs_per_agent} program names with at most {p.max_revisions} "
            f"revisions each and runs at most {p.max_running_per_agent} at once (past either: program_limit); a "
            f"source is at most {p.max_source_bytes} UTF-8 bytes (past that: program_too_large).",
            "Fairness is counted, not timed: world calls per turn and actions per tick are the deterministic "
            "budgets. There is no interpreter-step counter: computing between two world calls is bounded only by "
            f"wall clock ({p.call_wall_s:g} s between two calls, {p.turn_wall_s:g} s per turn), a safety net. When "
            "it fires the program fails with reason wall_clock, and that failure is recorded as an input and a "
            "program_failed event, so a replay reproduces it without timing anything.",
            "Every result a program received from the world is recorded with the match, and each paused program's "
            "state is stored after every turn: a program resumes after a server restart, and a replay feeds each "
            "recorded result back to the program to check it makes the same calls.",
            f"A program's log keeps its last {p.log_lines} lines of at most {p.log_line_chars} characters; older "
            "lines are dropped and counted.",
        ],
        "sandbox": {
            "summary": "Programs run in Monty, a Python subset, in a separate runner process with no files, network, "
                       "processes, environment variables or secrets; a crash or limit in one program fails only that "
                       "program, and the world never waits on it past the wall-clock limits.",
            "refused": _sandbox_refusals(p),
            "memory_bytes": p.max_memory_bytes,
            "recursion_depth": p.max_recursion_depth,
            "frozen_clock": p.frozen_clock.isoformat(),
        },
        "functions": {f["name"]: {k: v for k, v in f.items() if k != "name"} for f in api_functions(content=c, reads=reads)},
        "op_result": {name: {"type": typ, "meaning": meaning} for name, (typ, meaning) in OP_RESULT_FIELDS.items()},
        "events": [kind for kind in EVENT_TYPES if kind.startswith("program_")],
        "reference": reference_markdown(c, reads=reads),
    }


# ---- observations ---------------------------------------------------------------------------


def _observation(c: Content) -> dict[str, Any]:
    """The core fields, then each world part's own (`Part.observation_fields`)."""
    r = c.needs.view_radius
    size = 2 * r + 1
    fields = _core_observation_fields(c, r, size)
    return {
        "summary": "What a character perceives, and all that reaches an agent: the time, itself, "
        "the tiles in its view now, its memory of tiles seen before, and what each part of the world adds.",
        "tile_features": {
            "node": "{kind, amount}: a resource node and the units it holds.",
            "structure": "{kind, owner}: a structure and the id of its owner (null: no owner).",
            "items": "Item -> quantity lying on the ground.",
        },
        "glyphs": {t.glyph: name for name, t in c.terrain.items()},
        "fields": fields | {key: spec for part in PARTS for key, spec in part.observation_fields.items()},
    }


def _core_observation_fields(c: Content, r: int, size: int) -> dict[str, Any]:
    return {
        "time": {
            "description": "The clock.",
            "fields": {
                "tick": "Ticks (minutes) since the start of day 1.",
                "day": "Day number, from 1.",
                "hour": "Hour of the day.",
                "minute": "Minute of the hour.",
                "night": "Whether it is night.",
                "season": "The current season.",
                "weather": "Today's weather.",
                "ends_at_tick": "Tick at which the match ends.",
            },
        },
        "self": {
            "description": "The character itself.",
            "fields": {
                "id": "Character id.",
                "name": "Character name.",
                "x": "Column.",
                "y": "Row.",
                "region": "Name of the region it stands in.",
                "health": f"0..{c.needs.max_health}.",
                "energy": f"0..{c.needs.max_energy}.",
                "satiety": f"0..{c.needs.max_satiety}.",
                "asleep": "Whether it is sleeping.",
                "sheltered": "Whether it stands on safe terrain or a sheltering structure.",
                "inventory": "Item -> quantity carried.",
                "equipment": "Slot -> equipped item.",
                "bed": "[x, y] of its bed, or null.",
                "knockdowns": "How many times it was knocked down.",
                "operation": "The running operation {op, action, args, started, ends}, or null.",
            },
        },
        "view": {
            "description": f"The tiles within {r} of the character (a {size}x{size} square cut off at the map's edges), as they are now.",
            "fields": {
                "x0": "Column of the view's west edge.",
                "y0": "Row of the view's north edge.",
                "rows": "One string per row, north to south, one terrain glyph per tile (see legend): rows[i][j] is tile (x0 + j, y0 + i).",
                "tiles": "Tiles in view with something on them: {x, y} plus node, structure and items when present.",
                "characters": "Other characters in view: {id, name, x, y}.",
                "creatures": "Creatures in view: {id, kind, x, y, hp}.",
            },
        },
        "legend": {"description": "Glyph -> terrain kind.", "fields": {}},
        "changes_since": {"description": "Observed as changes (observe's default): the tick of the last look they are "
                                         "since. The sections that look showed as they are now are left out.",
                          "fields": {}},
        "unchanged": {"description": "Observed as changes: the sections left out, unchanged since that look.",
                      "fields": {}},
        "memory": {
            "description": "Tiles seen before and out of view now, as last seen (observed as changes: those remembered "
                           "since the last look, less those its view showed as they are now).",
            "fields": {
                "x": "Column.",
                "y": "Row.",
                "terrain": "Terrain kind.",
                "seen_tick": "Tick on which the tile was last in view.",
                "node": "{kind, amount} of a resource node, when there was one.",
                "structure": "{kind, owner} of a structure, when there was one.",
                "items": "Item -> quantity on the ground, when there were any.",
            },
        },
    }


# ---- Markdown -------------------------------------------------------------------------------


def _md_arguments(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties", {})
    if not props:
        return ["No arguments.", ""]
    required = set(schema.get("required", []))
    rows = []
    for name, prop in props.items():
        limits = [f"{k} {prop[k]}" for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength") if k in prop]
        rows.append([f"`{name}`", _type_name(prop), name in required, prop.get("default"), limits, prop.get("description")])
    return table(["argument", "type", "required", "default", "limits", "description"], rows)


SCENARIO_COLUMNS = (("scenario", None), ("size", None), ("regions", "regions"), ("days", "days"),
                    ("length (ticks)", "length_ticks"), ("agents", "agents"), ("start hour", "start_hour"),
                    ("start items", "start_items"), ("night creatures", "night_creatures"),
                    ("node density scale", "node_density_scale"), ("settlement stations", None),
                    ("description", "description"))


def _md_scenarios(scenarios: dict[str, Any]) -> list[str]:
    """The scenarios' table, with the columns the document holds (a hidden horizon drops the lengths)."""
    held = set.intersection(*(set(s) for s in scenarios.values()))
    columns = [(title, key) for title, key in SCENARIO_COLUMNS if key is None or key in held]

    def cell(name: str, s: dict[str, Any], title: str, key: str | None) -> Any:
        if key is not None:
            return s[key]
        return {"scenario": f"`{name}`", "size": f"{s['width']}x{s['height']}",
                "settlement stations": s["settlement"]["stations"]}[title]

    return table([title for title, _ in columns],
                 [[cell(name, s, title, key) for title, key in columns] for name, s in scenarios.items()])


def rules_markdown(content: Content, program_reads: Reads, horizon: str = "visible") -> str:
    """The rules as a readable Markdown document, rendered from `rules_json` alone."""
    doc = rules_json(content, program_reads, horizon)
    v, w = doc["version"], doc["world"]
    time = w["time"]
    md: list[str] = [
        "# Wildhold rules",
        "",
        f"Wildhold {v['wildhold']}, content digest `{v['content_digest']}`, rules format {v['rules_format']}. "
        "Generated from the content files and the action registry.",
        "",
        "## Time",
        "",
        time["tick"],
        "",
        *table(
            ["ticks per day", "night", "night length (ticks)", "days per season", "seasons"],
            [[time["ticks_per_day"], f"{time['night_start']}-{time['night_end']}", time["night_ticks"], time["days_per_season"], time["seasons"]]],
        ),
        *bullets(time["rules"]),
        "### Weather",
        "",
        *table(["weather", "weight", "probability per day"], [[k, o["weight"], o["probability"]] for k, o in time["weather_odds"].items()]),
        "## Needs",
        "",
        *table(["need", "value", "meaning"], [[f"`{k}`", n["value"], n["meaning"]] for k, n in w["needs"].items()]),
        "## Knockdowns",
        "",
        *bullets(w["knockdown"]),
        "## Night and shelter",
        "",
        *bullets(w["night"]),
        "## Fog of war",
        "",
        *table(["view radius", "view size", "reach"], [[w["fog_of_war"]["view_radius"], w["fog_of_war"]["view_size"], w["fog_of_war"]["reach"]]]),
        *bullets(w["fog_of_war"]["rules"]),
        "## Operations",
        "",
        *bullets(w["operations"]),
        "Each tick the world runs these systems in order: " + ", ".join(f"`{s}`" for s in w["tick_order"]) + ".",
        "",
        "### Gathering",
        "",
        *bullets(w["gathering"]),
        "### Crafting and cooking",
        "",
        *bullets(w["crafting"]),
        "### Construction",
        "",
        *bullets(w["construction"]),
        "### Equipment and items on the ground",
        "",
        *bullets(w["equipment"]),
        "## Terrain",
        "",
        *table(
            ["terrain", "glyph", "walkable", "safe", "description"],
            [[f"`{k}`", f"`{t['glyph']}`", t["walkable"], t["safe"], t["description"]] for k, t in doc["terrain"].items()],
        ),
        "## Items",
        "",
        *table(
            ["item", "category", "value (cents)", "description"],
            [[f"`{k}`", i["category"], i["value_cents"], i["description"]] for k, i in doc["items"].items()],
        ),
        "### Food",
        "",
        *table(
            ["item", "satiety", "health", "energy"],
            [[f"`{k}`", i["food"]["satiety"], i["food"]["health"], i["food"]["energy"]] for k, i in doc["items"].items() if i["food"]],
        ),
        "### Tools",
        "",
        *table(
            ["item", "slot", "yield bonus per node", "damage", "defense"],
            [[f"`{k}`", i["tool"]["slot"], i["tool"]["yield_bonus"], i["tool"].get("damage", 0), i["tool"].get("defense", 0)]
             for k, i in doc["items"].items() if i["tool"]],
        ),
        "### Placeables",
        "",
        *table(["item", "places structure"], [[f"`{k}`", f"`{i['places']}`"] for k, i in doc["items"].items() if i["places"]]),
        "## Resource nodes",
        "",
        *table(
            ["node", "item", "base yield", "capacity", "regrow (ticks)", "tool needed", "tool bonus", "terrain", "density", "description"],
            [
                [f"`{k}`", n["item"], n["base_yield"], n["capacity"], n["regrow_ticks"], n["requires_tool"], n["tool_bonus"], n["terrain"], n["density"], n["description"]]
                for k, n in doc["nodes"].items()
            ],
        ),
        "## Structures",
        "",
        *table(
            ["structure", "hp", "walkable", "shelter", "station", "bed", "placed from", "station for", "description"],
            [
                [f"`{k}`", s["hp"], s["walkable"], s["shelter"], s["station"], s["bed"], s["placed_from"], s["station_for"], s["description"]]
                for k, s in doc["structures"].items()
            ],
        ),
        "## Recipes",
        "",
        *table(
            ["recipe", "kind", "station", "inputs", "outputs", "duration (ticks)", "energy"],
            [[f"`{k}`", r["kind"], r["station"], r["inputs"], r["outputs"], r["duration"], r["energy"]] for k, r in doc["recipes"].items()],
        ),
        "## Creatures",
        "",
        *table(
            ["creature", "hostile", "nocturnal", "hp", "damage", "attack every", "move every", "sight", "spawn chance", "spawn distance", "max per character", "description"],
            [
                [f"`{k}`", c["hostile"], c["nocturnal"], c["hp"], c["damage"], c["attack_every"], c["move_every"], c["sight"], c["spawn_chance"], c["spawn_distance"], c["max_per_character"], c["description"]]
                for k, c in doc["creatures"].items()
            ],
        ),
        "## Actions",
        "",
        *table(
            ["action", "category", "time and energy", "while busy"],
            [[f"`{k}`", a["category"], a["cost"]["rule"], a["while_busy"]] for k, a in doc["actions"].items()],
        ),
    ]
    for name, a in doc["actions"].items():
        md += [f"### `{name}`", "", a["description"], "", f"Category: {a['category']}. {a['cost']['rule']}", ""]
        md += _md_arguments(a["arguments"])
    md += [
        "## Rejection codes",
        "",
        *table(["code", "meaning"], [[f"`{k}`", m] for k, m in doc["rejection_codes"].items()]),
        "## Events",
        "",
        "Every event carries:",
        "",
        *table(["field", "meaning"], [[f"`{k}`", m] for k, m in doc["event_envelope"].items()]),
        *table(
            ["event", "fields"],
            [[f"`{k}`", ", ".join(f"{f} ({t})" for f, t in e["fields"].items())] for k, e in doc["events"].items()],
        ),
        "## Observations",
        "",
        doc["observation"]["summary"],
        "",
    ]
    for part, spec in doc["observation"]["fields"].items():
        md += [f"### `{part}`", "", spec["description"], ""]
        if spec["fields"]:
            md += table(["field", "meaning"], [[f"`{f}`", m] for f, m in spec["fields"].items()])
    md += [
        "### Tile features",
        "",
        *table(["feature", "meaning"], [[f"`{f}`", m] for f, m in doc["observation"]["tile_features"].items()]),
        *table(["glyph", "terrain"], [[f"`{g}`", t] for g, t in doc["observation"]["glyphs"].items()]),
        "## Scenarios",
        "",
        *bullets(w["start"]),
        *_md_scenarios(doc["scenarios"]),
    ]
    for section in part_sections():
        md += section.markdown(doc)
    md += _md_wealth(doc["wealth"])
    md += _md_programs(doc["programs"])
    return "\n".join(md).rstrip() + "\n"


def _md_programs(p: dict[str, Any]) -> list[str]:
    """The program API reference (its own `## Programs` section), then every number and rule behind it."""
    return [
        p["reference"],
        "",
        "### Limits and budgets",
        "",
        *table(["setting", "value", "meaning"], [[f"`{k}`", v["value"], v["meaning"]] for k, v in p["limits"].items()]),
        "### Rules",
        "",
        *bullets(p["rules"]),
        "### What the sandbox refuses",
        "",
        p["sandbox"]["summary"],
        "",
        *table(["attempt", "outcome"], [[k, v] for k, v in p["sandbox"]["refused"].items()]),
        "Program events: " + ", ".join(f"`{k}`" for k in p["events"]) + "." if p["events"] else "",
        "",
    ]


def _md_wealth(wealth: dict[str, Any]) -> list[str]:
    return [
        "## Wealth",
        "",
        wealth["summary"],
        "",
        *bullets(wealth["terms"]),
        wealth["ties"],
        "",
        "Item and structure values are in the item and structure tables above.",
        "",
    ]
