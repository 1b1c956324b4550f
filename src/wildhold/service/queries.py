"""The reads every face serves, each defined once: its name, arguments, answer, who may ask, and the call.

MCP serves each as the tool `<name>`, HTTP as `/api/<name>` (GET, arguments in the query; POST with a
JSON body for the one that writes), and programs as the function `<name>()` for those offered to
them, all generated from `QUERIES` as the action tools are from the action registry: one name, one
argument model, one answer on every face. Registering an agent is not a query (it makes a token).
`program_reads` hands the queries offered to programs down to the program API and the rules document.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wildhold.docs.rules import rules_json
from wildhold.programs.api import NOW, START_ARGS
from wildhold.service import reads
from wildhold.service.access import WAIT_MAX_S
from wildhold.service.errors import HostError
from wildhold.service.schemas import (EpilogueSaved, Inventory, MapMemory, Observation, OpResult, QuestLog, Recipes,
                                      RulesEntry, Scoring, ViewImage, WorldInfo, for_horizon)
from wildhold.world.actions import REGISTRY, did_you_mean
from wildhold.world.world import describe_validation

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.service.host import Host


class Args(BaseModel):
    """Arguments as their schema states them: over JSON (MCP, programs, a POST body) each value is of its
    JSON type, never coerced; a GET's query string is read as text by the same model."""

    model_config = ConfigDict(extra="forbid", strict=True)


class NoArgs(Args):
    pass


class ObserveArgs(Args):
    memory: Literal["changes", "full", "none"] = Field(default="changes", description=(
        "changes: since your last look, `time` and `self`, other sections only if they changed (the rest named in "
        "`unchanged`), remembered tiles your last look did not show as they are now. full: all, the whole memory. "
        "none: all but the memory (not a look)."))
    memory_since: int | None = Field(default=None, ge=0, description=(
        "Only the tiles remembered at or after this tick, everything else whole (memory 'full', implied); laid "
        "over what you held then, they make the whole memory."))

    @property
    def mode(self) -> str:
        """The memory asked for: memory_since without a memory of its own asks for the full form."""
        return "full" if self.memory_since is not None and "memory" not in self.model_fields_set else self.memory


class PageArgs(Args):
    start: int = Field(default=0, ge=0, description="The first remembered tile to return (0: from the first).")
    limit: int = Field(default=1000, ge=1, le=5000, description="At most this many remembered tiles.")


class RulesArgs(Args):
    section: str | None = Field(default=None, max_length=200, description="A section of the rules document; none: the list of sections.")
    key: str | None = Field(default=None, max_length=200, description="One entry of the section.")


class OperationArgs(Args):
    op: str = Field(max_length=64, description="An operation id, as an action returned it (like 'op12').")


class WaitArgs(Args):
    op: str | None = Field(default=None, max_length=64, description=(
        "An operation id; default: the one in progress, else your last one."))
    timeout_s: float = Field(default=10.0, ge=0, le=WAIT_MAX_S, description=(
        "Seconds to wait at most; a server may be set to a lower bound, which its briefing states."))


class EpilogueArgs(Args):
    text: str = Field(description="Your own account of how and why you played; kept in the archive, never scored.")


Ask = Callable[["Host", Any, Any], Any]  # (host, the caller's character or None when public, arguments) -> answer


@dataclass(frozen=True)
class QueryDef:
    """One read. `caller` is "agent" (an agent token; the answer is about its character) or "public" (over
    MCP any token the server issued, over HTTP anyone). `program` gives the arguments a program's call
    of the same name passes (None: not offered to programs)."""

    name: str
    doc: str
    answer: type[BaseModel]
    ask: Ask
    args: type[Args] = NoArgs
    caller: Literal["agent", "public"] = "agent"
    writes: bool = False
    program: dict[str, Any] | None = None
    aliases: tuple[str, ...] = ()  # older HTTP paths, still served, documented as deprecated
    image: str | None = None  # the answer's field holding a base64 PNG: MCP also serves it as an image block

    def arguments(self, raw: Any, strings: bool = False) -> Args:
        """The arguments checked against the model: JSON values, or (`strings`) a query string's text."""
        if not isinstance(raw, dict):
            raise HostError("bad_request", f"{self.name}: the arguments are a JSON object.")
        try:
            return self.args.model_validate_strings(raw) if strings else self.args.model_validate(raw)
        except ValidationError as exc:
            raise HostError("bad_request", f"{self.name}: {describe_validation(exc)}") from None

    def answer_for(self, horizon: str) -> type[BaseModel]:
        """The answer model served by a match with this horizon (hidden: the clock without its end)."""
        return for_horizon(self.answer, horizon)

    def answered(self, data: Any, horizon: str = "visible") -> dict[str, Any]:
        return self.answer_for(horizon).model_validate(data).model_dump(mode="json", by_alias=True)

    async def run(self, host: Host, agent: str | None, raw: Any, strings: bool = False) -> dict[str, Any]:
        """Every face's call: check the arguments, ask the host as `agent`, return the answer as JSON data."""
        data = self.ask(host, agent, self.arguments(raw, strings))
        if inspect.isawaitable(data):
            data = await data
        return self.answered(data, host.horizon)

    def run_now(self, host: Host, agent: str | None, raw: Any) -> dict[str, Any]:
        """`run` for a caller that cannot wait (a program's turn): only for queries that answer at once."""
        data = self.ask(host, agent, self.arguments(raw))
        if inspect.isawaitable(data):
            raise RuntimeError(f"{self.name} waits; it cannot be asked without an event loop")
        return self.answered(data, host.horizon)


