"""The program API: the functions a program may call, generated from the action registry.

Each registry action becomes a keyword-only function of the same name and arguments that acts
as the program's own character and blocks until the operation ends; the reads are the service's
queries offered to programs, which the service hands in (this package never imports it). `stubs()`
is the typed .pyi text a save is checked against; `reference_markdown()` documents it all for the
rules document and the tool descriptions.
"""

from __future__ import annotations

import ast
import json
import re
import types
from typing import Annotated, Any, Literal, Mapping, Union, get_args, get_origin

from pydantic_core import PydanticUndefined

from wildhold.content import Content, default_content
from wildhold.world.actions import REGISTRY, ActionDef

ACTION_RETURNS = "OpResult"

# What a finished operation looks like to a program. A rejection is a value, not an exception,
# so a program can branch on its stable code.
OP_RESULT_FIELDS: dict[str, tuple[str, str]] = {
    "ok": ("bool", "True when the operation completed."),
    "op": ("str | None", "The operation id, or None when the action was rejected before it started."),
    "status": ("str", "'completed', 'failed', 'cancelled' or 'rejected'."),
    "result": ("dict[str, Any] | None", "What a completed operation produced (as in operation_completed events)."),
    "code": ("str | None", "The stable code of a rejection or failure (busy, out_of_range, rate_limited, ...)."),
    "message": ("str | None", "One sentence saying why it was rejected or failed."),
}

# Functions beside the actions: (signature after the name, docstring). The reads a program may call are
# handed in by the service (its queries offered to programs, and `now`), as `reads`.
Reads = Mapping[str, tuple[str, str]]
NOW = ("() -> int", "The current tick (one tick is one minute of world time).")
START_ARGS = ("() -> dict[str, Any]", "The arguments this run was started with (start_program's `args`; {} when none).")

CONTROLS: dict[str, tuple[str, str]] = {
    "sleep_until": ("(tick: int) -> int", "Pause the program (not the character) until the world reaches `tick`; returns the "
                    "tick it wakes at. A tick already reached returns at once; at most {sleep_max_ticks} ticks ahead."),
    "log": ("(*values: object) -> None", "Append one line (the values' str, joined by spaces) to this program's log; print() "
            "writes there too. The log keeps the last {log_lines} lines, each cut to {log_line_chars} characters."),
}
BLOCKING_CONTROLS = frozenset({"sleep_until"})


def blocking_functions(registry: Mapping[str, ActionDef] | None = None) -> frozenset[str]:
    """The functions whose call may pause a program until a later tick: every action, and the blocking controls."""
    return frozenset(REGISTRY if registry is None else registry) | BLOCKING_CONTROLS


