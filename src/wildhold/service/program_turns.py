"""The turn every running program of a served match takes at each tick boundary.

Right after the world steps, every running program takes a turn in (character, name) order: it
is loaded from its stored snapshot into the runner, given the result it waited for, and its world
calls are answered until it blocks, ends, or spends its turn's budget; then its snapshot, the
transcript of the turn's calls and its log lines are stored. A tick's program writes commit in
one transaction with the actions the programs submitted, so a crash loses a whole turn or none.
Round trips to the runner are kept to what a turn needs: the result a program waited for travels
with its snapshot, a call that may end the turn comes back with the snapshot, and letting the
program go is not waited for, so a program that wakes, acts and waits again costs one request.
What the world answers each call is `wildhold.service.program_calls`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson

from wildhold.programs.client import RunnerClient, RunnerFailed
from wildhold.programs.protocol import pack_bytes, unpack_bytes
from wildhold.programs.sandbox import cut
from wildhold.service.program_calls import PARK, Block, Calls, Turn
from wildhold.service.program_state import LIVE

if TYPE_CHECKING:
    from wildhold.service.program_host import ProgramHost
    from wildhold.service.program_state import Program, Run

ERROR_MESSAGE_CHARS = 500


class Turns:
    """Drives the turns of the programs a `ProgramHost` keeps, through its runner client."""

    def __init__(self, owner: ProgramHost):
        self.owner = owner
        self.host, self.spec, self.store = owner.host, owner.spec, owner.store
        self.counters, self.programs = owner.counters, owner.programs
        self.calls = Calls(owner)

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
            answer = self._encode(self.calls.wake(run))
        elif self.calls.harmless(run.pending):
            answer = self._encode(self.calls.answer(run, run.pending, turn))
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
            answer = PARK if turn.calls >= self.spec.host_calls_per_turn else self.calls.answer(run, call, turn)
            if isinstance(answer, Block):
                run.waiting_on, run.state = answer.waiting_on, "waiting"
            if answer is PARK or isinstance(answer, Block):
                return self._park(run, call, step.get("dump"))
            encoded = self._encode(answer)
            self._record(run, turn, call, encoded, rows)
            step = self._request(run, {"op": "resume", "answer": orjson.Fragment(encoded),
                                       "snapshot": self._snapshot_at(turn.calls)})

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
            program.write(str(line), self.host.world.tick, self.spec.log_line_chars)

    def _save(self, run: Run, program: Program, rows: list[tuple]) -> None:
        store = self.store
        store.save_program_run(run.row())
        store.add_program_calls(rows)
        if program.unsaved:
            store.add_program_logs(program.agent, program.name, program.unsaved, self.spec.log_lines,
                                   program.next_seq, program.dropped)
            program.unsaved = []
