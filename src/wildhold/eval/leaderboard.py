"""A leaderboard across archived matches: skill ratings (openskill's Plackett-Luce model) from
each match's final ranks, where a shared rank is a draw, and the mean Fitness Index per agent
configuration over seeds with its 95% confidence interval.

Matches are rated in a fixed order (scenario, seed, chain head), so the same archives give the same
board whatever order they are named in. An agent configuration is the model string an agent was
driven by, else its scripted policy, else its name. When a configuration fields several agents in
one match, each plays as its own entrant from the configuration's rating, and the configuration
takes the mean of their updated mu and sigma.

Spend (tokens and dollars) per configuration is summed over the matches whose archives recorded it (zeros for a
configuration's agents that had no model session there); a configuration none of whose matches recorded any is
"not recorded" (null), never zero.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from openskill.models import PlackettLuce

from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report
from wildhold.eval.rubric import Rubric, get_rubric
from wildhold.eval.spend import add_spend, read_spend, spend_totals
from wildhold.service.verify import admit
from wildhold.world.wealth import rank_standard

# Two-sided 95% Student t quantiles by degrees of freedom; 1.96 beyond the table.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t95(df: int) -> float:
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def mean_ci(values: list[float]) -> dict[str, Any]:
    """Mean, sample standard deviation and the 95% t interval (none for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"n": n, "mean": round(mean, 2), "sd": None, "ci95": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": round(mean, 2), "sd": round(sd, 2), "ci95": [round(mean - half, 2), round(mean + half, 2)]}


def _config_spend(cards: list[dict[str, Any]], totals: dict[str, dict[str, Any]], config: str) -> dict[str, Any]:
    """What one configuration's agents spent in one match, summed."""
    out: dict[str, Any] | None = None
    for card in cards:
        if card["config"] == config:
            out = add_spend(out, totals[card["agent"]])
    assert out is not None
    return out


def leaderboard(archives: Iterable[Path | str], rubric: str | Rubric | None = None, *, trust: bool = False,
                cache: Path | None = None) -> dict[str, Any]:
    """Rate every configuration across the archives under one rubric (its tie rule decides draws); each archive is
    verified first (see wildhold.service.verify), unless `trust` takes them as they are."""
    rb = rubric if isinstance(rubric, Rubric) else get_rubric(rubric)
    reports = []
    for path in archives:
        verdict = admit(path, trust=trust, cache=cache)
        record = load_match(path)
        reports.append({**build_report(record, compute_metrics(record), rb, read_spend(path)), "verification": verdict.stamp()})
    reports.sort(key=lambda r: (r["match"]["scenario"], r["match"]["seed"], r["match"]["chain_head"] or ""))
    model = PlackettLuce()
    ratings: dict[str, tuple[float, float]] = {}
    fitness: dict[str, list[float]] = {}
    seen: dict[str, dict[str, int]] = {}
    spent: dict[str, dict[str, Any] | None] = {}
    matches = []
    for report in reports:
        cards = report["agents"]
        totals = spend_totals(report)
        for card in cards:
            ratings.setdefault(card["config"], (model.mu, model.sigma))
        teams = [[model.rating(mu=ratings[c["config"]][0], sigma=ratings[c["config"]][1], name=c["agent"])] for c in cards]
        updated = model.rate(teams, ranks=[c["rank"] for c in cards]) if len(cards) > 1 else teams
        grouped: dict[str, list[tuple[float, float, float]]] = {}
        for card, team in zip(cards, updated):
            grouped.setdefault(card["config"], []).append((team[0].mu, team[0].sigma, card["fitness_index"]))
        for config, entries in grouped.items():
            ratings[config] = (sum(e[0] for e in entries) / len(entries), sum(e[1] for e in entries) / len(entries))
            fitness.setdefault(config, []).append(sum(e[2] for e in entries) / len(entries))
            s = seen.setdefault(config, {"matches": 0, "agents": 0, "firsts": 0})
            s["matches"] += 1
            s["agents"] += len(entries)
        for card in cards:
            if card["rank"] == 1:
                seen[card["config"]]["firsts"] += 1
            spent.setdefault(card["config"], None)
        if totals is not None:
            for config in grouped:
                spent[config] = add_spend(spent[config], {"matches": 1, **_config_spend(cards, totals, config)})
        m = report["match"]
        matches.append({"scenario": m["scenario"], "seed": m["seed"], "chain_head": m["chain_head"],
                        "verification": report["verification"],
                        "placements": [{"agent": c["agent"], "name": c["name"], "config": c["config"], "rank": c["rank"],
                                        "fitness_index": c["fitness_index"],
                                        "spend": None if totals is None else totals[c["agent"]]} for c in cards]})
    ordinal = {c: mu - 3 * sigma for c, (mu, sigma) in ratings.items()}
    ranks = rank_standard({c: round(v, 9) for c, v in ordinal.items()})
    rows = [{
        "config": c,
        "rank": ranks[c],
        "rating": {"mu": round(ratings[c][0], 4), "sigma": round(ratings[c][1], 4), "ordinal": round(ordinal[c], 4)},
        "matches": seen[c]["matches"],
        "agents": seen[c]["agents"],
        "firsts": seen[c]["firsts"],
        "fitness": mean_ci(fitness[c]),
        "spend": spent[c],
    } for c in ratings]
    rows.sort(key=lambda r: (r["rank"], r["config"]))
    return {"rubric_version": rb.version, "model": "openskill PlackettLuce (mu 25, sigma 25/3); ordinal = mu - 3 sigma",
            "verification": "trusted" if trust else "verified", "matches": matches, "rows": rows}
