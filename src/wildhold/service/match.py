"""A match: one world driven by an input log and persisted to a store.

Every input (join, action, setup, idle, program, end) is recorded before it takes effect. Replaying the inputs
from the seed, or from the latest snapshot, rebuilds the world exactly; that is how a match
resumes after a crash and how `wildhold replay` checks an archive. Records (a model session's spend) are
inputs the world never sees: kept in the same log, in order, bound into the archive's header by their
digest, and skipped by every replay.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import orjson

from wildhold import __version__
from wildhold.content import Content, default_content
from wildhold.store.archive import export_archive
from wildhold.store.sqlite import Input, MatchStore, StoreError
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import PROGRAM_EVENTS
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import SetupError, apply_setup
from wildhold.world.world import World

Horizon = Literal["visible", "hidden"]
HORIZONS: tuple[str, ...] = ("visible", "hidden")
# Inputs that are records, not world inputs: what a model session consumed, kept with the match so that the
# archive alone carries it. They never reach the world, so a match replays the same with or without them.
SPEND = "spend"
RECORD_KINDS = frozenset({SPEND})


def apply_input(world: World, inp: Input) -> Accepted | Rejected | str | None:
    """Apply one recorded input to a world standing at the input's tick; a record changes nothing."""
    if inp.kind in RECORD_KINDS:
        return None
    if inp.kind == "join":
        return world.join(inp.args["name"])
    if inp.kind == "action":
        return world.submit(inp.agent or "", inp.name, inp.args, inp.issuer)
    if inp.kind == "setup":
        try:
            apply_setup(world, inp.name, inp.args)
        except SetupError as exc:
            return exc.code
        return None
    if inp.kind == "end":
        world.emit("match_ended", reason=inp.args.get("reason", ""))
        return None
    if inp.kind == "idle":
        since = inp.args["since_tick"]
        world.emit("agent_idle", agent=inp.agent, since_tick=since, idle_ticks=world.tick - since)
        return None
    if inp.kind == "program":
        if inp.name not in PROGRAM_EVENTS:
            raise StoreError(f"input {inp.seq}: unknown program input {inp.name!r}")
        world.emit(PROGRAM_EVENTS[inp.name], agent=inp.agent, **inp.args)
        return None
    raise StoreError(f"input {inp.seq}: unknown kind {inp.kind!r}")


def unrecordable_reason(args: Any) -> str | None:
    """Why the match log could not record these arguments as they are (it writes them as JSON), or None."""
    try:
        orjson.dumps(args)
    except TypeError as exc:  # orjson's JSONEncodeError: an integer beyond 64 bits, a string that is not UTF-8
        return f"the arguments cannot be recorded ({exc})"
    return None


def advance_to(world: World, tick: int, on_step: Callable[[], None] | None = None) -> None:
    if tick < world.tick:
        raise StoreError(f"input at tick {tick} is before the world's tick {world.tick}")
    while world.tick < tick:
        world.step()
        if on_step:
            on_step()


def replay(content: Content, scenario: str, seed: int, inputs: Iterable[Input], final_tick: int,
           on_tick: Callable[[World, int], None] | None = None) -> World:
    """Re-simulate a match from its seed and inputs alone. `on_tick(world, inputs applied)` sees the world at its
    first tick and after every step, before that tick's inputs (the replay viewer keeps states with it)."""
    world = World(content, scenario, seed)
    drain = world.events.drain
    applied = 0

    def stepped() -> None:
        drain()
        if on_tick is not None:
            on_tick(world, applied)

    if on_tick is not None:
        on_tick(world, 0)
    for inp in inputs:
        advance_to(world, inp.tick, stepped)
        apply_input(world, inp)
        drain()
        applied += 1
    advance_to(world, final_tick, stepped)
    return world


def records_digest(inputs: Iterable[Input]) -> str | None:
    """sha256 over the match's records, in order (None when it has none): the header binds it, so an edit of a
    record fails verification although re-simulation, which skips records, could not see it."""
    h, seen = hashlib.sha256(), False
    for inp in inputs:
        if inp.kind in RECORD_KINDS:
            seen = True
            h.update(orjson.dumps([inp.seq, inp.tick, inp.kind, inp.agent, inp.name, inp.args, inp.issuer],
                                  option=orjson.OPT_SORT_KEYS) + b"\n")
    return h.hexdigest() if seen else None


def joined(world: World, inputs: Iterable[Input]) -> dict[str, dict[str, Any]]:
    """Each character's id and the arguments it joined with, in joining order: the roster an archive carries."""
    by_name = {c.name: c.id for c in world.chars.values()}
    return {by_name[inp.args["name"]]: inp.args for inp in inputs if inp.kind == "join"}


def roster(world: World, inputs: Iterable[Input]) -> list[dict[str, Any]]:
    """The manifest's agents: each joined character's id with its join arguments (its name, policy or model)."""
    return [{"id": agent, **args} for agent, args in joined(world, inputs).items()]