_RULES: dict[tuple[str, str], dict[str, Any]] = {}


def rules_doc(content: Content, horizon: str = "visible") -> dict[str, Any]:
    """The rules document, built once per content digest and horizon (a pure function of both and the registries)."""
    doc = _RULES.get((content.digest, horizon))
    if doc is None:
        doc = _RULES[content.digest, horizon] = rules_json(content, program_reads(), horizon)
    return doc


def rules_lookup(content: Content, section: str | None = None, key: str | None = None, horizon: str = "visible") -> Any:
    """The whole document's table of contents, one section, or one entry of a section, as a match of this
    horizon serves it."""
    doc = rules_doc(content, horizon)
    if not section:
        return {"version": doc["version"], "sections": sorted(doc),
                "how": "Ask for one section (and optionally one key in it), for example section='actions', key='craft'."}
    if section not in doc:
        raise HostError("unknown_section", f"No section {section!r}.{did_you_mean(section, doc)} Sections: {', '.join(sorted(doc))}.")
    part = doc[section]
    if not key:
        return part
    if not isinstance(part, dict) or key not in part:
        keys = list(part) if isinstance(part, dict) else []
        raise HostError("unknown_section", f"Section {section!r} has no entry {key!r}.{did_you_mean(key, keys)}")
    return part[key]


QUERIES: dict[str, QueryDef] = {q.name: q for q in (
    QueryDef("observe", "What your character perceives: time, itself, its view square live, the tiles it remembers out "
             "of view, and what each part of the world shows it; by default what changed since your last look.",
             Observation, lambda host, agent, a: reads.observe(host, agent, a.mode, a.memory_since), ObserveArgs,
             program={"memory": "none"}, aliases=("/api/observation",)),
    QueryDef("view_image", "Your view square drawn as a PNG image (base64): each tile in its terrain's colour, what "
             "stands on it as a small sprite, you at the centre; the picture the RL envs' image observations show. "
             "Over MCP it also comes as an image.",
             ViewImage, lambda host, agent, a: reads.view_image(host, agent), image="png_base64"),
    QueryDef("map_memory", "Your view square and the tiles you remember, each with the tick you last saw it, a page "
             "at a time (`next` starts the following page).",
             MapMemory, lambda host, agent, a: reads.map_memory(host, agent, a.start, a.limit), PageArgs, aliases=("/api/map",)),
    QueryDef("inventory", "What your character carries and has equipped.",
             Inventory, lambda host, agent, a: reads.inventory(host, agent), program={}),
    QueryDef("recipes", "Every recipe (inputs, outputs, station, time, energy), and why any is still closed to you.",
             Recipes, lambda host, agent, a: {"recipes": reads.recipes(host, agent)}, program={}),
    QueryDef("rules", "Look up the rules document: with no section, the list of sections; with a section (and a key), that part.",
             RulesEntry, lambda host, agent, a: {"section": a.section, "key": a.key,
                                                 "value": rules_lookup(host.content, a.section, a.key, host.horizon)},
             RulesArgs, caller="public", aliases=("/api/rules/{section}",)),
    QueryDef("quest_log", "The public quest board and your own quests: active, completed, failed.",
             QuestLog, lambda host, agent, a: reads.quest_log(host, agent), program={}, aliases=("/api/quests",)),
    QueryDef("world_info", "Time, season, the match's clock mode, the one-line wealth formula and your rank.",
             WorldInfo, lambda host, agent, a: reads.world_info(host, agent), aliases=("/api/world",)),
    QueryDef("scoring_info", "The full scoring disclosure in force for this match: the wealth formula with every value, "
             "the ranking rule, the scenario. Static for the whole match.",
             Scoring, lambda host, agent, a: reads.scoring_info(host), caller="public",
             aliases=("/api/scoring",)),
    QueryDef("operation_status", "The state of one of your operations (running, completed, failed, cancelled).",
             OpResult, lambda host, agent, a: host.operations.operation(agent, a.op), OperationArgs,
             aliases=("/api/operations/{op}",)),
    QueryDef("wait_operation", "Wait until an operation of yours ends (or the timeout, at most the server's bound) and return it.",
             OpResult, lambda host, agent, a: host.operations.wait(agent, a.op, a.timeout_s), WaitArgs, aliases=("/api/wait",)),
    QueryDef("write_epilogue", "Write your own account of how and why you played. Kept in the match archive, never scored.",
             EpilogueSaved, lambda host, agent, a: host.archives.write_epilogue(agent, a.text), EpilogueArgs, writes=True,
             aliases=("/api/epilogue",)),
)}


def queries() -> dict[str, QueryDef]:
    """The queries every face serves; refuses a name an action already uses (one name, one tool)."""
    clash = sorted(set(REGISTRY) & set(QUERIES))
    if clash:
        raise RuntimeError(f"queries {clash} share a name with an action; rename one")
    return dict(QUERIES)


def program_reads(table: dict[str, QueryDef] = QUERIES) -> dict[str, tuple[str, str]]:
    """The queries offered to programs (signature after the name, docstring), and `now`: what the program API
    and the rules document are built with. A program's call passes the query's program arguments: its answer
    is that of the MCP tool and HTTP route of the name."""
    out = {}
    for name, q in table.items():
        if q.program is not None:
            fixed = ", ".join(f"{k}={v!r}" for k, v in q.program.items())
            out[name] = ("() -> dict[str, Any]", q.doc + (f" A program's call is the {name} tool's with {fixed}." if fixed else ""))
    return {**out, "now": NOW, "start_args": START_ARGS}
