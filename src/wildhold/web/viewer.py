"""The replay viewer: an archive on one timeline, the world at any tick, and each agent's track beside it.

`Timeline` verifies the archive (as every reader of an archive does), re-simulates it once from its seed
and inputs, and keeps the world's state every `KEYFRAME_TICKS` ticks (fewer in a long match); the world at
any tick is the nearest kept state with at most that many ticks replayed on top. With the run folder, `Tracks` lays
each arm's telemetry (sessions, model turns with their text and tool calls, tool results, workspace
writes, program saves, spend) on the same timeline, and links each action's tool call to the
operation, and so the events, it caused. `viewer_app` serves both to the viewer page on loopback.
"""

from __future__ import annotations

import bisect
import difflib
import zlib
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from wildhold.content import Content, default_content
from wildhold.looks import palette
from wildhold.service.match import advance_to, apply_input, replay
from wildhold.service.spectate import feed_row, world_frame, world_map
from wildhold.service.verify import admit, verify_archive
from wildhold.store.archive import Archive
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.world import World

KEYFRAME_TICKS = 60  # a frame replays at most this many ticks from a kept state (more in a long match:)
KEYFRAMES_KEPT = 240  # states kept at most, so a long match's timeline stays small
FEED_SHOWN = 60  # events a frame carries: those up to its tick, newest first
TEXT_SHOWN = 4000  # characters of a tool result or turn text the track carries


