"""Who may call a served match: its settings, the registered agents and their tokens, the rate limits.

`Access` is the one owner of the agent records: a bearer token becomes an `Identity`, a request
spends from its token's bucket, and a registration becomes a record (kept in the store's meta)
whose character joins the world now or when the lobby closes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal

from wildhold.service.errors import HostError

if TYPE_CHECKING:
    from wildhold.store.sqlite import MatchStore

CLOCKS = ("realtime", "lockstep", "fast")
TOOL_PROFILES = ("full", "compact")  # MCP: a tool per action, query and program operation, or the same through a few
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]{0,39}$")
WAIT_MAX_S = 30.0  # the longest wait_operation holds a call, in seconds: its schema's bound


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
    wait_max_s: float = WAIT_MAX_S  # the longest a wait_operation call is held (lower it, never raise it)
    mcp_sessions_per_token: int = 8  # MCP sessions one token may hold open
    spectator_token: str | None = None  # watches the whole match on the live page; acts for no one
    tools: str = "full"  # the MCP tool profile served (TOOL_PROFILES)

    def check(self) -> None:
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, not {self.clock!r}")
        if self.tools not in TOOL_PROFILES:
            raise ValueError(f"the tool profile must be one of {', '.join(TOOL_PROFILES)}, not {self.tools!r}")
        tokens = {"signup": self.signup_token, "admin": self.admin_token}
        if self.spectator_token is not None:
            tokens["spectator"] = self.spectator_token
        for label, token in tokens.items():
            if len(token) < 8:
                raise ValueError(f"the {label} token must be at least 8 characters")
        if len({token_hash(t) for t in tokens.values()}) < len(tokens):
            raise ValueError(f"the {' and '.join(tokens)} tokens must differ from each other")
        if not self.late_join and not self.lobby:
            raise ValueError("late join off needs the lobby on: without a lobby no agent could ever join")
        if not 0 < self.wait_max_s <= WAIT_MAX_S:
            raise ValueError(f"the wait bound must be positive and at most {WAIT_MAX_S:g} s (wait_operation's schema states it)")
        if self.tick_seconds <= 0 or self.turn_deadline_s <= 0:
            raise ValueError("tick seconds, turn deadline and wait bound must be positive")
        if (self.rate_per_s < 0 or self.rate_burst < 1 or self.max_agents < 1 or self.idle_after_ticks < 1
                or self.mcp_sessions_per_token < 1):
            raise ValueError("rate, burst, max agents, idle threshold and MCP sessions per token must be positive")

    def public(self) -> dict[str, Any]:
        """The settings a report must state (never the tokens)."""
        return {
            "clock": self.clock, "tick_seconds": self.tick_seconds, "turn_deadline_s": self.turn_deadline_s,
            "lobby": self.lobby, "late_join": self.late_join, "max_agents": self.max_agents,
            "rate_per_s": self.rate_per_s, "rate_burst": self.rate_burst, "idle_after_ticks": self.idle_after_ticks,
            "tools": self.tools,
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

    role: Literal["agent", "signup", "admin", "spectator"]
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


Join = Callable[[AgentRecord], str]  # puts a registered agent's character into the world; its id


class Access:
    """The registered agents (in registration order), the signup and admin tokens, and each token's budget."""

    def __init__(self, config: HostConfig, store: MatchStore | None, counters: Counter[str],
                 now: Callable[[], float] = time.monotonic):
        self.config, self.store, self.counters = config, store, counters
        self.limiter = RateLimiter(config.rate_per_s, config.rate_burst, now)
        self._signup_key, self._admin_key = token_hash(config.signup_token), token_hash(config.admin_token)
        self._spectator_key = token_hash(config.spectator_token) if config.spectator_token else None
        self.records: dict[str, AgentRecord] = {}  # token hash -> record

    def load(self, meta: dict[str, Any], joined: dict[str, str]) -> None:
        """The records the store kept; `joined` (name -> character) mends a crash between a join and its record."""
        for item in meta.get("server_agents", []):
            rec = AgentRecord(item["name"], item["token_hash"], item.get("agent"), item.get("extra", {}))
            rec.agent = rec.agent or joined.get(rec.name)
            self.records[rec.token_hash] = rec

    def save(self) -> None:
        if self.store is not None:
            self.store.set_meta({"server_agents": [r.dump() for r in self.records.values()]})

    def joined(self) -> list[AgentRecord]:
        """The records whose character is in the world."""
        return [r for r in self.records.values() if r.agent is not None]

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
        if self._spectator_key is not None and hmac.compare_digest(key, self._spectator_key):
            return Identity("spectator", key)
        raise HostError("unauthorised", "This server never issued that token.")

    def throttle(self, who: Identity) -> None:
        """Spend one request from the token's budget, or `rate_limited` with the wait."""
        wait = self._spend(who.key)
        if wait is not None:
            c = self.config
            raise HostError("rate_limited", f"At most {c.rate_per_s:g} requests a second per token (bursts of "
                            f"{c.rate_burst}); retry in {wait:.2f} s.", retry_after=wait)

    def spend_for(self, agent: str) -> float | None:
        """Spend one request from the budget of the token that drives `agent` (a program acting for it shares
        it); None when allowed, else the seconds until one is."""
        key = next((token for token, rec in self.records.items() if rec.agent == agent), None)
        return self._spend(key) if key is not None else None

    def _spend(self, key: str) -> float | None:
        wait = self.limiter.take(key)
        if wait is not None:
            self.counters["rate_limited"] += 1
        return wait

    def agent_of(self, who: Identity) -> str:
        """The character an agent token drives; refuses other tokens and agents still in the lobby."""
        if who.role != "agent" or who.record is None:
            role = {"signup": "the signup token registers agents", "admin": "the admin token runs the match",
                    "spectator": "the spectator token only watches"}.get(who.role, "")
            raise HostError("forbidden", f"This needs an agent token ({role}); register with POST /api/agents.")
        if who.record.agent is None:
            raise HostError("not_started", "You are registered; the match is in its lobby and your character "
                            "enters the world when the operator starts it.")
        return who.record.agent

    # ---- registration and the lobby -----------------------------------------------------------

    def register(self, name: str, extra: dict[str, str] | None, state: str, join: Join) -> tuple[str, AgentRecord]:
        """A new agent and its bearer token; it joins the world now (`join`), or at the start when in the lobby."""
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise HostError("bad_request", "A name is 1 to 40 letters, digits, spaces, '_', '.' or '-', starting with a letter or digit.")
        if state == "over":
            raise HostError("lobby_closed", "The match has ended; registration is closed.")
        if len(self.records) >= self.config.max_agents:
            raise HostError("lobby_closed", f"The match is full ({self.config.max_agents} agents).")
        if any(r.name == name for r in self.records.values()):
            raise HostError("name_taken", f"An agent named {name!r} is already registered; choose another name.")
        if state == "running" and not self.config.late_join:
            raise HostError("late_join_refused", "The match has started and this server does not let agents join late.")
        token = secrets.token_urlsafe(24)
        rec = AgentRecord(name, token_hash(token), None, {k: v for k, v in (extra or {}).items() if v})
        if state == "running":
            rec.agent = join(rec)
        self.records[rec.token_hash] = rec
        self.save()
        self.counters["registrations"] += 1
        return token, rec

    def seat(self, name: str, agent: str, extra: dict[str, str] | None) -> tuple[str, AgentRecord]:
        """A bearer token for a character already in the world (`agent`, named `name`): the operator seats an agent on
        it, as a fork does when another agent takes a character over; no one else may drive it (`name_taken`: the
        record bears the character's name)."""
        if any(r.agent == agent or r.name == name for r in self.records.values()):
            raise HostError("name_taken", f"The character {name!r} already has an agent.")
        token = secrets.token_urlsafe(24)
        rec = AgentRecord(name, token_hash(token), agent, {k: v for k, v in (extra or {}).items() if v})
        self.records[rec.token_hash] = rec
        self.save()
        return token, rec

    def close_lobby(self, join: Join) -> list[str]:
        """Every registered agent enters the world, in registration order (a seated one is in it already); their
        characters."""
        for rec in self.records.values():
            if rec.agent is None:
                rec.agent = join(rec)
        self.save()
        return [r.agent for r in self.records.values()]
