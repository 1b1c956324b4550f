"""Plays scripted policies in a match: each idle agent decides from its observation, every tick."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from wildhold.agents.base import Policy
from wildhold.agents.client import LocalClient
from wildhold.agents.scripted import make_policy
from wildhold.content import Content, default_content
from wildhold.service.match import Match
from wildhold.world.world import World


class ScriptedRun:
    """A match whose characters are driven by scripted policies, named in each join."""

    def __init__(self, match: Match, policies: dict[str, Policy]):
        self.match = match
        self.policies = policies
        self.client = LocalClient(match.world, match.submit)
        last = match.last_input
        # After a crash in the middle of a tick, agents up to the last one whose action was
        # recorded at this tick have decided already; they must not decide twice.
        self._decided = (last.tick, last.agent) if last and last.kind == "action" and last.issuer == "direct" else None

    @classmethod
    def start(cls, scenario: str = "default", seed: int = 0, db: Path | str | None = None,
              agents: int | None = None, policies: list[str] | None = None,
              content: Content | None = None, replace: bool = False) -> ScriptedRun:
        """A new match of scripted agents; `replace` starts `db` afresh whatever it held (see `Match.create`)."""
        content = content or default_content()
        match = Match.create(scenario, seed, db, content, replace=replace)
        names = policies or match.world.scenario.policies
        count = agents or match.world.scenario.agents
        chosen = {}
        for i in range(count):
            policy = names[i % len(names)]
            agent = match.join(f"{policy}-{i + 1}", policy=policy)
            chosen[agent] = make_policy(policy, content)
        match.flush(snapshot=True)
        return cls(match, chosen)

    @classmethod
    def resume(cls, db: Path | str, content: Content | None = None) -> ScriptedRun:
        content = content or default_content()
        match = Match.resume(db, content)
        policies = {agent: make_policy(args["policy"], content) for agent, args in match.joins().items() if "policy" in args}
        return cls(match, policies)

    @property
    def world(self) -> World:
        return self.match.world

    def act(self) -> None:
        """Every idle agent decides once, in joining order."""
        tick, client = self.world.tick, self.client
        done_through = self._decided[1] if self._decided and self._decided[0] == tick else None
        self._decided = None
        for agent, policy in self.policies.items():
            if done_through is not None:
                if agent == done_through:
                    done_through = None
                continue
            if client.idle(agent):
                client.decide(agent, policy)

    def step(self) -> None:
        """The world advances one tick."""
        self.match.step()

    def run(self, on_tick: Callable[[World], None] | None = None, until: int | None = None) -> None:
        """Play until the scenario's end (or `until`); at the end, record it."""
        w = self.world
        stop = w.end_tick if until is None else min(until, w.end_tick)
        while w.tick < stop and not self.match.ended:
            self.act()
            self.step()
            if on_tick:
                on_tick(w)
        if w.finished:
            self.match.end("season over")
