"""The tool surface every face shares: action descriptions from the registry, the information tools' texts, and
the compact profile's few tools over the same registries.

HTTP routes and MCP tools are generated from `wildhold.world.actions.REGISTRY` through the
functions here, so a newly registered action appears on every face with the same text. The full
profile serves one MCP tool per action, query and program operation; the compact profile
(`serve --tools compact`) serves the same through a handful: `act` takes any action with its
arguments, `read` any query, `program` any program operation, beside observe, wait_operation,
rules, write_epilogue and register. Both are generated here from the same tables, so every
action, query and program operation is reachable through either.
"""

from __future__ import annotations

import re
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field

from wildhold.server.programs_surface import PROGRAM_OPS, ProgramOp
from wildhold.service.errors import SERVICE_CODES, HostError
from wildhold.service.queries import Args, QueryDef, queries
from wildhold.world.actions import REGISTRY, ActionDef, did_you_mean

# Registering makes a token, so it is no query; every other information tool is one (the trial's
# progress is the registry's own `trial_info` action).
REGISTER_DOC = "Register a new agent with the signup token; returns its bearer token."


def action_description(spec: ActionDef) -> str:
    """The registry docstring plus the facts every face states the same way (what every action answers is said once,
    on operation_status: `OPERATION_ANSWER`)."""
    return f"{spec.doc}\n\nCategory: {spec.category}. Time: {spec.timing}."


OPERATION_ANSWER = ("Every action answers the operation it started with this schema (op id, status, the tick it "
                    "ends); wait for it with wait_operation.")


def action_tools() -> dict[str, ActionDef]:
    """The actions every face exposes, in registry order; refuses a name a query already uses."""
    queries()
    return dict(REGISTRY)


def info_tools() -> dict[str, str]:
    """Every information tool and its description: registering, then the queries."""
    return {"register": REGISTER_DOC, **{name: q.doc for name, q in queries().items()}}


def error_codes() -> dict[str, str]:
    """Service failure codes; the world's rejection codes are in the rules document (rejection_codes)."""
    return dict(SERVICE_CODES)


# ---- the compact profile ------------------------------------------------------------------------------

OWN_TOOLS = ("observe", "wait_operation", "rules", "write_epilogue")  # queries the compact profile serves as themselves


class ActArgs(Args):
    action: str = Field(max_length=64, description="The action's name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")


class ReadArgs(Args):
    query: str = Field(max_length=64, description="The query's name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")


class ProgramArgs(Args):
    op: str = Field(max_length=64, description="The operation: list, save, start, stop, status, logs or source.")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments (name, source, revision...).")


def _served(tool: str, kind: str, kinds: str, table: dict[str, Any], name: str, note: str = "") -> Any:
    """The entry `tool` serves under `name`, or a refusal naming the ones it serves."""
    if name not in table:
        raise HostError("bad_request", f"{tool}: there is no {kind} {name!r}.{did_you_mean(name, table)} The {kinds}: "
                        f"{', '.join(table)}{note}.")
    return table[name]


def read_query(name: str) -> QueryDef:
    """The query `read` serves under this name."""
    return _served("read", "query", "queries", read_queries(), name, " (observe, wait_operation, rules and write_epilogue are "
                   "tools of their own)")


def program_verb(verb: str) -> ProgramOp:
    """The program operation `program` serves under this verb."""
    return _served("program", "operation", "operations", program_verbs(), verb)


def read_queries() -> dict[str, QueryDef]:
    """The queries the compact profile serves through `read`: every one without a tool of its own."""
    return {name: q for name, q in queries().items() if name not in OWN_TOOLS}


def program_verbs() -> dict[str, ProgramOp]:
    """The program operations by the verb `program` takes for each (save, start, list...)."""
    return {op.verb: op for op in PROGRAM_OPS}


def _type(annotation: Any) -> str:
    """A type as the compact catalogue states it: choices joined by |, a table as {key: value}."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type(args[0])
    if origin is Literal:
        return "|".join(str(a) for a in args)
    if origin in (Union, types.UnionType):
        return "|".join(_type(a) for a in args if a is not type(None))
    if origin is dict:
        return f"{{{_type(args[0])}: {_type(args[1])}}}"
    if origin is list:
        return f"[{_type(args[0])}]"
    return getattr(annotation, "__name__", str(annotation))


def signature(model: Any) -> str:
    """An argument model as `(name: type, optional?: type)`."""
    parts = [f"{name}{'' if f.is_required() else '?'}: {_type(f.annotation)}" for name, f in model.model_fields.items()]
    return f"({', '.join(parts)})"


def summary(doc: str) -> str:
    """What a docstring's first sentence says before its first colon, semicolon or bracket: the catalogue's line."""
    text = " ".join(doc.split())
    end = text.find(". ")
    first = text if end < 0 else text[:end]
    return re.split(r"[:;(]| — ", first)[0].rstrip(" .,") + "."


def act_description() -> str:
    """`act`'s text: every action, its arguments and its first sentence."""
    lines = ["Do an action as your character: `action` is its name, `args` its arguments. Answers the operation it "
             "started; wait for it with wait_operation. An action's whole text, time and cost: rules section='actions' "
             "key=<action>. A character is named by id or name. The actions:"]
    lines += [f"{name}{signature(spec.args)} {summary(spec.doc)}" for name, spec in action_tools().items()]
    return "\n".join(lines)


def read_description() -> str:
    """`read`'s text: every query it serves, its arguments and what it answers."""
    lines = ["Read about your character and the match: `query` is one of these, `args` its arguments. Answers what "
             "the query answers:"]
    lines += [f"{name}{signature(q.args)} {summary(q.doc)}" for name, q in read_queries().items()]
    return "\n".join(lines)


def program_description() -> str:
    """`program`'s text: every lifecycle operation by its verb, with its arguments."""
    lines = ["Your programs: Python that acts for your character inside the world between your calls (its API: rules "
             "section='programs' key='reference'). `op` is one of these, `args` its arguments:"]
    lines += [f"{verb}{signature(op.args)} {summary(op.summary)}" for verb, op in program_verbs().items()]
    return "\n".join(lines)


def compact_call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A call of the full profile's tool `name` as the compact profile takes it: the same action, query or program
    operation (a name both profiles serve is unchanged)."""
    if name in REGISTRY:
        return "act", {"action": name, "args": arguments}
    if name in read_queries():
        return "read", {"query": name, "args": arguments}
    verb = next((v for v, op in program_verbs().items() if op.tool == name), None)
    if verb is not None:
        return "program", {"op": verb, "args": arguments}
    return name, arguments
