"""Playing a world with the legal random policy as the honest load does: varied states to put checks to."""

from __future__ import annotations

from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.world.world import World


def play_legal_random(w: World, agents: list[str], ticks: int) -> None:
    """Each tick every idle character decides with `legal_random` and submits, then the world steps."""
    client, policy = LocalClient(w), LegalRandomAgent(w.content)
    for _ in range(ticks):
        for a in agents:
            if client.idle(a):
                client.decide(a, policy)
        w.step()
