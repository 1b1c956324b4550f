"""A leaderboard across archived matches: skill ratings (openskill's Plackett-Luce model) from
each match's final ranks, where a shared rank is a draw, and per agent configuration every pooled
measure (fitness index, the five dimensions, composite, trial, quests, spend) as n, mean, sample std and a
95% interval over seeds, its method named (wildhold.eval.stats: Student-t at the sizes people run).

Matches are rated in a fixed order (scenario, seed, chain head), so the same archives give the same
board whatever order they are named in. An archive that does not verify is listed among the refused, with the
sentence saying why, and the rest still rank; archives holding the same log (the same chain head) are one match,
counted once, and the board names the copies it left out. An agent configuration is its full arm identity from the
manifest (wildhold.eval.identity), never its label: two recorded arms are two configurations. When a
configuration fields several agents in one match, each plays as its own entrant from the
configuration's rating, and the configuration takes the mean of their updated mu and sigma. Archives
of several scenarios are pooled only when asked; the board says what it pooled.

Spend (tokens and dollars) per configuration is summed over the matches whose archives recorded it (zeros for a
configuration's agents that had no model session there); a configuration none of whose matches recorded any is
"not recorded" (null), never zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from openskill.models import PlackettLuce

from wildhold.eval.identity import agent_identity, identity_key, labels
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report
from wildhold.eval.rubric import Rubric, get_rubric
from wildhold.eval.spend import add_spend, read_spend, session_ticks, spend_totals
from wildhold.eval.stats import INTERVAL, describe, per_seed
from wildhold.service.verify import admit
from wildhold.store.archive import ArchiveError
from wildhold.world.wealth import rank_standard

DIMENSIONS = ("survival", "economy", "social", "adaptation", "competitiveness")
MEASURES = ("index", *DIMENSIONS, "composite", "trial", "quests", "spend_usd")


class PoolingRefused(ValueError):
    """Archives of different scenarios named together without asking to pool them."""

    code = "leaderboard_pools_scenarios"


def spend_cells(row: dict[str, Any]) -> tuple[str, str]:
    """A board row's tokens and dollars as a table shows them: summed over the matches that recorded them (saying
    how many of its matches those were when not all), or that none did."""
    spend = row["spend"]
    if spend is None:
        return "not recorded", "not recorded"
    over = f" ({spend['matches']} of {row['matches']} matches)" if spend["matches"] < row["matches"] else ""
    return f"{spend['tokens']:,}{over}", f"${spend['dollars']:,.4f}{over}"


def card_measures(report: dict[str, Any], card: dict[str, Any]) -> dict[str, float | None]:
    """One agent's measures in one report: fitness index, the five dimensions, composite score, trial stages under
    the cumulative rule, quests and dollars spent."""
    agent = card["agent"]
    composite = next((r["score"] for r in (report.get("composite") or {}).get("rows", []) if r["agent"] == agent), None)
    metrics = (report.get("metrics") or {}).get(agent, {})
    spend = ((report.get("curves") or {}).get("dollars") or {}).get(agent)
    return {"index": card["fitness_index"], **{d: card["scores"][d] for d in DIMENSIONS}, "composite": composite,
            "trial": metrics.get("trial_native"), "quests": metrics.get("quests_completed"),
            "spend_usd": spend["dollars"] if spend else 0.0}


def leaderboard(archives: Iterable[Path | str], rubric: str | Rubric | None = None, *, trust: bool = False,
                cache: Path | None = None, pool_scenarios: bool = False) -> dict[str, Any]:
    """Rate every configuration across the archives under one rubric (its tie rule decides draws); each archive is
    verified first (see wildhold.service.verify), unless `trust` takes them as they are. Archives of more than one
    scenario are refused unless `pool_scenarios`."""
    rb = rubric if isinstance(rubric, Rubric) else get_rubric(rubric)
    reports = []
    refused: list[dict[str, str]] = []
    heads: dict[str, str] = {}
    duplicates: list[dict[str, str]] = []
    for path in sorted(map(Path, archives), key=lambda p: (p.name, str(p))):
        try:
            verdict = admit(path, trust=trust, cache=cache)
            record = load_match(path)
        except ArchiveError as exc:
            refused.append({"archive": path.name, "code": exc.code, "reason": str(exc)})
            continue
        head = record.manifest["chain_head"]
        if head in heads:
            duplicates.append({"archive": path.name, "same_log_as": heads[head]})
            continue
        heads[head] = path.name
        sessions = read_spend(path)
        reports.append({**build_report(record, compute_metrics(record, probes=session_ticks(sessions)), rb, sessions),
                        "verification": verdict.stamp(), "_manifest": record.manifest})
    scenarios = sorted({r["match"]["scenario"] for r in reports})
    if len(scenarios) > 1 and not pool_scenarios:
        raise PoolingRefused(f"these archives are of {len(scenarios)} scenarios ({', '.join(scenarios)}); a board pools "
                             "one scenario's matches, unless asked to pool them (--pool-scenarios)")
    reports.sort(key=lambda r: (r["match"]["scenario"], r["match"]["seed"], r["match"]["chain_head"] or ""))
    model = PlackettLuce()
    ratings: dict[str, tuple[float, float]] = {}
    identities: dict[str, dict[str, Any]] = {}
    values: dict[str, dict[str, list[tuple[int, float]]]] = {}
    seen: dict[str, dict[str, int]] = {}
    matches = []
    seed_index: dict[tuple[str, int], int] = {}
    spent: dict[str, dict[str, Any] | None] = {}
    for report in reports:
        manifest = report.pop("_manifest")
        totals = spend_totals(report)
        roster = {a["id"]: a for a in manifest["agents"]}
        cards = report["agents"]
        keys = {}
        for card in cards:
            ident = agent_identity(manifest, roster.get(card["agent"], {"name": card["name"]}))
            keys[card["agent"]] = key = identity_key(ident)
            identities[key] = ident
            ratings.setdefault(key, (model.mu, model.sigma))
        teams = [[model.rating(mu=ratings[keys[c["agent"]]][0], sigma=ratings[keys[c["agent"]]][1], name=c["agent"])]
                 for c in cards]
        updated = model.rate(teams, ranks=[c["rank"] for c in cards]) if len(cards) > 1 else teams
        grouped: dict[str, list[tuple[float, float, dict[str, Any]]]] = {}
        for card, team in zip(cards, updated):
            grouped.setdefault(keys[card["agent"]], []).append((team[0].mu, team[0].sigma, card_measures(report, card)))
        m = report["match"]
        seed = seed_index.setdefault((m["scenario"], m["seed"]), len(seed_index))
        for key, entries in grouped.items():
            ratings[key] = (sum(e[0] for e in entries) / len(entries), sum(e[1] for e in entries) / len(entries))
            for measure in MEASURES:
                got = [e[2][measure] for e in entries if e[2][measure] is not None]
                if got:
                    values.setdefault(key, {}).setdefault(measure, []).append((seed, sum(got) / len(got)))
            s = seen.setdefault(key, {"matches": 0, "agents": 0, "firsts": 0})
            s["matches"] += 1
            s["agents"] += len(entries)
            spent.setdefault(key, None)
            if totals is not None:
                mine = None
                for card in cards:
                    if keys[card["agent"]] == key:
                        mine = add_spend(mine, totals[card["agent"]])
                spent[key] = add_spend(spent[key], {"matches": 1, **mine})
        for card in cards:
            if card["rank"] == 1:
                seen[keys[card["agent"]]]["firsts"] += 1
        matches.append({"scenario": m["scenario"], "seed": m["seed"], "chain_head": m["chain_head"],
                        "verification": report["verification"],
                        "placements": [{"agent": c["agent"], "name": c["name"], "config": keys[c["agent"]], "rank": c["rank"],
                                        "fitness_index": c["fitness_index"],
                                        "spend": None if totals is None else totals[c["agent"]]} for c in cards]})
    names = labels(identities)
    for match in matches:
        for placement in match["placements"]:
            placement["config_key"], placement["config"] = placement["config"], names[placement["config"]]
    ordinal = {c: mu - 3 * sigma for c, (mu, sigma) in ratings.items()}
    ranks = rank_standard({c: round(v, 9) for c, v in ordinal.items()})
    rows = []
    for c in ratings:
        measures = {m: describe(per_seed(v).values()) for m, v in values.get(c, {}).items()}
        rows.append({
            "config": names[c],
            "key": c,
            "identity": identities[c],
            "rank": ranks[c],
            "rating": {"mu": round(ratings[c][0], 4), "sigma": round(ratings[c][1], 4), "ordinal": round(ordinal[c], 4)},
            "matches": seen[c]["matches"],
            "agents": seen[c]["agents"],
            "firsts": seen[c]["firsts"],
            "fitness": measures["index"],
            "measures": measures,
            "spend": spent[c],
        })
    rows.sort(key=lambda r: (r["rank"], r["config"]))
    pooled = {"scenarios": scenarios, "rubric_version": rb.version, "seeds": len(seed_index),
              "statement": f"{len(reports)} matches of {'scenarios ' if len(scenarios) > 1 else 'scenario '}"
                           f"{', '.join(scenarios)}{' (pooled, as asked)' if len(scenarios) > 1 else ''}, every one "
                           f"scored under rubric {rb.version}; intervals are over {len(seed_index)} "
                           "(scenario, seed) pairs"}
    return {"rubric_version": rb.version, "model": "openskill PlackettLuce (mu 25, sigma 25/3); ordinal = mu - 3 sigma",
            "statistic": f"mean over seeds; std: sample std (n-1); {INTERVAL}",
            "verification": "trusted" if trust else "verified", "pooled": pooled, "matches": matches, "rows": rows,
            "refused": refused, "duplicates": duplicates}
