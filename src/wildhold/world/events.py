"""Typed events and the hash chain that links them; the world's only record of change."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

GENESIS = "0" * 32


SORTED = orjson.OPT_SORT_KEYS  # events' canonical JSON: keys sorted at every depth


# An empty 16-byte BLAKE2b: each event's hasher is a copy of it, which spares parsing the size for every event.
_BLAKE2B_16 = hashlib.blake2b(digest_size=16)


def link(prev_hash: str, payload: bytes) -> str:
    """The hash of one event: its canonical JSON chained to the previous event's hash."""
    h = _BLAKE2B_16.copy()
    h.update(prev_hash.encode())
    h.update(payload)
    return h.hexdigest()


class EventLog:
    """Appends events with sequence numbers and a running chain head.

    Events wait in `pending` until a consumer (the store, a bench) drains them, so a long
    match does not hold its whole history in memory; the chain head survives draining. Each event is
    serialised when emitted (its data may change afterwards) and hashed into the chain in a batch when
    the head is read or the events are drained: the same hashes, one loop instead of a call per event.
    """

    __slots__ = ("seq", "_head", "pending", "_hashed")

    def __init__(self, seq: int = 0, head: str = GENESIS):
        self.seq = seq
        self._head = head
        self.pending: list[tuple[int, int, str, bytes, str]] = []
        self._hashed = 0  # entries of `pending` already linked into the chain

    def emit(self, tick: int, kind: str, data: dict[str, Any]) -> int:
        self.seq = seq = self.seq + 1
        # Keys put in their sorted order, which orjson sorts a little faster (the bytes are the same).
        self.pending.append((seq, tick, kind, orjson.dumps({"data": data, "kind": kind, "seq": seq, "tick": tick}, option=SORTED), ""))
        return seq

    def _link_pending(self) -> None:
        """`link` each event not yet linked, inline (a call per event was a fifth of the loop)."""
        pending, head, fresh = self.pending, self._head, _BLAKE2B_16.copy
        for i in range(self._hashed, len(pending)):
            seq, tick, kind, payload, _ = pending[i]
            h = fresh()
            h.update(head.encode())
            h.update(payload)
            head = h.hexdigest()
            pending[i] = (seq, tick, kind, payload, head)
        self._head, self._hashed = head, len(pending)

    @property
    def head(self) -> str:
        """The hash of the latest event (GENESIS before any)."""
        if self._hashed != len(self.pending):
            self._link_pending()
        return self._head

    def carry(self, linked: list[tuple[int, int, str, bytes, str]]) -> None:
        """Take events already linked into this log's chain as still to be drained: a world restored from a
        snapshot taken before its first events were drained hands them on without hashing them twice."""
        self.pending, self._hashed = list(linked), len(linked)

    def drain(self) -> list[tuple[int, int, str, bytes, str]]:
        """Hand over the events emitted since the last drain: (seq, tick, kind, payload, hash)."""
        if self._hashed != len(self.pending):
            self._link_pending()
        out, self.pending, self._hashed = self.pending, [], 0
        return out


def verify_chain(records: list[tuple[bytes, str]], start: str = GENESIS) -> tuple[bool, int, str]:
    """Check (payload, hash) records in order; return (ok, index of first bad record or -1, head)."""
    head = start
    for i, (payload, stored) in enumerate(records):
        head = link(head, payload)
        if head != stored:
            return False, i, head
    return True, -1, head


