"""The contract of a world subsystem (construction, farming, the settlement, the market, society...).

A part declares in its own module everything it adds: the content tables it reads, its rejection
codes, events, actions, observation keys and sections of the rules document, and its state. The
world holds that state in `World.states` under the part's name, and saves it under the part's
`section` of the snapshot through the state's own `dump` and `load` (`Saved` derives both from
the state's fields). `install` puts a list of parts into the registries; `PARTS` in
`wildhold.world.parts` is that list. Every hook below has a neutral default, so a part implements
only what it changes.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterable, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.events import Ev
    from wildhold.world.state import Character, Structure
    from wildhold.world.world import World


class PartState(Protocol):
    def dump(self) -> Any:
        """JSON-ready data with a stable order."""

    def load(self, data: Any) -> None:
        """Restore, in place, what `dump` wrote."""


S = TypeVar("S", bound=PartState)


@dataclass(frozen=True)
class Section:
    """A part's section of the rules document: its keys of the JSON document, and its Markdown,
    rendered from the whole JSON document (so the two cannot disagree). Parts' sections stand in the
    Markdown after the scenarios, in order of `place`."""

    place: int
    data: Callable[[Content], dict[str, Any]]
    markdown: Callable[[dict[str, Any]], list[str]]


class Part(Generic[S]):
    name: ClassVar[str] = ""
    # The key of the snapshot's `parts` this part saves under: its name, or one it shares with the
    # parts split from a single older part (their fields disjoint, see `merge_saved`).
    section: ClassVar[str] = ""
    tables: ClassVar[tuple[str, ...]] = ()  # the `Content` tables this part reads
    codes: ClassVar[dict[str, str]] = {}  # rejection code -> meaning
    codes_place: ClassVar[int] = 0  # where its codes stand in the one list of codes (and so in the rules)
    events: ClassVar[dict[str, type[Ev]]] = {}  # event kind -> model
    actions: ClassVar[tuple[type, ...]] = ()  # action classes, registered in this order
    # Observation keys this part adds, described for the rules document: key -> {description, fields}.
    observation_fields: ClassVar[dict[str, dict]] = {}
    rules: ClassVar[tuple[Section, ...]] = ()
    # Sentences this part adds to a topic of the world's rules (the core's "construction" bullets).
    world_rules: ClassVar[dict[str, Callable[[Content], list[str]]]] = {}

    def new_state(self, w: World) -> S:
        """This part's state for a new world (after worldgen, before anyone joins)."""
        raise NotImplementedError(f"part {self.name!r} declares no state")

    def state(self, w: World) -> S:
        return w.states[self.name]  # type: ignore[return-value]  # each part's own state (no cast: asked on every observation and check)

    def init(self, w: World) -> None:
        """Create this part's state on a new world, or on one about to be loaded."""
        w.states[self.name] = self.new_state(w)

    def dump(self, w: World) -> Any:
        return self.state(w).dump()

    def load(self, w: World, data: Any) -> None:
        self.state(w).load(data)

    def joined(self, w: World, c: Character) -> None:
        """A character entered the world."""

    def day_started(self, w: World) -> None:
        """Midnight: daily growth, daily postings, deadlines counted in days."""

    def tick(self, w: World) -> None:
        """Once per tick, after the core systems."""

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        """Add what this character perceives of this part to its observation."""

    def shelters(self, w: World, c: Character) -> bool:
        """Whether this part protects the character from night hazards where it stands."""
        return False

    def bars(self, w: World, c: Character, p: int) -> str | None:
        """Why the character may not step onto tile `p` (a locked door), or None."""
        return None

    def blocks_creatures(self, w: World, p: int) -> bool:
        """Whether creatures may not step onto walkable tile `p` (a locked door)."""
        return False

    def yield_bonus(self, w: World, c: Character, node: str) -> int:
        """Extra units per gather this part grants (trained attributes)."""
        return 0

    def gathered(self, w: World, c: Character, item: str, qty: int) -> None:
        """The character gathered `qty` of `item` from a resource node (gather quests count these)."""

    def recipe_locked(self, w: World, c: Character, recipe: str) -> str | None:
        """Why the character may not use a recipe yet (a villager's friendship unlocks it), or None."""
        return None

    def structure_removed(self, w: World, p: int, s: Structure) -> None:
        """The structure on tile `p` is gone (demolished, destroyed, or an animal left): drop what you kept about it."""

    def before_knockdown(self, w: World, c: Character) -> None:
        """The character's health reached 0 and it is about to drop items and respawn."""

    def confines(self, w: World, c: Character, action: str) -> str | None:
        """Why this part does not let the character take `action` where it is now (inside the dungeon), or None.
        A part that says why also says whom (`confined`): the world asks this only of them."""
        return None

    def confined(self, w: World) -> Iterable[str]:
        """The ids of the characters `confines` may answer for now (it answers None for every other). The world
        keeps them until one of this part's events: every change of whom it holds must emit one."""
        raise NotImplementedError(f"part {self.name!r} confines characters and must say whom (`confined`)")

    def on_event(self, w: World, seq: int, kind: str, data: dict[str, Any]) -> None:
        """Every event it `hears`, just after it is logged (a part that follows the record: the trial).

        Only parts that override this are called, each on every event it hears once and in sequence
        order; an event a listener emits reaches the listeners after the one they are hearing. It must
        not change state other parts read."""

    def hears(self, w: World, kind: str, data: dict[str, Any]) -> bool:
        """Whether a listener is told of this event now, asked when it would be told: every event unless it says
        otherwise. One that answers False must be one for which `on_event` would do nothing."""
        return True

    def listening(self, w: World) -> tuple[frozenset[str], int | None] | None:
        """What `hears` may answer True for as the listener's state stands: (the kinds it may hear, the tick from
        which it may hear any kind, or None), or None for every kind. The world asks `hears` of no other event unless
        another listener is told of it, and asks this again after telling a listener an event (the only time its
        state changes) and in a world loaded from a snapshot: most events are of kinds no listener follows, and are
        spared the question."""
        return None


