"""What the program host keeps of each program: its runs and their counters, its revisions, its log ring.

`Program` and `Run` are records the program host (`wildhold.service.program_host`) owns and restores
from the store; a turn (`wildhold.service.program_turns`) changes them as the program runs.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wildhold.programs.sandbox import cut
from wildhold.store.sqlite import RUN_COLUMNS

if TYPE_CHECKING:
    from wildhold.service.match import Match

LIVE = ("running", "waiting")


@dataclass
class Run:
    """One start of one revision: its counters, what it waits on, its snapshot while paused."""

    run: int
    agent: str
    name: str
    revision: int
    seed: int
    state: str
    started_tick: int
    ended_tick: int | None = None
    error: dict[str, Any] | None = None
    actions: int = 0
    host_calls: int = 0
    waiting_on: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None  # the call the program is paused in, unanswered
    seq: int = 0  # calls answered so far
    dump: bytes | None = None
    args: dict[str, Any] = field(default_factory=dict)  # what it was started with (the recorded start input's)
    cap: str = field(default_factory=lambda: secrets.token_urlsafe(18), compare=False, repr=False)

    @property
    def issuer(self) -> str:
        return f"program:{self.name}@{self.revision}"

    @property
    def key(self) -> str:
        return f"run{self.run}"

    def row(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in RUN_COLUMNS}

    def end(self, state: str, tick: int) -> None:
        """The run is over (stopped, finished or failed) at `tick`: it waits on nothing and keeps no snapshot."""
        self.state, self.ended_tick, self.waiting_on, self.dump = state, tick, None, None


@dataclass
class Program:
    """A character's program by name: its revisions, its latest run, its log ring."""

    agent: str
    name: str
    log: deque
    revisions: list[dict[str, Any]] = field(default_factory=list)
    run: Run | None = None
    next_seq: int = 1
    dropped: int = 0
    unsaved: list[tuple[int, int, str]] = field(default_factory=list)

    def write(self, text: str, tick: int, line_chars: int) -> None:
        """Lines into the log ring (each cut to `line_chars`), counting those the full ring drops; the
        lines not yet stored are kept, at most a ring's worth."""
        for line in text.split("\n"):
            if len(self.log) == self.log.maxlen:
                self.dropped += 1
            entry = (self.next_seq, tick, cut(line, line_chars))
            self.next_seq += 1
            self.log.append(entry)
            self.unsaved.append(entry)
        if len(self.unsaved) > self.log.maxlen:
            del self.unsaved[: len(self.unsaved) - self.log.maxlen]


def run_seed(world_seed: int, scenario: str, agent: str, name: str, revision: int, run: int) -> int:
    digest = hashlib.sha256(f"{world_seed}|{scenario}|{agent}|{name}|{revision}|{run}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def begin_run(match: Match, agent: str, name: str, revision: int, issuer: str = "direct",
              args: dict[str, Any] | None = None) -> Run:
    """A new run of a saved revision, from its first line (it takes its first turn at the next tick): stored and its
    start recorded in the match's log, with its start arguments (`start_args()` in the program), by `issuer` (the
    agent itself, or the operator of a fork restarting it)."""
    w, store = match.world, match.store
    number = store.next_program_run()
    run = Run(number, agent, name, revision, run_seed(w.seed, w.scenario_name, agent, name, revision, number),
              "running", w.tick, args=dict(args or {}))
    with store.transaction():
        store.save_program_run(run.row())
        match.program(agent, "start", {"name": name, "revision": revision, "run": number,
                                       **({"args": run.args} if run.args else {})}, issuer)
        match.flush()
    return run
