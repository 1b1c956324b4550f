"""Scaffold-side accounting: pinned prices, caching-neutral cost, crash-safe telemetry and the ledger rebuilt from it.

Cost is caching-neutral (seed 001): every input token is priced at the uncached input rate whether or not the
provider served it from cache, so arms are compared on tokens consumed rather than on each vendor's cache discount.
Cached tokens are still recorded for the token-denominated view. Each session's usage and price also goes
into the match itself (`SessionSpend.record`), so that the archive alone carries the spend.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from wildhold.agents.scaffold.adapters import Usage
from wildhold.store.private import opener, private_folder

EVENT_KINDS = ("run_start", "session_start", "session_resumed", "llm_call", "tool_call", "workspace_write",
               "wake_scheduled", "session_end", "progress", "run_complete", "provider_error", "workspace_preloaded")


BULK = frozenset({"result", "text", "calls"})  # a tool's answer, the model's text and its calls: the transcript


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens, pinned in the run manifest."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok) / 1_000_000

    def dump(self) -> dict[str, float]:
        return {"input_per_mtok": self.input_per_mtok, "output_per_mtok": self.output_per_mtok}


class PriceSpec(BaseModel):
    """A model's price as an experiment or a proxy file pins it: list dollars per million input and output tokens,
    and the day they were read off the provider's pricing page (`as_of`), which the run's price table keeps so that
    a report says how old its prices are."""

    model_config = ConfigDict(extra="forbid")
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    as_of: date | None = None

    def pinned(self) -> dict[str, Any]:
        """The price as the run's table holds it: an undated price as before, so its table's identity is unchanged."""
        return self.model_dump(mode="json", exclude_none=True)


def price_table_id(table: dict[str, Any]) -> str:
    """The identity of a run's price table (arm -> model and pinned prices): sha256 of its canonical JSON."""
    return hashlib.sha256(json.dumps(table, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class SessionSpend:
    """What one session consumed: its model calls' tokens and their cost at the pinned price."""

    llm_calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, usage: Usage, cost: float) -> None:
        self.llm_calls += 1
        self.input_tokens += usage.input_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.output_tokens += usage.output_tokens
        self.cost_usd += cost

    def record(self, session: int, model: str, price: Price, table: str) -> dict[str, Any]:
        """The session as the match records it: usage, dollars, and the price with the table it comes from."""
        return {"session": session, "model": model, "llm_calls": self.llm_calls, "input_tokens": self.input_tokens,
                "cached_input_tokens": self.cached_input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd, "price": price.dump(), "price_table": table}


class Telemetry:
    """One JSONL file per run; every record is appended, flushed and fsynced before the call returns."""

    def __init__(self, path: Path):
        self.path = Path(path)
        private_folder(self.path.parent)
        self._read: list[dict[str, Any]] | None = None  # what `records` read, kept up to date by `emit`

    def emit(self, kind: str, arm: str | None = None, **data: Any) -> dict[str, Any]:
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown telemetry kind {kind!r}")
        record = {"kind": kind, "arm": arm, "t": round(time.time(), 3), **data}
        with open(self.path, "a", encoding="utf-8", opener=opener) as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if self._read is not None:  # kept without the transcript's bulk, which only a resume reads (from the file)
            self._read.append({k: v for k, v in json.loads(json.dumps(record, sort_keys=True)).items() if k not in BULK})
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every complete record; a torn last line (a crash mid-write) is ignored. Read once, then kept: the records
        emitted since come without their `BULK` fields (a fresh `Telemetry` on the file has everything)."""
        if self._read is None:
            self._read = self._load()
        return list(self._read)

    def _load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


@dataclass
class ArmLedger:
    """What one arm has consumed so far: rebuilt from telemetry after a crash, so a resumed run starts here.

    `elapsed_s` is the wall-clock time the arm has been alive in earlier processes (each life runs from
    its `run_start` to its last record), so a resumed run's ceiling counts what was already used.
    `ended_session` is the last session with a `session_end`, with the wake it chose (`ended_wake`);
    `progress_session` and `wake_session` say whether its checkpoint and wake were recorded before a crash;
    `ended_sessions` lists every ended session and `by_session` what each consumed, for the match's records.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0
    sessions: int = 0
    tool_calls: int = 0
    complete: str | None = None
    wake_tick: int | None = None
    replay_position: int = 0
    elapsed_s: float = 0.0
    ended_session: int = 0
    ended_wake: int | None = None
    progress_session: int = 0
    wake_session: int = 0
    ended_sessions: list[int] = field(default_factory=list)
    by_session: dict[int, SessionSpend] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, usage: Usage, cost: float, session: int | None = None) -> None:
        self.input_tokens += usage.input_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.output_tokens += usage.output_tokens
        self.cost_usd += cost
        self.llm_calls += 1
        if session is not None:
            self.session(session).add(usage, cost)

    def session(self, number: int) -> SessionSpend:
        """What session `number` has consumed so far (earlier processes' calls included)."""
        return self.by_session.setdefault(number, SessionSpend())


@dataclass
class Ledger:
    arms: dict[str, ArmLedger] = field(default_factory=dict)

    def arm(self, name: str) -> ArmLedger:
        return self.arms.setdefault(name, ArmLedger())