class Match:
    """A world with its store: every input recorded before it applies, events and snapshots flushed."""

    def __init__(self, world: World, store: MatchStore | None):
        self.world = world
        self.store = store
        self.snapshot_every = world.scenario.snapshot_every
        self.ended = False
        self.last_input: Input | None = None
        self.on_ack: Callable[[Input], None] | None = None
        # Sees each batch of events as it is flushed (a server tracks operations with it).
        self.on_events: Callable[[list[tuple[int, int, str, bytes, str]]], None] | None = None
        self._known_events: dict[int, str] = {}
        self.horizon: Horizon = "visible"

    # ---- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def create(cls, scenario: str = "default", seed: int = 0, db: Path | str | None = None,
               content: Content | None = None, clock: str = "fast", horizon: Horizon = "visible",
               world: World | None = None, replace: bool = False) -> Match:
        """A new match; `horizon` says whether its agents are told when it ends (hidden: no face says so).
        `world`, when given, is this scenario and seed's world as generated, its first events still pending
        (a copy restored from a generated one spares generating it again). `replace` starts the database afresh
        whatever it held, once this process holds its lock."""
        if horizon not in HORIZONS:
            raise StoreError(f"horizon must be one of {', '.join(HORIZONS)}, not {horizon!r}")
        content = content or default_content()
        if world is not None and (world.scenario_name, world.seed, world.tick) != (scenario, seed, world.start_tick):
            raise StoreError(f"the world given is {world.scenario_name} seed {world.seed} at tick {world.tick}, not "
                             f"{scenario} seed {seed} as generated")
        world = world or World(content, scenario, seed)
        store = MatchStore(db, replace=replace) if db is not None else None
        try:
            if store is not None:
                if store.meta():
                    raise StoreError(f"{db} already holds a match; resume it instead")
                store.set_meta({
                    "wildhold_version": __version__, "scenario": scenario, "seed": seed,
                    "content_digest": content.digest, "clock": clock, "horizon": horizon,
                })
            match = cls(world, store)
            match.horizon = horizon
            match.flush(snapshot=True)
        except BaseException:
            if store is not None:
                store.close()
            raise
        return match

    @classmethod
    def resume(cls, db: Path | str, content: Content | None = None) -> Match:
        """Take a stored match up again, once its log verifies (a damaged store is refused, naming its first bad
        event): from its latest snapshot, the inputs after it, and the ticks its log reached."""
        content = content or default_content()
        store = MatchStore(db)
        try:
            meta = store.meta()
            if not meta:
                raise StoreError(f"{db} holds no match")
            if meta["content_digest"] != content.digest:
                raise StoreError(f"{db} was played under other content files ({meta['content_digest'][:12]})")
            store.verify_chain()
            return cls.from_store(store, content)
        except BaseException:
            store.close()
            raise

    @classmethod
    def from_store(cls, store: MatchStore, content: Content) -> Match:
        """The match an open store holds: its latest snapshot, the inputs after it, the ticks its log reached (events
        its log lacks are written again, as the world emits them)."""
        meta = store.meta()
        snap = store.latest_snapshot()
        if snap is None:
            world, after_input = World(content, meta["scenario"], meta["seed"]), 0
        else:
            tick, after_input, _, blob = snap
            world = loads(content, blob)
            if world.events.seq and store.event_hash(world.events.seq) != world.events.head:
                raise StoreError(f"{store.path}: the snapshot at tick {tick} does not follow the stored log at event "
                                 f"{world.events.seq}; it cannot be resumed")
        match = cls(world, store)
        match.horizon = meta.get("horizon", "visible")  # a store older than the setting was played visible
        # An end recorded before the snapshot counts too: a finished match resumes finished, and stays as it is.
        match.ended = store.has_input("end")
        match._known_events = store.event_hashes(world.events.seq)
        for inp in list(store.inputs(after_input)):
            advance_to(world, inp.tick, match._flush_events)
            apply_input(world, inp)
            match.last_input = inp
            match._flush_events()
        reached = store.last_event_tick()
        if reached is not None and reached > world.tick:
            advance_to(world, reached, match._flush_events)
        return match

    def close(self, snapshot: bool = True) -> None:
        """Stop cleanly: a final snapshot, so a resume starts exactly here (none for a store about to be
        thrown away, its archive written); the store is closed even when that snapshot cannot be written."""
        if self.store:
            try:
                self.flush(snapshot=snapshot)
            finally:
                self.store.close()

    def joins(self) -> dict[str, dict[str, Any]]:
        """Each character's id and the arguments it joined with, in joining order."""
        if self.store is None:
            raise StoreError("the roster of joins is kept by the store")
        return joined(self.world, self.store.inputs(0))

    # ---- inputs -------------------------------------------------------------------------------

    def _record(self, kind: str, agent: str | None, name: str, args: dict[str, Any], issuer: str = "direct") -> Input:
        seq = self.store.record_input(self.world.tick, kind, agent, name, args, issuer) if self.store else 0
        inp = Input(seq, self.world.tick, kind, agent, name, args, issuer)
        self.last_input = inp
        if self.on_ack:
            self.on_ack(inp)
        return inp

    def join(self, name: str, **extra: Any) -> str:
        """Add a character; `extra` (for example the policy driving it) is recorded with the join."""
        return apply_input(self.world, self._record("join", None, "join", {"name": name, **extra}))

    def submit(self, agent: str, action: str, args: dict[str, Any], issuer: str = "direct") -> Accepted | Rejected:
        """Record, then apply: once this returns, the action is acknowledged and durable. Arguments the log cannot
        record (an integer beyond 64 bits, a lone surrogate in a string) are refused unrecorded, changing nothing."""
        unrecordable = unrecordable_reason(args)
        if unrecordable is not None:
            return Rejected("bad_arguments", f"{action}: {unrecordable}")
        return apply_input(self.world, self._record("action", agent, action, args, issuer))

    def setup(self, command: str, args: dict[str, Any]) -> str | None:
        return apply_input(self.world, self._record("setup", None, command, args, "admin"))

    def mark_idle(self, agent: str, since_tick: int) -> None:
        """Record that an agent has issued nothing since `since_tick`: an `agent_idle` event, replayed like any input."""
        apply_input(self.world, self._record("idle", agent, "idle", {"since_tick": since_tick}, "service"))

    def program(self, agent: str, event: str, args: dict[str, Any], issuer: str = "direct") -> None:
        """Record a program's lifecycle step (save, start, stop, finish, fail): a `program_*` event, replayed like any input."""
        apply_input(self.world, self._record("program", agent, event, args, issuer))

    def record_spend(self, agent: str, args: dict[str, Any]) -> Input:
        """Record what one model session of `agent` consumed (tokens, dollars, the price): a record, never applied,
        accepted after the end too (a session that was under way when the match ended still spent)."""
        return self._record(SPEND, agent, "session", args, "operator")

    def carry(self, inp: Input) -> Accepted | Rejected | str | None:
        """Record and apply an input of another match's log (a fork's shared history), at the tick it was played:
        the same kind, agent, arguments and issuer, so that re-simulating this match replays that history."""
        if inp.tick != self.world.tick:
            raise StoreError(f"input {inp.seq} was played at tick {inp.tick}; this world stands at {self.world.tick}")
        return apply_input(self.world, self._record(inp.kind, inp.agent, inp.name, inp.args, inp.issuer))

    def end(self, reason: str) -> None:
        if not self.ended:
            apply_input(self.world, self._record("end", None, "end", {"reason": reason}))
            self.ended = True
        self.flush(snapshot=True)

    def step(self) -> None:
        self.world.step()
        if self.store is None:  # nothing to snapshot to
            self._flush_events()
        else:
            self.flush(snapshot=self.world.tick % self.snapshot_every == 0)

    def also_follow(self, listener: Callable[[list[tuple[int, int, str, bytes, str]]], None]) -> Callable[[], None]:
        """Feed `listener` every event record flushed from now on, beside whoever follows the match already; the
        function returned puts the follower before it back."""
        before = self.on_events

        def both(records: list[tuple[int, int, str, bytes, str]]) -> None:
            if before is not None:
                before(records)
            listener(records)

        self.on_events = both

        def restore() -> None:
            self.on_events = before

        return restore

    # ---- persistence --------------------------------------------------------------------------

    def _flush_events(self) -> None:
        records = self.world.events.drain()
        if self.on_events is not None and records:
            self.on_events(records)
        if self.store is None or not records:
            return
        if self._known_events:  # resuming: events the log holds already are checked, never written twice
            fresh = []
            for record in records:
                known = self._known_events.pop(record[0], None)
                if known is None:
                    fresh.append(record)
                elif known != record[4]:
                    raise StoreError(f"event {record[0]} differs from the stored log: the world diverged on resume")
            records = fresh
        self.store.append_events(records)

    def flush(self, snapshot: bool = False) -> None:
        self._flush_events()
        if snapshot and self.store is not None:
            w = self.world
            self.store.save_snapshot(w.tick, self.store.last_input, w.events.seq, dumps(w))

    # ---- archive ------------------------------------------------------------------------------

    def manifest(self, agents: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The archive's manifest; `extra` adds fields a host knows (tool-surface hash, epilogues, server settings)."""
        w = self.world
        meta = self.store.meta() if self.store else {}
        return {
            "wildhold_version": __version__,
            "scenario": w.scenario_name,
            "seed": w.seed,
            "content_digest": w.content.digest,
            "clock": meta.get("clock", "fast"),
            "horizon": self.horizon,
            "agents": agents,
            "start_tick": w.start_tick,
            "final_tick": w.tick,
            "state_hash": state_hash(w),
            "chain_head": w.events.head,
            "event_count": w.events.seq,
            "records_digest": records_digest(self.store.inputs(0)) if self.store else None,
            **(extra or {}),
        }

    def export(self, path: Path | str, extra: dict[str, Any] | None = None) -> Path:
        """Write the one-file archive of this match (it needs a store); `extra` goes into the manifest."""
        if self.store is None:
            raise StoreError("an archive needs a match with a store")
        self.flush()
        agents = roster(self.world, self.store.inputs(0))
        return export_archive(self.store, self.manifest(agents, extra), dumps(self.world), path)