def section_of(part: Part) -> str:
    return part.section or part.name


# ---- state saved from its fields ---------------------------------------------------------------

def _fields(record: Any) -> tuple:
    """A record's values in field order: a dataclass's fields, or a named tuple's items."""
    return tuple(record) if isinstance(record, tuple) else tuple(getattr(record, f.name) for f in dataclasses.fields(record))


def _flat(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _one(values: list) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def _serial(record: Any) -> int:
    """The serial number of a record whose id is a letter and a number ("q12")."""
    return int(record.id[1:])


# How a field is written to a snapshot and read back: (dump, load). `load` gets the saved value, the
# field's value on a fresh state and the field's `of` (the record class of "rows", "made" and
# "record_list", the state class of "states", the key's length of "keyed").
_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any, Any], Any]]] = {
    # a value as it is (a number, a string, None)
    "value": (lambda v: v, lambda d, fresh, of: d),
    # a list, as it is
    "list": (lambda v: v, lambda d, fresh, of: list(d)),
    # a tuple, as a list
    "tuple": (lambda v: list(v), lambda d, fresh, of: tuple(d)),
    # a mapping, as its sorted [key, value] pairs
    "pairs": (lambda v: sorted(v.items()), lambda d, fresh, of: dict(d)),
    # a mapping, as its [key, value] pairs in insertion order
    "items": (lambda v: [[k, x] for k, x in v.items()], lambda d, fresh, of: {k: x for k, x in d}),
    # a mapping whose keys (of length `of`) and values may be tuples, as sorted flat rows [*key, *value]
    "keyed": (lambda v: [[*_flat(k), *_flat(x)] for k, x in sorted(v.items())],
              lambda d, fresh, of: {_one(row[:of]): _one(row[of:]) for row in d}),
    # records keyed by their "id", as the list of records in the order they were made
    "records": (lambda v: list(v.values()), lambda d, fresh, of: {r["id"]: r for r in d}),
    # a mapping of mappings, as sorted [key, sorted [key, value] pairs]
    "tables": (lambda v: [[k, sorted(t.items())] for k, t in sorted(v.items())], lambda d, fresh, of: {k: dict(t) for k, t in d}),
    # a mapping of records (dataclasses or named tuples), as sorted rows [key, field 1, field 2, ...]
    "rows": (lambda v: [[k, *_fields(r)] for k, r in sorted(v.items())],
             lambda d, fresh, of: {row[0]: of(*row[1:]) for row in d}),
    # dataclass records keyed by their serial id ("q12"), as their fields' mappings in the order made
    "made": (lambda v: [dataclasses.asdict(r) for r in sorted(v.values(), key=_serial)],
             lambda d, fresh, of: {r["id"]: of(**r) for r in d}),
    # a list of dataclass records, as their fields' mappings
    "record_list": (lambda v: [dataclasses.asdict(r) for r in v], lambda d, fresh, of: [of(**r) for r in d]),
    # a mapping of `Saved` states, as sorted [key, the state's dump] pairs
    "states": (lambda v: [[k, x.dump()] for k, x in sorted(v.items())], lambda d, fresh, of: {k: _loaded(of, x) for k, x in d}),
    # counters this part keeps for its own kinds of record, in a list of pairs other parts of the
    # same section add theirs to (see `merge_saved`): on load it takes back only its own kinds
    "shared_counters": (lambda v: sorted(v.items()), lambda d, fresh, of: {k: n for k, n in d if k in fresh}),
}


