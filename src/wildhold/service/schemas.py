"""Request and answer models of the served surface: one place, every face (HTTP, MCP, programs).

A match whose horizon is hidden serves the answers that carry the clock without its end (`for_horizon`):
the same models under the same names, less the one field, so that its published schemas differ from a
visible match's there and nowhere else.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_serializer


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(Strict):
    """Every refusal: a stable code (service codes and the world's rejection codes) and a sentence."""

    code: str = Field(description="Stable error code; see /api/rules/rejection_codes and the briefing.")
    message: str = Field(description="What went wrong and what to do about it.")
    retry_after_s: float | None = Field(default=None, description="For rate_limited: seconds until a request is allowed.")


class RegisterBody(Strict):
    name: str = Field(min_length=1, max_length=40, description="The character's name: letters, digits, spaces, '_', '.', '-'.")
    model: str | None = Field(default=None, max_length=200, description="The model driving this agent, recorded in the archive.")
    harness: str | None = Field(default=None, max_length=200, description="The harness or scaffold driving it, recorded in the archive.")


class Registered(Strict):
    token: str = Field(description="This agent's bearer token: send 'Authorization: Bearer <token>' on every call.")
    name: str
    agent: str | None = Field(description="The character id, or null until the lobby closes.")
    status: Literal["lobby", "running", "over"]
    mcp_url: str
    api_url: str


class OpResult(Strict):
    """An operation: accepted at once, then running until it completes, fails or is cancelled on a later tick."""

    op: str
    agent: str
    action: str
    args: dict[str, Any]
    status: Literal["running", "completed", "failed", "cancelled"]
    started: int = Field(description="Tick it was accepted.")
    ends: int = Field(description="Tick it is due to end.")
    finished_tick: int | None = Field(description="Tick it ended, or null while it runs.")
    result: dict[str, Any] | None = Field(description="What it did, once completed.")
    code: str | None = Field(description="Why it failed, once failed.")
    message: str | None
    tick: int = Field(description="The world's tick when this answer was made.")
    timed_out: bool | None = Field(default=None, description="Waits only: true when the wait ended before the operation did.")


class ActBody(Strict):
    action: str = Field(description="An action name (GET /api/rules/actions lists them).")
    args: dict[str, Any] = Field(default_factory=dict, description="The action's arguments, an object (its schema is in the rules document).")
    agent: str | None = Field(default=None, description="Optional: your own character id; any other id is refused.")


class EpilogueBody(Strict):
    text: str = Field(description="Your own account of how and why you played; kept in the archive, never scored.")


class EpilogueSaved(Strict):
    agent: str
    chars: int
    tick: int
    scored: Literal[False]


INT64 = range(-2**63, 2**63)  # the integers the match log's JSON records


def _recordable(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, list, dict)):
        return True
    if isinstance(value, int):
        return value in INT64
    return all(map(_recordable, value.values() if isinstance(value, dict) else value))


class SetupBody(Strict):
    command: str
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("args")
    @classmethod
    def _fits_the_log(cls, args: dict[str, Any]) -> dict[str, Any]:
        """Setup arguments are recorded before the command checks them: each must be recordable."""
        if not _recordable(args):
            raise ValueError("an integer is outside the 64-bit range the match log records")
        return args


class Me(Strict):
    name: str
    agent: str | None
    status: Literal["lobby", "running", "over"]
    extra: dict[str, str]


class Started(Strict):
    status: str
    tick: int
    agents: list[str | None]


class Stopped(Strict):
    status: str
    tick: int
    archive: str


class Snapshot(Strict):
    tick: int
    state_hash: str
    chain_head: str
    archive: str


class SetupDone(Strict):
    command: str
    tick: int


class Health(Strict):
    ok: bool
    status: Literal["lobby", "running", "over", "degraded"]
    tick: int
    cause: str | None = Field(None, description="Why the match is degraded: its store takes no writes, or its clock "
                                                   "stopped; null when it is not.")


class Clock(BaseModel):
    tick: int
    day: int
    hour: int
    minute: int
    night: bool
    season: str
    weather: str
    ends_at_tick: int


class WorldInfo(Strict):
    time: Clock
    status: Literal["lobby", "running", "over"]
    clock: str
    tick_seconds: float | None
    scenario: str
    agents: int
    wealth_formula: str
    wealth_cents: int
    rank: int
    operation: str | None


class RankRow(Strict):
    agent: str
    name: str
    rank: int


class SpectatorState(Strict):
    status: Literal["lobby", "running", "over"]
    clock: str
    scenario: str
    time: Clock | None
    lobby: list[str]
    agents: list[RankRow]
    registered: int
    joined: int
    board: list[dict[str, Any]]


class QuestLog(Strict):
    board: list[dict[str, Any]]
    log: dict[str, Any]


class Inventory(Strict):
    inventory: dict[str, int]
    equipment: dict[str, str]


class ViewImage(Strict):
    tick: int
    width: int
    height: int
    mime: str
    png_base64: str


class Open(BaseModel):
    """An answer whose keys depend on the scenario's parts: each part adds its own."""

    model_config = ConfigDict(extra="allow")


