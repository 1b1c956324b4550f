"""The demo's summary per character: each column a metric its fold computes (`wildhold.eval.folds`),
read from a match's events alone."""

from __future__ import annotations

from dataclasses import dataclass

from wildhold.content import Content
from wildhold.eval.fold import writers
from wildhold.eval.metrics import MatchMetrics, MatchRecord, compute_metrics

# each column, and the metric it shows
METRICS = {"health": "health_final", "downs": "knockdowns", "actions": "actions", "rejected": "rejected", "crafts": "crafts",
           "gathered": "gathered", "moved": "moves", "built": "builds", "trades": "trades", "raids": "attacks",
           "quests": "quests_completed", "defaults": "contracts_defaulted"}


@dataclass(frozen=True)
class AgentSummary:
    agent: str
    name: str
    cells: dict[str, int]  # column -> value, in METRICS order


def summaries_of(metrics: MatchMetrics) -> dict[str, AgentSummary]:
    """One summary per character, in joining order, from metrics that hold the columns' (`METRICS`)."""
    return {a: AgentSummary(a, am.name, {c: am.value(m) for c, m in METRICS.items()}) for a, am in metrics.agents.items()}


def summarize(record: MatchRecord, content: Content | None = None) -> dict[str, AgentSummary]:
    """One summary per character, in joining order; only the folds that write the columns run."""
    return summaries_of(compute_metrics(record, content, writers(*METRICS.values())))
