"""The graded player: the oracle that, at each decision, plays a uniformly random legal action instead with
probability eps. eps 0 is the oracle, 1 the legal random player; in between it measures how much room a task
leaves for mistakes, which is what its difficulty label should predict (the calibration table in the docs).

Named `oracle-eps:E` wherever a player is named (`tasks run --agent oracle-eps:0.5`). Its draws come from one
stream per attempt, seeded from the match seed, the character, the task and eps, so an attempt plays the same
each time and no two tasks share their random turns.
"""

from __future__ import annotations

import random
import re

from wildhold.agents.base import AgentView, Decision, Policy
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.content import Content

PREFIX = "oracle-eps:"
NAME = re.compile(r"oracle-eps:(0(\.\d{1,3})?|1(\.0{1,3})?)")


def parse_eps(name: str) -> float | None:
    """eps of a graded player's name (`oracle-eps:0.25`), None for any other name; a malformed one is refused."""
    if not name.startswith(PREFIX):
        return None
    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r}: a graded player is oracle-eps:E with E from 0 to 1 (at most 3 decimals), "
                         "for example oracle-eps:0.5")
    return float(name[len(PREFIX):])


class GradedOracle:
    """`oracle` deciding, except that with probability `eps` the legal random player decides instead. `task` keys
    both random streams with the match seed and the character: two tasks played at one seed draw independently
    (with the seed alone, every task of a repeat would make its random moves at the same turns)."""

    def __init__(self, oracle: Policy, eps: float, content: Content, task: str):
        self.oracle, self.eps = oracle, eps
        self.name = f"{PREFIX}{eps:g}"
        self.random = LegalRandomAgent(content)
        self.random.name = f"legal_random:{task}:{self.name}"  # its stream's key (see LegalRandomAgent.stream)
        self.key = f"{task}:{self.name}"
        self.streams: dict[str, random.Random] = {}

    def memory_since(self, agent: str) -> int | None:
        """The oracle's: it is the one that reads the memory (the random player reads none of it)."""
        since = getattr(self.oracle, "memory_since", None)
        return since(agent) if since is not None else None

    def decide(self, view: AgentView) -> Decision:
        rng = self.streams.get(view.agent)
        if rng is None:
            rng = self.streams[view.agent] = random.Random(f"{view.seed}:{view.agent}:{self.key}")
        if rng.random() < self.eps:
            return self.random.decide(view)
        return self.oracle.decide(view)
