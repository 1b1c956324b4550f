"""Programs inside a served match: their lifecycle and their records.

`ProgramHost` (the host's `programs`) is the one owner of program state: each character's programs by
name, their revisions, their latest run and log ring, all restored from the store after a restart.
Saving, starting, stopping and reading them is here; the records it keeps are
`wildhold.service.program_state`, the turn each running program takes at every tick is
`wildhold.service.program_turns`, and what the world answers a program's calls is
`wildhold.service.program_calls`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, deque
from typing import TYPE_CHECKING, Any

import orjson

from wildhold.programs.api import (
    blocking_functions,
    checker_hint,
    function_kinds,
    runtime_literals,
    stubs,
)
from wildhold.programs.client import RunnerClient, RunnerFailed
from wildhold.programs.sandbox import Settings
from wildhold.service.errors import HostError, refuse_unless_running
from wildhold.service.match import unrecordable_reason
from wildhold.service.program_state import LIVE, Program, Run, begin_run
from wildhold.service.program_turns import Turns
from wildhold.service.queries import program_reads

if TYPE_CHECKING:
    from wildhold.service.host import Host

NAME = re.compile(r"^[a-z0-9_-]{1,40}$")
CHECK_TIMEOUT_S = 15.0


class ProgramHost:
    """Every program of a served match. All errors are `HostError`s with stable codes."""

    def __init__(self, host: Host, runner_command: list[str] | None = None):
        self.host = host
        self.spec = host.content.programs
        self.settings = Settings.from_spec(self.spec, blocking_functions())
        self.store = host.match.store
        self.reads = program_reads()
        self.kinds = function_kinds(reads=self.reads)
        self.client = RunnerClient(self.settings, runner_command)
        self.counters: Counter[str] = Counter()
        self.programs: dict[tuple[str, str], Program] = {}
        self._stubs: str | None = None
        self.turns = Turns(self)
        self._restore()

    # ---- restoring ---------------------------------------------------------------------------

    def _program(self, agent: str, name: str) -> Program:
        key = (agent, name)
        program = self.programs.get(key)
        if program is None:
            program = self.programs[key] = Program(agent, name, deque(maxlen=self.spec.log_lines))
        return program

    def _restore(self) -> None:
        """Programs as the store left them: a run that was running or waiting resumes from its snapshot."""
        if self.store is None:
            return
        for rev in self.store.program_sources(with_source=False):
            self._program(rev["agent"], rev["name"]).revisions.append(rev)
        args = self.store.program_start_args()
        for row in self.store.program_runs():
            self._program(row["agent"], row["name"]).run = Run(**row, args=args.get(row["run"], {}))
        for line in self.store.program_logs():
            self._program(line["agent"], line["name"]).log.append((line["seq"], line["tick"], line["text"]))
        for (agent, name), (next_seq, dropped) in self.store.program_log_state().items():
            program = self._program(agent, name)
            program.next_seq, program.dropped = next_seq, dropped

    def close(self) -> None:
        self.client.close()

    # ---- what faces call --------------------------------------------------------------------

    def save(self, agent: str, name: str, source: str) -> dict[str, Any]:
        """Check and keep a new revision; `program_invalid` names the line of the first errors."""
        self._require_running()
        self._check_agent(agent)
        self._check_name(name)
        if not isinstance(source, str):
            raise HostError("invalid_arguments", "The source must be a string of Python.")
        size = len(source.encode())
        if size > self.spec.max_source_bytes:
            raise HostError("program_too_large", f"The source is {size} bytes; at most {self.spec.max_source_bytes}.")
        program = self.programs.get((agent, name))
        if program is None or not program.revisions:
            mine = sum(1 for (a, _), p in self.programs.items() if a == agent and p.revisions)
            if mine >= self.spec.max_programs_per_agent:
                raise HostError("program_limit", f"You have {mine} programs, the most one character may keep; "
                                "save a new revision of one of them instead.")
        elif len(program.revisions) >= self.spec.max_revisions:
            raise HostError("program_limit", f"{name!r} has {len(program.revisions)} revisions, the most a program may have.")
        errors = sorted(self._check(source) + runtime_literals(source), key=lambda e: e["line"] or 0)
        errors = [{**e, "message": checker_hint(e["message"])} for e in errors]
        if errors:
            shown = "; ".join(f"line {e['line']}: {e['message']}" if e["line"] else e["message"] for e in errors[:5])
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            raise HostError("program_invalid", f"The program has {len(errors)} error(s), nothing was saved: {shown}{more}.")
        program = self._program(agent, name)
        tick, sha = self.host.world.tick, hashlib.sha256(source.encode()).hexdigest()
        revision = len(program.revisions) + 1
        with self.host.changing(), self.store.transaction():
            self.store.add_program_source(agent, name, revision, tick, sha, source)
            self.host.match.program(agent, "save", {"name": name, "revision": revision, "source_sha256": sha})
            self.host.match.flush()
        program.revisions.append({"agent": agent, "name": name, "revision": revision, "tick": tick, "sha256": sha})
        self.counters["saves"] += 1
        return {"name": name, "revision": revision, "tick": tick, "source_sha256": sha}

    def start(self, agent: str, name: str, revision: int | None = None, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a revision (the latest by default) from its first line, with these start arguments (what
        `start_args()` answers in it); it takes its first turn at the next tick."""
        self._require_running()
        program = self._known(agent, name)
        revision = self._revision(program, revision)
        self._check_args(args or {})
        if program.run is not None and program.run.state in LIVE:
            raise HostError("program_running", f"{name!r} is already running (revision {program.run.revision}); stop it first.")
        live = sum(1 for p in self.programs.values() if p.agent == agent and p.run and p.run.state in LIVE)
        if live >= self.spec.max_running_per_agent:
            raise HostError("program_limit", f"You already run {live} programs, the most at once; stop one first.")
        with self.host.changing():
            program.run = begin_run(self.host.match, agent, name, revision, args=args)
        self.counters["starts"] += 1
        self.host.clock.wake()  # a lockstep tick waiting on this character may go now: its program acts for it
        return self._status(program)

    def stop(self, agent: str, name: str, reason: str = "stopped by its agent") -> dict[str, Any]:
        """End a running program; an operation it already started goes on (cancel it to stop that too)."""
        self._require_running()
        program = self._known(agent, name)
        run = program.run
        if run is None or run.state not in LIVE:
            raise HostError("program_not_running", f"{name!r} is not running.")
        with self.host.changing(), self.store.transaction():
            run.end("stopped", self.host.world.tick)
            self.store.save_program_run(run.row())
            self.host.match.program(agent, "stop", {"name": name, "revision": run.revision, "run": run.run, "reason": reason})
            self.host.match.flush()
        return self._status(program)

    def stop_all(self, reason: str) -> None:
        """Stop every running program (the match is ending)."""
        for program in sorted(self.programs.values(), key=lambda p: (p.agent, p.name)):
            if program.run is not None and program.run.state in LIVE:
                self.stop(program.agent, program.name, reason)

    def status(self, agent: str, name: str) -> dict[str, Any]:
        return self._status(self._known(agent, name))

    def list(self, agent: str) -> dict[str, Any]:
        mine = sorted((p for p in self.programs.values() if p.agent == agent and p.revisions), key=lambda p: p.name)
        return {"programs": [self._status(p) for p in mine]}

    def logs(self, agent: str, name: str, after: int = 0, limit: int = 100) -> dict[str, Any]:
        """Log lines after seq `after` (oldest first, at most `limit`), the seq to ask after next, and how many were lost."""
        program = self._known(agent, name)
        for label, value, low in (("after", after, 0), ("limit", limit, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise HostError("invalid_arguments", f"{label} must be an integer of at least {low}.")
        lines = [{"seq": s, "tick": t, "text": text} for s, t, text in program.log if s > after][:limit]
        return {"name": name, "lines": lines, "next": lines[-1]["seq"] if lines else after, "dropped": program.dropped}

    def source(self, agent: str, name: str, revision: int | None = None) -> dict[str, Any]:
        program = self._known(agent, name)
        revision = self._revision(program, revision)
        return {"name": name, "revision": revision, "source": self.store.program_source(agent, name, revision),
                "revisions": len(program.revisions)}

    def active(self, agent: str) -> bool:
        """Whether a program of this character is running or waiting (it acts for the character at each tick)."""
        return any(p.agent == agent and p.run is not None and p.run.state in LIVE for p in self.programs.values())

    # ---- checks -------------------------------------------------------------------------------

    def _require_running(self) -> None:
        refuse_unless_running(self.host.state)

    def _check_agent(self, agent: str) -> None:
        if agent not in self.host.world.chars:
            raise HostError("invalid_arguments", f"No character has id {agent!r}.")

    def _check_name(self, name: Any) -> None:
        if not isinstance(name, str) or not NAME.match(name):
            raise HostError("invalid_arguments", "A program name is 1 to 40 characters of a-z, 0-9, '_' and '-'.")

    def _check_args(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise HostError("invalid_arguments", "Start arguments are a JSON object, like {\"target\": \"a2\"}.")
        why = unrecordable_reason(args)
        if why is not None:
            raise HostError("invalid_arguments", f"The start arguments cannot be recorded: {why}.")
        size = len(orjson.dumps(args))
        if size > self.spec.max_start_args_bytes:
            raise HostError("invalid_arguments", f"The start arguments are {size} bytes of JSON; at most "
                            f"{self.spec.max_start_args_bytes}.")

    def _known(self, agent: str, name: str) -> Program:
        self._check_name(name)
        program = self.programs.get((agent, name))
        if program is None or not program.revisions:
            raise HostError("unknown_program", f"You have no program named {name!r}; save it first.")
        return program

    def _revision(self, program: Program, revision: Any) -> int:
        if revision is None:
            return len(program.revisions)
        if isinstance(revision, bool) or not isinstance(revision, int):
            raise HostError("invalid_arguments", "A revision is a whole number (1 for the first save).")
        if not 1 <= revision <= len(program.revisions):
            raise HostError("unknown_program", f"{program.name!r} has revisions 1 to {len(program.revisions)}, not {revision}.")
        return revision

    def _check(self, source: str) -> list[dict[str, Any]]:
        if self._stubs is None:
            self._stubs = stubs(content=self.host.content, reads=self.reads)
        try:
            return self.client.request({"op": "check", "source": source, "stubs": self._stubs}, CHECK_TIMEOUT_S)["errors"]
        except (RunnerFailed, KeyError) as exc:
            raise HostError("runner_unavailable", f"The program could not be checked ({exc}); nothing was saved.") from None

    def _status(self, program: Program) -> dict[str, Any]:
        run = program.run
        if run is None:
            return {"name": program.name, "revision": len(program.revisions), "state": "stopped", "error": None,
                    "started_tick": None, "actions": 0, "host_calls": 0, "waiting_on": None, "run": None,
                    "ended_tick": None, "issuer": None}
        return {"name": program.name, "revision": run.revision, "state": run.state, "error": run.error,
                "started_tick": run.started_tick, "actions": run.actions, "host_calls": run.host_calls,
                "waiting_on": run.waiting_on, "run": run.run, "ended_tick": run.ended_tick, "issuer": run.issuer}

    # ---- turns ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Give every running program whose wait is over its turn, in (character, name) order."""
        self.turns.tick()
