"""Drives programs in the Monty interpreter: start, pause at each world call, resume, snapshot, check.

Used by the runner process (for live programs) and by the re-simulation check (in a fresh pool).
Every suspension of a program — a call of an API function, of anything undefined, an OS call, a
name lookup — is handed back as a `call` step for the world to answer: nothing is answered here,
so the world's budgets count every round trip and the transcript holds every one.
"""

from __future__ import annotations

import datetime
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable

import pydantic_monty as pm

SCRIPT = "program.py"
DIAGNOSTIC = re.compile(r"^[^:\n]+:(\d+):(\d+): (?:error|warning)\[([\w-]+)\] (.*)$", re.M)
LIMIT_ERRORS = frozenset({"MemoryError", "RecursionError"})


@dataclass(frozen=True)
class Settings:
    """What every program runs under (from programs.yaml, sent by the world when the runner starts), and the
    functions whose calls may end a program's turn (the runner snapshots a program paused in one of them)."""

    max_memory_bytes: int
    max_recursion_depth: int
    call_wall_s: float
    check_wall_s: float
    host_calls_per_turn: int
    log_lines: int
    log_line_chars: int
    frozen_clock: str
    workers: int = 2
    reply_grace_s: float = 2.0
    max_state_bytes: int = 0
    blocking: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, spec: Any, blocking: Iterable[str] = ()) -> Settings:
        return cls(spec.max_memory_bytes, spec.max_recursion_depth, spec.call_wall_s, spec.check_wall_s,
                   spec.host_calls_per_turn, spec.log_lines, spec.log_line_chars, spec.frozen_clock.isoformat(),
                   spec.runner_workers, spec.runner_reply_grace_s, spec.max_state_bytes, tuple(sorted(blocking)))

    def limits(self) -> pm.ResourceLimits:
        # max_suspensions is only a backstop: the world stops answering at its own budget first.
        return {"max_memory": self.max_memory_bytes, "max_recursion_depth": self.max_recursion_depth,
                "max_turn_duration_secs": self.call_wall_s, "max_suspensions": 2 * self.host_calls_per_turn + 8}

    def policy(self, seed: int) -> pm.OSPolicy:
        return {"datetime": datetime.datetime.fromisoformat(self.frozen_clock), "random_start": {"seed": seed},
                "sleep": "zero", "process_time": "zero"}


class Output:
    """A program's print() output as whole lines: each cut to `chars`, at most `lines` held, the rest counted."""

    def __init__(self, lines: int, chars: int):
        self.chars = chars
        self.lines: deque[str] = deque(maxlen=lines)
        self.partial = ""
        self.dropped = 0

    def __call__(self, stream: str, text: str) -> None:
        parts = (self.partial + text).split("\n")
        self.partial = parts.pop()[: self.chars * 4]
        for line in parts:
            self._add(line)

    def _add(self, line: str) -> None:
        if len(self.lines) == self.lines.maxlen:
            self.dropped += 1
        self.lines.append(cut(line, self.chars))

    def take(self) -> dict[str, Any]:
        """The lines so far and how many were dropped; text without its newline counts as a line (output is
        flushed before every host call and at the end, so it is one)."""
        if self.partial:
            self._add(self.partial)
            self.partial = ""
        out = {"out": list(self.lines), "out_dropped": self.dropped}
        self.lines.clear()
        self.dropped = 0
        return out


def cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def plain(value: Any, depth: int = 0) -> Any:
    """A JSON-like copy of a value from the sandbox; raises TypeError naming what is not plain data."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            return value
        raise TypeError("integers beyond 64 bits cannot be passed to the world")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError("nan and infinity cannot be passed to the world")
        return value
    if depth > 32:
        raise TypeError("values nested deeper than 32 levels cannot be passed to the world")
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError("dictionary keys passed to the world must be strings")
            out[k] = plain(v, depth + 1)
        return out
    raise TypeError(f"a {type(value).__name__} cannot be passed to the world: use str, int, float, bool, None, list or dict")


def describe(value: Any) -> Any:
    """A JSON-like record of a value that need not be plain (the arguments of an OS call, for the transcript)."""
    try:
        return plain(value)
    except TypeError:
        return {"repr": repr(value)[:200]}


def call_of(snap: Any) -> dict[str, Any]:
    """The world's view of a suspension: its kind, the function or name, and plain arguments."""
    if isinstance(snap, pm.NameLookupSnapshot):
        return {"kind": "name", "fn": snap.variable_name, "args": [], "kwargs": {}}
    if isinstance(snap, pm.FutureSnapshot):
        return {"kind": "future", "fn": "await", "args": [], "kwargs": {}}
    fn = str(snap.function_name)
    if snap.is_os_function:
        return {"kind": "os", "fn": fn, "args": describe(list(snap.args)), "kwargs": describe(dict(snap.kwargs))}
    call = {"kind": "function", "fn": fn}
    try:
        call["args"], call["kwargs"] = plain(list(snap.args)), plain(dict(snap.kwargs))
    except TypeError as exc:
        call["args"], call["kwargs"] = describe(list(snap.args)), describe(dict(snap.kwargs))
        call["bad"] = str(exc)
    return call


def error_of(exc: BaseException) -> dict[str, Any]:
    """A program's failure as (type, message, line, reason)."""
    if isinstance(exc, pm.MontyCrashedError):
        timed_out = exc.timed_out
        return {"type": "TimeoutError" if timed_out else "InterpreterCrash", "line": None,
                "message": str(exc), "reason": "wall_clock" if timed_out else "runner_crash"}
    if isinstance(exc, (pm.MontyRuntimeError, pm.MontySyntaxError)):
        # The line of the program itself: the innermost frame not inside an eval()/exec() string.
        frames = [f for f in exc.traceback() if f.filename != "<string>"]
        line = frames[-1].line if frames else None
        try:
            kind = type(exc.exception()).__name__
        except Exception:  # a Monty-only exception type has no Python class: read its name off the display
            kind = exc.display("type-msg").split(":", 1)[0]
        reason = "wall_clock" if kind == "TimeoutError" else "limit" if kind in LIMIT_ERRORS else "runtime_error"
        return {"type": kind, "message": exc.display("msg"), "line": line, "reason": reason}
    return {"type": type(exc).__name__, "message": str(exc), "line": None, "reason": "runtime_error"}


def diagnostics(text: str) -> list[dict[str, Any]]:
    """Type checker output (concise format) as (line, column, code, message) records."""
    return [{"line": int(m[1]), "column": int(m[2]), "code": m[3], "message": m[4]} for m in DIAGNOSTIC.finditer(text)]


@dataclass
class Paused:
    session: Any
    snap: Any
    output: Output
    cap: str = ""