class Ev(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentSpawned(Ev):
    agent: str
    name: str
    x: int
    y: int


class OperationStarted(Ev):
    agent: str
    op: str
    action: str
    args: dict
    ends: int
    issuer: str


class OperationCompleted(Ev):
    agent: str
    op: str
    action: str
    result: dict


class OperationFailed(Ev):
    agent: str
    op: str
    action: str
    code: str
    message: str


class OperationCancelled(Ev):
    agent: str
    op: str
    action: str


class ActionRejected(Ev):
    agent: str
    action: str
    code: str
    message: str
    issuer: str


class Moved(Ev):
    agent: str
    frm: tuple[int, int] = Field(alias="from")
    to: tuple[int, int]


class ItemGained(Ev):
    holder: str
    item: str
    qty: int
    source: str


class ItemLost(Ev):
    holder: str
    item: str
    qty: int
    source: str


class Needs(Ev):
    agent: str
    cause: str
    health: int
    energy: int
    satiety: int


class Equipped(Ev):
    agent: str
    slot: str
    item: str | None


class NodeChanged(Ev):
    x: int
    y: int
    node: str
    amount: int


class NodePlaced(Ev):
    x: int
    y: int
    node: str
    amount: int
    source: str


class StructurePlaced(Ev):
    x: int
    y: int
    structure: str
    owner: str | None
    hp: int


class CreatureSpawned(Ev):
    creature: int
    kind: str
    x: int
    y: int


class CreatureMoved(Ev):
    creature: int
    frm: tuple[int, int] = Field(alias="from")
    to: tuple[int, int]


class CreatureAttacked(Ev):
    creature: int
    agent: str
    damage: int
    health: int


class CreatureDespawned(Ev):
    creature: int
    reason: str


class Knockdown(Ev):
    agent: str
    x: int
    y: int
    cause: str
    respawn: tuple[int, int]
    count: int


class DayStarted(Ev):
    day: int
    season: str
    weather: str


class NightStarted(Ev):
    day: int


class NightEnded(Ev):
    day: int


class SetupApplied(Ev):
    command: str
    args: dict


class MatchEnded(Ev):
    reason: str


class AgentIdle(Ev):
    """The agent issued no action and ran no operation since `since_tick` (a served match's activity tracking)."""

    agent: str
    since_tick: int
    idle_ticks: int


class ProgramSaved(Ev):
    """A new revision of an agent's program; its source is kept with the match (see the archive's programs/)."""

    agent: str
    name: str
    revision: int
    source_sha256: str


class ProgramStarted(Ev):
    agent: str
    name: str
    revision: int
    run: int
    args: dict[str, Any] | None = None  # the start arguments, when it was given any


class ProgramStopped(Ev):
    agent: str
    name: str
    revision: int
    run: int
    reason: str


class ProgramFinished(Ev):
    agent: str
    name: str
    revision: int
    run: int
    actions: int
    host_calls: int


class ProgramFailed(Ev):
    """A program ended by an error or a limit; `reason` is runtime_error, limit, wall_clock, runner_crash,
    capability, state_too_large or restore_mismatch."""

    agent: str
    name: str
    revision: int
    run: int
    reason: str
    error_type: str
    message: str
    line: int | None


EVENT_TYPES: dict[str, type[Ev]] = {
    "agent_spawned": AgentSpawned,
    "operation_started": OperationStarted,
    "operation_completed": OperationCompleted,
    "operation_failed": OperationFailed,
    "operation_cancelled": OperationCancelled,
    "action_rejected": ActionRejected,
    "moved": Moved,
    "item_gained": ItemGained,
    "item_lost": ItemLost,
    "needs": Needs,
    "equipped": Equipped,
    "node_changed": NodeChanged,
    "node_placed": NodePlaced,
    "structure_placed": StructurePlaced,
    "creature_spawned": CreatureSpawned,
    "creature_moved": CreatureMoved,
    "creature_attacked": CreatureAttacked,
    "creature_despawned": CreatureDespawned,
    "knockdown": Knockdown,
    "day_started": DayStarted,
    "night_started": NightStarted,
    "night_ended": NightEnded,
    "setup": SetupApplied,
    "match_ended": MatchEnded,
    "agent_idle": AgentIdle,
    "program_saved": ProgramSaved,
    "program_started": ProgramStarted,
    "program_stopped": ProgramStopped,
    "program_finished": ProgramFinished,
    "program_failed": ProgramFailed,
}

# The event each program lifecycle input (service input kind "program") emits, by the input's name.
PROGRAM_EVENTS: dict[str, str] = {"save": "program_saved", "start": "program_started", "stop": "program_stopped",
                                  "finish": "program_finished", "fail": "program_failed"}


def validate_event(kind: str, data: dict[str, Any]) -> Ev:
    """Check one event against its typed schema (used by tests and archive verification)."""
    return EVENT_TYPES[kind].model_validate(data)
