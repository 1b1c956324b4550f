"""The HTTP face: a FastAPI app over one host, with the MCP server mounted at /mcp in the same app.

Routes unwrap identity and arguments and call the host; they hold no rules. One route per
registry action (`POST /api/actions/<name>`) is generated with the action's own JSON schema as
its documented body, and the raw body goes to the world, which validates it with the registry's
model: there is no second copy of any argument check. Every read is `/api/<name>`, generated from
the query registry (`wildhold.service.queries`) as the MCP tool of that name is, and the program
lifecycle routes (`/api/programs...`) from the same table as the MCP program tools.
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Optional

import orjson
from pydantic import BaseModel
from fastapi import APIRouter, Depends, FastAPI, Request, Security
from fastapi.routing import APIRoute
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from wildhold import __version__
from wildhold.server.apidocs import add_docs
from wildhold.server.bodies import BodyError, BodyLimit, TooLarge, parse_json
from wildhold.server.briefing import briefing, mcp_instructions
from wildhold.server.mcp import INSTRUCTIONS, BearerGuard, Sessions, build_mcp, mcp_app, mcp_endpoint
from wildhold.server.programs_surface import PROGRAM_OPS, ProgramOp
from wildhold.server.surface import action_description, action_tools
from wildhold.service import reads
from wildhold.service.access import Identity
from wildhold.service.errors import HostError
from wildhold.service.host import Host
from wildhold.service.queries import QueryDef, queries
from wildhold.service.schemas import (
    ActBody,
    ErrorBody,
    Health,
    Me,
    OpResult,
    RegisterBody,
    Registered,
    SetupBody,
    SetupDone,
    Snapshot,
    SpectatorState,
    Started,
    Stopped,
    for_horizon,
)
from wildhold.store.archive import ArchiveError
from wildhold.world.actions import ActionDef
from wildhold.world.errors import Rejected

MAX_BODY_BYTES = 64 * 1024
# How long a served connection stays open between requests. An agent thinks between calls; uvicorn's default
# (5 s) closes its connection while it does, and a request sent just as the server closes it fails on the
# client (ReadError: the official MCP client then drops the agent). Agents that call again within this keep it.
KEEP_ALIVE_S = 120
STATUS: dict[str, int] = {
    "unauthorised": 401, "forbidden": 403, "rate_limited": 429, "lobby_closed": 409, "late_join_refused": 409,
    "not_started": 409, "already_started": 409, "match_over": 409, "name_taken": 409, "bad_request": 400,
    "unknown_operation": 404, "unknown_section": 404, "setup_refused": 422, "not_found": 404,
    "unknown_program": 404, "program_invalid": 422, "program_too_large": 413, "program_limit": 409,
    "program_running": 409, "program_not_running": 409, "invalid_arguments": 422, "runner_unavailable": 503,
    "archive_unverified": 422, "storage_unavailable": 503,
}
# A world's refusal of a well-formed request is 409 (the state refuses it: busy, not_in_inventory...); a request
# the world cannot read (arguments off the action's schema) is 422; a body that is not JSON at all is 400 bad_request.
MALFORMED_CODES = frozenset({"bad_arguments", "unknown_action"})
_ERROR = {"model": ErrorBody}
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {**_ERROR, "description": "bad_request: the body or a parameter is malformed."},
    401: {**_ERROR, "description": "unauthorised: no bearer token, or one this server never issued."},
    403: {**_ERROR, "description": "forbidden: this token may not do this."},
    404: {**_ERROR, "description": "Not found: an unknown operation, section or route."},
    409: {**_ERROR, "description": "Refused as things stand, nothing changed: the world's rejection code (busy, "
                                     "not_in_inventory, ...) or the match's state (not_started, match_over, lobby_closed, ...)."},
    422: {**_ERROR, "description": "Malformed for the world: bad_arguments (off the action's schema; the message says where) "
                                     "or unknown_action; nothing changed."},
    429: {**_ERROR, "description": "rate_limited: wait retry_after_s seconds."},
    503: {**_ERROR, "description": "storage_unavailable: the match's store takes no writes (a full disk); nothing "
                                     "changed, retry after retry_after_s seconds."},
}
PROGRAM_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {**_ERROR, "description": "unknown_program: you have no program of that name (another character's are never visible)."},
    409: {**_ERROR, "description": "program_running, program_not_running, program_limit (too many running, names or revisions), "
                                     "not_started, match_over."},
    413: {**_ERROR, "description": "program_too_large: the source is longer than the limit in the rules document (programs)."},
    422: {**_ERROR, "description": "program_invalid (a syntax or type error; the message names the line) or invalid_arguments."},
    503: {**_ERROR, "description": "runner_unavailable: the program runner could not be reached, or storage_unavailable: "
                                     "the match's store takes no writes; nothing changed."},
}
PUBLIC_ERRORS = {k: v for k, v in ERRORS.items() if k in (400, 404)}
# Reports: public once a match is over, the operator's before (403); errors are JSON even beside an HTML page.
REPORT_ERRORS = {k: {**v, "content": {"application/json": {}}} for k, v in {
    **ERRORS, 422: {**_ERROR, "description": "archive_unverified: the archive does not verify by re-simulation; the "
                                             "message names the check."}}.items() if k in (400, 403, 404, 422)}

bearer_scheme = HTTPBearer(auto_error=False, scheme_name="bearer",
                           description="An agent token from POST /api/agents; the signup token for registering; "
                                       "the admin token for /api/admin.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(bearer_scheme)]


class Answered(JSONResponse):
    """An answer already checked against its model and dumped as JSON data (as every face's answer is, once):
    written as it is by orjson, so the route's model is not applied to it a second time."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def op_answer(outcome: dict[str, Any]) -> Answered:
    """An operation's record, as `OpResult` serves it."""
    return Answered(OpResult.model_validate(outcome).model_dump(mode="json", by_alias=True))


def error_response(code: str, message: str, status: int, retry_after: float | None = None) -> JSONResponse:
    headers = {}
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="wildhold"'
    if retry_after is not None:
        headers["Retry-After"] = str(max(1, round(retry_after + 0.5)))
    body = ErrorBody(code=code, message=message, retry_after_s=None if retry_after is None else round(retry_after, 3))
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


class OneAuthorization:
    """Refuses a request carrying more than one Authorization header (400): faces would disagree on which
    one counts (the HTTP routes read the first, the MCP transport the last)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and sum(k.lower() == b"authorization" for k, _ in scope["headers"]) > 1:
            await error_response("bad_request", "Send one Authorization header; this request has several.", 400)(
                scope, receive, send)
            return
        await self.app(scope, receive, send)


def too_large(exc: TooLarge) -> JSONResponse:
    return error_response("bad_request", f"The body is {exc.size} bytes or more; at most {exc.limit}.", 400)


class BoundedRequest(Request):
    """A request whose JSON body is read under the nesting bound (`bodies.parse_json`), for the routes whose
    body FastAPI parses into a model: a body refused there is a 400 with the sentence that says why."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = parse_json(await self.body())
            except BodyError as exc:
                raise StarletteHTTPException(400, str(exc)) from None
        return self._json


class BoundedRoute(APIRoute):
    """Every route of the app reads its request as a BoundedRequest."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def bounded(request: Request) -> Any:
            return await handler(BoundedRequest(request.scope, request.receive))
        return bounded


async def read_json(request: Request) -> dict[str, Any]:
    """The raw JSON body, an object (an empty body is `{}`), under the size and nesting bounds; the world judges
    its fields."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = parse_json(raw)
    except BodyError as exc:
        raise HostError("bad_request", str(exc)) from None
    if not isinstance(body, dict):
        raise HostError("bad_request", f"The body is a JSON object, not {type(body).__name__ if body is not None else 'null'}.")
    return body


async def identity(request: Request, creds: Credentials) -> Identity:
    """Who the bearer token belongs to; spends one request of its rate budget."""
    host: Host = request.app.state.host
    who = host.access.authenticate(creds.credentials if creds else None)
    host.access.throttle(who)
    host.count("http_requests")
    return who


Who = Annotated[Identity, Depends(identity)]


async def agent_id(request: Request, who: Who) -> str:
    return request.app.state.host.access.agent_of(who)


Agent = Annotated[str, Depends(agent_id)]


async def admin(who: Who) -> Identity:
    if who.role != "admin":
        raise HostError("forbidden", "Admin routes take the admin token, not an agent or signup token.")
    return who


Admin = Annotated[Identity, Depends(admin)]


Scorer = Callable[[Path, Optional[str]], dict[str, Any]]


def create_app(host: Host | Callable[[], Host], scorer: Scorer | None = None,
               render_html: Callable[[dict[str, Any]], str] | None = None, horizon: str | None = None,
               tools: str | None = None) -> FastAPI:
    """The app serving one match: HTTP API, OpenAPI, /llms.txt and the MCP endpoint; the lifespan runs the clock.

    Pass a Host opened on the thread that will run the event loop (as `wildhold serve` does), or a
    function that opens one: the lifespan then opens it on the loop's thread and closes it at shutdown.
    The answer schemas (MCP and OpenAPI) are those of the match's horizon: the host's, or `horizon` for a
    function, whose host must then have it; the MCP tools are those of the host's tool profile, or `tools`'s.
    """
    horizon = host.horizon if isinstance(host, Host) else (horizon or "visible")
    profile = host.config.tools if isinstance(host, Host) else (tools or "full")

    def current() -> Host:
        h = app.state.host
        if h is None:
            raise RuntimeError("the match is not open: the app's lifespan has not started")
        return h

    mcp_server = build_mcp(current, horizon, mcp_instructions(host) if isinstance(host, Host) else INSTRUCTIONS, profile)
    mcp_asgi = mcp_app(mcp_server)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        owned = not isinstance(host, Host)
        if owned:
            app.state.host = host()
            if app.state.host.horizon != horizon:
                raise RuntimeError(f"this app serves a {horizon} horizon; the match's is {app.state.host.horizon}")
            if app.state.host.config.tools != profile:
                raise RuntimeError(f"this app serves the {profile} tools; the match's are {app.state.host.config.tools}")
            # The briefing needs the match: set now, before any client connects. The SDK (pinned) has no public call.
            mcp_server._lowlevel_server.instructions = mcp_instructions(app.state.host)
        async with mcp_server.session_manager.run():
            current().clock.start()
            try:
                yield
            finally:
                await current().clock.stop()
                if owned:
                    current().close()
                    app.state.host = None

    app = FastAPI(title="Wildhold", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="One Wildhold world served to remote agents. Briefing: GET /llms.txt. "
                              "MCP (streamable HTTP): /mcp with the same bearer tokens.")
    app.router.route_class = BoundedRoute
    add_docs(app)  # /docs and /redoc, every asset served by this app
    app.add_middleware(OneAuthorization)
    # Every body is bounded before a route holds it; /mcp and a mounted /proxy bound their own (larger) bodies.
    app.add_middleware(BodyLimit, default=MAX_BODY_BYTES, limits={"/mcp": None, "/proxy/": None}, refuse=too_large)
    app.state.host = host if isinstance(host, Host) else None

    # ---- errors -------------------------------------------------------------------------------

    @app.exception_handler(HostError)
    async def host_error(request: Request, exc: HostError) -> JSONResponse:
        current().count(f"errors.{exc.code}")
        return error_response(exc.code, exc.message, STATUS[exc.code], exc.retry_after)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:3]:
            where = ".".join(str(p) for p in err.get("loc", ())) or "request"
            parts.append(f"{where}: {err.get('msg', 'invalid')}")
        return error_response("bad_request", "; ".join(parts) or "The request is malformed.", 400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else "bad_request"
        return error_response(code, str(exc.detail), exc.status_code)

    def rejected(r: Rejected) -> JSONResponse:
        return error_response(r.code, r.message, 422 if r.code in MALFORMED_CODES else 409)

    # ---- agents -----------------------------------------------------------------------------------

    @app.post("/api/agents", status_code=201, response_model=Registered, responses=ERRORS, tags=["agents"])
    async def register(body: RegisterBody, who: Who, request: Request) -> Registered:
        """Register an agent with the signup token; the answer carries the agent's own bearer token."""
        if who.role != "signup":
            raise HostError("forbidden", "Registering takes the signup token.")
        token, rec = current().register(body.name, {"model": body.model or "", "harness": body.harness or ""})
        base = str(request.base_url).rstrip("/")
        return Registered(token=token, name=rec.name, agent=rec.agent, status=current().state,
                          mcp_url=f"{base}/mcp", api_url=f"{base}/api")

    @app.get("/api/me", response_model=Me, responses=ERRORS, tags=["agents"])
    async def me(who: Who) -> Me:
        """Who this token is: name, character id (null in the lobby), match status."""
        if who.record is None:
            raise HostError("forbidden", "This route takes an agent token.")
        return Me(name=who.record.name, agent=who.record.agent, status=current().state, extra=who.record.extra)

    # ---- queries: every read as /api/<name>, generated from the registry the MCP tools share -------

    for q in queries().values():
        for path in (f"/api/{q.name}", *q.aliases):
            app.add_api_route(path, _query_endpoint(q, current, path), methods=["POST" if q.writes else "GET"],
                              response_model=q.answer_for(horizon), response_model_by_alias=True,
                              responses=ERRORS if q.caller == "agent" else PUBLIC_ERRORS,
                              tags=["agents" if q.writes else "queries"], summary=q.doc.split(". ")[0].rstrip("."),
                              description=q.doc if path == f"/api/{q.name}" else f"Deprecated: `/api/{q.name}` answers the same.",
                              operation_id=q.name if path == f"/api/{q.name}" else f"{q.name}_at_{_slug(path)}",
                              deprecated=path != f"/api/{q.name}",
                              openapi_extra=request_doc(q.args, "POST" if q.writes else "GET", _path_args(path)))

    # ---- actions and operations -------------------------------------------------------------------

    @app.post("/api/act", response_model=OpResult, responses=ERRORS, tags=["actions"])
    async def act(body: ActBody, agent: Agent) -> Any:
        """Any action by name: {"action": ..., "args": {...}}. Same as POST /api/actions/<name>."""
        if body.agent is not None and body.agent != agent:
            raise HostError("forbidden", f"You act only as your own character ({agent}), not {body.agent}.")
        outcome = current().submit(agent, body.action, body.args)
        return rejected(outcome) if isinstance(outcome, Rejected) else op_answer(outcome)

    @app.post("/api/actions/{name}", response_model=OpResult, responses=ERRORS, include_in_schema=False)
    async def act_named(name: str, request: Request, agent: Agent) -> Any:
        """Every action's route: the path names the action, the raw body goes to the world's own validation."""
        outcome = current().submit(agent, name, await read_json(request))
        return rejected(outcome) if isinstance(outcome, Rejected) else op_answer(outcome)

    # The served route above is one pattern (cheap to match); the OpenAPI document describes each
    # action as its own path, with the registry's schema as the body, from routes that are never served.
    docs_only = APIRouter()
    action_defs: dict[str, dict[str, Any]] = {}
    for spec in action_tools().values():
        schema = spec.args.model_json_schema(ref_template=f"#/components/schemas/{spec.name}__" + "{model}")
        action_defs.update({f"{spec.name}__{k}": v for k, v in schema.pop("$defs", {}).items()})
        docs_only.add_api_route(
            f"/api/actions/{spec.name}", _documented(spec), methods=["POST"], response_model=OpResult,
            responses=ERRORS, tags=[f"actions: {spec.category}"], summary=spec.doc.split("\n")[0],
            description=action_description(spec), operation_id=f"act_{spec.name}",
            openapi_extra={"requestBody": {"required": False, "content": {"application/json": {"schema": schema}}}},
        )

    # ---- programs: routes generated from the lifecycle table the MCP tools share ------------------

    for op in PROGRAM_OPS:
        app.add_api_route(op.path, _program_endpoint(op, current), methods=[op.method], response_model=op.answer,
                          responses=PROGRAM_ERRORS, tags=["programs"], summary=op.headline,
                          description=op.description(), operation_id=op.tool, openapi_extra=request_doc(op.args, op.method, op.path_args))

    # ---- operator -----------------------------------------------------------------------------------

    @app.post("/api/admin/start", response_model=Started, responses=ERRORS, tags=["admin"])
    async def admin_start(_: Admin) -> dict[str, Any]:
        """Close the lobby: every registered agent enters the world together."""
        return current().start()

    @app.post("/api/admin/stop", response_model=Stopped, responses=ERRORS, tags=["admin"])
    async def admin_stop(_: Admin) -> dict[str, Any]:
        """End the match now and write its archive."""
        return current().stop()

    @app.post("/api/admin/snapshot", response_model=Snapshot, responses=ERRORS, tags=["admin"])
    async def admin_snapshot(_: Admin) -> dict[str, Any]:
        """Snapshot the store and write an archive of the match so far."""
        return current().archives.snapshot()

    @app.post("/api/admin/setup", response_model=SetupDone, responses=ERRORS, tags=["admin"])
    async def admin_setup(body: SetupBody, _: Admin) -> dict[str, Any]:
        """Apply a setup command (give_items, set_time, place_structure, ...), recorded as an input."""
        return current().setup(body.command, body.args)

    @app.get("/api/admin/agents", response_model=list[dict[str, Any]], responses=ERRORS, tags=["admin"])
    async def admin_agents(_: Admin) -> list[dict[str, Any]]:
        """Every registration: character, activity, idle flag, whether it wrote an epilogue."""
        return reads.roster(current())

    # ---- public -------------------------------------------------------------------------------------

    @app.get("/api/state", response_model=for_horizon(SpectatorState, horizon), tags=["public"])
    async def state() -> dict[str, Any]:
        """The spectator's view: time, roster with ranks, the public board. No positions, no inventories."""
        return reads.spectator_state(current())

    @app.get("/api/metrics", response_model=dict[str, Any], responses=ERRORS, tags=["admin"])
    async def metrics(_: Admin) -> dict[str, Any]:
        """Raw counters of the service and the world: live activity, so the operator's only."""
        return reads.metrics(current())

    @app.get("/api/health", response_model=Health, tags=["public"],
             responses={503: {"model": Health, "description": "degraded: the cause says why (the store takes no "
                                                              "writes, or the clock stopped)."}})
    async def health() -> Any:
        """Whether the match goes on: its state, or `degraded` (HTTP 503) with the cause."""
        host = current()
        cause = host.health.cause
        if cause is None:
            return {"ok": True, "status": host.state, "tick": host.world.tick, "cause": None}
        return JSONResponse({"ok": False, "status": "degraded", "tick": host.world.tick, "cause": cause}, status_code=503)

    # ---- reports (scored by the evaluation layer, passed in: faces do not import it) ----------------

    def _report(match_id: str, rubric: str | None, admin_ok: bool) -> dict[str, Any]:
        if scorer is None or render_html is None:
            raise HostError("not_found", "This server was started without the report builder.")
        path = current().archives.for_report(match_id, admin_ok)
        try:
            return scorer(path, rubric)
        except ArchiveError as exc:  # scoring verifies the archive first: a refusal names the check it failed
            raise HostError("archive_unverified", f"{exc} ({exc.code})") from None
        except (KeyError, ValueError) as exc:
            raise HostError("bad_request", f"The report cannot be built: {exc}") from None

    def _is_admin(request: Request, creds: Credentials) -> bool:
        try:
            return current().access.authenticate(creds.credentials if creds else None).role == "admin"
        except HostError:
            return False

    @app.get("/report", response_class=HTMLResponse, responses=REPORT_ERRORS, tags=["reports"])
    async def report_page(request: Request, creds: Credentials, rubric: Optional[str] = None) -> str:
        """This match's report as a static HTML page (public once the match is over)."""
        return render_html(_report("current", rubric, _is_admin(request, creds)))

    @app.get("/api/report", response_model=dict[str, Any], responses=REPORT_ERRORS, tags=["reports"])
    async def report_json_route(request: Request, creds: Credentials, agent: Optional[str] = None,
                                rubric: Optional[str] = None) -> dict[str, Any]:
        """This match's report as JSON, or one agent's card with ?agent=NAME (public once the match is over)."""
        built = _report("current", rubric, _is_admin(request, creds))
        if agent is None:
            return built
        for card in built["agents"]:
            if agent in (card["agent"], card["name"]):
                return {"rubric_version": built["rubric_version"], "card": card}
        raise HostError("not_found", f"No agent {agent!r} in this match.")

    @app.get("/api/matches/{match_id}/report", responses={**REPORT_ERRORS, 200: {"content": {"application/json": {}, "text/html": {}}}},
             tags=["reports"])
    async def match_report(request: Request, creds: Credentials, match_id: str, format: str = "json",
                           rubric: Optional[str] = None) -> Any:
        """A finished match's report recomputed from its archive (`current`, or an archive name in the data folder)."""
        if format not in ("json", "html"):
            raise HostError("bad_request", "format must be json or html.")
        built = _report(match_id, rubric, _is_admin(request, creds))
        return HTMLResponse(render_html(built)) if format == "html" else built

    @app.get("/llms.txt", response_class=PlainTextResponse, tags=["public"])
    async def llms_txt(request: Request) -> str:
        """The briefing: the situation, how to connect, the tool surface, where the rules are."""
        return briefing(current(), str(request.base_url).rstrip("/"))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description,
                                 routes=[*app.routes, *docs_only.routes])
            schema.setdefault("components", {}).setdefault("schemas", {}).update(action_defs)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    # MCP first: its requests then skip matching every API route.
    app.state.mcp_sessions = Sessions()
    guard = BearerGuard(mcp_endpoint(mcp_asgi), current, mcp_server.session_manager, app.state.mcp_sessions)
    app.router.routes.insert(0, Route("/mcp", guard, include_in_schema=False))
    return app