class Sandbox:
    """A pool of interpreter processes and the programs that hold one during a turn, by key.

    With `defer_release` a dropped program's interpreter goes back to the pool only at `retire()` (the
    runner calls it once it has replied, so the world does not wait on it) or before the next checkout.
    """

    def __init__(self, settings: Settings, defer_release: bool = False):
        self.settings = settings
        self.blocking = frozenset(settings.blocking)
        self.defer_release = defer_release
        self.pool = pm.Monty(min_processes=1, max_processes=settings.workers,
                             request_timeout=settings.call_wall_s + settings.reply_grace_s,
                             turn_duration_limit_grace=min(1.0, settings.reply_grace_s))
        self.pool.__enter__()
        self.active: dict[str, Paused] = {}
        self.retiring: list[Any] = []

    def close(self) -> None:
        for key in list(self.active):
            self.drop(key)
        self.retire()
        self.pool.__exit__(None, None, None)

    # ---- checking ----------------------------------------------------------------------------

    def check(self, source: str, stubs: str) -> list[dict[str, Any]]:
        """Syntax and type errors against the stubs (empty when none). The code runs at most `check_wall_s`
        (a type check cannot be had without a feed); whatever it does then is discarded."""
        s = self.settings
        self.retire()
        session = self.pool.checkout(script_name=SCRIPT, type_check=True, type_check_stubs=stubs,
                                     type_check_format="concise", os_policy=s.policy(0),
                                     limits={**s.limits(), "max_turn_duration_secs": s.check_wall_s, "max_suspensions": 1})
        with session:
            try:
                session.feed_start(source, print_callback=lambda *_: None)
            except pm.MontyTypingError as exc:
                found = diagnostics(exc.display())
                return found or [{"line": None, "column": None, "code": "type-error", "message": exc.display().strip()}]
            except pm.MontySyntaxError as exc:
                err = error_of(exc)
                return [{"line": err["line"], "column": None, "code": "invalid-syntax", "message": err["message"]}]
            except pm.MontyCrashedError:
                raise
            except pm.MontyError:
                pass  # a runtime error of the running code: not the checker's business
        return []

    # ---- running ------------------------------------------------------------------------------

    def start(self, key: str, source: str, seed: int, cap: str = "") -> dict[str, Any]:
        s = self.settings
        paused = self._checkout(key, cap, limits=s.limits(), os_policy=s.policy(seed), print_flush_interval=0)
        return self._advance(key, paused, lambda: paused.session.feed_start(source, print_callback=paused.output))

    def load(self, key: str, dump: bytes, seed: int, cap: str = "") -> dict[str, Any]:
        paused = self._checkout(key, cap, os_policy=self.settings.policy(seed), print_flush_interval=0)
        return self._advance(key, paused, lambda: paused.session.load_snapshot(dump, print_callback=paused.output))

    def resume(self, key: str, answer: dict[str, Any]) -> dict[str, Any]:
        """Answer the pending call with {"value": v} or {"raise": {"type", "message"}}; the next step."""
        paused = self.active[key]
        snap = paused.snap
        if isinstance(snap, pm.NameLookupSnapshot):
            go = (lambda: snap.resume(value=answer["value"])) if "value" in answer else snap.resume
        elif "value" in answer:
            go = lambda: snap.resume({"return_value": answer["value"]})  # noqa: E731
        else:
            exc = answer["raise"]
            go = lambda: snap.resume({"exc_type": exc["type"], "message": exc["message"]})  # noqa: E731
        return self._advance(key, paused, go)

    def snapshot(self, key: str) -> bytes:
        """The paused program's snapshot; it stays paused here (taking one changes nothing in the program)."""
        return self.active[key].snap.dump()

    def park(self, key: str) -> bytes:
        """The paused program's snapshot; its interpreter goes back to the pool."""
        try:
            return self.snapshot(key)
        finally:
            self.drop(key)

    def drop(self, key: str) -> None:
        paused = self.active.pop(key, None)
        if paused is not None:
            self.retiring.append(paused.session)
            if not self.defer_release:
                self.retire()

    def retire(self) -> None:
        """Give the interpreters of dropped programs back to the pool."""
        while self.retiring:
            try:
                self.retiring.pop().__exit__(None, None, None)
            except pm.MontyError:
                pass  # its worker already died; the pool replaces it

    def _checkout(self, key: str, cap: str, **options: Any) -> Paused:
        self.drop(key)
        self.retire()  # a checkout may need the very worker a dropped program still holds
        session = self.pool.checkout(script_name=SCRIPT, **options)
        session.__enter__()
        paused = self.active[key] = Paused(session, None, Output(self.settings.log_lines, self.settings.log_line_chars), cap)
        return paused

    def _advance(self, key: str, paused: Paused, go) -> dict[str, Any]:
        try:
            snap = go()
        except pm.MontyError as exc:
            self.drop(key)
            return {"kind": "error", "error": error_of(exc), **paused.output.take()}
        except (KeyError, ValueError, TypeError, RuntimeError) as exc:
            self.drop(key)  # an answer Monty could not take (an exception type it does not know, say)
            return {"kind": "error", "error": {"type": type(exc).__name__, "message": str(exc), "line": None,
                                               "reason": "runtime_error"}, **paused.output.take()}
        if isinstance(snap, pm.MontyComplete):
            self.drop(key)
            return {"kind": "done", **paused.output.take()}
        paused.snap = snap
        return {"kind": "call", "call": call_of(snap), **paused.output.take()}
