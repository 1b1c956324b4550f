"""The turn every running program of a served match takes at each tick boundary.

Right after the world steps, every running program takes a turn in (character, name) order: it
is loaded from its stored snapshot into the runner, given the result it waited for, and its world
calls are answered until it blocks, ends, or spends its turn's budget; then its snapshot, the
transcript of the turn's calls and its log lines are stored. A tick's program writes commit in
one transaction with the actions the programs submitted, so a crash loses a whole turn or none.
Round trips to the runner are kept to what a turn needs: the result a program waited for travels
with its snapshot, a call that may end the turn comes back with the snapshot, and letting the
program go is not waited for, so a program that wakes, acts and waits again costs one request.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from wildhold.programs.client import RunnerClient, RunnerFailed
from wildhold.programs.protocol import pack_bytes, unpack_bytes
from wildhold.programs.sandbox import cut
from wildhold.service.queries import QUERIES
from wildhold.world.errors import Rejected

if TYPE_CHECKING:
    from wildhold.service.program_host import Program, ProgramHost, Run

LIVE = ("running", "waiting")
ERROR_MESSAGE_CHARS = 500
# What a program meets where a sandbox would have let it reach outside.
NO_OS = "Programs have no files, network, processes or environment: {fn} is not available."


@dataclass
class Turn:
    started: float
    calls: int = 0
    actions: int = 0


@dataclass(frozen=True)
class Block:
    """The call waits: on an operation of the character, or for a tick."""

    waiting_on: dict[str, Any]


PARK = object()  # the call stays unanswered until the next turn (this turn's action budget is spent)


def raises(kind: str, message: str) -> dict[str, Any]:
    return {"raise": {"type": kind, "message": message}}


def op_result(rec: dict[str, Any]) -> dict[str, Any]:
    """A finished operation as a program sees it."""
    return {"ok": rec["status"] == "completed", "op": rec["op"], "status": rec["status"], "result": rec.get("result"),
            "code": rec.get("code"), "message": rec.get("message")}


def rejected(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "op": None, "status": "rejected", "result": None, "code": code, "message": message}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


class Turns:
    """Drives the turns of the programs a `ProgramHost` keeps, through its runner client."""

    def __init__(self, owner: ProgramHost):
        self.owner = owner
        self.host, self.spec, self.store = owner.host, owner.spec, owner.store
        self.counters, self.kinds, self.programs = owner.counters, owner.kinds, owner.programs

    @property
    def client(self) -> RunnerClient:
        """The owner's runner client, whichever one it holds now (the owner may replace it)."""
        return self.owner.client

    def tick(self) -> None:
        """Give every running program whose wait is over its turn, in (character, name) order."""
        runs = sorted((p.run for p in self.programs.values() if p.run is not None and p.run.state in LIVE),
                      key=lambda r: (r.agent, r.name))
        ready = [r for r in runs if self._ready(r)]
        if not ready:
            return
        with self.store.transaction():
            for run in ready:
                self._turn(run)
            self.host.match.flush()
    def _ready(self, run: Run) -> bool:
        waiting = run.waiting_on
        if waiting is None:
            return True
        if waiting["kind"] == "tick":
            return self.host.world.tick >= waiting["tick"]
        rec = self.host.operations.ops.get(waiting["op"])
        return rec is None or rec["status"] != "running"

    def _request(self, run: Run, message: dict[str, Any]) -> dict[str, Any]:
        return self.client.request({**message, "program": run.key, "cap": run.cap})

    def _turn(self, run: Run) -> None:
        """One turn of one program; whatever happens, its record, transcript rows and log lines are stored."""
        program = self.programs[(run.agent, run.name)]
        rows: list[tuple] = []
        turn = Turn(time.monotonic())
        self.counters["turns"] += 1
        try:
            self._drive(run, program, self._begin(run, turn, rows), turn, rows)
        except RunnerFailed as exc:
            self._fail(run, exc.reason, "RunnerFailed", exc.message, None)
        self._save(run, program, rows)

    def _begin(self, run: Run, turn: Turn, rows: list[tuple]) -> dict[str, Any]:
        """The program in the runner: from its source on its first turn, else from its snapshot, which must be
        paused in the very call its record says. The answer to that call travels with the snapshot when giving
        it changes nothing in the world (a wait's result, a read): a runner that fails the restore loses nothing."""
        if run.dump is None:
            source = self.store.program_source(run.agent, run.name, run.revision)
            return self._request(run, {"op": "start", "source": source, "seed": run.seed,
                                       "snapshot": self._snapshot_at(turn.calls)})
        message = {"op": "load", "dump": pack_bytes(run.dump), "seed": run.seed, "expect": run.pending,
                   "snapshot": self._snapshot_at(turn.calls)}
        answer = None
        if run.waiting_on is not None:
            answer = self._encode(self._wake(run))
        elif self._harmless(run.pending):
            answer = self._encode(self._answer(run, run.pending, turn))
        if answer is not None:
            message.update(answer=orjson.Fragment(answer), snapshot=self._snapshot_at(turn.calls + 1))
        try:
            step = self._request(run, message)
        except RunnerFailed:
            if answer is not None:  # sent: the program may have had it before the runner failed
                self._record(run, turn, run.pending, answer, rows)
            raise
        if answer is not None and step.get("answered"):
            self._record(run, turn, run.pending, answer, rows)
        elif answer is not None and step.get("kind") == "call":
            raise RunnerFailed("runner_crash", "the runner restored the program without answering its call")
        if step.get("kind") == "mismatch":  # the runner has already let it go
            return {"kind": "error", "error": {"reason": "restore_mismatch", "type": "RestoreError", "line": None,
                    "message": "The restored program is not paused where it was stored; it cannot resume safely."}}
        return step

    def _drive(self, run: Run, program: Program, step: dict[str, Any], turn: Turn, rows: list[tuple]) -> None:
        """Answer calls until the program blocks, ends, fails or spends this turn's budget."""
        while True:
            self._absorb(program, step)
            if step.get("kind") != "call":
                return self._ended(run, step)
            call = step["call"]
            if time.monotonic() - turn.started > self.spec.turn_wall_s:
                self._release(run)
                return self._fail(run, "wall_clock", "TimeoutError", f"The turn ran over {self.spec.turn_wall_s:g} s "
                                  "of wall-clock time (the safety net); the program was stopped.", None)
            answer = PARK if turn.calls >= self.spec.host_calls_per_turn else self._answer(run, call, turn)
            if isinstance(answer, Block):
                run.waiting_on, run.state = answer.waiting_on, "waiting"
            if answer is PARK or isinstance(answer, Block):
                return self._park(run, call, step.get("dump"))
            encoded = self._encode(answer)
            self._record(run, turn, call, encoded, rows)
            step = self._request(run, {"op": "resume", "answer": orjson.Fragment(encoded),
                                       "snapshot": self._snapshot_at(turn.calls)})

    def _harmless(self, call: dict[str, Any]) -> bool:
        """Whether answering the call changes nothing in the world: anything but an action, log or sleep_until."""
        return call["kind"] != "function" or self.kinds.get(call["fn"]) not in ("action", "control")

    def _record(self, run: Run, turn: Turn, call: dict[str, Any], answer: bytes, rows: list[tuple]) -> None:
        """One answered call: counted against the turn's budget and kept for the transcript."""
        turn.calls += 1
        run.host_calls += 1
        run.seq += 1
        rows.append((run.run, run.seq, self.host.world.tick, call["fn"], call, answer))

    def _snapshot_at(self, answered: int) -> str:
        """Which next call the runner sends the program's snapshot with, `answered` calls into the turn: one that
        may end the turn (any call once the turn's budget is spent), so pausing there needs no request of its own."""
        return "any" if answered >= self.spec.host_calls_per_turn else "blocking"

    @staticmethod
    def _encode(answer: Any) -> bytes:
        """An answer as JSON, once: the same bytes go to the program and into the transcript."""
        try:
            return orjson.dumps(answer)
        except orjson.JSONEncodeError as exc:
            raise RunnerFailed("runner_crash", f"the program runner failed: a value cannot travel in a frame: {exc}") from None

    def _ended(self, run: Run, step: dict[str, Any]) -> None:
        if step.get("kind") == "done":
            return self._finish(run)
        if step.get("kind") == "error":
            e = step["error"]
            return self._fail(run, e.get("reason", "runtime_error"), e.get("type", "Error"), e.get("message", ""), e.get("line"),
                              {k: e[k] for k in ("at", "call") if k in e})
        self._fail(run, "runner_crash", "RunnerError", str(step.get("message", "the runner refused the request")), None)

    def _wake(self, run: Run) -> dict[str, Any]:
        """The result a waiting program gets: the tick it woke at, or how its operation ended."""
        waiting, run.waiting_on, run.state = run.waiting_on, None, "running"
        if waiting["kind"] == "tick":
            return {"value": self.host.world.tick}
        rec = self.host.operations.ops.get(waiting["op"])
        if rec is None:
            return {"value": rejected("unknown_operation", f"Operation {waiting['op']} is no longer tracked.")}
        return {"value": op_result(rec)}

    def _answer(self, run: Run, call: dict[str, Any], turn: Turn) -> Any:
        """What the world answers one call: a value or an exception, a Block, or PARK."""
        fn, kind = call["fn"], call["kind"]
        if kind == "os" and fn == "import":
            module = call["args"][0] if isinstance(call["args"], list) and call["args"] else "?"
            return raises("ModuleNotFoundError", f"No module named {module!r}: programs have no files, network, "
                          "processes or environment, and only the interpreter's own modules import.")
        if kind == "os":
            return raises("PermissionError", NO_OS.format(fn=fn))
        if kind == "name":
            return raises("NameError", f"name {fn!r} is not defined")
        what = self.kinds.get(fn) if kind == "function" else None
        if what is None:
            return raises("NameError", f"name {fn!r} is not defined: a program calls only the functions of the program API")
        if "bad" in call:
            return raises("TypeError", f"{fn}(): {call['bad']}")
        args, kwargs = call["args"], call["kwargs"]
        if what == "action":
            if args:
                return raises("TypeError", f"{fn}() takes keyword arguments only, as in the program API reference")
            if turn.actions >= self.spec.actions_per_tick:
                return PARK
            turn.actions += 1
            run.actions += 1
            return self._act(run, fn, kwargs)
        if what == "read":
            if args or kwargs:
                return raises("TypeError", f"{fn}() takes no arguments")
            return {"value": self._read(run.agent, fn)}
        if fn == "log":
            if kwargs:
                return raises("TypeError", "log() takes values only, no keyword arguments")
            self._log(self.programs[(run.agent, run.name)], " ".join(_text(v) for v in args))
            return {"value": None}
        return self._sleep(args, kwargs)

    def _sleep(self, args: list, kwargs: dict) -> Any:
        w = self.host.world
        given = list(args) + ([kwargs["tick"]] if "tick" in kwargs else [])
        if len(given) != 1 or set(kwargs) - {"tick"} or isinstance(given[0], bool) or not isinstance(given[0], int):
            return raises("TypeError", "sleep_until() takes one whole number: the tick to wake at")
        tick = given[0]
        if tick <= w.tick:
            return {"value": w.tick}
        if tick - w.tick > self.spec.sleep_max_ticks:
            return raises("ValueError", f"sleep_until({tick}) is {tick - w.tick} ticks ahead; at most {self.spec.sleep_max_ticks}.")
        return Block({"kind": "tick", "tick": tick})

    def _act(self, run: Run, action: str, kwargs: dict[str, Any]) -> Any:
        """Submit as the program's own character, through the host like a direct action (same limits, same log)."""
        host = self.host
        wait = host.access.spend_for(run.agent)
        if wait is not None:
            return {"value": rejected("rate_limited", f"Your rate limit is spent (program and direct actions share it); "
                                      f"retry in {wait:.2f} s.")}
        result = host.submit(run.agent, action, kwargs, issuer=run.issuer)
        self.counters["actions"] += 1
        if isinstance(result, Rejected):
            return {"value": rejected(result.code, result.message)}
        if result["status"] == "running":
            return Block({"kind": "operation", "op": result["op"]})
        return {"value": op_result(result)}

    def _read(self, agent: str, fn: str) -> Any:
        """A query as its MCP tool and HTTP route answer it, with the arguments a program's call passes."""
        if fn == "now":
            return self.host.world.tick
        query = QUERIES[fn]
        return query.run_now(self.host, agent, query.program)

    def _park(self, run: Run, call: dict[str, Any], packed: str | None) -> None:
        """Pause the program in its unanswered call and keep its snapshot (unless it outgrew the limit). The
        snapshot came with the call, or is asked for now; the runner then lets the program go."""
        if packed is None:
            reply = self._request(run, {"op": "park"})
            if reply.get("kind") != "parked":
                raise RunnerFailed("runner_crash", str(reply.get("message", "the runner could not pause the program")))
            packed = reply["dump"]
        else:
            self._release(run)
        data = unpack_bytes(packed)
        if len(data) > self.spec.max_state_bytes:
            self._fail(run, "state_too_large", "MemoryError", f"The paused program's state is {len(data)} bytes; at most "
                       f"{self.spec.max_state_bytes} may be kept between turns.", None)
            return
        run.dump, run.pending = data, call

    def _release(self, run: Run) -> None:
        """Let the program go in the runner; nothing waits on it (a failure shows at the next request)."""
        self.client.post({"op": "drop", "program": run.key, "cap": run.cap})

    # ---- endings and records ----------------------------------------------------------------

    def _finish(self, run: Run) -> None:
        run.end("finished", self.host.world.tick)
        self.counters["finished"] += 1
        self.host.match.program(run.agent, "finish", {"name": run.name, "revision": run.revision, "run": run.run,
                                                      "actions": run.actions, "host_calls": run.host_calls}, "service")

    def _fail(self, run: Run, reason: str, kind: str, message: str, line: int | None,
              where: dict[str, Any] | None = None) -> None:
        """`where`: a failure that did not come from the program's own code says where it came (see programs.replay)."""
        message = cut(message, ERROR_MESSAGE_CHARS)
        run.end("failed", self.host.world.tick)
        run.error = {"type": kind, "message": message, "line": line, "reason": reason, **(where or {})}
        self.counters[f"failed_{reason}"] += 1
        self.host.match.program(run.agent, "fail", {"name": run.name, "revision": run.revision, "run": run.run,
                                                    "reason": reason, "error_type": kind, "message": message,
                                                    "line": line}, "service")

    def _absorb(self, program: Program, step: dict[str, Any]) -> None:
        """The print() lines of a step into the log ring; lines the runner had to drop are counted."""
        program.dropped += int(step.get("out_dropped", 0) or 0)
        for line in step.get("out", ()) or ():
            self._log(program, str(line))

    def _log(self, program: Program, text: str) -> None:
        tick = self.host.world.tick
        for line in text.split("\n"):
            if len(program.log) == program.log.maxlen:
                program.dropped += 1
            entry = (program.next_seq, tick, cut(line, self.spec.log_line_chars))
            program.next_seq += 1
            program.log.append(entry)
            program.unsaved.append(entry)
        if len(program.unsaved) > program.log.maxlen:
            del program.unsaved[: len(program.unsaved) - program.log.maxlen]

    def _save(self, run: Run, program: Program, rows: list[tuple]) -> None:
        store = self.store
        store.save_program_run(run.row())
        store.add_program_calls(rows)
        if program.unsaved:
            store.add_program_logs(program.agent, program.name, program.unsaved, self.spec.log_lines,
                                   program.next_seq, program.dropped)
            program.unsaved = []
