"""The running match behind `wildhold serve`: one world, its clock, its agents and their tokens.

The host is the only owner of a served world: every face (HTTP, MCP) calls it from one asyncio
event loop, and nothing else mutates the world. Whatever changes the event log — a join, an
action, an idle notice, the end — is a recorded input of the match, so a served match replays
from its archive like any other. Wall-clock time only decides *when* inputs happen.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import orjson

from wildhold import __version__
from wildhold.content import Content, default_content
from wildhold.service.match import Match
from wildhold.store.sqlite import StoreError
from wildhold.world.errors import Rejected
from wildhold.world.observe import clock as world_clock
from wildhold.world.observe import observe, status
from wildhold.world.parts import PARTS, economy
from wildhold.world.serialize import state_hash
from wildhold.world.wealth import formula_summary, rank_standard, wealth_cents

CLOCKS = ("realtime", "lockstep", "fast")
DB_NAME = "match.sqlite"
ARCHIVE_NAME = "match.wildhold.zip"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]{0,39}$")
EPILOGUE_MAX_CHARS = 8000
FINISHED_OPS_KEPT = 20_000
OP_KINDS = {"operation_started": "running", "operation_completed": "completed",
            "operation_failed": "failed", "operation_cancelled": "cancelled"}

# Failures of the service itself (the world's rejection codes are in wildhold.world.errors.CODES).
SERVICE_CODES: dict[str, str] = {
    "unauthorised": "The request carries no bearer token, or one this server never issued.",
    "forbidden": "The token is valid but may not do this: an agent token on an admin route, another agent's "
                 "operation, or acting as another character.",
    "rate_limited": "Too many requests for this token; wait the number of seconds given, then retry.",
    "lobby_closed": "Registration is closed: the match has ended, or it has as many agents as it takes.",
    "late_join_refused": "The match has started and this server does not let agents join late.",
    "not_started": "The match is still in its lobby; the operator starts it with POST /api/admin/start.",
    "already_started": "The match has already started.",
    "match_over": "The match has ended; the world takes no more actions.",
    "name_taken": "Another agent already registered under that name.",
    "bad_request": "The request is malformed: not JSON, a field missing or of the wrong type, or too large.",
    "unknown_operation": "This agent has no operation with that id.",
    "unknown_section": "The rules document has no such section or entry.",
    "setup_refused": "The setup command did not apply; the world is unchanged.",
    "not_found": "No such route; GET /openapi.json lists them.",
    "unknown_program": "You have no program of that name, or it has no such revision; save it first.",
    "program_invalid": "The program has a syntax or type error (the message names the line); nothing was saved.",
    "program_too_large": "The program's source is over the size limit.",
    "program_limit": "Too many programs: running at once, saved by one character, or revisions of one program.",
    "program_not_running": "That program is not running (it is stopped, finished or failed).",
    "program_running": "That program is already running; stop it before starting it again.",
    "invalid_arguments": "An argument is of the wrong kind or out of range (a program name, a revision, a log position).",
    "runner_unavailable": "The program runner could not be reached just now; nothing changed, try again.",
    "archive_unverified": "The archive is not scored: re-simulated it is not what it says, or it was played under other "
                          "content (the message names the check and its code).",
}


class HostError(Exception):
    """A failure of the service (not a rule of the world): a stable code and a sentence."""

    def __init__(self, code: str, message: str, retry_after: float | None = None):
        if code not in SERVICE_CODES:
            raise ValueError(f"unregistered service code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.retry_after = code, message, retry_after


@dataclass(frozen=True)
class HostConfig:
    """How a served match runs. `check` refuses settings that would make a match unplayable."""

    signup_token: str
    admin_token: str
    clock: str = "realtime"
    tick_seconds: float = 1.0  # realtime: wall-clock seconds per tick
    turn_deadline_s: float = 30.0  # lockstep: the longest the world waits for an agent each tick
    lobby: bool = False
    late_join: bool = True
    max_agents: int = 64
    rate_per_s: float = 20.0  # per token; 0 turns the limit off
    rate_burst: int = 40
    idle_after_ticks: int = 120
    wait_max_s: float = 30.0

    def check(self) -> None:
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, not {self.clock!r}")
        for label, token in (("signup", self.signup_token), ("admin", self.admin_token)):
            if len(token) < 8:
                raise ValueError(f"the {label} token must be at least 8 characters")
        if hmac.compare_digest(self.signup_token, self.admin_token):
            raise ValueError("the signup and admin tokens must differ")
        if not self.late_join and not self.lobby:
            raise ValueError("late join off needs the lobby on: without a lobby no agent could ever join")
        if self.tick_seconds <= 0 or self.turn_deadline_s <= 0 or self.wait_max_s <= 0:
            raise ValueError("tick seconds, turn deadline and wait bound must be positive")
        if self.rate_per_s < 0 or self.rate_burst < 1 or self.max_agents < 1 or self.idle_after_ticks < 1:
            raise ValueError("rate, burst, max agents and idle threshold must be positive")

    def public(self) -> dict[str, Any]:
        """The settings a report must state (never the tokens)."""
        return {
            "clock": self.clock, "tick_seconds": self.tick_seconds, "turn_deadline_s": self.turn_deadline_s,
            "lobby": self.lobby, "late_join": self.late_join, "max_agents": self.max_agents,
            "rate_per_s": self.rate_per_s, "rate_burst": self.rate_burst, "idle_after_ticks": self.idle_after_ticks,
        }


@dataclass
class AgentRecord:
    name: str
    token_hash: str
    agent: str | None = None  # the character id, once it is in the world
    extra: dict[str, str] = field(default_factory=dict)

    def dump(self) -> dict[str, Any]:
        return {"name": self.name, "token_hash": self.token_hash, "agent": self.agent, "extra": self.extra}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a bearer token belongs to."""

    role: Literal["agent", "signup", "admin"]
    key: str  # the token's hash: the rate-limit bucket
    record: AgentRecord | None = None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class RateLimiter:
    """A token bucket per key: `rate` requests a second on average, `burst` at once."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.now = rate, burst, now
        self.buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float | None:
        """Spend one request; None when allowed, else the seconds until one is."""
        if self.rate <= 0:
            return None
        t = self.now()
        tokens, last = self.buckets.get(key, (float(self.burst), t))
        tokens = min(float(self.burst), tokens + (t - last) * self.rate)
        if tokens < 1.0:
            self.buckets[key] = (tokens, t)
            return (1.0 - tokens) / self.rate
        self.buckets[key] = (tokens - 1.0, t)
        return None


class Host:
    """A match served to remote agents: registry, lobby, clock driver, operations, activity."""

    def __init__(self, match: Match, config: HostConfig, data_dir: Path, *,
                 manifest_extra: dict[str, Any] | None = None, now: Callable[[], float] = time.monotonic):
        config.check()
        self.match = match
        self.world = match.world
        self.content = match.world.content
        self.config = config
        self.data_dir = data_dir
        self.manifest_extra = dict(manifest_extra or {})
        self.limiter = RateLimiter(config.rate_per_s, config.rate_burst, now)
        self.started_at = now()
        self.now = now
        self._signup_key, self._admin_key = token_hash(config.signup_token), token_hash(config.admin_token)
        self.records: dict[str, AgentRecord] = {}  # token hash -> record, in registration order
        self.ops: dict[str, dict[str, Any]] = {}
        self.epilogues: dict[str, dict[str, Any]] = {}
        self.last_active: dict[str, int] = {}
        self.idle: set[str] = set()
        self.submitted: set[str] = set()  # agents that started an operation since the last tick (lockstep)
        self.counters: Counter[str] = Counter()
        self.events_by_kind: Counter[str] = Counter()
        self.rejections: Counter[str] = Counter()
        self.archive: Path | None = None
        self._waiters: dict[str, asyncio.Event] = {}
        self._activity: asyncio.Event | None = None
        self._clock_task: asyncio.Task | None = None
        meta = match.store.meta() if match.store else {}
        self.state: str = "over" if match.ended else ("running" if meta.get("server_started") else "lobby")
        self._load_registry(meta)
        self._replay_tracking()
        match.on_events = self._note_events
        if not config.lobby and self.state == "lobby":
            self._set_started()
        from wildhold.programs.host import ProgramHost  # the programs package builds on this module

        self.programs = ProgramHost(self)  # restores every program that was running or waiting

    # ---- opening --------------------------------------------------------------------------------

    @classmethod
    def open(cls, data_dir: Path | str, config: HostConfig, scenario: str = "default", seed: int = 0,
             content: Content | None = None, manifest_extra: dict[str, Any] | None = None) -> Host:
        """Start a new match in `data_dir`, or resume the one stored there (scenario, seed and clock must agree)."""
        config.check()
        content = content or default_content()
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        db = data_dir / DB_NAME
        if db.exists():
            match = Match.resume(db, content)
            meta = match.store.meta()
            for key, want in (("scenario", scenario), ("seed", seed), ("clock", config.clock)):
                if meta.get(key) != want:
                    match.store.close()
                    raise StoreError(f"{db} holds a match with {key} {meta.get(key)!r}, not {want!r}: "
                                     f"pass the same settings to resume it, or another --data folder")
        else:
            match = Match.create(scenario, seed, db, content, clock=config.clock)
            match.store.set_meta({"server_config": config.public(), "server_started": False})
        return cls(match, config, data_dir, manifest_extra=manifest_extra)

    def _load_registry(self, meta: dict[str, Any]) -> None:
        joined = {args["name"]: agent for agent, args in self.match.joins().items()} if self.match.store else {}
        for item in meta.get("server_agents", []):
            rec = AgentRecord(item["name"], item["token_hash"], item.get("agent"), item.get("extra", {}))
            rec.agent = rec.agent or joined.get(rec.name)  # a crash between a join and this record
            self.records[rec.token_hash] = rec
        self.epilogues = dict(meta.get("epilogues", {}))

    def _replay_tracking(self) -> None:
        """Rebuild operation records and activity from the stored log after a restart."""
        if self.match.store is None:
            return
        for inp in self.match.store.inputs(0):
            if inp.kind == "action" and inp.agent:
                self.last_active[inp.agent] = inp.tick
                self.idle.discard(inp.agent)
            elif inp.kind == "idle" and inp.agent:
                self.idle.add(inp.agent)
            elif inp.kind == "join":
                agent = next((r.agent for r in self.records.values() if r.name == inp.args["name"]), None)
                if agent:
                    self.last_active.setdefault(agent, inp.tick)
        self._note_events(self.match.store.events(0), count=False)

    def _save_registry(self) -> None:
        if self.match.store is not None:
            self.match.store.set_meta({"server_agents": [r.dump() for r in self.records.values()]})

    def _set_started(self) -> None:
        self.state = "running"
        if self.match.store is not None:
            self.match.store.set_meta({"server_started": True})

    # ---- identity ---------------------------------------------------------------------------------

    def authenticate(self, token: str | None) -> Identity:
        """The identity a bearer token carries, or `unauthorised`."""
        if not token:
            raise HostError("unauthorised", "Send 'Authorization: Bearer <token>'; agents get a token from POST /api/agents.")
        key = token_hash(token)
        rec = self.records.get(key)
        if rec is not None:
            return Identity("agent", key, rec)
        if hmac.compare_digest(key, self._signup_key):
            return Identity("signup", key)
        if hmac.compare_digest(key, self._admin_key):
            return Identity("admin", key)
        raise HostError("unauthorised", "This server never issued that token.")

    def throttle(self, who: Identity) -> None:
        """Spend one request from the token's budget, or `rate_limited` with the wait."""
        wait = self.limiter.take(who.key)
        if wait is not None:
            self.counters["rate_limited"] += 1
            c = self.config
            raise HostError("rate_limited", f"At most {c.rate_per_s:g} requests a second per token (bursts of "
                            f"{c.rate_burst}); retry in {wait:.2f} s.", retry_after=wait)

    def agent_of(self, who: Identity) -> str:
        """The character an agent token drives; refuses other tokens and agents still in the lobby."""
        if who.role != "agent" or who.record is None:
            role = "the signup token registers agents" if who.role == "signup" else "the admin token runs the match"
            raise HostError("forbidden", f"This needs an agent token ({role}); register with POST /api/agents.")
        if who.record.agent is None:
            raise HostError("not_started", "You are registered; the match is in its lobby and your character "
                            "enters the world when the operator starts it.")
        return who.record.agent

    # ---- registration and the lobby -----------------------------------------------------------

    def register(self, name: str, extra: dict[str, str] | None = None) -> tuple[str, AgentRecord]:
        """A new agent and its bearer token; it joins the world now, or at the start when in the lobby."""
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise HostError("bad_request", "A name is 1 to 40 letters, digits, spaces, '_', '.' or '-', starting with a letter or digit.")
        if self.state == "over":
            raise HostError("lobby_closed", "The match has ended; registration is closed.")
        if len(self.records) >= self.config.max_agents:
            raise HostError("lobby_closed", f"The match is full ({self.config.max_agents} agents).")
        if any(r.name == name for r in self.records.values()):
            raise HostError("name_taken", f"An agent named {name!r} is already registered; choose another name.")
        if self.state == "running" and not self.config.late_join:
            raise HostError("late_join_refused", "The match has started and this server does not let agents join late.")
        token = secrets.token_urlsafe(24)
        rec = AgentRecord(name, token_hash(token), None, {k: v for k, v in (extra or {}).items() if v})
        if self.state == "running":
            rec.agent = self._join(rec)
        self.records[rec.token_hash] = rec
        self._save_registry()
        self.counters["registrations"] += 1
        return token, rec

    def _join(self, rec: AgentRecord) -> str:
        agent = self.match.join(rec.name, via="server", **rec.extra)
        self.last_active[agent] = self.world.tick
        self.match.flush()
        return agent

    def start(self) -> dict[str, Any]:
        """Close the lobby: every registered agent enters the world, in registration order."""
        if self.state != "lobby":
            raise HostError("already_started" if self.state == "running" else "match_over",
                            "The match has already started." if self.state == "running" else "The match has ended.")
        for rec in self.records.values():
            rec.agent = self._join(rec)
        self._save_registry()
        self._set_started()
        self.match.flush(snapshot=True)
        self._wake()
        return {"status": self.state, "tick": self.world.tick, "agents": [r.agent for r in self.records.values()]}

    def stop(self, reason: str = "stopped by the operator") -> dict[str, Any]:
        """End the match now and write its archive."""
        if self.state != "over":
            self._finish(reason)
        return {"status": self.state, "tick": self.world.tick, "archive": str(self.archive)}

    def _finish(self, reason: str) -> None:
        self.programs.stop_all("the match ended")
        self.match.end(reason)
        self.state = "over"
        self.export()
        self._wake()
        for event in self._waiters.values():
            event.set()

    def export(self) -> Path:
        self.archive = self.match.export(self.data_dir / ARCHIVE_NAME, self.archive_extra())
        return self.archive

    def archive_extra(self) -> dict[str, Any]:
        return {**self.manifest_extra, "server": self.config.public(), "epilogues": dict(sorted(self.epilogues.items()))}

    def archive_for_report(self, match_id: str, admin: bool) -> Path:
        """The archive a report is computed from: `current` (this match: its final archive once over, else an
        archive of the match so far, for the operator only) or an archive in the data folder by name."""
        if match_id == "current":
            if self.state == "over" and self.archive is not None:
                return self.archive
            if not admin:
                raise HostError("forbidden", "A live match's report is for the operator (admin token) until the match ends.")
            return self.match.export(self.data_dir / "report-live.wildhold.zip", self.archive_extra())
        if not match_id.replace("-", "").replace("_", "").isalnum():
            raise HostError("not_found", f"No archive named {match_id!r}.")
        path = self.data_dir / f"{match_id}.wildhold.zip"
        if not path.exists() or path.name == "report-live.wildhold.zip":
            raise HostError("not_found", f"No archive named {match_id!r} in this server's data folder.")
        return path

    def snapshot(self) -> dict[str, Any]:
        """A snapshot in the store and an archive of the match so far, beside the database."""
        self.match.flush(snapshot=True)
        w = self.world
        path = self.match.export(self.data_dir / f"snapshot-tick{w.tick}.wildhold.zip", self.archive_extra())
        return {"tick": w.tick, "state_hash": state_hash(w), "chain_head": w.events.head, "archive": str(path)}

    def setup(self, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """An operator's setup command, recorded as an input like every change."""
        if self.state == "over":
            raise HostError("match_over", "The match has ended.")
        code = self.match.setup(command, args)
        self.match.flush()
        if code is not None:
            raise HostError("setup_refused", f"Setup command {command!r} was refused ({code}); the world is unchanged.")
        return {"command": command, "tick": self.world.tick}

    # ---- actions and operations -----------------------------------------------------------------

    def submit(self, agent: str, action: str, args: Any, issuer: str = "direct") -> dict[str, Any] | Rejected:
        """Record and apply one action; the operation's record, or the world's rejection."""
        if self.state != "running":
            raise HostError("match_over" if self.state == "over" else "not_started",
                            "The match has ended." if self.state == "over" else "The match is still in its lobby.")
        w = self.world
        self.last_active[agent] = w.tick
        self.idle.discard(agent)
        result = self.match.submit(agent, action, args, issuer)
        self.match.flush()
        if isinstance(result, Rejected):
            self.rejections[result.code] += 1
            return result
        self.counters["actions_accepted"] += 1
        self.submitted.add(agent)
        self._wake()
        return self.operation(agent, result.op)

    def operation(self, agent: str, op: str) -> dict[str, Any]:
        rec = self.ops.get(op)
        if rec is None:
            raise HostError("unknown_operation", f"There is no operation {op!r}; ids come back from each action, like 'op12'.")
        if rec["agent"] != agent:
            raise HostError("forbidden", f"Operation {op!r} belongs to another character.")
        return {**rec, "tick": self.world.tick}

    def current_operation(self, agent: str) -> str | None:
        return self.world.chars[agent].op

    async def wait(self, agent: str, op: str | None, timeout_s: float) -> dict[str, Any]:
        """Long-poll: return when the operation ends, the match ends, or `timeout_s` (bounded) passes."""
        if op is None:
            op = self.current_operation(agent)
            if op is None:
                raise HostError("unknown_operation", "You have no operation in progress; pass the id of one to wait for it.")
        rec = self.operation(agent, op)
        timeout = min(max(timeout_s, 0.0), self.config.wait_max_s)
        self.counters["waits"] += 1
        if rec["status"] == "running" and self.state != "over" and timeout > 0:
            event = self._waiters.setdefault(op, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), timeout)
            except TimeoutError:
                pass
        rec = self.operation(agent, op)
        return {**rec, "timed_out": rec["status"] == "running"}

    def _note_events(self, records: Iterable[tuple[int, int, str, bytes, str]], count: bool = True) -> None:
        """Follow operations through their lifecycle events, wake their waiters, count every kind."""
        for _, tick, kind, payload, _ in records:
            if count:
                self.events_by_kind[kind] += 1
            status_ = OP_KINDS.get(kind)
            if status_ is None:
                continue
            data = orjson.loads(payload)["data"]
            op = data["op"]
            if status_ == "running":
                self.ops[op] = {"op": op, "agent": data["agent"], "action": data["action"], "args": data["args"],
                                "status": "running", "started": tick, "ends": data["ends"], "finished_tick": None,
                                "result": None, "code": None, "message": None}
                continue
            # The character was busy until the tick before its operation ended: the same activity the clock
            # records live, so a restarted host (which rebuilds activity from these events) marks idleness alike.
            agent = data["agent"]
            self.last_active[agent] = max(self.last_active.get(agent, tick - 1), tick - 1)
            rec = self.ops.get(op)
            if rec is None:
                continue
            rec.update(status=status_, finished_tick=tick, result=data.get("result"), code=data.get("code"),
                       message=data.get("message"))
            event = self._waiters.pop(op, None)
            if event is not None:
                event.set()
        if len(self.ops) > FINISHED_OPS_KEPT:  # forget the oldest finished quarter at once, not one per call
            finished = [o for o, r in self.ops.items() if r["status"] != "running"]
            for op in finished[: max(len(self.ops) - FINISHED_OPS_KEPT * 3 // 4, 0)]:
                del self.ops[op]

    # ---- what an agent may read -----------------------------------------------------------------

    def _require_started(self) -> None:
        if self.state == "lobby":
            raise HostError("not_started", "The match is still in its lobby.")

    def observe(self, agent: str, memory: bool = True, memory_since: int | None = None) -> dict[str, Any]:
        self._require_started()
        return observe(self.world, agent, memory, memory_since)

    def map_memory(self, agent: str, start: int = 0, limit: int | None = None) -> dict[str, Any]:
        """The view and one page of the remembered tiles (ordered by position): `next` starts the next page."""
        obs = self.observe(agent)
        tiles = obs["memory"]
        end = len(tiles) if limit is None else min(len(tiles), start + limit)
        return {"time": obs["time"], "view": obs["view"], "memory": tiles[start:end], "legend": obs["legend"],
                "total": len(tiles), "next": end if end < len(tiles) else None}

    def inventory(self, agent: str) -> dict[str, Any]:
        self._require_started()
        s = status(self.world, self.world.chars[agent])
        return {"inventory": s["inventory"], "equipment": s["equipment"]}

    def recipes(self, agent: str) -> list[dict[str, Any]]:
        """Every recipe, with why it is closed to this character (or null when open)."""
        self._require_started()
        w, c = self.world, self.world.chars[agent]
        out = []
        for name, recipe in self.content.recipes.items():
            locked = next((why for part in PARTS if (why := part.recipe_locked(w, c, name))), None)
            out.append({"name": name, **recipe.model_dump(mode="json"), "locked": locked})
        return out

    def quest_log(self, agent: str) -> dict[str, Any]:
        obs = self.observe(agent, memory=False)
        return {"board": obs.get("quest_board", []), "log": obs.get("quest_log", {})}

    def world_info(self, agent: str) -> dict[str, Any]:
        """Time, season, the one-line wealth formula and this character's rank: cheap enough for every poll."""
        self._require_started()
        w = self.world
        cents = {a: wealth_cents(w, a) for a in w.chars}
        return {
            "time": world_clock(w),
            "status": self.state,
            "clock": self.config.clock,
            "tick_seconds": self.config.tick_seconds if self.config.clock == "realtime" else None,
            "scenario": w.scenario_name,
            "agents": len(w.chars),
            "wealth_formula": formula_summary(self.content),
            "wealth_cents": cents[agent],
            "rank": rank_standard(cents)[agent],
            "operation": self.current_operation(agent),
        }

    def write_epilogue(self, agent: str, text: str) -> dict[str, Any]:
        """The agent's own account, kept in the archive and never scored; a later one replaces it."""
        if not isinstance(text, str) or not text.strip():
            raise HostError("bad_request", "The epilogue is empty.")
        if len(text) > EPILOGUE_MAX_CHARS:
            raise HostError("bad_request", f"The epilogue is {len(text)} characters; at most {EPILOGUE_MAX_CHARS}.")
        if self.state == "lobby":
            raise HostError("not_started", "The match is still in its lobby.")
        name = self.world.chars[agent].name
        self.epilogues[agent] = {"name": name, "text": text, "tick": self.world.tick}
        if self.match.store is not None:
            self.match.store.set_meta({"epilogues": self.epilogues})
        if self.state == "over":
            self.export()
        return {"agent": agent, "chars": len(text), "tick": self.world.tick, "scored": False}

    # ---- public and operator views --------------------------------------------------------------

    def spectator_state(self) -> dict[str, Any]:
        """What anyone may see: the time, the roster and ranks, the public board. No positions, no inventories."""
        w = self.world
        board = economy.state(w).board if self.state != "lobby" else []
        joined = [r for r in self.records.values() if r.agent is not None]
        ranks = rank_standard({a: wealth_cents(w, a) for a in w.chars}) if self.state != "lobby" else {}
        return {
            "status": self.state,
            "clock": self.config.clock,
            "scenario": w.scenario_name,
            "time": world_clock(w) if self.state != "lobby" else None,
            "lobby": [r.name for r in self.records.values() if r.agent is None],
            "agents": sorted(({"agent": a, "name": c.name, "rank": ranks[a]} for a, c in w.chars.items()),
                             key=lambda row: (row["rank"], row["agent"])) if ranks else [],
            "registered": len(self.records),
            "joined": len(joined),
            "board": [dict(post) for post in board],
        }

    def roster(self) -> list[dict[str, Any]]:
        """The operator's view of every registration: character, activity, idle flag."""
        w = self.world
        out = []
        for r in self.records.values():
            out.append({"name": r.name, "agent": r.agent, "extra": r.extra,
                        "last_active_tick": self.last_active.get(r.agent) if r.agent else None,
                        "idle": r.agent in self.idle if r.agent else False,
                        "epilogue": r.agent in self.epilogues if r.agent else False,
                        "silent_ticks": w.tick - self.last_active.get(r.agent, w.tick) if r.agent else None})
        return out

    def metrics(self) -> dict[str, Any]:
        """Raw counters: requests by face, actions, rejections by code, events by kind, clock state."""
        w = self.world
        return {
            "wildhold_version": __version__,
            "status": self.state,
            "clock": self.config.clock,
            "tick": w.tick,
            "uptime_s": round(self.now() - self.started_at, 3),
            "registered": len(self.records),
            "joined": sum(1 for r in self.records.values() if r.agent),
            "idle": len(self.idle),
            "operations_running": len(w.ops),
            "counters": dict(sorted(self.counters.items())),
            "rejections": dict(sorted(self.rejections.items())),
            "events": dict(sorted(self.events_by_kind.items())),
        }

    def count(self, name: str) -> None:
        self.counters[name] += 1

    # ---- the clock --------------------------------------------------------------------------------

    def step(self) -> None:
        """Advance one tick, give running programs their turn, follow activity, end the match when its time is up."""
        self.match.step()
        self.submitted.clear()
        self.counters["ticks"] += 1
        if not self.world.finished:
            self.programs.tick()
        self._track_activity()
        if self.world.finished and self.state == "running":
            self._finish("season over")

    def _track_activity(self) -> None:
        """A character running an operation counts as active; silence past the threshold is recorded once."""
        w, limit = self.world, self.config.idle_after_ticks
        for rec in self.records.values():
            agent = rec.agent
            if agent is None:
                continue
            if w.chars[agent].op is not None:
                self.last_active[agent] = w.tick
                continue
            since = self.last_active.get(agent, w.tick)
            if agent not in self.idle and w.tick - since >= limit:
                self.idle.add(agent)
                self.match.mark_idle(agent, since)

    def active_agents(self) -> list[str]:
        return [r.agent for r in self.records.values() if r.agent is not None and r.agent not in self.idle]

    def turn_ready(self) -> bool:
        """Lockstep: every active agent is running an operation, started one this tick, or has a program
        running for it (which acts at the boundary) — and there is one such agent."""
        chars = self.world.chars
        active = self.active_agents()
        return bool(active) and all(a in self.submitted or chars[a].op is not None or self.programs.active(a)
                                    for a in active)

    def _wake(self) -> None:
        if self._activity is not None:
            self._activity.set()

    async def _until_activity(self, timeout: float) -> bool:
        """Sleep until something happens (an action, a start, the end) or `timeout` passes."""
        assert self._activity is not None
        self._activity.clear()
        try:
            await asyncio.wait_for(self._activity.wait(), timeout)
            return True
        except TimeoutError:
            return False

    async def run_clock(self) -> None:
        """Drive the world: realtime at the configured rate, lockstep turn by turn, or fast."""
        self._activity = asyncio.Event()
        loop = asyncio.get_running_loop()
        c = self.config
        next_at = loop.time() + c.tick_seconds
        while self.state != "over":
            if self.state == "lobby" or (c.clock == "fast" and not any(r.agent for r in self.records.values())):
                await self._until_activity(1.0)
                next_at = loop.time() + c.tick_seconds
                continue
            if c.clock == "fast":
                self.step()
                await asyncio.sleep(0)
            elif c.clock == "realtime":
                delay = next_at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if self.state != "running":
                    continue
                self.step()
                next_at = max(next_at + c.tick_seconds, loop.time() - 5 * c.tick_seconds)
            else:
                deadline = loop.time() + c.turn_deadline_s
                while self.state == "running" and not self.turn_ready():
                    remaining = deadline - loop.time()
                    if remaining <= 0 or not await self._until_activity(remaining):
                        break
                if self.state == "running":
                    self.step()
                    await asyncio.sleep(0)

    def start_clock(self) -> asyncio.Task:
        """Run the clock driver as a task of the running event loop (the loop every face calls from)."""
        if self._clock_task is None or self._clock_task.done():
            self._clock_task = asyncio.get_running_loop().create_task(self.run_clock(), name="wildhold-clock")
        return self._clock_task

    async def stop_clock(self) -> None:
        task, self._clock_task = self._clock_task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    def close(self) -> None:
        """Stop cleanly: end the program runner (programs stay stored), a final snapshot so a restart resumes exactly here."""
        self.programs.close()
        self.match.close()
