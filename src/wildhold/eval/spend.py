"""Spend as the archive records it: each model session's usage and price, and progress against it.

`wildhold run` records every model session of an arm as a `spend` input of the match (tokens, cached
tokens, dollars at the pinned price, the price table's identity); the world never sees these records,
and the archive's header binds their digest. Here they are read back and joined, by tick, to what the
match's metrics say each character had reached: quests, trial stages and wealth against cumulative
dollars and tokens. An archive without any such record has no spend to show (`None`), never zeros.
"""

from __future__ import annotations

from bisect import bisect_right
from pathlib import Path
from typing import Any

from wildhold.eval.metrics import AgentMetrics, MatchMetrics
from wildhold.service.match import SPEND
from wildhold.store.archive import Archive

USAGE_FIELDS = ("llm_calls", "input_tokens", "cached_input_tokens", "output_tokens")
TOTAL_FIELDS = ("sessions", *USAGE_FIELDS, "tokens", "dollars")  # one character's (or configuration's) spend


def read_spend(path: Path | str) -> list[dict[str, Any]] | None:
    """Every session record in the archive, in order ({agent, tick, session, usage, cost_usd, price...}); None
    when the archive carries none (no model arm, or written before spend was recorded)."""
    with Archive(path) as archive:
        sessions = [{"agent": inp.agent, "tick": inp.tick, **inp.args} for inp in archive.inputs() if inp.kind == SPEND]
    return sessions or None


def session_ticks(sessions: list[dict[str, Any]] | None) -> list[int]:
    """The ticks the session records were made at: the probes `compute_metrics` must keep wealth at for them."""
    return sorted({record["tick"] for record in sessions or []})


def _count_by(ticks: list[int], tick: int) -> int:
    return bisect_right(sorted(ticks), tick)


def _wealth_at(am: AgentMetrics, tick: int) -> int:
    """The character's wealth once every event of `tick` is in: what the run's own read of the world said."""
    if tick not in am.wealth_at:
        raise ValueError(f"the metrics hold no wealth at tick {tick}: compute them with "
                         "probes=session_ticks(sessions) to draw the spend curve")
    return am.wealth_at[tick]


def _point(am: AgentMetrics, record: dict[str, Any], spent: dict[str, Any]) -> dict[str, Any]:
    tick = record["tick"]
    return {"session": record["session"], "tick": tick, **spent,
            "quests": _count_by(am.quest_ticks, tick),
            "trial_stages": _count_by(list(am.trial_native_ticks.values()), tick),
            "trial_stages_independent": _count_by(list(am.trial_stages.values()), tick),
            "wealth_cents": _wealth_at(am, tick)}


def spend_curves(sessions: list[dict[str, Any]] | None, metrics: MatchMetrics) -> tuple[Any, Any]:
    """(tokens, dollars) per character that spent: its totals and one point per session, each point the
    cumulative spend after that session with the quests, trial stages and wealth reached by the end of its tick
    (`metrics` computed with `probes=session_ticks(sessions)`). (None, None) when nothing was recorded."""
    if not sessions:
        return None, None
    tokens: dict[str, dict[str, Any]] = {}
    dollars: dict[str, dict[str, Any]] = {}
    for record in sessions:
        agent = record["agent"]
        am = metrics.agents[agent]
        t = tokens.setdefault(agent, {"sessions": 0, "tokens": 0, **dict.fromkeys(USAGE_FIELDS, 0), "points": []})
        d = dollars.setdefault(agent, {"sessions": 0, "dollars": 0.0, "price": record["price"],
                                       "price_table": record["price_table"], "points": []})
        t["sessions"] += 1
        d["sessions"] += 1
        for key in USAGE_FIELDS:
            t[key] += record[key]
        t["tokens"] = t["input_tokens"] + t["output_tokens"]
        d["dollars"] += record["cost_usd"]
        t["points"].append(_point(am, record, {"tokens": t["tokens"], "cached_input_tokens": t["cached_input_tokens"]}))
        d["points"].append(_point(am, record, {"dollars": d["dollars"]}))
    return tokens, dollars


def spend_totals(report: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """Each character's spend in a report ({sessions, model calls, tokens by kind, tokens, dollars}), zeros for a
    character that had no model session; None when the archive recorded no spend at all."""
    tokens, dollars = report["curves"]["tokens"], report["curves"]["dollars"]
    if tokens is None or dollars is None:
        return None
    out = {}
    for card in report["agents"]:
        t, d = tokens.get(card["agent"]), dollars.get(card["agent"])
        out[card["agent"]] = {"sessions": t["sessions"] if t else 0, **{k: t[k] if t else 0 for k in USAGE_FIELDS},
                              "tokens": t["tokens"] if t else 0, "dollars": round(d["dollars"], 6) if d else 0.0}
    return out


def add_spend(total: dict[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """Two spend totals summed field by field (the first may be None: nothing summed yet)."""
    if total is None:
        return dict(more)
    return {k: round(total[k] + v, 6) if k == "dollars" else total[k] + v for k, v in more.items()}


def session_rows(report: dict[str, Any], sessions: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """One row per recorded model session: who (character, name, configuration), when, its usage and price, and
    the character's cumulative tokens and dollars after it; no rows when nothing was recorded."""
    cards = {c["agent"]: c for c in report["agents"]}
    cumulative: dict[str, tuple[int, float]] = {}
    rows = []
    for record in sessions or []:
        agent = record["agent"]
        tokens, dollars = cumulative.get(agent, (0, 0.0))
        tokens += record["input_tokens"] + record["output_tokens"]
        dollars += record["cost_usd"]
        cumulative[agent] = (tokens, dollars)
        card = cards.get(agent, {})
        rows.append({"agent": agent, "name": card.get("name"), "config": card.get("config"), "tick": record["tick"],
                     "session": record["session"], "model": record.get("model"),
                     **{k: record[k] for k in USAGE_FIELDS}, "cost_usd": record["cost_usd"],
                     "cumulative_tokens": tokens, "cumulative_dollars": round(dollars, 6),
                     "price": record["price"], "price_table": record["price_table"]})
    return rows
