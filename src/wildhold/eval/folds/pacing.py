"""What the study's pacing and failure analyses read from the world's log: each quest from its
acceptance to its end, and each operation cancelled with what the character did next."""

from __future__ import annotations

from typing import Any

from wildhold.eval.events import Ended, QuestDone, QuestTaken, Started
from wildhold.eval.fold import Fold, MatchInfo, fold, on


@fold
class QuestSpans(Fold):
    """Each quest a character took: when it accepted it, and when (and whether) it completed it; the
    match's `quests` log and each character's count of quests taken (`quests_accepted`, never scored)."""

    name = "quest_spans"
    writes = ("quests_accepted",)
    numbered = True

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.spans: list[dict[str, Any]] = []
        self.open: dict[tuple[str, str], dict[str, Any]] = {}

    @on("quest_accepted")
    def accepted(self, tick: int, ev: QuestTaken) -> None:
        span = {"agent": ev.agent, "quest": ev.quest, "accepted_tick": tick, "completed_tick": None,
                "evidence": [self.match.seq]}
        self.spans.append(span)
        self.open[(ev.agent, ev.quest)] = span

    @on("quest_completed")
    def completed(self, tick: int, ev: QuestDone) -> None:
        span = self.open.pop((ev.agent, ev.quest), None)
        if span is not None:
            span["completed_tick"] = tick
            span["evidence"].append(self.match.seq)

    def finish(self) -> None:
        counts = dict.fromkeys(self.agents, 0)
        for span in self.spans:
            if span["agent"] in counts:
                counts[span["agent"]] += 1
        for a, am in self.agents.items():
            am.measures["quests_accepted"] = counts[a]
        self.match.logs["quests"] = self.spans


@fold
class Cancellations(Fold):
    """Each operation a character cancelled, and the tick of the next operation it started (None when it
    started none before the end): a plan abandoned is a cancellation with nothing after it for long.
    The match's `cancellations` log and each character's count (`cancellations`, never scored)."""

    writes = ("cancellations",)
    numbered = True

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.log: list[dict[str, Any]] = []
        self.waiting: dict[str, dict[str, Any]] = {}

    @on("operation_cancelled")
    def cancelled(self, tick: int, ev: Ended) -> None:
        entry = {"agent": ev.agent, "tick": tick, "action": ev.action, "next_tick": None, "evidence": [self.match.seq]}
        self.log.append(entry)
        self.waiting[ev.agent] = entry

    @on("operation_started")
    def started(self, tick: int, ev: Started) -> None:
        entry = self.waiting.pop(ev.agent, None)
        if entry is not None:
            entry["next_tick"] = tick
            entry["evidence"].append(self.match.seq)

    def finish(self) -> None:
        counts = dict.fromkeys(self.agents, 0)
        for entry in self.log:
            if entry["agent"] in counts:
                counts[entry["agent"]] += 1
        for a, am in self.agents.items():
            am.measures["cancellations"] = counts[a]
        self.match.logs["cancellations"] = self.log