class Observation(Open):
    """Also `memory` (tiles out of view as last seen, when asked for) and one key per part of the world. As changes,
    the sections the last look showed as they are now are left out and named in `unchanged`."""

    time: Clock
    self_: dict[str, Any] = Field(alias="self")
    view: dict[str, Any] | None = None
    legend: dict[str, str] | None = None
    changes_since: int | None = Field(default=None, description="As changes: the tick of the last look they are since.")
    unchanged: list[str] | None = Field(default=None, description="As changes: the sections left out, as last shown.")

    @model_serializer(mode="wrap")
    def _as_sent(self, handler: Any) -> dict[str, Any]:
        """The sections an observation holds, none added: a section left out is not sent as null."""
        return {k: v for k, v in handler(self).items() if v is not None or k not in _OPTIONAL_SECTIONS}


_OPTIONAL_SECTIONS = frozenset({"view", "legend", "changes_since", "unchanged"})


class MapMemory(Strict):
    time: Clock
    view: dict[str, Any]
    memory: list[dict[str, Any]] = Field(description="One page of the remembered tiles out of view, ordered by position.")
    legend: dict[str, str]
    total: int = Field(description="How many remembered tiles there are out of view, on every page together.")
    next: int | None = Field(description="The `start` of the next page; null on the last.")


class Recipes(Strict):
    recipes: list[dict[str, Any]] = Field(description="Every recipe, with `locked`: why it is closed to you, or null when open.")


class RulesEntry(Strict):
    section: str | None
    key: str | None
    value: Any = Field(description="The table of contents (no section), one section, or one entry of it.")


class Scoring(Open):
    scenario: dict[str, Any]
    wealth: dict[str, Any]
    ranking: str
    reports: str
    static: bool



# ---- programs: the answers of the lifecycle operations (server/programs_surface.py) -----------


HORIZON_FIELDS = ("ends_at_tick",)  # the clock's fields that tell when the match ends
HiddenClock = create_model("Clock", __module__=__name__, **{
    name: (field.annotation, field) for name, field in Clock.model_fields.items() if name not in HORIZON_FIELDS})


def _hidden(model: type[BaseModel], nullable: bool = False) -> type[BaseModel]:
    """`model` with its clock hidden: its own name and description, its `time` the clock without the end."""
    time = (HiddenClock | None, ...) if nullable else (HiddenClock, ...)
    return create_model(model.__name__, __base__=model, __module__=__name__, __doc__=model.__doc__, time=time)


HIDDEN_ANSWERS: dict[type[BaseModel], type[BaseModel]] = {
    Observation: _hidden(Observation), MapMemory: _hidden(MapMemory), WorldInfo: _hidden(WorldInfo),
    SpectatorState: _hidden(SpectatorState, nullable=True),
}


def for_horizon(model: type[BaseModel], horizon: str) -> type[BaseModel]:
    """The answer model a match with this horizon serves in place of `model`."""
    return HIDDEN_ANSWERS.get(model, model) if horizon == "hidden" else model


class ProgramError(BaseModel):
    type: str = Field(description="The error's kind, e.g. NameError, TimeoutError, RunnerCrash.")
    message: str
    line: int | None = Field(description="The source line it happened on, when known.")
    reason: str | None = Field(default=None, description="runtime_error, limit, wall_clock, runner_crash, capability, "
                                                         "state_too_large or restore_mismatch.")


class ProgramWaitingOn(BaseModel):
    kind: Literal["operation", "tick"]
    op: str | None = Field(default=None, description="The operation it waits for (kind operation).")
    tick: int | None = Field(default=None, description="The tick it sleeps until (kind tick).")


class ProgramStatus(BaseModel):
    name: str
    revision: int = Field(description="The revision this status is about: the running one, else the latest saved.")
    state: Literal["running", "waiting", "stopped", "finished", "failed"]
    error: ProgramError | None = Field(description="Why it failed (state failed), else null.")
    started_tick: int | None = Field(description="Tick its current or last run started, or null if it never ran.")
    actions: int = Field(description="Actions its current or last run submitted.")
    host_calls: int = Field(description="Calls its current or last run made to the world.")
    waiting_on: ProgramWaitingOn | None = Field(description="What it is blocked on (state waiting), else null.")
    run: int | None = Field(description="The number of its current or last run in this match, or null if it never ran.")
    ended_tick: int | None = Field(description="Tick its last run ended, or null while it runs or if it never ran.")
    issuer: str | None = Field(description="The issuer its actions carry in the event log: program:<name>@<revision>.")


class ProgramList(BaseModel):
    programs: list[ProgramStatus] = Field(description="Every program this character saved, by name.")


class ProgramSaved(BaseModel):
    name: str
    revision: int = Field(description="The new revision number (1 for a new name).")
    tick: int = Field(description="Tick it was saved.")
    source_sha256: str


class ProgramLogLine(BaseModel):
    seq: int = Field(description="Line number in the program's log, from 1; pass the last one seen as `after`.")
    tick: int
    text: str


class ProgramLogs(BaseModel):
    name: str
    lines: list[ProgramLogLine]
    next: int = Field(description="Pass this as `after` to read the lines that follow.")
    dropped: int = Field(description="Lines after `after` that the bounded log no longer holds.")


class ProgramSource(BaseModel):
    name: str
    revision: int
    source: str
    revisions: int = Field(description="How many revisions of this program exist.")
