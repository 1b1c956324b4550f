"""Microseconds per observation spent in each part's `observe` in the honest loop of `wildhold bench engine`
(100 agents, 100 ticks, seed 7), and a digest of every observation's JSON, to compare two trees side by side.

    PYTHONPATH=src python scripts/time_observe_parts.py [agents] [ticks] [--cpu]

With --cpu each part is timed in the thread's CPU time (less the clock's own cost, measured beside it): slower to
read, but a process waiting for a core on a busy machine does not count the wait.
"""

from __future__ import annotations

import hashlib
import sys
import time

import orjson

from wildhold.agents.client import LocalClient
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.content import default_content
from wildhold.world.parts import PARTS
from wildhold.world.world import World

CLOCK = "(clock)"  # the cost of reading the clock twice, taken from each part's figure


def timed_parts(spent: dict[str, float], clock) -> None:
    """Wrap each part's `observe` (on the instance) so its time adds up in `spent`, beside an empty call's."""
    for part in PARTS:
        inner = part.observe

        def observe(w, c, obs, inner=inner, name=part.name):
            t0 = clock()
            inner(w, c, obs)
            t1 = clock()
            t2 = clock()
            spent[name] += t1 - t0
            spent[CLOCK] += t2 - t1

        part.observe = observe  # type: ignore[method-assign]


def main(n_agents: int = 100, ticks: int = 100, cpu: bool = False, seed: int = 7) -> None:
    content = default_content()
    spent = dict.fromkeys([p.name for p in PARTS] + [CLOCK], 0.0)
    timed_parts(spent, time.thread_time if cpu else time.perf_counter)
    world = World(content, "default", seed)
    agents = [world.join(f"agent{i}") for i in range(n_agents)]
    world.events.drain()
    client, policy = LocalClient(world), LegalRandomAgent(content)
    digest, observations, observing = hashlib.sha256(), 0, 0.0
    for _ in range(ticks):
        for a in agents:
            t0 = time.perf_counter()
            view = client.view(a, policy)
            obs = view.observation()
            observing += time.perf_counter() - t0
            digest.update(orjson.dumps(obs))
            observations += 1
            if client.idle(a):
                world.submit(a, *policy.decide(view))
        world.step()
        world.events.drain()
    clock = spent.pop(CLOCK) / len(PARTS)
    total = 0.0
    for name, s in spent.items():
        total += s - clock
        print(f"{name:14s} {(s - clock) / observations * 1e6:7.2f} us")
    print(f"{'parts':14s} {total / observations * 1e6:7.2f} us")
    if not cpu:
        print(f"{'observation':14s} {observing / observations * 1e6:7.2f} us")
    print("digest", digest.hexdigest()[:16], "events", world.events.seq)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:] if a != "--cpu"), cpu="--cpu" in sys.argv)
