"""How characters fared: health and needs over time, knockdowns, running out of energy or food."""

from __future__ import annotations

from wildhold.eval.events import Knockdown, Needs, Spawned
from wildhold.eval.fold import Fold, MatchInfo, fold, on


@fold
class Survival(Fold):
    """The step function of (health, needs met) from spawn on, which reports integrate over credited
    time; knockdowns and when; whether energy or satiety ever reached 0."""

    writes = ("knockdowns", "knockdown_ticks", "health_final", "energy_depleted", "starved", "needs_steps")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.max_health = match.content.needs.max_health
        self.last: dict[str, tuple[int, bool]] = {}

    @on("agent_spawned")
    def spawned(self, tick: int, ev: Spawned) -> None:
        self.last[ev.agent] = (self.max_health, True)
        self.agents[ev.agent].needs_steps.append((tick, self.max_health, True))

    @on("needs")
    def needs(self, tick: int, ev: Needs) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            ok = ev.energy > 0 and ev.satiety > 0
            state = (ev.health, ok)
            if self.last[ev.agent] != state:
                self.last[ev.agent] = state
                am.needs_steps.append((tick, ev.health, ok))
            if ev.energy <= 0:
                am.energy_depleted = True
            if ev.satiety <= 0:
                am.starved = True

    @on("knockdown")
    def knockdown(self, tick: int, ev: Knockdown) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.knockdowns += 1
            am.knockdown_ticks.append(tick)

    def finish(self) -> None:
        for am in self.agents.values():
            am.health_final = am.needs_steps[-1][1]
