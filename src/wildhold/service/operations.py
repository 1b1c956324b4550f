"""Operations as agents see them: each one's record, followed through the world's lifecycle events.

The world emits operation_started / _completed / _failed / _cancelled; `Operations` keeps a record of
each (bounded per character: beyond its last FINISHED_OPS_PER_AGENT finished ones, the oldest are forgotten),
wakes whoever long-polls on one, counts every event kind, and rebuilds all of it from the stored events
after a restart.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Iterable

import orjson

from wildhold.service.errors import HostError

if TYPE_CHECKING:
    from wildhold.service.host import Host

# Each character's most recent finished operations stay readable. Kept per character, a busy match's records
# stop growing once every agent has finished this many (a server-wide count let them grow for many minutes, ~1 KB
# each), and one busy agent cannot push another's recent records out.
FINISHED_OPS_PER_AGENT = 64
OP_KINDS = {"operation_started": "running", "operation_completed": "completed",
            "operation_failed": "failed", "operation_cancelled": "cancelled"}


class Operations:
    """The host's operation records and their waiters."""

    def __init__(self, host: Host):
        self.host = host
        self.ops: dict[str, dict[str, Any]] = {}
        self._finished: dict[str, deque[str]] = {}  # character -> its finished operations, oldest first
        self.latest: dict[str, str] = {}  # character -> its most recently started operation (from the events)
        self.issuers: dict[str, str] = {}  # running operation -> the program that started it (program:<name>@<rev>)
        self.events_by_kind: Counter[str] = Counter()
        self._waiters: dict[str, asyncio.Event] = {}

    def operation(self, agent: str, op: str) -> dict[str, Any]:
        """The record of one of this agent's operations, with the current tick."""
        rec = self.ops.get(op)
        if rec is None:
            raise HostError("unknown_operation", f"There is no operation {op!r}; ids come back from each action, like 'op12' "
                            f"(the last {FINISHED_OPS_PER_AGENT} finished ones of a character are kept).")
        if rec["agent"] != agent:
            raise HostError("forbidden", f"Operation {op!r} belongs to another character.")
        return {**rec, "tick": self.host.world.tick}

    def current_operation(self, agent: str) -> str | None:
        return self.host.world.chars[agent].op

    async def wait(self, agent: str, op: str | None, timeout_s: float) -> dict[str, Any]:
        """Long-poll: return when the operation ends, the match ends, or `timeout_s` (bounded) passes."""
        host = self.host
        if op is None:  # the one in progress, else the last one: an operation that just ended is still the answer
            op = self.current_operation(agent) or self.latest.get(agent)
            if op is None:
                raise HostError("unknown_operation", "You have started no operation yet; act first, or pass the id "
                                "of one (like 'op12') to wait for it.")
        rec = self.operation(agent, op)
        timeout = min(max(timeout_s, 0.0), host.config.wait_max_s)
        host.counters["waits"] += 1
        if rec["status"] == "running" and host.state != "over" and timeout > 0:
            event = self._waiters.setdefault(op, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), timeout)
            except TimeoutError:
                pass
        rec = self.operation(agent, op)
        return {**rec, "timed_out": rec["status"] == "running"}

    def release_waiters(self) -> None:
        """The match is over: every long poll returns now."""
        for event in self._waiters.values():
            event.set()

    def note_events(self, records: Iterable[tuple[int, int, str, bytes, str]], count: bool = True) -> None:
        """Follow operations through their lifecycle events, wake their waiters, count every kind."""
        for _, tick, kind, payload, _ in records:
            if count:
                self.events_by_kind[kind] += 1
            status = OP_KINDS.get(kind)
            if status is None:
                continue
            data = orjson.loads(payload)["data"]
            op = data["op"]
            if status == "running":
                self.ops[op] = {"op": op, "agent": data["agent"], "action": data["action"], "args": data["args"],
                                "status": "running", "started": tick, "ends": data["ends"], "finished_tick": None,
                                "result": None, "code": None, "message": None}
                self.latest[data["agent"]] = op
                if data.get("issuer", "direct").startswith("program:"):
                    self.issuers[op] = data["issuer"]
                continue
            self.issuers.pop(op, None)
            # The character was busy until the tick before its operation ended: the same activity the clock
            # records live, so a restarted host (which rebuilds activity from these events) marks idleness alike.
            self.host.clock.busy_until(data["agent"], tick - 1)
            rec = self.ops.get(op)
            if rec is None:
                continue
            rec.update(status=status, finished_tick=tick, result=data.get("result"), code=data.get("code"),
                       message=data.get("message"))
            event = self._waiters.pop(op, None)
            if event is not None:
                event.set()
            finished = self._finished.setdefault(rec["agent"], deque())
            finished.append(op)
            if len(finished) > FINISHED_OPS_PER_AGENT:
                self.ops.pop(finished.popleft(), None)
