"""The pages a person opens on a served match: the live page, the matches, the leaderboard, profiles.

Added to the app `wildhold.server.http.create_app` builds, over the same host. The live view is the
spectator's: it takes the spectator or the admin token (a bearer header, or a cookie set once from
the token), never an agent's; without one `/` shows only what `/api/state` shows to anyone. Matches
and the leaderboard are computed from the archives in the data folder, verified first, as the CLI
computes them. Every string an agent wrote reaches a page through Jinja2's escaping.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional

import orjson
from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from wildhold.eval.html import render_html
from wildhold.eval.leaderboard import leaderboard, spend_cells
from wildhold.eval.report import score_archive
from wildhold.service import reads
from wildhold.service.access import Identity
from wildhold.service.archives import ARCHIVE_NAME, LIVE_REPORT_NAME
from wildhold.service.errors import HostError
from wildhold.service.host import Host
from wildhold.service.verify import admit
from wildhold.store.archive import Archive, ArchiveError

COOKIE = "wildhold_watch"
STREAM_POLL_S = 0.25  # how often the stream looks for a change: updates reach a watcher within this
STREAM_HEARTBEAT_S = 15.0  # a comment line keeps idle connections open through proxies
STREAM_MAX_S = 300.0  # a stream ends after this; the browser's EventSource reconnects by itself
WATCHERS = ("spectator", "admin")

_pages = Environment(loader=PackageLoader("wildhold.web", "templates"), autoescape=select_autoescape(default=True),
                     trim_blocks=True, lstrip_blocks=True)


def add_site(app: FastAPI) -> None:
    """The live page, its API and the archive pages, on the app of one served match."""
    app.mount("/static/web", StaticFiles(directory=Path(__file__).parent / "static"), name="web-static")

    def current() -> Host:
        host = app.state.host
        if host is None:
            raise RuntimeError("the match is not open: the app's lifespan has not started")
        return host

    def watcher(request: Request) -> Identity | None:
        """The identity the request's token carries (a bearer header first, then the cookie), or None."""
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(COOKIE)
        if not token:
            return None
        try:
            who = current().access.authenticate(token)
        except HostError:
            return None
        return who

    def require_watcher(request: Request) -> Identity:
        who = watcher(request)
        if who is None:
            raise HostError("unauthorised", "The live view takes the spectator or admin token (a bearer header, "
                            "or open /login once to keep it in a cookie).")
        if who.role not in WATCHERS:
            raise HostError("forbidden", "The live view is the spectator's; an agent sees what its character sees "
                            "through observe.")
        current().access.throttle(who)
        return who

    # ---- the live page -----------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(request: Request) -> HTMLResponse:
        host = current()
        who = watcher(request)
        if who is not None and who.role in WATCHERS:
            return _page("live.html.j2", host=host, scenario=host.world.scenario_name, role=who.role)
        return _page("public.html.j2", state=reads.spectator_state(host), refused=who is not None)

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    async def login_page(request: Request, token: Optional[str] = None) -> Response:
        if token is None:
            return _page("login.html.j2", failed=False)
        return _login(token)

    @app.post("/login", response_class=HTMLResponse, include_in_schema=False)
    async def login_form(token: str = Form(...)) -> Response:
        return _login(token)

    def _login(token: str) -> Response:
        try:
            who = current().access.authenticate(token)
        except HostError:
            who = None
        if who is None or who.role not in WATCHERS:
            return _page("login.html.j2", failed=True, status=401)
        out = RedirectResponse("/", status_code=303)
        out.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return out

    @app.post("/logout", include_in_schema=False)
    async def logout() -> Response:
        out = RedirectResponse("/", status_code=303)
        out.delete_cookie(COOKIE, path="/")
        return out

    @app.get("/api/live/map", tags=["spectator"])
    async def live_map(request: Request) -> Response:
        """The match's fixed map: size, terrain (one index a tile, row by row), terrain kinds and regions."""
        require_watcher(request)
        return _json(current().spectate.map())

    @app.get("/api/live", tags=["spectator"])
    async def live(request: Request) -> Response:
        """Everything on the live page now: time, characters (positions, needs, operation, recent
        submissions, programs, wealth and rank), creatures, structures, nodes and the recent events."""
        require_watcher(request)
        return _json(current().spectate.view())

    @app.get("/api/live/stream", tags=["spectator"])
    async def live_stream(request: Request, max_s: float = STREAM_MAX_S) -> StreamingResponse:
        """Server-sent events: the live view each time it changes (checked four times a second); the
        stream ends after `max_s` seconds (at most 300) and the browser reconnects."""
        require_watcher(request)
        if not 0 < max_s <= STREAM_MAX_S:
            raise HostError("bad_request", f"max_s must be above 0 and at most {STREAM_MAX_S:g}.")
        return StreamingResponse(_stream(current, request, max_s), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @app.get("/play", response_class=HTMLResponse, include_in_schema=False)
    async def play() -> HTMLResponse:
        """Human play: join with the signup token as an agent (harness `human`) and act through the agents' own
        HTTP tools; the page draws only the character's observation and memory."""
        return _page("play.html.j2")

    # ---- matches, the leaderboard and profiles ------------------------------------------------------

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    async def matches(request: Request) -> HTMLResponse:
        host = current()
        return _page("matches.html.j2", live={"status": host.state, "scenario": host.world.scenario_name,
                                              "tick": host.world.tick}, archives=_described(host))

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    async def match_page(request: Request, match_id: str, rubric: Optional[str] = None) -> HTMLResponse:
        host = current()
        who = watcher(request)
        path = host.archives.for_report(match_id, admin=who is not None and who.role == "admin")
        return HTMLResponse(render_html(_scored(path, rubric, host)))

    @app.get("/leaderboard", response_class=HTMLResponse, include_in_schema=False)
    async def leaderboard_page(rubric: Optional[str] = None, pool_scenarios: bool = False) -> HTMLResponse:
        return _page("leaderboard.html.j2", board=_board(current(), rubric, pool_scenarios), spend_cells=spend_cells)

    @app.get("/api/ratings", tags=["public"])
    async def ratings(rubric: Optional[str] = None, pool_scenarios: bool = False) -> Response:
        """The leaderboard across every finished archive in the data folder: ratings, ranks, each measure with its
        interval, and each match's placements (as `wildhold leaderboard` computes them; archives of several
        scenarios are pooled only with pool_scenarios=true, as the CLI's --pool-scenarios)."""
        return _json(_board(current(), rubric, pool_scenarios))

    @app.get("/u/{name:path}", response_class=HTMLResponse, include_in_schema=False)  # a model's name may hold "/"
    async def profile(name: str, rubric: Optional[str] = None, pool_scenarios: bool = False) -> HTMLResponse:
        board = _board(current(), rubric, pool_scenarios)
        placements = [{"scenario": m["scenario"], "seed": m["seed"], "chain_head": m["chain_head"], **p}
                      for m in board["matches"] for p in m["placements"] if name in (p["name"], p["config"])]
        if not placements:
            raise HostError("not_found", f"No agent or configuration named {name!r} in this server's finished matches.")
        configs = {p["config"] for p in placements}
        rows = [r for r in board["rows"] if r["config"] in configs]
        return _page("profile.html.j2", name=name, rows=rows, placements=placements, board=board, spend_cells=spend_cells)


# ---- helpers -----------------------------------------------------------------------------------------

def _page(template: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(_pages.get_template(template).render(**values), status_code=status)


def _json(value: Any) -> Response:
    return Response(orjson.dumps(value), media_type="application/json")


async def _stream(current: Callable[[], Host], request: Request, max_s: float) -> AsyncIterator[bytes]:
    """The live view as server-sent events, one each time it changes; bounded by `max_s`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + max_s
    last_key: Any = None
    last_sent = loop.time()
    yield b"retry: 1000\n\n"
    while loop.time() < end:
        host = current()
        key = host.spectate.key()
        if key != last_key:
            last_key = key
            last_sent = loop.time()
            yield b"event: view\ndata: " + orjson.dumps(host.spectate.view()) + b"\n\n"
        elif loop.time() - last_sent > STREAM_HEARTBEAT_S:
            last_sent = loop.time()
            yield b": still here\n\n"
        if await request.is_disconnected():
            return
        await asyncio.sleep(STREAM_POLL_S)


def _finished(host: Host) -> list[dict[str, Any]]:
    """The archives of finished matches in the data folder (this match's once it is over), newest first."""
    out = []
    for path in sorted(host.archives.data_dir.glob("*.wildhold.zip"), key=lambda p: (-p.stat().st_mtime, p.name)):
        if path.name == LIVE_REPORT_NAME or path.name.startswith("snapshot-"):
            continue
        if path.name == ARCHIVE_NAME and host.state != "over":
            continue
        out.append({"id": "current" if path.name == ARCHIVE_NAME else path.name.removesuffix(".wildhold.zip"),
                    "file": path.name, "bytes": path.stat().st_size})
    return out


def _described(host: Host) -> list[dict[str, Any]]:
    """Each finished archive as the matches page lists it: what was played (scenario, seed, the agents, its length),
    when it was archived (the file's time: a manifest records no date), and whether it verifies, or why not; a copy
    of a log listed before it says so."""
    per_day = host.content.calendar.ticks_per_day
    heads: dict[str, str] = {}
    out = []
    for entry in _finished(host):
        path = host.archives.data_dir / entry["file"]
        row = {**entry, "archived": datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
        try:
            with Archive(path) as archive:
                m = archive.manifest
            ticks = m["final_tick"] - m["start_tick"]
            row.update(scenario=m["scenario"], seed=m["seed"], agents=[a["name"] for a in m["agents"]], ticks=ticks,
                       days=ticks / per_day)
            admit(path, host.content)
        except ArchiveError as exc:
            why = str(exc).replace(str(path), path.name)  # the page names the file, never the server's folders
            out.append({**row, "verified": False, "why": f"{why} ({exc.code})"})
            continue
        same = heads.setdefault(m["chain_head"], entry["id"])
        out.append({**row, "verified": True, "same_log_as": same if same != entry["id"] else None})
    return out


def _scored(path: Path, rubric: str | None, host: Host) -> dict[str, Any]:
    try:
        return score_archive(path, rubric, host.content)
    except ArchiveError as exc:
        raise HostError("archive_unverified", f"{exc} ({exc.code})") from None
    except (KeyError, ValueError) as exc:
        raise HostError("bad_request", f"The report cannot be built: {exc}") from None


_boards: dict[tuple[Any, ...], dict[str, Any]] = {}
BOARDS_KEPT = 8


def _board(host: Host, rubric: str | None, pool_scenarios: bool = False) -> dict[str, Any]:
    """The leaderboard over the finished archives, computed once per set of archives and rubric."""
    paths = [host.archives.data_dir / a["file"] for a in _finished(host)]
    key = (str(host.archives.data_dir), rubric, pool_scenarios, tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths))
    if key not in _boards:
        if len(_boards) >= BOARDS_KEPT:
            _boards.clear()
        if not paths:
            _boards[key] = {"rubric_version": rubric, "matches": [], "rows": [], "verification": "verified", "model": "",
                            "pooled": {"statement": "no finished match"}, "refused": [], "duplicates": []}
        else:
            try:
                _boards[key] = leaderboard(sorted(paths), rubric, pool_scenarios=pool_scenarios)
            except (KeyError, ValueError) as exc:
                raise HostError("bad_request", f"The leaderboard cannot be built: {exc}") from None
    return _boards[key]
