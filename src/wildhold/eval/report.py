"""The report card (seed 003) under a named rubric version, and the whole match report around it.

`build_report` is a pure function of the archive's metrics and a rubric: the same archive under the
same version gives the same bytes (`report_json`). Every number on a card is derived here from
`AgentMetrics`; nothing reads live state or the archived ranks.

Dimensions (0-100) are scored as the rubric's data says (`wildhold.eval.rubric`, through
`wildhold.eval.scoring`); under every published version, components in [0, 1], rates per 100 ticks
alive (lifetime under 1.0), each capped at its reference:
- Survival = credit x (0.5 health + 0.3 knockdowns + 0.2 needs): credit is the share of its time
  not spent dark (a silence of at least the idle threshold earns nothing); health is the mean
  health and needs the share of time with energy and satiety above 0, both over credited time;
  knockdowns is 1 - rate / reference.
- Economy = 0.4 wealth gained + 0.35 goods produced + 0.25 kinds of goods (breadth). From 2.5 the wealth
  component is the signed change (a loss counts against it) and the dimension is never below 0.
- Social = reliability x (0.35 exchanges + 0.2 partners + 0.15 villagers and quests + 0.2
  reputation + 0.1 messages): reputation counts only for an agent that engaged anyone, from 0 at
  minus the reference to 1 at the reference; reliability is 1 - half its defaulted share of
  delivery contracts. Message content is never scored. From 2.3 exchanges are partner-days: once per
  pair of characters per calendar day, however many. From 2.5 exchanges that moved no net goods between
  their two characters (`eval.folds.wash`) are struck: no partner-day, partner, reputation, delivery or
  action of theirs counts, anywhere on the card.
- Adaptation = 0.35 exploration + 0.25 validity (accepted share of issued actions) + 0.25 breadth
  (action categories used, of six) + 0.15 recovery (knockdowns not followed by going dark).
  Exploration is the move rate up to 2.1, and from 2.2 half tiles seen (rate) and half the share of
  regions seen.
- Competitiveness = 0.5 placement + 0.5 wealth share: placement (n - rank) / (n - 1) with the rank
  from `rubric.placements`, share its wealth over the field's top wealth (from 2.5 signed, down to -1).
  Equal wealth under a shared-rank rubric gives equal Competitiveness. The wealth ranked is
  `scoring.scored_wealth`: the public formula's, from 2.5 less the reputation struck exchanges earned.
The Fitness Index is the weighted sum of the five (rounded to one decimal, as shown) and sets the grade.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import orjson

from wildhold.eval.composite import COMPOSITE, cohort_of, composite_scores
from wildhold.eval.metrics import CATEGORIES, KING, AgentMetrics, MatchMetrics, MatchRecord, quiet_gc
from wildhold.eval.rubric import DIMENSIONS, Rubric, get_rubric, placements
from wildhold.eval.scoring import Card, scored_wealth
from wildhold.eval.season import COLUMNS as SEASON_COLUMNS
from wildhold.eval.season import rows_of as season_rows_of
from wildhold.eval.spend import spend_curves

REPORT_FORMAT = 1
PROGRAM_METRICS = ("program_actions", "program_revisions", "program_failures", "program_share")  # printed only under the programs block


# ---- helpers ---------------------------------------------------------------------------------


def _r1(x: float) -> float:
    return round(x + 0.0, 1)


def _r3(x: float) -> float:
    return round(x + 0.0, 3)


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 knockdown', '2 knockdowns'."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def money(cents: int) -> str:
    """Cents as the public formula's units: 12345 -> '123.45', -50 -> '-0.50'."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def clock(tick: int, ticks_per_day: int) -> str:
    """A tick as the world's calendar shows it: day N hh:mm (day 1 starts at tick 0)."""
    minute = tick % ticks_per_day
    return f"day {tick // ticks_per_day + 1} {minute // 60:02d}:{minute % 60:02d}"


def level_title(level: str) -> str:
    return "Shadow King" if level == KING else level.replace("_", " ").title()


# ---- the card --------------------------------------------------------------------------------


