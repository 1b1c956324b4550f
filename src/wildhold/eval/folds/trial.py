"""The trial and the tasks (seed 000 Table 1), read by the same `TrialTracker` the live world runs."""

from __future__ import annotations

from wildhold.eval.fold import Fold, MatchInfo, fold
from wildhold.eval.trial import progress, tracker


@fold
class Trial(Fold):
    """Stages attained independently (tick and evidence), stages passed under the native cumulative
    rule and when each was credited, the first unmet stage, and the tasks (outfit, Shadow King)."""

    writes = ("trial_native", "outfit", "hero", "trial_stages", "trial_evidence", "trial_native_ticks", "trial_first_unmet", "tasks")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.tracker = tracker(match.content, match.scenario)
        self.follow = self.tracker.feed  # it reads every event, as the live world feeds it

    def finish(self) -> None:
        for a, t in progress(self.tracker).items():
            am = self.agents.get(a)
            if am is None:
                continue
            am.trial_native = t["native"]
            am.outfit, am.hero = "outfit" in t["tasks"], "shadow_king" in t["tasks"]
            am.trial_stages = {s: r["tick"] for s, r in t["independent"].items()}
            am.trial_evidence = {s: list(r.get("evidence", [])) for s, r in t["independent"].items()}
            am.trial_native_ticks = dict(t.get("native_ticks", {}))
            am.trial_first_unmet = t["first_unmet"]
            am.tasks = {task: r["tick"] for task, r in t["tasks"].items()}