def _literal(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def type_text(annotation: Any) -> str:
    """A Python type as stub text; fails loudly on a kind of argument no stub can express yet."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return type_text(get_args(annotation)[0])
    if origin is Literal:
        return "Literal[" + ", ".join(_literal(a) for a in get_args(annotation)) + "]"
    if origin in (Union, types.UnionType):
        return " | ".join(type_text(a) for a in get_args(annotation))
    if origin in (dict, list, tuple, set):
        return f"{origin.__name__}[{', '.join(type_text(a) for a in get_args(annotation))}]"
    if annotation is type(None):
        return "None"
    if annotation in (int, str, bool, float):
        return annotation.__name__
    if annotation is Any:
        return "Any"
    raise TypeError(f"the program API cannot express the argument type {annotation!r}")


def _params(spec: ActionDef, stub: bool) -> list[str]:
    out = []
    for name, field in spec.args.model_fields.items():
        text = f"{name}: {type_text(field.annotation)}"
        if not field.is_required():
            default = field.get_default(call_default_factory=True)
            text += " = ..." if stub or default is PydanticUndefined else f" = {_literal(default)}"
        out.append(text)
    return out


def action_signature(spec: ActionDef, stub: bool = False) -> str:
    params = _params(spec, stub)
    inner = ", ".join(["*", *params]) if params else ""
    return f"({inner}) -> {ACTION_RETURNS}"


def action_doc(spec: ActionDef) -> str:
    """The registry docstring, each argument's description, and what the call does in a program."""
    lines = [spec.doc.strip()]
    described = [(n, f.description) for n, f in spec.args.model_fields.items() if f.description]
    if described:
        lines.append("")
        lines += [f"{n}: {d}" for n, d in described]
    lines += ["", f"Time: {spec.timing}. Submits the action as your character and waits until the operation ends; "
              "returns its OpResult (a rejection is ok=False with its code, never an exception)."]
    return "\n".join(lines)


def _numbers(content: Content | None) -> dict[str, Any]:
    return (content or default_content()).programs.model_dump()


def api_functions(registry: Mapping[str, ActionDef] | None = None, content: Content | None = None, *,
                  reads: Reads) -> list[dict[str, Any]]:
    """Every function a program may call: name, kind (action, read, control), signature, docstring, blocking."""
    registry = REGISTRY if registry is None else registry
    numbers = _numbers(content)
    clash = sorted(set(registry) & (set(reads) | set(CONTROLS)))
    if clash:
        raise RuntimeError(f"actions {clash} share a name with a program function; rename one")
    out = [{"name": name, "kind": "action", "signature": name + action_signature(spec), "doc": action_doc(spec),
            "blocking": True} for name, spec in registry.items()]
    out += [{"name": name, "kind": "read", "signature": name + sig, "doc": doc, "blocking": False}
            for name, (sig, doc) in reads.items()]
    out += [{"name": name, "kind": "control", "signature": name + sig, "doc": doc.format(**numbers),
             "blocking": name in BLOCKING_CONTROLS} for name, (sig, doc) in CONTROLS.items()]
    return out


def function_kinds(registry: Mapping[str, ActionDef] | None = None, *, reads: Reads) -> dict[str, str]:
    """Each callable name and its kind, for the host's dispatch."""
    registry = REGISTRY if registry is None else registry
    return {**{n: "action" for n in registry}, **{n: "read" for n in reads}, **{n: "control" for n in CONTROLS}}


def _docstring(doc: str, indent: str = "    ") -> str:
    body = doc.replace("\\", "\\\\").replace('"""', "'''")
    return f'{indent}"""' + body.replace("\n", "\n" + indent) + f'\n{indent}"""'


def stubs(registry: Mapping[str, ActionDef] | None = None, content: Content | None = None, *, reads: Reads) -> str:
    """The .pyi text a program is type-checked against when it is saved."""
    registry = REGISTRY if registry is None else registry
    numbers = _numbers(content)
    lines = ['"""The Wildhold program API, generated from the action registry."""', "",
             "from typing import Any, Literal, TypedDict", "", "",
             f"class {ACTION_RETURNS}(TypedDict):",
             _docstring("How an operation ended: returned by every action function.")]
    lines += [f"    {name}: {typ}" for name, (typ, _) in OP_RESULT_FIELDS.items()]
    for name, spec in registry.items():
        lines += ["", "", f"def {name}{action_signature(spec, stub=True)}:", _docstring(action_doc(spec)), "    ..."]
    for name, (sig, doc) in reads.items():
        lines += ["", "", f"def {name}{sig}:", _docstring(doc), "    ..."]
    for name, (sig, doc) in CONTROLS.items():
        lines += ["", "", f"def {name}{sig}:", _docstring(doc.format(**numbers)), "    ..."]
    return "\n".join(lines) + "\n"


def reference_markdown(content: Content | None = None, registry: Mapping[str, ActionDef] | None = None, *,
                       reads: Reads) -> str:
    """The program API as a rules-document section: lifecycle, turns, who acts first, the sandbox, every function."""
    content = content or default_content()
    p = content.programs
    lines = [
        "## Programs",
        "",
        "A program is Python source that runs inside the world on your character's behalf and keeps running "
        "between your own calls: it observes, acts, waits and logs through the functions below. You revise it "
        "from what its status and log show you.",
        "",
        "### Lifecycle",
        "",
        f"- **save** a program under a name (1-40 characters of a-z, 0-9, '_' and '-'); saving an existing name "
        f"makes a new revision and keeps every earlier one (at most {p.max_revisions} revisions, "
        f"{p.max_programs_per_agent} names, {p.max_source_bytes} bytes of source).",
        "- A save checks the program before it can run: a syntax or type error against the stubs below refuses "
        "the save with `program_invalid`, naming the line.",
        f"- **start** runs the latest revision (or one you name). At most {p.max_running_per_agent} of your programs "
        "run at once; **stop** ends one; **status** says running, waiting, stopped, finished or failed (with the "
        "error's type, message and line); **logs** reads its log; **list** shows them all; **source** reads any revision.",
        "- Every save, start, stop, finish and failure is a recorded event (program_saved, program_started, "
        "program_stopped, program_finished, program_failed). A program keeps running across a server restart.",
        "",
        "### Turns",
        "",
        "At each tick boundary, right after the world steps, every running program takes one turn, in order of "
        "character id, then program name. A turn resumes the program with the result it was waiting for and "
        "answers its calls until it blocks (an action whose operation is still running, or `sleep_until`), "
        f"finishes, fails, or reaches its allowance: {p.host_calls_per_turn} world calls and {p.actions_per_tick} "
        "actions per turn. A program past its allowance simply continues at the next tick. These counts, not "
        "timing, decide fairness.",
        "",
        "### You and your program: who acts first",
        "",
        "Your character runs one operation at a time. Your own action goes ahead of your program's: an action you "
        "submit during tick T comes before your program's turn at the next boundary (the program then sees its own "
        "action rejected, ok=False, code 'busy', and can wait and retry), and if the character is busy with an "
        "operation one of your programs started, an action of yours that would otherwise be accepted cancels it "
        "first (recorded as your `cancel`; the program's call returns status 'cancelled', ok=False). An operation "
        "you started yourself is never cancelled that way: a second action of yours is rejected `busy`. Actions a "
        "program submits count against your rate limit, and their events name the issuer "
        "`program:<name>@<revision>` (your own are `direct`).",
        "",
        "### The sandbox",
        "",
        "Programs run in Monty, a Python subset, in a separate unprivileged process with no files, network, processes or "
        "environment: `open`, `os` calls and such raise PermissionError, and modules like socket, subprocess "
        "and ctypes do not exist (`sys` imports but holds no paths, environment or frames). json, math, re, random, "
        "itertools, functools, collections, bisect, base64, dataclasses and typing work; "
        f"`random` is seeded for each run, and datetime and time always report {p.frozen_clock.isoformat()} "
        "(use now() for the world's time). Functions, classes, comprehensions and exceptions work; generators "
        "(yield) do not. Arguments and results are plain JSON-like values. `Literal[...]` may appear only in "
        "annotations (`way: Literal[\"n\", \"s\"] = \"n\"`), not as a value or alias; a save refuses it elsewhere.",
        "",
        f"Limits: {p.max_memory_bytes // (1 << 20)} MiB of memory, recursion depth {p.max_recursion_depth}, "
        f"{p.max_state_bytes // (1 << 20)} MiB of saved state while paused. The interpreter counts no steps, so "
        "the computing a program does between two world calls is bounded by real time alone, as a safety net: "
        f"a program that computes for more than {p.call_wall_s:g} s between two calls, or {p.turn_wall_s:g} s in "
        "one turn, fails, and that failure is recorded like any other so a replay stays exact. Any error fails "
        "only that program (its status gives the error's type, message and line, when the interpreter reports "
        "one): the world and every other program keep running.",
        "",
        "### Functions",
        "",
        f"Every action is a function of the same name taking keyword arguments only, checked exactly as a direct "
        f"action; it returns an `{ACTION_RETURNS}`:",
        "",
    ]
    lines += [f"- `{name}` ({typ}): {doc}" for name, (typ, doc) in OP_RESULT_FIELDS.items()]
    lines += ["", "| function | kind | blocks | what it does |", "|---|---|---|---|"]
    for fn in api_functions(registry, content, reads=reads):
        first = " ".join(fn["doc"].split("\n\n", 1)[0].split()).replace("|", "\\|")
        lines.append(f"| `{fn['signature'].replace('|', chr(92) + '|')}` | {fn['kind']} | "
                     f"{'yes' if fn['blocking'] else 'no'} | {first} |")
    lines += ["", "A short example:", "", "```python",
              "while True:",
              "    me = observe()[\"self\"]",
              "    if me[\"energy\"] < 20:",
              "        r = rest(ticks=30)",
              "    else:",
              "        r = move(direction=\"n\")",
              "    if not r[\"ok\"]:",
              "        log(\"stopped:\", r[\"code\"], r[\"message\"])",
              "        sleep_until(now() + 10)",
              "```", "",
              "A save is type-checked against typed stubs of exactly these functions (OpResult is a TypedDict), "
              "so a misspelt function, argument or result key is caught before the program runs."]
    return "\n".join(lines)


_LITERAL_FROM_STR = re.compile(r"Argument to function `(\w+)` is incorrect: Expected `Literal\[")


def checker_hint(message: str, registry: Mapping[str, ActionDef] | None = None) -> str:
    """A type checker's message with what fixes it, where the fix is not plain from the message: a value read from
    a list or a `str` variable is `str` to the checker, never one of the choices an argument takes, so the message
    says to annotate where the value is made with the argument's own type."""
    registry = REGISTRY if registry is None else registry
    found = _LITERAL_FROM_STR.search(message)
    spec = registry.get(found.group(1)) if found and "found `str`" in message else None
    if spec is None:
        return message
    choices = [(n, f.annotation) for n, f in spec.args.model_fields.items() if _is_literal(f.annotation)]
    if not choices:
        return message
    name, annotation = choices[0]
    typ = type_text(annotation)
    return (f"{message}; a list item or a `str` variable is `str` to the checker: give the value the type `{name}` "
            f"takes where it is made, e.g. `WAYS: list[{typ}] = [...]` or `def go(way: {typ})` "
            "(from typing import Literal)")


def _is_literal(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_literal(get_args(annotation)[0])
    return origin is Literal


LITERAL_OUTSIDE_ANNOTATION = ("`Literal[...]` works only inside an annotation (the interpreter cannot evaluate it "
                              "as a value, e.g. in an alias `Direction = Literal[...]`); write it in the annotation itself")


def runtime_literals(source: str) -> list[dict[str, Any]]:
    """Each `Literal[...]` a program would evaluate at run time. The type checker accepts an alias such as
    `Direction = Literal["n", "s"]`, but the interpreter cannot subscript `Literal`, so such a program would
    pass its save and fail on its first turn; the save refuses it instead, naming the line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the interpreter's own check names what is wrong
    annotated: set[int] = set()
    for node in ast.walk(tree):
        for part in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(part, ast.AST):
                annotated.update(id(n) for n in ast.walk(part))
    return [{"line": n.lineno, "message": LITERAL_OUTSIDE_ANNOTATION} for n in ast.walk(tree)
            if isinstance(n, ast.Subscript) and id(n) not in annotated
            and ((isinstance(n.value, ast.Name) and n.value.id == "Literal")
                 or (isinstance(n.value, ast.Attribute) and n.value.attr == "Literal"))]
