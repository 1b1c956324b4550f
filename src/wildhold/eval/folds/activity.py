"""What characters did: executed actions by category and issuer and how they ended, rejections,
silences, and the share of it that their programs issued."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wildhold.eval.events import Act, Ended, Idle, ProgramFailed, Refused, Spawned, Started
from wildhold.eval.fold import Fold, MatchInfo, fold, on
from wildhold.world.actions.registry import REGISTRY

if TYPE_CHECKING:
    from wildhold.eval.metrics import AgentMetrics

IDLE_FLOOR_TICKS = 30  # silences shorter than this are not recorded; every rubric's threshold is above
PROGRAM_ISSUER = "program:"  # issuers of program actions: "program:<name>@<revision>"
CRAFTS = ("craft", "cook")  # the operations seed 000 counts as crafts
BUILDS = ("place", "build")  # the operations that put up a structure of one's own


@fold
class Actions(Fold):
    """Executed actions (operations started) by category and issuer, the share its programs issued,
    how their operations ended (crafts: completed craft and cook operations; builds, a measure:
    completed place and build operations), rejected actions by code; and silences: spans of IDLE_FLOOR_TICKS or more in which a character issued nothing and ran
    no operation (from its spawn or the end of its last operation to its next action, or the match's
    end), with the `agent_idle` spans a served match recorded, merged as [start, end) ticks."""

    writes = ("actions", "by_category", "by_issuer", "program_actions", "completed", "crafts", "failed", "cancelled",
              "rejected", "rejected_by_code", "idle_spans", "builds")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.category = {name: a.category for name, a in REGISTRY.items()}
        self.running: dict[str, set[str]] = {}  # agent -> operations running
        self.free_since: dict[str, int] = {}  # agent -> tick it last had nothing running (until it issues)
        self.spans: dict[str, list[list[int]]] = {}
        self.builds: dict[str, int] = {}

    @on("agent_spawned")
    def spawned(self, tick: int, ev: Spawned) -> None:
        self.running[ev.agent], self.spans[ev.agent] = set(), []
        self.builds[ev.agent] = 0
        self.free_since[ev.agent] = tick

    def _issued(self, agent: str, running: set[str], tick: int) -> None:
        since = self.free_since.pop(agent, None)
        if since is not None and not running and tick - since >= IDLE_FLOOR_TICKS:
            self.spans[agent].append([since, tick])

    @on("operation_started")
    def started(self, tick: int, ev: Started) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            running = self.running[ev.agent]
            self._issued(ev.agent, running, tick)
            running.add(ev.op)
            am.actions += 1
            cat = self.category.get(ev.action, "other")
            am.by_category[cat] = am.by_category.get(cat, 0) + 1
            am.by_issuer[ev.issuer] = am.by_issuer.get(ev.issuer, 0) + 1

    def _ended(self, tick: int, ev: Ended) -> AgentMetrics | None:
        """An operation ended: with nothing else running, the character is free from now on."""
        am = self.agents.get(ev.agent)
        if am is not None:
            running = self.running[ev.agent]
            running.discard(ev.op)
            if not running:
                self.free_since[ev.agent] = tick
        return am

    @on("operation_completed")
    def completed(self, tick: int, ev: Ended) -> None:
        am = self._ended(tick, ev)
        if am is not None:
            am.completed += 1
            if ev.action in CRAFTS:
                am.crafts += 1
            elif ev.action in BUILDS:
                self.builds[ev.agent] += 1

    @on("operation_failed")
    def failed(self, tick: int, ev: Ended) -> None:
        am = self._ended(tick, ev)
        if am is not None:
            am.failed += 1

    @on("operation_cancelled")
    def cancelled(self, tick: int, ev: Ended) -> None:
        am = self._ended(tick, ev)
        if am is not None:
            am.cancelled += 1

    @on("action_rejected")
    def rejected(self, tick: int, ev: Refused) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            running = self.running[ev.agent]
            self._issued(ev.agent, running, tick)
            if not running:
                self.free_since[ev.agent] = tick
            am.rejected += 1
            am.rejected_by_code[ev.code] = am.rejected_by_code.get(ev.code, 0) + 1

    @on("agent_idle")
    def idle(self, tick: int, ev: Idle) -> None:
        spans = self.spans.get(ev.agent)
        if spans is not None:
            spans.append([ev.since_tick, tick])

    def finish(self) -> None:
        end = self.match.final_tick
        for a, am in self.agents.items():
            am.rejected_by_code = dict(sorted(am.rejected_by_code.items(), key=lambda kv: (-kv[1], kv[0])))
            am.by_issuer = dict(sorted(am.by_issuer.items()))
            am.program_actions = sum(n for issuer, n in am.by_issuer.items() if issuer.startswith(PROGRAM_ISSUER))
            since = self.free_since.get(a)
            if since is not None and not self.running[a] and end - since >= IDLE_FLOOR_TICKS:
                self.spans[a].append([since, end])
            am.idle_spans = merge_spans(self.spans[a])
            am.measures["builds"] = self.builds[a]


def merge_spans(spans: list[list[int]]) -> list[list[int]]:
    """Union of [start, end) spans, sorted."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


@fold
class Programs(Fold):
    """Agent-written programs: revisions saved, and failures by reason (the actions they issued are
    counted with the others, by issuer)."""

    writes = ("program_revisions", "program_failures")

    @on("program_saved")
    def saved(self, tick: int, ev: Act) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.program_revisions += 1

    @on("program_failed")
    def failed(self, tick: int, ev: ProgramFailed) -> None:
        am = self.agents.get(ev.agent)
        if am is not None:
            am.program_failures[ev.reason] = am.program_failures.get(ev.reason, 0) + 1

    def finish(self) -> None:
        for am in self.agents.values():
            am.program_failures = dict(sorted(am.program_failures.items()))
