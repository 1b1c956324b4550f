"""The program lifecycle as one table: each operation's name, route, arguments, answer and host call.

HTTP routes (`wildhold.server.http`) and MCP tools (`wildhold.server.mcp`) are both generated
from `PROGRAM_OPS`, so the two faces cannot drift: same names, same argument models, same answer
models, same call into `host.programs`. The rules for programs live in `wildhold.programs`; the
argument models here only check shapes (`invalid_arguments` otherwise, as the program host says).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field, ValidationError

from wildhold.service.program_host import NAME, ProgramHost
from wildhold.service.schemas import ProgramList, ProgramLogs, ProgramSaved, ProgramSource, ProgramStatus
from wildhold.service.errors import HostError
from wildhold.service.queries import Args, NoArgs
from wildhold.world.world import describe_validation

PROGRAM_API_POINTER = ("The program API (every function a program may call, its arguments, answers and limits) is "
                       "the rules document's section `programs`, entry `reference`: the rules tool with "
                       "section='programs', key='reference', or GET /api/rules?section=programs&key=reference.")
NAME_DOC = "The program's name: 1 to 40 characters of a-z, 0-9, '_' and '-', unique per character."


class Named(Args):
    # The pattern documents the rule; the program host enforces it (invalid_arguments), here it is not repeated.
    name: str = Field(description=NAME_DOC, json_schema_extra={"pattern": NAME.pattern})


class SaveArgs(Named):
    source: str = Field(description="The program's Python source (the program API: the rules document, section "
                                    "`programs`, entry `reference`).")


class RevisionArgs(Named):
    revision: int | None = Field(default=None, ge=1, description="A saved revision; default: the latest.")


class StartArgs(RevisionArgs):
    args: dict[str, Any] = Field(default_factory=dict, description="Start arguments, a JSON object the program reads "
                                 "with start_args() (recorded with the start).")


class LogArgs(Named):
    after: int = Field(default=0, ge=0, description="Return the lines after this seq (0: from the oldest kept).")
    limit: int = Field(default=100, ge=1, description="At most this many lines.")


Call = Callable[[ProgramHost, str, Any], dict[str, Any]]  # (host.programs, agent, validated arguments) -> answer


@dataclass(frozen=True)
class ProgramOp:
    """One lifecycle operation: an MCP tool named `tool`, and `method path` over HTTP.

    Over HTTP, `{name}` is in the path; the other arguments are the query (GET) or the JSON body (POST).
    """

    tool: str
    verb: str  # what the compact profile's `program` tool calls it
    method: Literal["GET", "POST"]
    path: str
    summary: str
    args: type[Args]
    answer: type[BaseModel]
    call: Call
    read_only: bool = True

    def run(self, programs: ProgramHost, agent: str, raw: Any, strings: bool = False) -> dict[str, Any]:
        """Check the arguments' shape (JSON values, or a query string's text), call the program host as
        `agent`, return the answer as JSON data."""
        if not isinstance(raw, dict):
            raise HostError("bad_request", f"{self.tool}: the arguments are a JSON object.")
        try:
            args = self.args.model_validate_strings(raw) if strings else self.args.model_validate(raw)
        except ValidationError as exc:
            raise HostError("invalid_arguments", f"{self.tool}: {describe_validation(exc)}") from None
        return self.answer.model_validate(self.call(programs, agent, args)).model_dump(mode="json")

    @property
    def headline(self) -> str:
        """The first sentence, without its full stop."""
        return self.summary.split(". ")[0].rstrip(".")

    @property
    def path_args(self) -> list[str]:
        return ["name"] if "{name}" in self.path else []

    def description(self) -> str:
        """The text both faces show; saving points to the program API, which the rules document carries
        (every session lists the tools, so a 20 KB guide there would be paid for by every client)."""
        if self.tool == "save_program":
            return self.summary + " " + PROGRAM_API_POINTER
        return self.summary


PROGRAM_OPS: tuple[ProgramOp, ...] = (
    ProgramOp("list_programs", "list", "GET", "/api/programs",
              "Every program your character has saved, each with its state (running, waiting, stopped, finished, failed).",
              NoArgs, ProgramList, lambda p, agent, a: p.list(agent)),
    ProgramOp("save_program", "save", "POST", "/api/programs/{name}",
              "Save a program under a name: a new name is revision 1, saving an existing name adds the next "
              "revision and keeps every earlier one. The source is parsed and type-checked against the program "
              "API now: an error names the line and nothing is saved. Saving does not start or change a running "
              "program; start_program runs the latest revision.",
              SaveArgs, ProgramSaved, lambda p, agent, a: p.save(agent, a.name, a.source), read_only=False),
    ProgramOp("start_program", "start", "POST", "/api/programs/{name}/start",
              "Start a saved program (the latest revision, or the one given). It runs inside the world on your "
              "character's behalf at each tick, between your own calls, until it finishes, fails or is stopped.",
              StartArgs, ProgramStatus, lambda p, agent, a: p.start(agent, a.name, a.revision, a.args), read_only=False),
    ProgramOp("stop_program", "stop", "POST", "/api/programs/{name}/stop",
              "Stop a running program. An operation it started goes on to its end; the program does no more.",
              Named, ProgramStatus, lambda p, agent, a: p.stop(agent, a.name), read_only=False),
    ProgramOp("program_status", "status", "GET", "/api/programs/{name}",
              "One program's state: running, waiting (on an operation or a tick), stopped, finished, or failed "
              "with the error and its line; actions and host calls of its current or last run.",
              Named, ProgramStatus, lambda p, agent, a: p.status(agent, a.name)),
    ProgramOp("program_logs", "logs", "GET", "/api/programs/{name}/logs",
              "Lines the program wrote with log() or print(), oldest first, after a line number; the log keeps "
              "only its most recent lines (`dropped` counts the ones no longer kept).",
              LogArgs, ProgramLogs, lambda p, agent, a: p.logs(agent, a.name, a.after, a.limit)),
    ProgramOp("program_source", "source", "GET", "/api/programs/{name}/source",
              "The source of a saved revision of a program (default: the latest), and how many revisions it has.",
              RevisionArgs, ProgramSource, lambda p, agent, a: p.source(agent, a.name, a.revision)),
)


def program_ops(taken: set[str]) -> tuple[ProgramOp, ...]:
    """The lifecycle operations; refuses a tool name another tool (`taken`) already uses."""
    clash = sorted(taken & {op.tool for op in PROGRAM_OPS})
    if clash:
        raise RuntimeError(f"tools {clash} share a name with a program lifecycle tool; rename one")
    return PROGRAM_OPS
