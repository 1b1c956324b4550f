"""The contract between a match and a policy: a policy sees a view and names one action.

A view is built by a client (`agents.client.LocalClient` in process, MCP tools remotely); a policy
never holds the world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

Decision = tuple[str, dict[str, Any]] | None


@dataclass
class AgentView:
    """What a policy may know when it decides: its observation (built lazily) and the served action names.

    `rng` is seeded from (match seed, agent, tick) so a decision is a pure function of what the
    agent sees, and a resumed match decides exactly as an uninterrupted one. `memory_since` asks for
    only the memory changed since that tick (a policy that keeps its map says which: see
    `Policy.memory_since`); `_observe` is called with it.
    """

    agent: str
    tick: int
    seed: int
    _observe: Callable[[int | None], dict[str, Any]]
    _status: Callable[[], dict[str, Any]]
    _obs: dict[str, Any] | None = field(default=None, repr=False)
    _rng: random.Random | None = field(default=None, repr=False)
    memory_since: int | None = None
    actions: tuple[str, ...] = ()
    schemas: Mapping[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # action -> argument schema
    _refusal: Callable[[str, dict[str, Any]], str | None] | None = field(default=None, repr=False)
    _ready: Callable[[str], str | None] | None = field(default=None, repr=False)

    def refusal(self, action: str, args: dict[str, Any]) -> str | None:
        """The code the world would refuse this action with now (None: it would accept it); a client
        that cannot ask says None, and the submission answers instead."""
        return self._refusal(action, args) if self._refusal is not None else None

    def ready(self, action: str) -> str | None:
        """A code the world would refuse this action with now whatever its arguments (None: some may pass, or the
        client cannot ask): a policy passes over such an action before drawing its arguments."""
        return self._ready(action) if self._ready is not None else None

    def asks(self) -> tuple[Callable[[str], str | None], Callable[[str, dict[str, Any]], str | None]]:
        """`ready` and `refusal` as the client's own callables (or ones that always say None): a policy that puts many
        candidates to them calls these in its loop, a call less each."""
        return self._ready or _no_code, self._refusal or _no_code

    def observation(self) -> dict[str, Any]:
        if self._obs is None:
            self._obs = self._observe(self.memory_since)
        return self._obs

    def status(self) -> dict[str, Any]:
        """The character's own status only: cheaper than a full observation."""
        return self._obs["self"] if self._obs is not None else self._status()

    @property
    def rng(self) -> random.Random:
        if self._rng is None:
            self._rng = random.Random(((self.seed * 1_000_003) + int(self.agent[1:])) * 1_000_003 + self.tick)
        return self._rng


def _no_code(*_: Any) -> None:
    """What a client that cannot ask answers: no refusal known."""
    return None


class Policy(Protocol):
    """A policy may also define `memory_since(agent) -> int | None`: the tick of the observation
    whose map it holds for that agent, so that it is sent only the memory changed since."""

    name: str

    def decide(self, view: AgentView) -> Decision:
        """The next action as (name, arguments), or None to stay idle this tick."""
