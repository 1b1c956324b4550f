"""Metrics as registered folds, and the driver that runs them over an archive's events in one pass.

A fold is one metric: it marks a handler for each event kind it reads (`@on`), names what it writes
(`writes`: fields of `AgentMetrics`, or measures of its own), and is registered with `@fold`. The
driver decodes each event once into its kind's typed view (`eval.events`) and hands it only to the
folds that read that kind, in registration order. A fold's measures are scored only where a rubric
gives them a place (`eval.rubric`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable

from wildhold.content import Content
from wildhold.eval.events import VIEWS, Spawned, values

if TYPE_CHECKING:
    from wildhold.eval.metrics import AgentMetrics

NEVER = 1 << 62  # a tick no match reaches
FOLDS: dict[str, type[Fold]] = {}  # name -> fold, in registration order


@dataclass
class MatchInfo:
    """What every fold may read about the match besides its events. `agents` fills in as characters
    spawn: the driver adds each one before any fold sees its `agent_spawned`."""

    content: Content
    scenario: str
    seed: int
    start_tick: int
    final_tick: int
    width: int
    height: int
    agents: dict[str, AgentMetrics] = field(default_factory=dict)
    seq: int = 0  # the number of the event being handed over, kept only while a `numbered` fold runs
    logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # match-wide records folds write (incidents...)
    probes: tuple[int, ...] = ()  # ticks whose exact end-of-tick wealth is wanted (the model sessions' ticks)

    @cached_property
    def regions(self) -> tuple[bytes, list[str]]:
        """The seed's region map (one byte per tile) and region names, from its worldgen."""
        from wildhold.world.worldgen import generate

        g = generate(self.content, self.scenario, self.seed)
        return bytes(g.region), list(g.region_names)


def on(*kinds: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark a fold method as the handler of these event kinds: it is called as (tick, view)."""

    def mark(fn: Callable[..., None]) -> Callable[..., None]:
        fn.__reads__ = kinds  # type: ignore[attr-defined]
        return fn

    return mark


class Fold:
    """One metric folded over the events it reads. `finish` runs after the last event; a fold that
    wants to be called as time passes sets `wake` to a tick, and `advance` is called before the first
    event at or after it (and must move `wake` on). A fold that follows every event as the log stores
    it, as the world's trial tracker does, sets `follow`, called as (seq, tick, kind, data). A fold that
    cites events by number sets `numbered`: `match.seq` is then the number of the event it handles."""

    name: ClassVar[str] = ""
    writes: ClassVar[tuple[str, ...]] = ()
    reads: ClassVar[dict[str, str]] = {}  # event kind -> handler method, from the @on marks
    numbered: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        reads: dict[str, str] = {}
        for base in reversed(cls.__mro__[1:]):
            reads.update(getattr(base, "reads", {}))
        for attr, value in vars(cls).items():
            for kind in getattr(value, "__reads__", ()):
                if kind not in VIEWS:
                    raise TypeError(f"{cls.__name__}.{attr} reads {kind!r}, which has no typed view in wildhold.eval.events")
                if kind in reads and reads[kind] != attr:
                    raise TypeError(f"{cls.__name__} reads {kind!r} twice ({reads[kind]} and {attr})")
                reads[kind] = attr
        cls.reads = reads
        if not cls.name:
            cls.name = cls.__name__.lower()

    def __init__(self, match: MatchInfo) -> None:
        self.match = match
        self.agents = match.agents
        self.wake = NEVER
        self.follow: Callable[[int, int, str, dict[str, Any]], None] | None = None

    def advance(self, tick: int) -> None:
        """Time reached `tick` (at or after `wake`): do what was due and set the next `wake`."""

    def finish(self) -> None:
        """After the last event: write what is left to write."""


def fold(cls: type[Fold]) -> type[Fold]:
    """Register a fold under its name; `compute_metrics` runs every registered fold."""
    if cls.name in FOLDS:
        raise ValueError(f"a fold named {cls.name!r} is already registered")
    FOLDS[cls.name] = cls
    return cls


def writers(*names: str) -> list[type[Fold]]:
    """The registered folds that write these metrics or measures, in registration order: what a table
    that shows only them runs. A name no fold writes is refused, naming it."""
    import wildhold.eval.folds  # noqa: F401  (registers the metrics)

    unknown = sorted(set(names) - {w for cls in FOLDS.values() for w in cls.writes})
    if unknown:
        raise LookupError(f"no registered fold writes {', '.join(unknown)}")
    wanted = set(names)
    return [cls for cls in FOLDS.values() if wanted & set(cls.writes)]


def run_folds(match: MatchInfo, events: list[dict[str, Any]], folds: Iterable[type[Fold]],
              spawn: Callable[[int, Spawned], None]) -> dict[str, int]:
    """Feed every event, in order, to the folds that read its kind, and finish them; `spawn` adds a
    character to the match before the folds see it. Returns the number of events of each kind."""
    running = [cls(match) for cls in folds]
    readers: dict[str, list[Callable[[int, Any], None]]] = {"agent_spawned": [spawn]}
    for f in running:
        for kind, attr in f.reads.items():
            readers.setdefault(kind, []).append(getattr(f, attr))
    # kind -> (its view, the reader of the view's values, its first handler, the others): built once,
    # so each event costs one C call to read its fields and one to make the view
    routes = {kind: (VIEWS[kind], values(kind), handles[0], tuple(handles[1:])) for kind, handles in readers.items()}
    followers = [f.follow for f in running if f.follow is not None]
    follow = _all(followers) if len(followers) > 1 else followers[0] if followers else None
    numbered = any(f.numbered for f in running)
    clocked = [f for f in running if f.wake < NEVER]
    wake = min((f.wake for f in clocked), default=NEVER)
    new = tuple.__new__
    kinds: dict[str, int] = {}
    for e in events:
        tick = e["tick"]
        if tick >= wake:
            for f in clocked:
                if tick >= f.wake:
                    f.advance(tick)
            wake = min(f.wake for f in clocked)
        kind, data = e["kind"], e["data"]
        kinds[kind] = kinds.get(kind, 0) + 1
        if follow is not None:
            follow(e["seq"], tick, kind, data)
        route = routes.get(kind)
        if route is not None:
            if numbered:
                match.seq = e["seq"]
            view, read, handle, more = route
            ev = new(view, read(data))
            handle(tick, ev)
            if more:
                for handle in more:
                    handle(tick, ev)
    for f in running:
        f.finish()
    return kinds


def _all(followers: list[Callable[[int, int, str, dict[str, Any]], None]]) -> Callable[[int, int, str, dict[str, Any]], None]:
    def follow(seq: int, tick: int, kind: str, data: dict[str, Any]) -> None:
        for f in followers:
            f(seq, tick, kind, data)

    return follow
