"""The action registry: each action defined once (name, arguments, docstring, time, cost).

Every face — HTTP, MCP, programs, gym spaces, the rules document — is generated from
`REGISTRY`. A handler's `check` looks and never touches state; `finish` re-checks what may
have changed while the operation ran, then applies it. The helpers here are shared by the
action modules of every subsystem.
"""

from __future__ import annotations

import difflib
import inspect
from functools import lru_cache
from dataclasses import dataclass, field
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Callable, Container, Iterable, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from wildhold.content import Content, ContentError
from wildhold.world.errors import Rejected
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    import orjson

    from wildhold.world.world import World

DIRECTIONS: dict[str, tuple[int, int]] = {
    "n": (0, -1), "ne": (1, -1), "e": (1, 0), "se": (1, 1),
    "s": (0, 1), "sw": (-1, 1), "w": (-1, 0), "nw": (-1, -1),
}
Direction = Literal["n", "ne", "e", "se", "s", "sw", "w", "nw"]


class ActionArgs(BaseModel):
    """Arguments as their schema states them: no unknown fields, and no coercion (true is not 1, "31" not 31)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class NoArgs(ActionArgs):
    pass


class _CharacterRef:
    """Marks an argument that names a character: the world reads its id or its name (`World.character_id`)."""


CHARACTER_REF = _CharacterRef()
CharacterName = Annotated[str, CHARACTER_REF]


def character_field(description: str) -> Any:
    """An argument naming a character, by id or by name, as every such argument of every action takes one."""
    return Field(description=f"{description} By id (like 'a2') or name.")


class Target(ActionArgs):
    x: int = Field(description="Target tile column (0 is the west edge).")
    y: int = Field(description="Target tile row (0 is the north edge).")


@dataclass(slots=True)
class Plan:
    """What an accepted action costs and what its finish needs. Not frozen: one is made for every check an action
    mask passes, and a frozen one costs three times as much to make (nothing changes a plan once made)."""

    duration: int
    energy: int
    data: dict[str, Any] = field(default_factory=dict)


Check = Callable[["World", Character, dict[str, Any]], "Plan | Rejected"]
# A finish returns the completion event's result, or that result as canonical JSON already made (an orjson.Fragment,
# keys sorted at every depth: a large answer kept between calls), or a refusal.
Finish = Callable[["World", Character, Operation], "dict | orjson.Fragment | Rejected"]
Progress = Callable[["World", Character, Operation], "Rejected | None"]
Ready = Callable[["World", Character], "str | None"]
Sift = Callable[["World", Character], "dict[str, Container[Any]]"]


@dataclass(frozen=True)
class ActionDef:
    name: str
    args: type[ActionArgs]
    doc: str
    category: str
    # Looks at the arguments as the model dumps them to JSON (`json_args`, or `exact_args` without the model), so
    # that an action mask's check builds no model for arguments validation would take unchanged.
    check: Check
    finish: Finish
    progress: Progress | None = None
    # A precondition that reads no argument: the refusal code `check` gives every argument now (something it needs
    # is nowhere within reach, say), or None when some argument may pass. It may answer None when unsure, never a
    # code for a state in which some argument passes: an action mask skips an unready action's arguments unasked.
    ready: Ready | None = None
    # Per argument, the values with which `check` may pass now: with a value outside them it refuses whatever the
    # other arguments (the recipes whose inputs the character carries, say). It may keep a value that is refused, never
    # leave out one that passes: an action mask puts only entries of kept values to the check.
    sift: Sift | None = None
    begin: Callable[["World", Character, Operation], None] | None = None
    while_busy: bool = False
    timing: str = "fixed"
    # How the rules document states its time and cost, when `timing` is none of the common ways.
    cost_rule: Callable[[int, int], dict[str, Any]] | None = None
    # The argument names the model takes and those it needs: arguments outside them are refused before any model.
    fields: frozenset[str] = field(init=False)
    required: frozenset[str] = field(init=False)
    # The arguments that name a character (`CharacterName`): the world resolves a name to its id before the check.
    characters: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        model = self.args.model_fields
        object.__setattr__(self, "fields", frozenset(model))
        object.__setattr__(self, "required", frozenset(n for n, f in model.items() if f.is_required()))
        object.__setattr__(self, "characters", tuple(n for n, f in model.items() if CHARACTER_REF in f.metadata))

    def json_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema()


REGISTRY: dict[str, ActionDef] = {}


def _planned(cls: type) -> tuple[Check, Finish]:
    """check and finish from one `plan(w, c, args)` (looks, returns a Rejected or what `apply` needs) and
    `apply(w, c, op, planned)`: the plan runs when the action is submitted and again when it completes,
    since the world may have changed in between. The time and energy are the action's content entry,
    unless the class says otherwise with `spend(w, args, planned) -> Plan`."""
    spend, plan, name = getattr(cls, "spend", None), cls.plan, cls.name

    def check(w: World, c: Character, args: dict[str, Any]) -> Plan | Rejected:
        got = plan(w, c, args)
        if isinstance(got, Rejected):
            return got
        return spend(w, args, got) if spend else cost(w, name)

    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        got = cls.plan(w, c, op.args)
        return got if isinstance(got, Rejected) else cls.apply(w, c, op, got)

    return check, finish


_PLAIN: dict[type, bool] = {}


def json_args(a: ActionArgs) -> dict[str, Any]:
    """`a.model_dump(mode="json")`, read straight from its fields when every field's type is already what JSON
    holds (a number, a string, a choice of strings, a table of numbers): the check runs for every candidate an
    action mask puts to it, and the dump was a third of a refusal."""
    cls = type(a)
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = _PLAIN[cls] = cls.model_config.get("extra") != "allow" and all(_plain(f.annotation) for f in cls.model_fields.values())
    return {k: dict(v) if type(v) is dict else v for k, v in a.__dict__.items()} if plain else a.model_dump(mode="json")


_ABSENT = object()
_EXACT: dict[type, list[tuple[str, type | None, Callable[[Any], bool], Any]] | None] = {}
_PLAIN_EXACT: dict[type, tuple[tuple[str, type], ...] | None] = {}  # see `_plain_required`


def exact_args(model: type[ActionArgs], args: dict[str, Any]) -> dict[str, Any] | None:
    """`json_args(model.model_validate(args))` without building the model, when every argument is exactly of its
    field's JSON type (no subclass: true is not an int) within its bounds, so that strict validation would accept
    each unchanged and fill in the same defaults; else None, and validation answers. Arguments that name a field
    the model does not take, or leave out one it needs, answer None."""
    kinds = _PLAIN_EXACT.get(model, _ABSENT)
    if kinds is not None and kinds is not _ABSENT:  # most actions: a string or an integer each field needs
        if len(args) != len(kinds):
            return None
        out: dict[str, Any] = {}
        for name, kind in kinds:
            value = args.get(name, _ABSENT)
            if value.__class__ is not kind:
                return None
            out[name] = value
        return out
    fields = _EXACT.get(model, _ABSENT)
    if fields is _ABSENT:
        fields = _EXACT[model] = _exact_fields(model)
        _PLAIN_EXACT[model] = _plain_required(fields)
    if fields is None:
        return None
    out = {}
    named = 0  # arguments that name a field: fewer than all of them when some field is unknown
    for name, plain, fits, default in fields:
        value = args.get(name, _ABSENT)
        if value is _ABSENT:
            if default is _ABSENT:
                return None
            out[name] = {} if default is dict else default  # a table whose default is made empty per model
        elif value.__class__ is plain:  # a field that takes any value of one type (no test to call)
            out[name] = value
            named += 1
        elif plain is None and fits(value):
            out[name] = dict(value) if type(value) is dict else value
            named += 1
        else:
            return None
    return out if named == len(args) else None


def _plain_required(fields: list[tuple[str, type | None, Callable[[Any], bool], Any]] | None) -> tuple[tuple[str, type], ...] | None:
    """(name, type) of each field when every one is needed and takes any value of one type (an unbounded int or str):
    `exact_args` then only compares the names' count and each value's type. None for other models."""
    if fields is None or any(plain is None or default is not _ABSENT for _, plain, _, default in fields):
        return None
    return tuple((name, plain) for name, plain, _, _ in fields)


def _exact_fields(model: type[ActionArgs]) -> list[tuple[str, type | None, Callable[[Any], bool], Any]] | None:
    """(name, the one type its values need when that is all they need (int or str, unbounded) else None, whether a
    value is exactly of its type within its bounds, default or _ABSENT) for each field, or None
    for a model with a field of another kind (an alias, a default made per model other than an empty table, a
    validated default, a validator, another type). The default `dict` stands for an empty table made per model."""
    decorators = model.__pydantic_decorators__
    if (model.model_config.get("strict") is not True or model.model_config.get("validate_default")
            or decorators.validators or decorators.field_validators or decorators.model_validators
            or decorators.root_validators):
        return None
    out = []
    for name, info in model.model_fields.items():
        fits = _exact_test(info.annotation, info.metadata)
        if fits is None or info.alias is not None or info.validate_default:
            return None
        if info.is_required():
            default = _ABSENT
        elif info.default_factory is dict:
            default = dict
        elif info.default_factory is not None:
            return None
        elif type(info.default) in (int, str, bool, type(None)):
            default = info.default
        else:
            return None
        plain = info.annotation if info.annotation in (int, str) and not info.metadata else None
        out.append((name, plain, fits, default))
    return out


def _exact_test(annotation: Any, metadata: list[Any]) -> Callable[[Any], bool] | None:
    """A test that a value is exactly of this type (as strict validation takes it unchanged) and within these bounds
    (annotated_types Ge, Gt, Le, Lt), or None for a type or a constraint of another kind."""
    bounds = []
    for m in metadata:
        if m is CHARACTER_REF:  # a marker for the world, no constraint
            continue
        kind = type(m).__name__
        if kind not in ("Ge", "Gt", "Le", "Lt"):
            return None
        bounds.append((kind, getattr(m, kind.lower())))
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _exact_test(args[0], [*args[1:], *metadata])
    if annotation is int:
        if any(type(b) is not int for _, b in bounds):
            return None
        # the bounds as one closed range: an integer is greater than b when it is at least b + 1
        low = max([b for k, b in bounds if k == "Ge"] + [b + 1 for k, b in bounds if k == "Gt"], default=None)
        high = min([b for k, b in bounds if k == "Le"] + [b - 1 for k, b in bounds if k == "Lt"], default=None)
        if low is None and high is None:
            return lambda v: type(v) is int
        if high is None:
            return lambda v: type(v) is int and v >= low
        if low is None:
            return lambda v: type(v) is int and v <= high
        return lambda v: type(v) is int and low <= v <= high
    if bounds:
        return None
    if annotation is str:
        return lambda v: type(v) is str
    if origin is Literal and all(type(a) is str for a in args):
        allowed = frozenset(args)
        return lambda v: type(v) is str and v in allowed
    if origin in (Union, UnionType) and set(args) <= {int, str}:
        kinds = frozenset(args)
        return lambda v: type(v) in kinds
    if origin is dict and args[0] is str:
        item = _exact_test(args[1], [])
        if item is None:
            return None
        return lambda v: type(v) is dict and _table_fits(v, item)
    return None


def _table_fits(table: dict[Any, Any], item: Callable[[Any], bool]) -> bool:
    """Whether every key of a table is a string and every value passes `item`: a plain loop (tables hold an item or
    two, for which a generator costs more than the tests)."""
    for key, value in table.items():
        if type(key) is not str or not item(value):
            return False
    return True


def _plain(annotation: Any) -> bool:
    """Whether values of this type are dumped to JSON as they are (a table's values copied)."""
    if annotation in (int, str, bool, type(None)):
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return all(type(v) in (int, str, bool) for v in args)
    if origin is Annotated:
        return _plain(args[0])
    if origin is dict:
        return args[0] is str and _plain(args[1])
    if origin in (Union, UnionType):
        return all(_plain(t) for t in args)
    return False


def add_action(cls: type) -> ActionDef:
    """Turn an action class (docstring, Args, and either check and finish or plan and apply, optional
    progress; check and plan read the arguments as JSON, a dict) into a registry entry. The core's `ACTIONS` and each part's `actions` are the lists
    that name them."""
    name = cls.name
    if name in REGISTRY:
        raise ValueError(f"action {name!r} registered twice")
    check, finish = _planned(cls) if hasattr(cls, "plan") else (cls.check, cls.finish)
    spec = REGISTRY[name] = ActionDef(
        name=name,
        args=getattr(cls, "Args", NoArgs),
        doc=inspect.getdoc(cls) or "",
        category=cls.category,
        check=check,
        finish=finish,
        progress=getattr(cls, "progress", None),
        ready=getattr(cls, "ready", None),
        sift=getattr(cls, "sift", None),
        begin=getattr(cls, "begin", None),
        while_busy=getattr(cls, "while_busy", False),
        timing=getattr(cls, "timing", "fixed"),
        cost_rule=getattr(cls, "cost_rule", None),
    )
    return spec


def check_registry(content: Content) -> None:
    """Every registered action needs its time and cost in actions.yaml, and nothing else may be there."""
    for name in REGISTRY:
        if name not in content.actions:
            raise ContentError("actions.yaml", name, "registered action has no duration/energy entry")
    for name in content.actions:
        if name not in REGISTRY:
            raise ContentError("actions.yaml", name, f"no such action{suggest(name)}")


def did_you_mean(name: str, options) -> str:
    """A hint naming the closest known name, or nothing."""
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def suggest(name: str) -> str:
    return did_you_mean(name, REGISTRY)


def cost(w: World, name: str, data: dict[str, Any] | None = None, duration: int | None = None) -> Plan:
    base = w.content.actions[name]
    return Plan(base.duration if duration is None else duration, base.energy, data or {})


def target(w: World, c: Character, x: int, y: int) -> int | Rejected:
    """A tile within the character's reach, or why not."""
    p = w.pos(x, y)
    if p is None:
        return Rejected("out_of_bounds", f"({x}, {y}) is outside the {w.width}x{w.height} map.")
    if p not in reach_tiles(w, c):
        cx, cy = w.xy(c.pos)
        return Rejected("out_of_range", f"({x}, {y}) is {w.distance(c.pos, p)} tiles from you at ({cx}, {cy}); reach is {w.needs.reach}.")
    return p


def reach_tiles(w: World, c: Character) -> tuple[int, ...]:
    """The tiles on the map within the character's reach (Chebyshev distance at most `reach`): those `target`
    accepts, and those a precondition looks over for what a check needs at its target tile."""
    table = w.kept.reach
    if table is None:  # kept on the world: asked by most preconditions, and the shared table's key is three numbers
        table = w.kept.reach = _reach_table(w.width, w.height, w.needs.reach)
    tiles = table.get(c.pos)
    if tiles is None:
        width, r = w.width, w.needs.reach
        x0, y0 = c.pos % width, c.pos // width
        tiles = table[c.pos] = tuple(y * width + x for y in range(max(0, y0 - r), min(w.height, y0 + r + 1))
                                     for x in range(max(0, x0 - r), min(width, x0 + r + 1)))
    return tiles


@lru_cache(maxsize=4)
def _reach_table(width: int, height: int, reach: int) -> dict[int, tuple[int, ...]]:
    """Tile -> the tiles within `reach` of it, filled as asked: shared by every world of a size (it depends on
    nothing else), like the neighbours of path search."""
    return {}


def any_in_reach(w: World, c: Character, table: dict[int, Any]) -> bool:
    """Whether any tile `target` may answer for this character is a key of `table` (a node, structure, plot):
    when none is, a check that needs one at its target tile refuses every argument."""
    return not table.keys().isdisjoint(reach_tiles(w, c))


def structure_in_reach(w: World, c: Character) -> bool:
    """`any_in_reach(w, c, w.structures)`, kept while no structure is placed or removed (`World.builds`): the
    precondition of a dozen actions, and structures are few and seldom built."""
    return in_reach_of_kept(w, c, "near_structures", w.builds, w.structures)


def in_reach_of_kept(w: World, c: Character, name: str, stamp: Any, table: dict[int, Any]) -> bool:
    """`any_in_reach(w, c, table)` read from the tiles within reach of some key of `table`, kept as `name` (one of
    `Kept`'s) while `stamp` (which moves whenever a key is added or removed) stays: one lookup an ask."""
    held = getattr(w.kept, name)
    if held is None or held[0] != stamp:
        held = (stamp, tiles_in_reach_of(w, table))
        setattr(w.kept, name, held)
    return c.pos in held[1]


def tiles_in_reach_of(w: World, tiles: Iterable[int]) -> frozenset[int]:
    """The tiles from which some of these tiles is within reach (Chebyshev distance at most `reach`)."""
    width, height, r = w.width, w.height, w.needs.reach
    return frozenset(y * width + x for p in tiles for y in range(max(0, p // width - r), min(height, p // width + r + 1))
                     for x in range(max(0, p % width - r), min(width, p % width + r + 1)))


def require_item(w: World, c: Character, item: str, qty: int = 1) -> Rejected | None:
    """None when the character carries `qty` of a known item, else why not."""
    if item not in w.content.items:
        return Rejected("unknown_item", f"There is no item {item!r}.")
    have = c.inventory.get(item, 0)
    if have < qty:
        return Rejected("not_in_inventory", f"You carry {have} {item}, not {qty}.")
    return None




ROSTER_SHOWN = 12  # characters an unknown_character refusal lists by id and name


def unknown_character(w: World, ref: str) -> Rejected:
    """The refusal of a character no id or name matches: what ids look like, and which exist."""
    known = [f"{cid} ({other.name})" for cid, other in list(w.chars.items())[:ROSTER_SHOWN]]
    more = f" and {len(w.chars) - ROSTER_SHOWN} more" if len(w.chars) > ROSTER_SHOWN else ""
    hint = did_you_mean(ref, [*w.chars, *(o.name for o in w.chars.values())])
    return Rejected("unknown_character", f"No character has the id or name {ref!r}.{hint} Ids look like 'a1'; the "
                    f"characters are {', '.join(known)}{more} (observe's view.characters lists those in sight).")


def other_character(w: World, c: Character, agent: str) -> Character | Rejected:
    """Another character by id (a trade's counterparty, a whisper's listener, an attack's target), or why not."""
    other = w.chars.get(agent)
    if other is None:
        return unknown_character(w, agent)
    if other.id == c.id:
        return Rejected("self_target", "That needs another character, not yourself.")
    return other


def carries(holder: Character, items: dict[str, int]) -> bool:
    """Whether the character carries all of `items`: `shortfall` says what it lacks otherwise."""
    inventory = holder.inventory
    return all(inventory.get(i, 0) >= q for i, q in items.items())


def shortfall(w: World, holder: Character, items: dict[str, int], what: str) -> Rejected | None:
    """None when the character carries all of `items`, else what `what` still needs."""
    if carries(holder, items):
        return None
    missing = {i: q - holder.inventory.get(i, 0) for i, q in sorted(items.items()) if holder.inventory.get(i, 0) < q}
    if missing:
        need = ", ".join(f"{q} more {i}" for i, q in missing.items())
        return Rejected("missing_materials", f"{what} needs {need}.")
    return None