def rebuild(records: list[dict[str, Any]]) -> Ledger:
    """The accounting implied by the telemetry records (the single source of truth for spend)."""
    ledger = Ledger()
    lives: dict[str, tuple[float, float]] = {}  # arm -> (its current life's run_start time, its latest record time)
    for r in records:
        if r.get("arm") is None:
            continue
        a = ledger.arm(r["arm"])
        kind, t = r["kind"], r.get("t", 0.0)
        if kind == "run_start":
            if r["arm"] in lives:
                start, last = lives[r["arm"]]
                a.elapsed_s += last - start
            lives[r["arm"]] = (t, t)
        elif r["arm"] in lives:
            lives[r["arm"]] = (lives[r["arm"]][0], t)
        if kind == "llm_call":
            a.add(Usage(r["input_tokens"], r["cached_input_tokens"], r["output_tokens"]), r["cost_usd"], r.get("session"))
            a.replay_position += 1
        elif kind == "session_start":
            a.sessions += 1
        elif kind == "tool_call":
            a.tool_calls += 1
        elif kind == "session_end":
            a.ended_session, a.ended_wake = r["session"], r.get("wake_minutes")
            a.ended_sessions.append(r["session"])
        elif kind == "progress":
            a.progress_session = r["session"]
        elif kind == "wake_scheduled":
            a.wake_tick, a.wake_session = r["wake_tick"], r.get("session", a.ended_session)
        elif kind == "run_complete":
            a.complete = r["reason"]
    for arm, (start, last) in lives.items():
        ledger.arm(arm).elapsed_s += last - start
    return ledger



def session_log(records: list[dict[str, Any]], arm: str, number: int,
                scaffold_tools: frozenset[str] = frozenset(), design_tools: frozenset[str] = frozenset()) -> dict[str, Any]:
    """What one session did, as its telemetry says, for the match's record of it (the study's pacing and
    failure analyses read it from the archive): when it began and ended (wall clock and world tick), why
    it ended, the wake it chose, each model turn (when, its cost and tokens, its tool calls) and each tool
    call (when, the tick, the tool, its code, whether it was a world tool rather than one of `scaffold_tools`),
    the workspace writes (when, the path, the bytes and what was written) and deletes, the design document's
    sections it read (calls of `design_tools` that succeeded, with their arguments), and every service interruption: a
    provider's failed attempts and the waits after them, a failure that stopped the arm, and the time the
    run was down before the session resumed."""
    log: dict[str, Any] = {"started_at": None, "ended_at": None, "start_tick": None, "end_tick": None, "end_reason": None,
                           "wake_minutes": None, "turns": [], "calls": [], "writes": [], "deletes": [], "design_reads": [],
                           "interruptions": []}
    met = log["interruptions"]
    previous: float | None = None  # the time of the arm's record before this one
    stop: tuple[float, float] | None = None  # the latest time the arm was down: (its last record, its next run_start)
    for r in records:
        if r.get("arm") != arm:
            continue
        kind, t = r["kind"], r.get("t", 0.0)
        if kind == "run_start" and previous is not None:
            stop = (previous, t)
        if r.get("session") == number:
            if kind == "session_start":
                log["started_at"], log["start_tick"] = t, r.get("tick")
            elif kind == "session_resumed":
                if stop is not None:
                    if met and met[-1]["kind"] == "provider_error" and met[-1]["at"] >= stop[0]:
                        met[-1]["duration_s"] = round(stop[1] - met[-1]["at"], 3)  # down from the failure to the restart
                    else:
                        met.append({"kind": "run_stopped", "at": stop[0], "duration_s": round(stop[1] - stop[0], 3), "error": None})
                    stop = None
                if log["started_at"] is None:
                    log["started_at"], log["start_tick"] = t, r.get("tick")
            elif kind == "llm_call":
                log["turns"].append([t, r["cost_usd"], r["input_tokens"] + r["output_tokens"], r.get("tool_calls", 0),
                                     r.get("retries", 0)])
                met += [_retry(m) for m in r.get("interruptions", ())]
            elif kind == "provider_error":
                met += [_retry(m) for m in r.get("attempts", ()) if not m.get("final")]
                met.append({"kind": "provider_error" if r.get("fatal") else "transcript_refused", "at": t, "duration_s": 0.0,
                            "error": r.get("error")})
            elif kind == "tool_call":
                log["calls"].append([t, r.get("tick"), r["name"], r["code"], r["name"] not in scaffold_tools])
                args = r.get("args") or {}
                if r["code"] == "ok" and r["name"] == "write_file":
                    log["writes"].append([t, args.get("path"), len(str(args.get("content", "")).encode()), str(args.get("content", ""))])
                elif r["code"] == "ok" and r["name"] == "delete_file":
                    log["deletes"].append([t, args.get("path")])
                elif r["code"] == "ok" and r["name"] in design_tools:
                    log["design_reads"].append([t, r.get("tick"), r["name"], args])
            elif kind == "session_end":
                log["ended_at"], log["end_tick"] = t, r.get("tick")
                log["end_reason"], log["wake_minutes"] = r.get("reason"), r.get("wake_minutes")
        previous = t
    return log


def _retry(attempt: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "retry", "at": attempt["at"], "duration_s": attempt["wait_s"], "error": attempt["error"]}
