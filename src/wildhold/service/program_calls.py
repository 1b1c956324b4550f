"""What the world answers a running program's call: an action submitted as its character, a read, a
log line, a sleep, or the exception a program meets for a call it may not make.

An answer is a value (`{"value": ...}`) or an exception to raise (`{"raise": ...}`); a call that
must wait answers a `Block` (on an operation, or for a tick), and one over the turn's action budget
answers `PARK` (unanswered until the next turn). The turn that asks is `wildhold.service.program_turns`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wildhold.service.queries import QUERIES
from wildhold.world.errors import Rejected

if TYPE_CHECKING:
    from wildhold.service.program_host import ProgramHost
    from wildhold.service.program_state import Run

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


class Calls:
    """Answers the calls of the programs a `ProgramHost` keeps, against its host's world."""

    def __init__(self, owner: ProgramHost):
        self.host, self.spec = owner.host, owner.spec
        self.counters, self.kinds, self.programs = owner.counters, owner.kinds, owner.programs

    def harmless(self, call: dict[str, Any]) -> bool:
        """Whether answering the call changes nothing in the world: anything but an action, log or sleep_until."""
        return call["kind"] != "function" or self.kinds.get(call["fn"]) not in ("action", "control")

    def wake(self, run: Run) -> dict[str, Any]:
        """The result a waiting program gets: the tick it woke at, or how its operation ended."""
        waiting, run.waiting_on, run.state = run.waiting_on, None, "running"
        if waiting["kind"] == "tick":
            return {"value": self.host.world.tick}
        rec = self.host.operations.ops.get(waiting["op"])
        if rec is None:
            return {"value": rejected("unknown_operation", f"Operation {waiting['op']} is no longer tracked.")}
        return {"value": op_result(rec)}

    def answer(self, run: Run, call: dict[str, Any], turn: Turn) -> Any:
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
            return {"value": dict(run.args) if fn == "start_args" else self._read(run.agent, fn)}
        if fn == "log":
            if kwargs:
                return raises("TypeError", "log() takes values only, no keyword arguments")
            self.programs[(run.agent, run.name)].write(" ".join(_text(v) for v in args), self.host.world.tick,
                                                       self.spec.log_line_chars)
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