def _scored(card: Card) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Each dimension's components and its score out of 100 (unrounded), in the rubric's order."""
    comps: dict[str, dict[str, float]] = {}
    raw: dict[str, float] = {}
    for d in card.rubric.dimensions:
        comps[d.name], raw[d.name] = card.dimension(d)
    return comps, raw


def _archetype(card: Card, exploration: float) -> tuple[str, str]:
    """The first rule of the rubric's list (see wildhold.eval.rubric) that holds, and why."""
    am, rubric = card.am, card.rubric
    r = rubric.archetypes
    per = "per 100 ticks" if rubric.rate_normalised else "in the match"
    rate = card.rate
    dark_ticks = sum(e - s for s, e in card.dark)
    if am.ticks_alive and dark_ticks / am.ticks_alive >= r.drifter_idle_share:
        return "Drifter", f"dark for {dark_ticks} of its {am.ticks_alive} ticks"
    actions = card.actions
    if rate(actions) < r.drifter_actions:
        return "Drifter", f"{_r1(rate(actions))} actions {per} (under {r.drifter_actions})"
    issued = card.issued
    if issued and am.rejected / issued >= r.drifter_rejected_share:
        return "Drifter", f"{round(100 * am.rejected / issued)}% of what it issued was rejected"
    if rate(am.raids) >= r.raider_raids:
        return "Raider", f"{plural(am.raids, 'attack')} on other characters or their structures"
    if r.trader_partner_days:
        days = card.measure(r.trader_measure)
        if card.daily(days) >= r.trader_trades:
            return "Trader", f"exchanged with other characters on {plural(days, 'partner-day')} ({round(card.daily(days), 2)} a day)"
    elif rate(am.exchanges) >= r.trader_trades:
        return "Trader", f"{plural(am.exchanges, 'exchange')} with other characters ({_r1(rate(am.exchanges))} {per})"
    if rate(am.knockdowns) >= r.casualty_knockdowns:
        return "Casualty", f"knocked down {_times(am.knockdowns)}"
    settled = actions - am.by_category.get("movement", 0)
    share = am.by_category.get("production", 0) / settled if settled else 0.0
    if share >= r.producer_share and rate(am.goods) >= r.producer_goods:
        return "Producer", f"{round(share * 100)}% of its actions other than movement were production; {plural(am.goods, 'good')}"
    if am.depth >= r.explorer_depth:
        return "Explorer", f"cleared the dungeon to tier {am.depth}" + (" and defeated the Shadow King" if am.hero else "")
    moving = am.by_category.get("movement", 0) / actions if actions else 0.0
    if exploration >= r.explorer_exploration and moving >= r.explorer_movement_share:
        return "Explorer", f"exploration {_r1(exploration * 100)}% with {round(moving * 100)}% of its actions movement"
    if am.knockdowns == 0:
        return "Survivor", "never knocked down, and no other pattern stands out"
    return "Drifter", "no pattern stands out"