def _loaded(cls: Callable[[], Any], data: Any) -> Any:
    state = cls()
    state.load(data)
    return state


def saved(codec: str, default_factory: Callable[[], Any] | None = None, default: Any = None, of: type | int | None = None) -> Any:
    """A field of a `Saved` state, written to snapshots through `codec` (a key of `_CODECS`)."""
    if codec not in _CODECS:
        raise ValueError(f"unknown codec {codec!r}")
    meta = {"codec": codec, "of": of}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


class Saved:
    """A dataclass state whose `dump` and `load` are derived from its fields: each field made with
    `saved` is written under its own name through its codec; other fields are not saved. Records
    are copied both ways, so a snapshot never aliases what the world goes on changing."""

    __slots__ = ()

    def dump(self) -> dict[str, Any]:
        return copy.deepcopy({
            f.name: _CODECS[f.metadata["codec"]][0](getattr(self, f.name))
            for f in dataclasses.fields(cast(Any, self))  # every Saved is a dataclass
            if "codec" in f.metadata
        })

    def load(self, data: dict[str, Any]) -> None:
        data = copy.deepcopy(data)
        for f in dataclasses.fields(cast(Any, self)):
            if "codec" in f.metadata:
                load = _CODECS[f.metadata["codec"]][1]
                setattr(self, f.name, load(data[f.name], getattr(self, f.name), f.metadata["of"]))


def merge_saved(into: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Two parts' dumps under one section: their fields are disjoint, except shared counters (lists
    of [kind, n] pairs, each part its own kinds), which are saved as one sorted list."""
    out = dict(into)
    for key, value in more.items():
        if key not in out:
            out[key] = value
        elif _counters(out[key]) and _counters(value) and not {k for k, _ in out[key]} & {k for k, _ in value}:
            out[key] = sorted(out[key] + value)
        else:
            raise ValueError(f"two parts save {key!r} in one section")
    return out


def dump_parts(w: World, parts: list[Part]) -> dict[str, Any]:
    """The snapshot's `parts`: each part's dump under its section, parts sharing one merged."""
    out: dict[str, Any] = {}
    for part in parts:
        key, data = section_of(part), part.dump(w)
        out[key] = merge_saved(out[key], data) if key in out else data
    return out


def _counters(value: Any) -> bool:
    return isinstance(value, list) and all(len(pair) == 2 and isinstance(pair[0], str) for pair in value)


def install(parts: list[Part], running: list[Part]) -> None:
    """Put each part's declarations into the one registry of each kind, in list order (codes in
    order of `codes_place`), and append the parts to `running`, the list the world's hooks walk.
    A name two parts declare, or one the core already has, is refused."""
    from wildhold.world.actions.registry import add_action
    from wildhold.world.errors import CODES
    from wildhold.world.events import EVENT_TYPES

    for part in sorted(parts, key=lambda p: p.codes_place):
        for code, meaning in part.codes.items():
            if code in CODES:
                raise ValueError(f"rejection code {code!r} declared twice ({part.name})")
            CODES[code] = meaning
    seen: dict[str, str] = {}
    for part in parts:
        for kind, model in part.events.items():
            if kind in EVENT_TYPES:
                raise ValueError(f"event {kind!r} declared twice ({part.name})")
            EVENT_TYPES[kind] = model
        for cls in part.actions:
            add_action(cls)
        for key in part.observation_fields:
            if key in seen:
                raise ValueError(f"observation key {key!r} declared by {seen[key]} and {part.name}")
            seen[key] = part.name
    running.extend(parts)
