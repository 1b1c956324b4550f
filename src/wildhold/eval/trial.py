"""The trial assessed offline: an archive's events fed to the same `TrialTracker` the live world runs."""

from __future__ import annotations

from typing import Any, Iterable

from wildhold.content import Content, default_content
from wildhold.world.parts.trial import TrialTracker


def tracker(content: Content, scenario: str) -> TrialTracker:
    """A fresh tracker on the map of that scenario (the homes are rebuilt on its size)."""
    spec = content.scenario(scenario)
    return TrialTracker(content, spec.width, spec.height)


def progress(fed: TrialTracker) -> dict[str, dict[str, Any]]:
    """Each character's progress, in joining order, once the tracker has read the events."""
    return {agent: fed.progress(agent) for agent in fed.chars}


def assess(events: Iterable[dict[str, Any]], content: Content | None = None, scenario: str = "season") -> dict[str, dict[str, Any]]:
    """Per character, in joining order: `independent` (stage -> {tick, evidence}), `native` (the
    number of stages passed under the cumulative rule), `first_unmet` (a stage key, or None when all
    eight are attained), `native_ticks` (stage -> tick it was credited) and `tasks`.

    `events` are {seq, tick, kind, data} dicts as an archive stores them; `scenario` names the map
    whose size the homes are rebuilt on (the archive manifest's scenario). A stage that time alone
    completes is recorded at the first event at or after that tick (a finished match ends with
    `match_ended`), exactly as the live world records it.
    """
    t = tracker(content or default_content(), scenario)
    for e in events:
        t.feed(e["seq"], e["tick"], e["kind"], e["data"])
    return progress(t)
