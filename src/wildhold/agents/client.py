"""The agent side of a match this process holds: a scripted policy reaches the world only through this client.

It gives what a remote agent gets over MCP or HTTP (its observation or status, the served action
names, submission) and nothing more, so a policy that plays well here plays the same remotely.
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from wildhold.agents.base import AgentView, Policy
from wildhold.server.surface import action_tools
from wildhold.world.observe import observe, status

if TYPE_CHECKING:
    from wildhold.world.world import World


@functools.cache
def _served() -> tuple[tuple[str, ...], Mapping[str, Any]]:
    """The served action names and their argument schemas: the same for every client, built once a process."""
    served = action_tools()
    return tuple(sorted(served)), MappingProxyType({name: spec.json_schema() for name, spec in served.items()})


class LocalClient:
    """Observes and acts for the characters of a world this process holds; `submit` is the match's
    (which records each input) or, for a bare world, the world's own."""

    def __init__(self, world: World, submit: Callable[[str, str, dict[str, Any]], Any] | None = None):
        self.world = world
        self._submit = submit or world.submit
        self.actions, self.schemas = _served()
        self._asks: dict[str, tuple[Any, ...]] = {}  # agent -> its character and a view's calls for it (see `view`)

    def idle(self, agent: str) -> bool:
        """Whether the agent's character has no operation running (so it may decide)."""
        return self.world.chars[agent].op is None

    def view(self, agent: str, policy: Policy) -> AgentView:
        """The view `policy` decides on for `agent`: its memory as changes when the policy keeps a map. Its calls
        into the world are made once per character (a view is made for every agent every tick); the observation's
        is `observe` with the agent and memory bound, so the view's `memory_since` reaches it with no call between."""
        w = self.world
        c = w.chars[agent]
        asks = self._asks.get(agent)
        if asks is None or asks[0] is not c:
            asks = self._asks[agent] = (c, functools.partial(observe, w, agent, True), functools.partial(status, w, c),
                                        functools.partial(w.refusal_code, agent), functools.partial(w.ready_code, agent))
        since = getattr(policy, "memory_since", None)
        return AgentView(agent, w.tick, w.seed, asks[1], asks[2], None, None, since(agent) if since is not None else None,
                         self.actions, self.schemas, asks[3], asks[4])

    def decide(self, agent: str, policy: Policy) -> bool:
        """Let an idle agent's policy decide and submit its action; whether it acted."""
        decision = policy.decide(self.view(agent, policy))
        if decision is None:
            return False
        self.submit(agent, *decision)
        return True

    def submit(self, agent: str, action: str, args: dict[str, Any]) -> Any:
        """The submission's answer: accepted with its operation, or refused with a code."""
        return self._submit(agent, action, args)