def _path_args(path: str) -> list[str]:
    return re.findall(r"{(\w+)}", path)


def _slug(path: str) -> str:
    return re.sub(r"\W+", "_", path.removeprefix("/api/")).strip("_")


async def _raw_arguments(request: Request, method: str, fields: Iterable[str]) -> dict[str, Any]:
    """A request's arguments: the path's, then the query's (GET) or the JSON body's (POST)."""
    raw: dict[str, Any] = dict(request.path_params)
    if method == "GET":
        raw.update((k, v) for k, v in request.query_params.items() if k in fields and k not in raw)
    else:
        body = await read_json(request)
        if set(body) & set(raw):
            raise HostError("bad_request", f"{', '.join(sorted(set(body) & set(raw)))} is in the path, not the body.")
        raw.update(body)
    return raw


def _query_endpoint(q: QueryDef, current: Callable[[], Host], path: str) -> Callable:
    """A query's route: who asks from the token (anyone, for a public query), arguments as the request carries them."""
    method = "POST" if q.writes else "GET"
    if q.caller == "agent":
        async def endpoint(request: Request, agent: Agent) -> Any:
            return Answered(await q.run(current(), agent, await _raw_arguments(request, method, q.args.model_fields),
                                        method == "GET"))
    else:
        async def endpoint(request: Request) -> Any:  # type: ignore[misc]
            return Answered(await q.run(current(), None, await _raw_arguments(request, method, q.args.model_fields),
                                        method == "GET"))
    endpoint.__name__ = q.name if path == f"/api/{q.name}" else f"{q.name}_at_{_slug(path)}"
    return endpoint


