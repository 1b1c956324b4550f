"""What a policy receives is its own: writing into every part of an observation (or a status) changes no other
character's observation, now or on a later tick, no later observation of the same character, and not the world.

Two twin matches play the same policies from the same seed; in one, every observation a probe receives is
scribbled over after it is compared with its twin's. Any sharing shows as a difference between the twins.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from ownership_support import scribble

from wildhold.agents.base import AgentView
from wildhold.agents.runner import ScriptedRun
from wildhold.world.serialize import state_hash

pytestmark = pytest.mark.slow(seconds=6)

class Probe:
    """Asks for each character's memory as the changes since its last look (the path a map-keeping policy takes)."""

    name = "probe"

    def __init__(self) -> None:
        self.last: dict[str, int] = {}

    def memory_since(self, agent: str) -> int | None:
        return self.last.get(agent)

    def decide(self, view: AgentView) -> None:
        return None

    def look(self, run: ScriptedRun, agent: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The agent's status (asked before any observation) and its observation, as a policy receives them."""
        status = run.client.view(agent, self).status()
        obs = run.client.view(agent, self).observation()
        self.last[agent] = run.world.tick
        return status, obs


def twins(scenario: str, seed: int, agents: int | None, policies: list[str] | None) -> tuple[ScriptedRun, ScriptedRun]:
    return tuple(ScriptedRun.start(scenario, seed, None, agents=agents, policies=policies) for _ in range(2))  # type: ignore[return-value]


@pytest.mark.parametrize(("scenario", "seed", "agents", "policies", "ticks"), [
    ("famine", 2, None, None, 120),  # the scenario's own policies: trades, messages, raids
    ("default", 7, 16, ["legal_random"], 60),  # a crowd at spawn: characters sharing view squares and tiles
])
def test_scribbling_over_an_observation_changes_nothing_else(scenario, seed, agents, policies, ticks):
    clean, dirty = twins(scenario, seed, agents, policies)
    probes = Probe(), Probe()
    try:
        for _ in range(ticks):
            clean.act()
            dirty.act()
            for agent in clean.policies:
                seen = probes[0].look(clean, agent)
                got = probes[1].look(dirty, agent)
                assert orjson.dumps(got) == orjson.dumps(seen), f"{agent} at tick {clean.world.tick}"
                for received in got:
                    scribble(received)
            clean.step()
            dirty.step()
        assert state_hash(dirty.world) == state_hash(clean.world)
        assert dirty.world.events.head == clean.world.events.head
    finally:
        clean.match.close()
        dirty.match.close()


def test_the_scribbler_reaches_every_part_of_an_observation():
    """The check above can fail: scribbling a plain observation leaves no original value in it."""
    obs = {"self": {"inventory": {"wood": 2}, "bed": [1, 2]}, "view": {"tiles": [{"node": {"kind": "tree"}}]}}
    scribble(obs)
    text = orjson.dumps(obs)
    assert b"tree" not in text and b"1" not in text and b"2" not in text