def _lines(card: Card, scores: dict[str, float], ties: list[str], archetype: str) -> tuple[list[str], list[str], list[str]]:
    """Strengths, weaknesses and notable facts in plain language, each with its numbers."""
    am, mm, rubric, rank, n = card.am, card.mm, card.rubric, card.rank, card.n
    day = mm.ticks_per_day
    dark = card.dark
    health = card.measure("health")
    went_dark = bool(dark)
    strengths: list[str] = []
    weaknesses: list[str] = []
    notable: list[str] = []
    per100 = lambda x: _r1(am.rate(x))  # noqa: E731
    s = {k: _r1(v) for k, v in scores.items()}
    regions = f"{len(am.regions_seen)} of {len(mm.map_regions)} regions"
    if s["survival"] >= rubric.strength_at and not went_dark:
        strengths.append(f"Survival {s['survival']}: mean health {round(health * 100)}% and {plural(am.knockdowns, 'knockdown')} in {am.ticks_alive} ticks.")
    if s["economy"] >= rubric.strength_at:
        strengths.append(f"Economy {s['economy']}: produced {plural(am.goods, 'good')} of {plural(len(am.goods_kinds), 'kind')}; wealth {money(am.wealth_start_cents)} -> {money(card.wealth)}.")
    if s["social"] >= rubric.strength_at:
        strengths.append(f"Social {s['social']}: {plural(am.exchanges, 'exchange')} with {plural(len(am.partners), 'other character')}; reputation {am.reputation}.")
    if s["adaptation"] >= rubric.strength_at:
        strengths.append(f"Adaptation {s['adaptation']}: saw {am.tiles_seen} tiles in {regions}; used {card.used} of {len(CATEGORIES)} kinds of action.")
    if s["competitiveness"] >= rubric.strength_at:
        strengths.append(f"Competitiveness {s['competitiveness']}: finished rank {rank} of {n} at {money(card.wealth)}.")
    strengths += _said(card, s, lambda score: score >= rubric.strength_at)

    if s["survival"] < rubric.weakness_below:
        if not card.credited:
            weaknesses.append(f"Survival {s['survival']}: dark for all of its {am.ticks_alive} ticks, so none of it is credited; knocked down {_times(am.knockdowns)}.")
        elif am.knockdowns:
            weaknesses.append(f"Survival {s['survival']}: collapsed {am.knockdowns}x ({per100(am.knockdowns)} per 100 ticks); mean health {round(health * 100)}%: plan food and rest ahead of need.")
        else:
            weaknesses.append(f"Survival {s['survival']}: mean health {round(health * 100)}% over its credited time.")
    if s["economy"] < rubric.weakness_below:
        weaknesses.append(f"Economy {s['economy']}: produced {plural(am.goods, 'good')} ({per100(am.goods)} per 100 ticks) of {plural(len(am.goods_kinds), 'kind')}: "
                          "check whether it makes the tools that raise yield, or idles.")
    if s["social"] < rubric.weakness_below:
        if not am.partners:
            villagers = f"; dealt with villagers {_times(am.community)}" if am.community else ""
            weaknesses.append(f"Social {s['social']}: never engaged another agent (no trade, contract, order or message with anyone){villagers}.")
        else:
            weaknesses.append(f"Social {s['social']}: {plural(am.exchanges, 'exchange')} with {plural(len(am.partners), 'other character')}; reputation {am.reputation}.")
    if s["adaptation"] < rubric.weakness_below:
        tried = f"{am.rejected} of {card.issued} issued actions rejected" if card.issued else "issued no action"
        weaknesses.append(f"Adaptation {s['adaptation']}: saw {am.tiles_seen} tiles in {regions}; {tried}; "
                          f"used {card.used} of {len(CATEGORIES)} kinds of action.")
    if s["competitiveness"] < rubric.weakness_below:
        weaknesses.append(f"Competitiveness {s['competitiveness']}: finished rank {rank} of {n} at {money(card.wealth)}.")
    weaknesses += _said(card, s, lambda score: score < rubric.weakness_below)
    for start, end in dark:
        weaknesses.append(f"Went dark for {end - start} ticks ({clock(start, day)} to {clock(end, day)}): issued no action and ran no operation; "
                          "no survival credit for that time.")
    if am.contracts_defaulted:
        weaknesses.append(f"Defaulted on {am.contracts_defaulted} delivery contract{'s' if am.contracts_defaulted != 1 else ''}: "
                          "it committed to deliveries it did not make.")
    issued = card.issued
    if issued and am.rejected / issued >= rubric.rejected_share_weakness:
        code, times = next(iter(am.rejected_by_code.items()))
        weaknesses.append(f"{round(100 * am.rejected / issued)}% of its {issued} issued actions were rejected (most often {code}, {times} times).")
    if archetype == "Raider" and am.reputation < 0:
        weaknesses.append(f"Raided {_times(am.raids)} and ended at reputation {am.reputation}: loot now over trust later.")
    if card.unrecovered and am.actions:
        weaknesses.append(f"Went dark after {card.unrecovered} of its {plural(am.knockdowns, 'knockdown')}.")

    if not went_dark and am.actions and not am.knockdowns and not am.energy_depleted and not am.starved:
        notable.append("Flawless energy management: never ran out of energy or food and was never knocked down.")
    if ties:
        if rubric.ties == "shared":
            notable.append(f"Exactly tied on wealth ({money(card.wealth)}) with {', '.join(ties)}: shares rank {rank}.")
        else:
            notable.append(f"Exactly tied on wealth ({money(card.wealth)}) with {', '.join(ties)}; rubric {rubric.version} orders ties by joining order.")
    elif rank == 1 and n > 1:
        notable.append(f"Richest in the field at {money(card.wealth)}.")
    for level, st in am.dungeon.items():
        if st.clears:
            notable.append(f"{level_title(level)}: cleared {st.clears} of {plural(st.attempts, 'attempt')}; mean damage per clear {_r1(st.mean_damage or 0)}.")
        elif st.attempts:
            notable.append(f"{level_title(level)}: {plural(st.attempts, 'attempt')}, no clear.")
    if "shadow_king" in am.tasks:
        notable.append(f"Defeated the Shadow King at {clock(am.tasks['shadow_king'], day)}.")
    if "outfit" in am.tasks:
        notable.append(f"Completed the travel outfit at {clock(am.tasks['outfit'], day)}.")
    if am.trial_native or am.trial_stages:
        first = mm.stage_names.get(am.trial_first_unmet, "none") if am.trial_first_unmet else "none"
        notable.append(f"Trial: {am.trial_native}/{len(mm.stages)} stages under the cumulative rule, {len(am.trial_stages)} attained independently; first unmet: {first}.")
    if am.quests_completed:
        notable.append(f"Completed {am.quests_completed} quest{'s' if am.quests_completed != 1 else ''}.")
    if am.exchanges:
        notable.append(f"{plural(am.exchanges, 'exchange')} ({plural(am.trades, 'trade')}, {plural(am.orders_filled, 'market fill')}, "
                       f"{plural(am.contracts_fulfilled, 'contract')} delivered) with {plural(len(am.partners), 'partner')}.")
    if card.struck and am.value("void_exchanges"):
        notable.append(_void_line(card))
    if am.raids:
        notable.append(f"Attacked other characters or their structures {_times(am.raids)}.")
    notable.append(f"Saw {round(100 * am.tiles_seen / mm.map_tiles)}% of the map ({regions}).")
    if "programs" in rubric.blocks and (am.program_actions or am.program_revisions or am.program_failures):
        failures = sum(am.program_failures.values())
        why = f" ({', '.join(f'{n} {reason}' for reason, n in am.program_failures.items())})" if failures else ""
        notable.append(f"Programs: {am.program_actions} of {plural(am.actions, 'action')} ({round(100 * am.program_share)}%) "
                       f"issued by its programs; {plural(am.program_revisions, 'revision')} saved; "
                       f"{plural(failures, 'program failure')}{why}.")
    others = {k: v for k, v in am.by_issuer.items() if k != "direct"}
    if others:
        notable.append("Actions by issuer: " + ", ".join(f"{v} {k}" for k, v in sorted(am.by_issuer.items())) + ".")
    return strengths, weaknesses, notable


