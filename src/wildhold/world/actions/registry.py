"""The action registry: each action defined once (name, arguments, docstring, time, cost).

Every face — HTTP, MCP, programs, gym spaces, the rules document — is generated from
`REGISTRY`. A handler's `check` looks and never touches state; `finish` re-checks what may
have changed while the operation ran, then applies it. The helpers here are shared by the
action modules of every subsystem.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from wildhold.content import Content, ContentError
from wildhold.world.errors import Rejected
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
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


class Target(ActionArgs):
    x: int = Field(description="Target tile column (0 is the west edge).")
    y: int = Field(description="Target tile row (0 is the north edge).")


@dataclass(frozen=True, slots=True)
class Plan:
    duration: int
    energy: int
    data: dict[str, Any] = field(default_factory=dict)


Check = Callable[["World", Character, Any], "Plan | Rejected"]
Finish = Callable[["World", Character, Operation], "dict | Rejected"]
Progress = Callable[["World", Character, Operation], "Rejected | None"]


@dataclass(frozen=True)
class ActionDef:
    name: str
    args: type[ActionArgs]
    doc: str
    category: str
    check: Check
    finish: Finish
    progress: Progress | None = None
    begin: Callable[["World", Character, Operation], None] | None = None
    while_busy: bool = False
    timing: str = "fixed"
    # How the rules document states its time and cost, when `timing` is none of the common ways.
    cost_rule: Callable[[int, int], dict[str, Any]] | None = None

    def json_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema()


REGISTRY: dict[str, ActionDef] = {}


def _planned(cls: type) -> tuple[Check, Finish]:
    """check and finish from one `plan(w, c, args)` (looks, returns a Rejected or what `apply` needs) and
    `apply(w, c, op, planned)`: the plan runs when the action is submitted and again when it completes,
    since the world may have changed in between. The time and energy are the action's content entry,
    unless the class says otherwise with `spend(w, args, planned) -> Plan`."""
    spend = getattr(cls, "spend", None)

    def check(w: World, c: Character, a: ActionArgs) -> Plan | Rejected:
        args = json_args(a)
        got = cls.plan(w, c, args)
        if isinstance(got, Rejected):
            return got
        return spend(w, args, got) if spend else cost(w, cls.name)

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
    progress) into a registry entry. The core's `ACTIONS` and each part's `actions` are the lists
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
    if w.distance(c.pos, p) > w.needs.reach:
        cx, cy = w.xy(c.pos)
        return Rejected("out_of_range", f"({x}, {y}) is {w.distance(c.pos, p)} tiles from you at ({cx}, {cy}); reach is {w.needs.reach}.")
    return p


def require_item(w: World, c: Character, item: str, qty: int = 1) -> Rejected | None:
    """None when the character carries `qty` of a known item, else why not."""
    if item not in w.content.items:
        return Rejected("unknown_item", f"There is no item {item!r}.")
    have = c.inventory.get(item, 0)
    if have < qty:
        return Rejected("not_in_inventory", f"You carry {have} {item}, not {qty}.")
    return None




def other_character(w: World, c: Character, agent: str) -> Character | Rejected:
    """Another character by id (a trade's counterparty, a whisper's listener, an attack's target), or why not."""
    other = w.chars.get(agent)
    if other is None:
        return Rejected("unknown_character", f"No character has id {agent!r}.{did_you_mean(agent, w.chars)}")
    if other.id == c.id:
        return Rejected("self_target", "That needs another character, not yourself.")
    return other


def shortfall(w: World, holder: Character, items: dict[str, int], what: str) -> Rejected | None:
    """None when the character carries all of `items`, else what `what` still needs."""
    missing = {i: q - holder.inventory.get(i, 0) for i, q in sorted(items.items()) if holder.inventory.get(i, 0) < q}
    if missing:
        need = ", ".join(f"{q} more {i}" for i, q in missing.items())
        return Rejected("missing_materials", f"{what} needs {need}.")
    return None