class Timeline:
    """One archive, verified and re-simulated once, readable at any tick."""

    def __init__(self, path: Path | str, content: Content | None = None, *, trust: bool = False,
                 cache: Path | None = None):
        self.path = Path(path)
        self.content = content or default_content()
        with Archive(self.path) as archive:
            self.manifest = archive.manifest
            self.inputs = list(archive.inputs())
            self.events = [(e["seq"], e["tick"], e["kind"], orjson.dumps({"data": e.get("data", {})}))
                           for e in archive.events()]
        m = self.manifest
        self.start_tick, self.final_tick = m["start_tick"], m["final_tick"]
        self.show_end = m.get("horizon", "visible") == "visible"
        self.event_ticks = [e[1] for e in self.events]
        # (tick, inputs applied, the world's state at that tick before its own inputs: compressed, and each
        # character's memory apart, as a copy of its dict of immutable tiles, far cheaper than serialising it)
        self.keyframes: list[tuple[int, int, bytes, dict[str, dict]]] = []
        self.every = max(KEYFRAME_TICKS, (self.final_tick - self.start_tick) // KEYFRAMES_KEPT + 1)
        self.map: dict[str, Any] = {}
        self._last: World | None = None  # the world last built, played on when a later tick is asked next
        self._last_tick = self._last_index = 0
        # Evidence first: verifying re-simulates the match, and the states are kept from that same pass; a
        # verdict already cached (or --trust) leaves one re-simulation to do here, checked against the manifest.
        if trust:
            self.verification = admit(self.path, self.content, trust=True).stamp()
        else:
            self.verification = verify_archive(self.path, self.content, cache, on_tick=self._keep).stamp()
        if not self.keyframes:
            world = replay(self.content, m["scenario"], m["seed"], self.inputs, self.final_tick, self._keep)
            if world.events.head != m["chain_head"] or state_hash(world) != m["state_hash"]:
                raise ValueError(f"{self.path}: re-simulated, the match does not end as its manifest says")

    def _keep(self, world: World, applied: int) -> None:
        if not self.keyframes:
            self.map = world_map(world)
        if not self.keyframes or world.tick - self.keyframes[-1][0] >= self.every:
            memories = {a: c.memory for a, c in world.chars.items()}
            try:
                for c in world.chars.values():
                    c.memory = {}
                blob = zlib.compress(dumps(world), 1)
            finally:
                for a, c in world.chars.items():
                    c.memory = memories[a]
            self.keyframes.append((world.tick, applied, blob, {a: dict(m) for a, m in memories.items()}))

    def world_at(self, tick: int) -> World:
        """The world at `tick`, after the inputs recorded at that tick."""
        if not self.start_tick <= tick <= self.final_tick:
            raise ValueError(f"tick must be between {self.start_tick} and {self.final_tick}")
        k = bisect.bisect_right([kf[0] for kf in self.keyframes], tick) - 1
        key_tick, index, blob, memories = self.keyframes[k]
        last = self._last
        if last is not None and key_tick <= self._last_tick <= tick:  # play on from the world last built
            world, index = last, self._last_index
        else:
            world = loads(self.content, zlib.decompress(blob))
            for a, memory in memories.items():
                world.chars[a].memory = dict(memory)
        drain = world.events.drain
        while index < len(self.inputs) and self.inputs[index].tick <= tick:
            advance_to(world, self.inputs[index].tick, drain)
            apply_input(world, self.inputs[index])
            drain()
            index += 1
        advance_to(world, tick, drain)
        self._last, self._last_tick, self._last_index = world, tick, index
        return world

    def frame(self, tick: int) -> dict[str, Any]:
        """Everything the viewer shows at `tick`: the world's frame and the events up to it, newest first."""
        frame = world_frame(self.world_at(tick), self.show_end)
        upto = bisect.bisect_right(self.event_ticks, tick)
        frame["feed"] = [feed_row(*e) for e in reversed(self.events[max(0, upto - FEED_SHOWN):upto])]
        frame["events_so_far"] = upto
        return frame

    def meta(self) -> dict[str, Any]:
        m = self.manifest
        colour = palette.colours(a["name"] for a in m["agents"])  # the roster joined in this order: as every frame colours them
        return {"archive": self.path.name, "scenario": m["scenario"], "seed": m["seed"], "start_tick": self.start_tick,
                "final_tick": self.final_tick, "events": len(self.events), "chain_head": m["chain_head"],
                "agents": [{"id": a["id"], "name": a["name"], "model": a.get("model"), "policy": a.get("policy"),
                            "colour": colour[a["name"]]} for a in m["agents"]],
                "verification": self.verification, "map": self.map}

    def op_events(self) -> dict[str, list[int]]:
        """Each operation's events (their seqs), by the operation's id."""
        out: dict[str, list[int]] = {}
        for seq, _, kind, payload in self.events:
            if kind.startswith("operation_"):
                op = orjson.loads(payload)["data"].get("op")
                if op:
                    out.setdefault(op, []).append(seq)
        return out

    def op_starts(self) -> dict[str, int]:
        """The tick each operation started at."""
        out = {}
        for _, tick, kind, payload in self.events:
            if kind == "operation_started":
                out[orjson.loads(payload)["data"]["op"]] = tick
        return out


class Tracks:
    """A run folder's telemetry laid on the archive's timeline, one track per arm (an arm is the agent of its name)."""

    def __init__(self, run_dir: Path | str, timeline: Timeline):
        self.run_dir = Path(run_dir)
        telemetry = self.run_dir / "telemetry.jsonl"
        if not telemetry.is_file():
            raise FileNotFoundError(f"{self.run_dir} holds no telemetry.jsonl: not a `wildhold run` folder")
        rows = [orjson.loads(line) for line in telemetry.read_bytes().splitlines() if line.strip()]
        names = {a["name"]: a["id"] for a in timeline.manifest["agents"]}
        op_ticks, op_events = timeline.op_starts(), timeline.op_events()
        self.by_agent: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            agent = names.get(row.get("arm") or "")
            if agent is not None:
                self.by_agent.setdefault(agent, []).append(row)
        self.tracks = {agent: _track(rows, op_ticks, op_events, timeline) for agent, rows in self.by_agent.items()}

    def track(self, agent: str) -> dict[str, Any]:
        if agent not in self.tracks:
            raise KeyError(agent)
        return self.tracks[agent]


def _track(rows: list[dict[str, Any]], op_ticks: dict[str, int], op_events: dict[str, list[int]],
           timeline: Timeline) -> dict[str, Any]:
    """One arm's items in order, each with the tick it belongs to: a tool result that names an operation or a
    tick fixes it; the rest take the tick of the nearest fixed item before them (the start before any)."""
    items: list[dict[str, Any]] = []
    tick = timeline.start_tick
    sources: dict[str, str] = {}
    dollars = 0.0
    tokens = 0
    for row in rows:
        kind = row.get("kind")
        item: dict[str, Any] = {"kind": kind, "t": row.get("t"), "session": row.get("session")}
        if kind == "llm_call":
            dollars += row.get("cost_usd") or 0.0
            tokens += (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
            item.update(text=(row.get("text") or "")[:TEXT_SHOWN], model=row.get("model"),
                        calls=[{"name": c.get("name"), "arguments": c.get("arguments")} for c in row.get("calls", [])],
                        dollars=round(dollars, 6), tokens=tokens)
        elif kind == "tool_call":
            result = row.get("result")
            item.update(name=row.get("name"), arguments=row.get("args"), code=row.get("code"),
                        result=result[:TEXT_SHOWN] if isinstance(result, str) else result)
            parsed = _json(result)
            op = parsed.get("op") if isinstance(parsed, dict) else None
            if op in op_ticks:
                tick = op_ticks[op]
                item.update(op=op, events=op_events.get(op, []))
            elif isinstance(parsed, dict) and isinstance(parsed.get("tick"), int):
                tick = parsed["tick"]
            if row.get("name") == "save_program" and isinstance(row.get("args"), dict):
                name, source = str(row["args"].get("name")), str(row["args"].get("source", ""))
                before = sources.get(name, "")
                item["diff"] = "".join(difflib.unified_diff(before.splitlines(True), source.splitlines(True),
                                                            f"{name} (before)", f"{name} (saved)"))[:TEXT_SHOWN]
                sources[name] = source
        elif kind in ("progress", "wake_scheduled"):
            if isinstance(row.get("tick"), int):
                tick = row["tick"]
            item.update({k: v for k, v in row.items() if k not in ("arm", "kind", "t", "session")})
        else:
            item.update({k: v for k, v in row.items() if k not in ("arm", "kind", "t", "session")})
        item["tick"] = min(max(tick, timeline.start_tick), timeline.final_tick)
        items.append(item)
    sessions = {}
    for item in items:
        if item["session"] is not None:
            span = sessions.setdefault(item["session"], {"session": item["session"], "start": item["tick"], "end": item["tick"]})
            span["end"] = max(span["end"], item["tick"])
    return {"items": items, "sessions": list(sessions.values()), "dollars": round(dollars, 6), "tokens": tokens}


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


_pages = Environment(loader=PackageLoader("wildhold.web", "templates"), autoescape=select_autoescape(default=True))


def viewer_app(timeline: Timeline, tracks: Tracks | None = None) -> FastAPI:
    """The viewer's page and its three reads: the match, a frame at a tick, an agent's track."""
    app = FastAPI(title="Wildhold replay viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static/web", StaticFiles(directory=Path(__file__).parent / "static"), name="web-static")

    @app.get("/", response_class=HTMLResponse)
    async def page() -> str:
        return _pages.get_template("viewer.html.j2").render(meta=timeline.meta(), tracks=tracks is not None)

    @app.get("/api/view/meta")
    async def meta() -> Response:
        return _bytes({**timeline.meta(), "tracks": sorted(tracks.tracks) if tracks else []})

    @app.get("/api/view/frame")
    async def frame(tick: int) -> Response:
        try:
            return _bytes(timeline.frame(tick))
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None

    @app.get("/api/view/track/{agent}")
    async def track(agent: str) -> Response:
        if tracks is None:
            raise HTTPException(404, "This viewer was opened without a run folder: no agent tracks.")
        try:
            return _bytes(tracks.track(agent))
        except KeyError:
            raise HTTPException(404, f"No track for {agent!r} in this run folder.") from None

    return app


def _bytes(value: Any) -> Response:
    return Response(orjson.dumps(value), media_type="application/json")