def _void_line(card: Card) -> str:
    """What its exchanges that moved nothing came to, where the rubric strikes them."""
    am = card.am
    void, rep = am.value("void_exchanges"), am.value("void_reputation")
    return (f"{plural(void, 'exchange')} with other characters moved no net goods (items handed over and back): "
            f"struck under rubric {card.rubric.version}, with its {plural(sum(card.void_actions.values()), 'action')} in them"
            + (f" and the {rep} reputation they earned ({money(am.value('void_wealth_cents'))} of wealth)" if rep else "") + ".")


def _said(card: Card, scores: dict[str, float], named: Callable[[float], bool]) -> list[str]:
    """The sentences of the components that carry one (`Component.says`), in the rubric's order, for
    each dimension whose score (as shown) `named` holds for."""
    out: list[str] = []
    for d in card.rubric.dimensions:
        if named(scores[d.name]):
            for c in (c for top in ((d.gate,) if d.gate else ()) + d.components for c in top.walk() if c.says):
                score = _r1(100 * card.component(c))
                if c.parts:
                    out.append(c.says.format(score=score))
                else:
                    value = card.read(c)
                    out.append(c.says.format(value=value, rate=card.rate(value), score=score))
    return out


def _card(card: Card, ties: list[str]) -> dict[str, Any]:
    am, rubric = card.am, card.rubric
    comps, raw = _scored(card)
    scores = {k: _r1(v) for k, v in raw.items()}
    fitness = _r1(sum(d.weight * scores[d.name] for d in rubric.dimensions))
    archetype, why = _archetype(card, comps["adaptation"]["exploration"])
    strengths, weaknesses, notable = _lines(card, raw, ties, archetype)
    dark = card.dark
    programs = {"programs": _programs(am)} if "programs" in rubric.blocks else {}
    scored = {"wealth_scored_cents": card.wealth, "wealth_scored": money(card.wealth)} if card.struck else {}
    return programs | scored | {
        "agent": am.agent,
        "name": am.name,
        "config": am.config,
        "rank": card.rank,
        "wealth_cents": am.wealth_cents,
        "wealth": money(am.wealth_cents),
        "fitness_index": fitness,
        "grade": rubric.grade(fitness),
        "archetype": archetype,
        "archetype_reason": why,
        "scores": scores,
        "components": {k: {c: _r3(v) for c, v in values.items()} for k, values in comps.items()},
        "strengths": strengths,
        "weaknesses": weaknesses,
        "notable": notable,
        "idle": {"went_dark": bool(dark), "dark_spans": dark, "dark_ticks": sum(e - s for s, e in dark),
                 "threshold_ticks": rubric.idle_threshold_ticks},
    }


def _programs(am: AgentMetrics) -> dict[str, Any]:
    """Program share of executed actions, revisions saved, program failures by reason (never scored)."""
    return {"actions": am.program_actions, "share": _r3(am.program_share), "revisions": am.program_revisions,
            "failures": dict(am.program_failures)}


# ---- the report ------------------------------------------------------------------------------


def _agent_summary(am: AgentMetrics, rubric: Rubric) -> dict[str, Any]:
    """The metrics, with the measures of folds beyond them only where the rubric scores them."""
    d = am.to_dict()
    for key in ("wealth_curve", "quest_ticks", *(() if "programs" in rubric.blocks else PROGRAM_METRICS)):
        del d[key]
    placed = rubric.measures()
    scored = {name: v for name, v in am.measures.items() if name in placed}
    if scored:
        d["measures"] = scored
    return d