def request_doc(args: type[BaseModel], method: str, path_args: list[str]) -> dict[str, Any]:
    """Path, query and body parameters for the OpenAPI document, from an argument model's schema."""
    schema = args.model_json_schema()
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    params = [{"name": k, "in": "path", "required": True, "schema": props[k]} for k in path_args]
    rest = {k: v for k, v in props.items() if k not in path_args}
    if method == "GET":
        params += [{"name": k, "in": "query", "required": k in required, "schema": v,
                    "description": v.get("description", "")} for k, v in rest.items()]
        return {"parameters": params}
    body = {"type": "object", "properties": rest, "additionalProperties": False}
    needed = sorted(required & set(rest))
    if needed:
        body["required"] = needed
    return {"parameters": params,
            "requestBody": {"required": bool(needed), "content": {"application/json": {"schema": body}}}}


def _program_endpoint(op: ProgramOp, current: Callable[[], Host]) -> Callable:
    """A lifecycle route: the name from the path, the rest from the query (GET) or the JSON body (POST)."""
    async def endpoint(request: Request, agent: Agent) -> Any:
        return op.run(current().programs, agent, await _raw_arguments(request, op.method, op.args.model_fields),
                      op.method == "GET")
    endpoint.__name__ = op.tool
    return endpoint


def _documented(spec: ActionDef) -> Callable:
    """The signature OpenAPI documents for one action; requests are served by POST /api/actions/{name}."""
    async def endpoint(agent: Agent) -> OpResult:
        raise RuntimeError(f"{spec.name}: documentation-only route; POST /api/actions/{spec.name} serves it")
    endpoint.__name__ = f"act_{spec.name}"
    return endpoint