def build_report(record: MatchRecord, metrics: MatchMetrics, rubric: str | Rubric | None = None,
                 spend: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The full report of one match under one rubric version (the published one when none is named); `spend`
    is the archive's session records (`eval.spend.read_spend`): without any, tokens and dollars are null."""
    with quiet_gc():  # many small records beside a large log: no cycles to find, only pauses to pay
        return _build_report(record, metrics, rubric, spend)


def _build_report(record: MatchRecord, metrics: MatchMetrics, rubric: str | Rubric | None,
                  spend: list[dict[str, Any]] | None) -> dict[str, Any]:
    rb = rubric if isinstance(rubric, Rubric) else get_rubric(rubric)
    tokens, dollars = spend_curves(spend, metrics)
    mm = metrics
    agents = mm.agents
    wealth = {a: scored_wealth(am, rb) for a, am in agents.items()}
    ranks = placements(rb, wealth)
    n = len(agents)
    top = max(wealth.values(), default=0)
    cards = []
    for a, am in agents.items():
        ties = [o.name for b, o in agents.items() if b != a and wealth[b] == wealth[a]]
        cards.append(_card(Card(am, mm, rb, ranks[a], n, top), ties))
    cards.sort(key=lambda c: (c["rank"], agents[c["agent"]].join_index))
    m = record.manifest
    day = mm.ticks_per_day
    programs = {"programs": _match_programs(mm)} if "programs" in rb.blocks else {}
    if "study" in rb.blocks:
        from wildhold.eval.study import study_block

        programs["study"] = study_block(mm, m, spend, rb, lambda t: clock(t, day))
    report = programs | {
        "report_format": REPORT_FORMAT,
        "rubric_version": rb.version,
        "rubric": rb.describe(),
        "match": {
            "scenario": mm.scenario,
            "seed": mm.seed,
            "start_tick": mm.start_tick,
            "final_tick": mm.final_tick,
            "start": clock(mm.start_tick, day),
            "end": clock(mm.final_tick, day),
            "days": _r3((mm.final_tick - mm.start_tick) / day),
            "ticks_per_day": day,
            "event_count": mm.event_count,
            "chain_head": m.get("chain_head"),
            "content_digest": m.get("content_digest"),
            "wildhold_version": m.get("wildhold_version"),
            "clock": m.get("clock"),
            "map": {"width": mm.width, "height": mm.height, "tiles": mm.map_tiles, "regions": mm.map_regions},
        },
        "agents": cards,
        "composite": composite_scores(mm, COMPOSITE, cohort_of(m, mm) if "cohort" in rb.blocks else None),
        "season_table": _season_table(mm),
        "trial": _trial_table(mm),
        "dungeon": _dungeon_table(mm),
        "activity": {a: {"counts": {c: am.by_category.get(c, 0) for c in (*CATEGORIES, *sorted(set(am.by_category) - set(CATEGORIES)))},
                         "total": am.actions} for a, am in agents.items()},
        "curves": {
            "wealth": {a: am.wealth_curve for a, am in agents.items()},
            "quests": {a: am.quest_ticks for a, am in agents.items()},
            "achievements": {a: _achievements(am, mm) for a, am in agents.items()},
            "tokens": tokens,
            "dollars": dollars,
        },
        "metrics": {a: _agent_summary(am, rb) for a, am in agents.items()},
        "epilogues": record.epilogues,
        "manifest": m,
    }
    if "study" in rb.blocks:  # stuck states disclosed on the card; every curve annotated with its character's incidents
        from wildhold.eval.study import stuck_lines

        for card in cards:
            stuck = [f for f in report["study"]["failures"][card["agent"]] if f["kind"] != "went_dark"]
            card["stuck"] = {"count": len(stuck), "cost_usd": _r3(sum(f["cost_usd"] or 0.0 for f in stuck))}
            card["weaknesses"] += stuck_lines(stuck)
        report["curves"]["incidents"] = {a: [[i["tick"], i["n"], i["kind"]] for i in report["study"]["incidents"]["log"]
                                             if a in i["parties"]] for a in agents}
    return report


def _match_programs(mm: MatchMetrics) -> dict[str, Any]:
    """The whole field's program share of executed actions, revisions and failures by reason."""
    agents = mm.agents.values()
    actions, by_programs = sum(am.actions for am in agents), sum(am.program_actions for am in agents)
    failures: dict[str, int] = {}
    for am in agents:
        for reason, n in am.program_failures.items():
            failures[reason] = failures.get(reason, 0) + n
    return {"actions": by_programs, "share": _r3(by_programs / actions) if actions else 0.0,
            "revisions": sum(am.program_revisions for am in agents), "failures": dict(sorted(failures.items()))}


def _achievements(am: AgentMetrics, mm: MatchMetrics) -> list[list[Any]]:
    """[tick, label] for each trial stage attained and each task done, in order of tick."""
    out = [[tick, mm.stage_names.get(stage, stage)] for stage, tick in am.trial_stages.items()]
    out += [[tick, {"outfit": "Task: travel outfit", "shadow_king": "Task: Shadow King"}.get(task, f"Task: {task}")] for task, tick in am.tasks.items()]
    return sorted(out, key=lambda x: (x[0], x[1]))


def _season_table(mm: MatchMetrics) -> dict[str, Any]:
    """Seed 000 Table 3 per agent: the rows `eval.season` reads from the folds, each with the number of stages."""
    stages = len(mm.stages)
    return {"columns": list(SEASON_COLUMNS), "rows": [{**asdict(row), "trial_of": stages} for row in season_rows_of(mm).values()]}


def _trial_table(mm: MatchMetrics) -> dict[str, Any]:
    """Each stage, attained independently (tick and evidence), and credited under the cumulative rule."""
    rows = []
    for am in mm.agents.values():
        rows.append({
            "agent": am.agent, "name": am.name, "native": am.trial_native,
            "first_unmet": am.trial_first_unmet,
            "stages": {s: ({"tick": am.trial_stages[s], "evidence": am.trial_evidence.get(s, []),
                            "native_tick": am.trial_native_ticks.get(s)} if s in am.trial_stages else None) for s in mm.stages},
        })
    recorded = any(r["native"] or any(r["stages"].values()) for r in rows)
    return {"recorded": recorded, "stages": [{"stage": s, "name": mm.stage_names[s]} for s in mm.stages], "rows": rows}


def _dungeon_table(mm: MatchMetrics) -> dict[str, Any]:
    """Seed 000 Figure 4 per agent and level: attempts, clears, clear rate, mean damage and consumables per clear."""
    rows = []
    for am in mm.agents.values():
        per = {}
        for level in mm.levels:
            st = am.dungeon.get(level)
            if st is None:
                per[level] = None
                continue
            per[level] = {
                "attempts": st.attempts, "clears": st.clears,
                "clear_rate": None if st.clear_rate is None else _r3(st.clear_rate),
                "mean_damage": None if st.mean_damage is None else _r3(st.mean_damage),
                "mean_consumables": _r3(sum(st.consumables) / len(st.consumables)) if st.consumables else None,
            }
        rows.append({"agent": am.agent, "name": am.name, "levels": per})
    return {"recorded": mm.has_dungeon, "levels": [{"level": lv, "name": level_title(lv)} for lv in mm.levels], "rows": rows}


def report_json(report: dict[str, Any]) -> bytes:
    """The canonical bytes of a report: sorted keys, two-space indent, trailing newline."""
    return orjson.dumps(report, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def card_for(report: dict[str, Any], who: str) -> dict[str, Any] | None:
    """One agent's card by id or name (GET /api/report?agent=NAME)."""
    for card in report["agents"]:
        if who in (card["agent"], card["name"]):
            return card
    return None


def score_archive(path, rubric: str | Rubric | None = None, content=None, *, trust: bool = False,
                  cache: Path | None = None) -> dict[str, Any]:
    """Verify (re-simulate, or with `trust` not), fold and score an archive: the report a reader gets for it,
    stamped with what was checked. An archive that does not verify raises ArchiveError with its code."""
    from wildhold.eval.metrics import compute_metrics, load_match
    from wildhold.eval.spend import read_spend, session_ticks
    from wildhold.service.verify import admit

    verdict = admit(path, content, trust=trust, cache=cache)
    record = load_match(path)
    sessions = read_spend(path)
    report = build_report(record, compute_metrics(record, content, probes=session_ticks(sessions)), rubric, sessions)
    return {**report, "verification": verdict.stamp()}


def verification_line(stamp: dict[str, Any] | None) -> str | None:
    """What a reader is told about the archive behind a report (None for a report built without the check)."""
    if stamp is None:
        return None
    if stamp["status"] == "trusted":
        return f"Archive not verified: {stamp['note']}."
    ignored = stamp.get("ignored_unbound")
    left = f" Fields its format does not bind were not read: {', '.join(ignored)}." if ignored else ""
    if stamp["bound"]:
        return f"Archive verified by re-simulation; archive head {stamp['archive_head']}.{left}"
    return f"Archive verified by re-simulation; unbound (format 1: its manifest has no header in the archive head).{left}"


_MD_SPECIAL = str.maketrans({"\\": "\\\\", "`": "\\`", "*": "\\*", "[": "\\[", "]": "\\]", "|": "\\|", "#": "\\#",
                             "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " "})


def md_text(value: Any) -> str:
    """Agent-supplied text (a name, a model string, an epilogue line) as Markdown that stays text: no heading,
    link, emphasis, table cell break or raw HTML can come of it."""
    return str(value).translate(_MD_SPECIAL)


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: standings, each card, the season table with the composite score, the trial."""
    m = report["match"]
    out = [f"# Wildhold report: {m['scenario']}, seed {m['seed']}", "",
           f"Rubric {report['rubric_version']}: {report['rubric']['summary']}",
           f"{len(report['agents'])} agents, {m['start']} to {m['end']} ({m['days']} days), {m['event_count']} events; chain head `{m['chain_head']}`.",
           *filter(None, [verification_line(report.get("verification"))]), "",
           "## Standings", "",
           "| rank | agent | config | wealth (coins) | fitness | grade | archetype | survival | economy | social | adaptation | competitiveness |",
           "|---:|---|---|---:|---:|:-:|---|---:|---:|---:|---:|---:|"]
    for c in report["agents"]:
        s = c["scores"]
        out.append(f"| {c['rank']} | {md_text(c['name'])} | {md_text(c['config'])} | {c.get('wealth_scored', c['wealth'])} | {c['fitness_index']:.1f} | {c['grade']} | {c['archetype']} | "
                   + " | ".join(f"{s[d]:.1f}" for d in DIMENSIONS) + " |")
    struck = [f"{md_text(c['name'])} {c['wealth']} -> {c['wealth_scored']}" for c in report["agents"]
              if c.get("wealth_scored", c["wealth"]) != c["wealth"]]
    if struck:
        out += ["", f"Ranked by wealth less the reputation that exchanges which moved no net goods earned (struck under rubric "
                    f"{report['rubric_version']}): {', '.join(struck)}."]
    for c in report["agents"]:
        out += ["", f"## {md_text(c['name'])} ({c['agent']}): {c['grade']}, fitness {c['fitness_index']:.1f}, {c['archetype']}", "",
                f"Archetype: {c['archetype_reason']}."]
        for title, key in (("Strengths", "strengths"), ("Weaknesses", "weaknesses"), ("Notable", "notable")):
            if c[key]:
                out += ["", f"{title}:", *[f"- {line}" for line in c[key]]]
        epilogue = report["epilogues"].get(c["agent"])
        if epilogue:
            out += ["", "In its own words (unscored):", "", *[f"> {md_text(line)}" for line in epilogue["text"].splitlines()]]
    t = report["season_table"]
    rows = {r["agent"]: r for r in t["rows"]}
    out += ["", f"## Tasks and activity (seed 000 Table 3) and the composite score ({report['composite']['scorer']['name']})", "",
            "| rank | agent | " + " | ".join(t["columns"]) + " | score |", "|---:|---|" + "---:|" * (len(t["columns"]) + 1)]
    for c in report["composite"]["rows"]:
        r = rows[c["agent"]]
        cells = ["Y" if r["outfit"] else "N", r["depth"], "Y" if r["hero"] else "N", r["kills"], r["bosses"], r["crafts"], r["coins"],
                 f"{r['trial']}/{r['trial_of']}", r["downs"]]
        out.append(f"| {c['rank']} | {md_text(r['name'])} | " + " | ".join(str(x) for x in cells) + f" | {c['score']:.1f} |")
    if "statement" in report["composite"]["cohort"]:
        out += ["", report["composite"]["cohort"]["statement"]]
    trial = report["trial"]
    out += ["", "## The trial", "", "| agent | " + " | ".join(s["name"] for s in trial["stages"]) + " | native |",
            "|---|" + "---:|" * (len(trial["stages"]) + 1)]
    for r in trial["rows"]:
        cells = [str(r["stages"][s["stage"]]["tick"]) if r["stages"][s["stage"]] else "-" for s in trial["stages"]]
        out.append(f"| {md_text(r['name'])} | " + " | ".join(cells) + f" | {r['native']}/{len(trial['stages'])} |")
    p = report.get("programs")
    if p and (p["actions"] or p["revisions"]):
        failed = ", ".join(f"{n} {reason}" for reason, n in p["failures"].items()) or "none"
        out += ["", f"Programs: {p['actions']} actions ({round(100 * p['share'])}% of all) issued by agents' programs; "
                    f"{p['revisions']} revisions saved; failures: {failed}."]
    if not report["dungeon"]["recorded"]:
        out += ["", "Dungeon: not recorded (no character entered it)."]
    out += _md_spend(report)
    if "study" in report:
        out += _md_study(report)
    return "\n".join(out) + "\n"


def _md_spend(report: dict[str, Any]) -> list[str]:
    """Each model arm's tokens and dollars as the archive records them, or that none were recorded."""
    tokens, dollars = report["curves"]["tokens"], report["curves"]["dollars"]
    if not tokens:
        return ["", "Tokens and dollars: not recorded in this archive."]
    names = {a: m["name"] for a, m in report["metrics"].items()}
    out = ["", "## Tokens and dollars", "", "| agent | sessions | model calls | input tokens | cached | output tokens | dollars |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for agent, t in tokens.items():
        out.append(f"| {md_text(names[agent])} | {t['sessions']} | {t['llm_calls']} | {t['input_tokens']:,} | {t['cached_input_tokens']:,} | "
                   f"{t['output_tokens']:,} | {dollars[agent]['dollars']:.4f} |")
    return out


def _or_dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _md_study(report: dict[str, Any]) -> list[str]:
    """The orientation study's sections: incidents, pacing, failure modes, service interruptions."""
    st = report["study"]
    names = {a: m["name"] for a, m in report["metrics"].items()}
    inc = st["incidents"]
    out = ["", "## Interference incidents", "",
           f"Every interaction between two characters, none excluded; wall times {inc['wall_time_basis']}."]
    if inc["log"]:
        out += ["", "| # | when | wall time | kind | parties | study pair | evidence (events) |", "|---:|---|---|---|---|:-:|---|"]
        for i in inc["log"]:
            out.append(f"| {i['n']} | {i['clock']} (tick {i['tick']}) | {i['wall_time'] or '-'} | {i['kind']} | "
                       f"{' -> '.join(md_text(n) for n in i['names'])} | {'Y' if i['study_pair'] else 'N'} | "
                       f"{', '.join(str(e) for e in i['evidence'])} |")
    else:
        out += ["", "No incident: no two characters interacted."]
    out += ["", "Not in the world's record, so never counted: " + " ".join(inc["not_recorded"])]
    if not st["recorded"]:
        return out + ["", "Pacing, failure modes, service interruptions and discovery: not recorded (no model session records "
                          "in this archive)."]
    out += ["", "## Pacing", "", "| agent | sessions | median session | median wake chosen | median wake got (ticks) | "
            "world calls per session | dollars per hour | quests | wall clock per quest | same, less interruptions |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a, p in st["pacing"].items():
        wc = p["wall_clock"]
        out.append(f"| {md_text(names[a])} | {len(p['sessions'])} | {_dur(p['session_length_s']['median'])} | "
                   f"{p['wake_chosen_minutes']['median'] if p['wake_chosen_minutes']['n'] else '-'} min | "
                   f"{p['wake_actual_ticks']['median'] if p['wake_actual_ticks']['n'] else '-'} | "
                   f"{_or_dash(p['world_calls_per_session']['mean'])} | {_or_dash(p['spend_rate']['dollars_per_hour'])} | "
                   f"{wc['quests_completed']} | {_dur(wc['per_quest_s'])} | {_dur(wc['per_quest_uninterrupted_s'])} |")
    out += ["", "## Failure modes", "",
            f"Stuck states: the scaffold's repetition ending, {st['rules']['error_streak_calls']} or more failed calls in a row, "
            f"{st['rules']['dark_ticks']} ticks or more dark, an operation cancelled with none started for "
            f"{st['rules']['abandon_ticks']} ticks."]
    rows = [(a, f) for a, fs in st["failures"].items() for f in fs]
    if rows:
        out += ["", "| agent | kind | from | duration | dollars | ended by | evidence |", "|---|---|---|---:|---:|---|---|"]
        for a, f in rows:
            dur = f"{f['duration_ticks']} ticks" + (f", {_dur(f['duration_s'])}" if f.get("duration_s") is not None else "")
            where = f"tick {f['start_tick']}" if f.get("start_tick") is not None else "-"
            dollars = "-" if f["cost_usd"] is None else f"{f['cost_usd']:.4f}"
            out.append(f"| {md_text(names[a])} | {f['kind']} | {where} | {dur} | {dollars} | {f['ended_by']} | {_evidence(f['evidence'])} |")
    else:
        out += ["", "No stuck state."]
    out += ["", "## Service interruptions (seed 000 Table 5)", "", "| agent | interruptions |", "|---|---|"]
    for a, it in st["interruptions"].items():
        out.append(f"| {md_text(names[a])} | {it['line']} |")
    return out + _md_discovery(st["discovery"], names)


def _md_discovery(d: dict[str, Any], names: dict[str, str]) -> list[str]:
    out = ["", "## Discovery", ""]
    if not d["computed"]:
        return out + [f"Not computed: {d['why']}."]
    out += ["What each arm wrote down in its workspace, checked line by line against the rules' facts: right (with its "
            "detail), wrong (other numbers), only named, never found; found by playing: written, its section of the "
            "design document never read.", "",
            "| agent | files | bytes | rules sections read | right | wrong | only named | never | found by playing |",
            "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for a, x in d["arms"].items():
        c, last = x["counts"], (x["workspace"][-1] if x["workspace"] else {"files": 0, "bytes": 0})
        out.append(f"| {md_text(names[a])} | {last['files']} | {last['bytes']} | {', '.join(md_text(sec) for sec in x['sections_read']) or 'none'} | "
                   f"{c['right']} | {c['wrong']} | {c['unverified']} | {c['never']} of {x['of']} | {c['by_playing']} |")
    for a, x in d["arms"].items():
        found = [f"{f['fact']} {f['status']}" + (" (by playing)" if f["by_playing"] else "") for f in x["facts"] if f["status"] != "never"]
        if found:
            out.append(f"- {md_text(names[a])}: " + "; ".join(found) + ".")
    return out


def _evidence(ev: dict[str, Any]) -> str:
    if "events" in ev:
        return "events " + ", ".join(str(e) for e in ev["events"])
    if "calls" in ev:
        return f"session {ev['session']}, calls {ev['calls'][0]}-{ev['calls'][1]}"
    return f"ticks {ev['ticks'][0]}-{ev['ticks'][1]}"
