"""The orientation study's sections (seed 001), from the archive alone, under a rubric with the study block.

- Interference incidents: the `incidents` fold's log, each with its parties' names, the world's clock,
  the wall time where the archive has one, and whether both parties are in the cohort; per character
  counts by kind; and each spending arm's curve annotated with its incidents (the spend it had reached).
- Pacing (RQ3): each model arm's sessions (length in wall seconds and ticks, the wake it chose and the one
  it got, tool calls), its spend rate over wall time, its quests from acceptance to completion and the wall
  clock per quest, apart from the time its service was interrupted.
- Failure modes (RQ4): stuck states, each with its duration, its spend and what ended it: a session the
  scaffold's repetition breaker ended, a streak of failed tool calls, a span dark, a plan abandoned (an
  operation cancelled with no other started for a while).
- Service interruptions (seed 000 Table 5): provider errors, retries and their waits, the run down.
- Discovery (RQ2): each model arm's workspace over time and its coverage of the rules' facts
  (`eval.discovery`), side by side.

Pacing, failure modes and interruptions read each model session's record (`eval.spend.read_spend`: the
scaffold's log of it); a wall time of a tick is read from those records' (tick, time) pairs, interpolated
between the nearest two, and is null where none surround it. Nothing here is scored.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from datetime import datetime, timezone
from statistics import mean, median
from typing import Any

from wildhold.eval.folds.incidents import KINDS
from wildhold.eval.metrics import MatchMetrics
from wildhold.eval.rubric import Rubric

TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")  # a tool name or error code is printed only when it could be one
NOT_RECORDED = (
    "A gather refused by another's claim on a resource node: resource nodes have no owner in this world, so none is "
    "ever refused; a node another character emptied is not attributed to it.",
    "Items picked up from the ground where another character fell: the world records the pick-up, not whose they were.",
)


def _r3(x: float | None) -> float | None:
    return None if x is None else round(x + 0.0, 3)


def iso(wall: float | None) -> str | None:
    """A wall time (seconds since the epoch) as UTC ISO 8601 to the second."""
    return None if wall is None else datetime.fromtimestamp(wall, tz=timezone.utc).isoformat(timespec="seconds")


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None}
    return {"n": len(values), "mean": _r3(mean(values)), "median": _r3(median(values)), "min": _r3(min(values)),
            "max": _r3(max(values))}


class WallClock:
    """The wall time of a tick, from the (tick, time) pairs the session records hold: the first time each
    tick was seen, interpolated between the nearest two pairs; None outside them."""

    def __init__(self, sessions: list[dict[str, Any]]):
        first: dict[int, float] = {}
        for s in sessions:
            log = s.get("log") or {}
            pairs = [(log.get("start_tick"), log.get("started_at")), (log.get("end_tick"), log.get("ended_at"))]
            pairs += [(c[1], c[0]) for c in log.get("calls", ())]
            for tick, t in pairs:
                if tick is not None and t is not None and (tick not in first or t < first[tick]):
                    first[tick] = t
        self.ticks = sorted(first)
        self.times = [first[t] for t in self.ticks]

    def at(self, tick: int) -> float | None:
        i = bisect_left(self.ticks, tick)
        if i < len(self.ticks) and self.ticks[i] == tick:
            return self.times[i]
        if i == 0 or i == len(self.ticks):
            return None
        t0, t1, w0, w1 = self.ticks[i - 1], self.ticks[i], self.times[i - 1], self.times[i]
        return w0 + (tick - t0) * (w1 - w0) / (t1 - t0)


def _by_agent(sessions: list[dict[str, Any]] | None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for s in sessions or ():
        out.setdefault(s["agent"], []).append(s)
    for rows in out.values():
        rows.sort(key=lambda s: s["session"])
    return out


def _spend_in(sessions: list[dict[str, Any]], start: float | None, end: float | None) -> float | None:
    """Dollars of the model turns made between two wall times (None when either is unknown)."""
    if start is None or end is None:
        return None
    return _r3(sum(turn[1] for s in sessions for turn in (s.get("log") or {}).get("turns", ()) if start <= turn[0] <= end))


def study_block(metrics: MatchMetrics, manifest: dict[str, Any], sessions: list[dict[str, Any]] | None, rubric: Rubric,
                clock_of) -> dict[str, Any]:
    """The study's four sections (see the module docstring); `clock_of` writes a tick as the world's calendar."""
    by_agent = _by_agent(sessions)
    wall = WallClock(sessions or [])
    logged = {a: rows for a, rows in by_agent.items() if any(s.get("log") for s in rows)}
    return {
        "incidents": _incidents(metrics, manifest, by_agent, wall, clock_of),
        "pacing": {a: _pacing(metrics, a, rows, wall) for a, rows in logged.items()},
        "failures": _failures(metrics, logged, wall, rubric, clock_of),
        "interruptions": {a: _interruptions(rows) for a, rows in logged.items()},
        "discovery": _discovery(manifest, logged),
        "recorded": bool(logged),
        "rules": {"error_streak_calls": rubric.study.error_streak_calls, "abandon_ticks": rubric.study.abandon_ticks,
                  "dark_ticks": rubric.idle_threshold_ticks},
    }


def _discovery(manifest: dict[str, Any], logged: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    from wildhold.content import default_content
    from wildhold.eval.discovery import discovery

    content = default_content()
    if manifest.get("content_digest") not in (None, content.digest):
        return {"computed": False, "why": "the archive's content is not this installation's, so its facts are unknown here",
                "arms": {}}
    return {"computed": True, "why": None, "arms": {a: discovery(rows, content) for a, rows in logged.items()}}


# ---- incidents ---------------------------------------------------------------------------------


def _incidents(metrics: MatchMetrics, manifest: dict[str, Any], by_agent: dict[str, list[dict[str, Any]]], wall: WallClock,
               clock_of) -> dict[str, Any]:
    agents = metrics.agents
    cohort = manifest.get("cohort")
    names = {a: am.name for a, am in agents.items()}
    study = {a for a, am in agents.items() if cohort is None or am.name in cohort}
    log = []
    counts: dict[str, dict[str, int]] = {a: {} for a in agents}
    for incident in metrics.logs.get("incidents", []):
        at = wall.at(incident["tick"])
        log.append({**incident, "names": [names[p] for p in incident["parties"]], "clock": clock_of(incident["tick"]),
                    "wall_time": iso(at), "study_pair": all(p in study for p in incident["parties"])})
        for p in set(incident["parties"]):
            counts[p][incident["kind"]] = counts[p].get(incident["kind"], 0) + 1
    annotations = {a: [{"n": i["n"], "tick": i["tick"], "kind": i["kind"], **_spent_by(rows, i["tick"], wall)}
                       for i in log if a in i["parties"]] for a, rows in by_agent.items()}
    return {"log": log, "by_agent": {a: dict(sorted(c.items())) for a, c in counts.items()}, "annotations": annotations,
            "kinds": KINDS, "not_recorded": list(NOT_RECORDED),
            "wall_time_basis": "interpolated between the (tick, time) pairs of the model sessions' records" if wall.ticks
            else "not recorded: this archive carries no model session records"}


def _spent_by(rows: list[dict[str, Any]], tick: int, wall: WallClock) -> dict[str, Any]:
    """The spend an arm had reached at a tick: its model turns made by the tick's wall time when the records
    give one, else the sessions recorded by that tick."""
    at = wall.at(tick)
    turns = [turn for s in rows for turn in (s.get("log") or {}).get("turns", ())]
    if at is not None and turns:
        done = [turn for turn in turns if turn[0] <= at]
        return {"dollars": _r3(sum(turn[1] for turn in done)), "tokens": sum(turn[2] for turn in done)}
    ended = [s for s in rows if s["tick"] <= tick]
    return {"dollars": _r3(sum(s["cost_usd"] for s in ended)),
            "tokens": sum(s["input_tokens"] + s["output_tokens"] for s in ended)}


# ---- pacing ------------------------------------------------------------------------------------


def _pacing(metrics: MatchMetrics, agent: str, rows: list[dict[str, Any]], wall: WallClock) -> dict[str, Any]:
    out_rows = []
    for s in rows:
        log = s.get("log") or {}
        calls = log.get("calls", [])
        length = None if log.get("started_at") is None or log.get("ended_at") is None else log["ended_at"] - log["started_at"]
        ticks = None if log.get("start_tick") is None or log.get("end_tick") is None else log["end_tick"] - log["start_tick"]
        out_rows.append({"session": s["session"], "start_tick": log.get("start_tick"), "end_tick": log.get("end_tick"),
                         "started_at": iso(log.get("started_at")), "length_s": _r3(length), "length_ticks": ticks,
                         "end_reason": log.get("end_reason"), "wake_minutes": log.get("wake_minutes"),
                         "model_calls": len(log.get("turns", [])), "tool_calls": len(calls),
                         "world_calls": sum(1 for c in calls if c[4:5] != [False]), "failed_calls": sum(1 for c in calls if c[3] != "ok"),
                         "workspace_writes": len(log.get("writes", [])), "cost_usd": _r3(s["cost_usd"]),
                         "tokens": s["input_tokens"] + s["output_tokens"]})
    gaps_ticks, gaps_s = [], []
    for prev, nxt in zip(rows, rows[1:]):
        a, b = prev.get("log") or {}, nxt.get("log") or {}
        if a.get("end_tick") is not None and b.get("start_tick") is not None:
            gaps_ticks.append(b["start_tick"] - a["end_tick"])
        if a.get("ended_at") is not None and b.get("started_at") is not None:
            gaps_s.append(b["started_at"] - a["ended_at"])
    starts = [s["log"]["started_at"] for s in rows if s.get("log") and s["log"].get("started_at") is not None]
    ends = [s["log"]["ended_at"] for s in rows if s.get("log") and s["log"].get("ended_at") is not None]
    first, last = (min(starts), max(ends)) if starts and ends else (None, None)
    elapsed = None if first is None else last - first
    rate, spent = [], 0.0
    for s in rows:
        spent += s["cost_usd"]
        end = (s.get("log") or {}).get("ended_at")
        if end is not None and first is not None:
            rate.append([_r3((end - first) / 3600), _r3(spent)])
    down = sum(m["duration_s"] for s in rows for m in (s.get("log") or {}).get("interruptions", ()))
    quests = []
    for span in metrics.logs.get("quests", []):
        if span["agent"] != agent:
            continue
        done = span["completed_tick"]
        took, ended = wall.at(span["accepted_tick"]), wall.at(done) if done is not None else None
        quests.append({"quest": span["quest"], "accepted_tick": span["accepted_tick"], "completed_tick": done,
                       "ticks": None if done is None else done - span["accepted_tick"],
                       "wall_s": None if took is None or ended is None else _r3(ended - took), "evidence": span["evidence"]})
    completed = metrics.agents[agent].quests_completed if agent in metrics.agents else 0
    in_session = sum(r["length_s"] or 0.0 for r in out_rows)
    return {
        "sessions": out_rows,
        "session_length_s": _summary([r["length_s"] for r in out_rows if r["length_s"] is not None]),
        "session_length_ticks": _summary([r["length_ticks"] for r in out_rows if r["length_ticks"] is not None]),
        "wake_chosen_minutes": _summary([r["wake_minutes"] for r in out_rows if r["wake_minutes"] is not None]),
        "wake_actual_ticks": _summary(gaps_ticks),
        "wake_actual_s": _summary(gaps_s),
        "world_calls_per_session": _summary([r["world_calls"] for r in out_rows]),
        "spend_rate": {"points": rate, "dollars_per_hour": _r3(spent / (elapsed / 3600)) if elapsed else None},
        "quests": quests,
        "quest_ticks": _summary([q["ticks"] for q in quests if q["ticks"] is not None]),
        "wall_clock": {"elapsed_s": _r3(elapsed), "in_sessions_s": _r3(in_session), "interrupted_s": _r3(down),
                       "quests_completed": completed,
                       "per_quest_s": _r3(elapsed / completed) if elapsed is not None and completed else None,
                       "per_quest_uninterrupted_s": _r3((elapsed - down) / completed) if elapsed is not None and completed else None},
    }


# ---- failure modes -----------------------------------------------------------------------------


def _issuing_turn(turns: list[list[Any]], t: float) -> int:
    """The model turn that asked for a call made at wall time `t`: the last turn before it."""
    return max(bisect_right([turn[0] for turn in turns], t) - 1, 0)


def _session_stuck(s: dict[str, Any], streak: int) -> list[dict[str, Any]]:
    log = s.get("log") or {}
    calls, turns, out = log.get("calls", []), log.get("turns", []), []

    def state(kind: str, i: int, j: int, ended_by: str) -> dict[str, Any]:
        first, last = calls[i], calls[j]
        end = log.get("ended_at") if j == len(calls) - 1 and kind == "repetition" else last[0]
        spend = sum(turn[1] for turn in turns[_issuing_turn(turns, first[0]):_issuing_turn(turns, last[0]) + 1]) if turns else 0.0
        codes = sorted({c[3] for c in calls[i:j + 1]})
        return {"kind": kind, "session": s["session"], "start_tick": first[1], "end_tick": last[1],
                "started_at": iso(first[0]), "duration_s": _r3((end or last[0]) - first[0]),
                "duration_ticks": None if first[1] is None or last[1] is None else last[1] - first[1],
                "calls": j - i + 1, "tools": sorted({c[2] for c in calls[i:j + 1]}), "codes": codes, "cost_usd": _r3(spend),
                "ended_by": ended_by, "evidence": {"session": s["session"], "calls": [i + 1, j + 1]}}

    if log.get("end_reason") == "repetition" and calls:
        i = len(calls) - 1
        while i > 0 and calls[i - 1][2] == calls[-1][2]:
            i -= 1
        out.append(state("repetition", i, len(calls) - 1, f"the scaffold's repetition breaker ended session {s['session']}"))
    i = 0
    while i < len(calls):
        if calls[i][3] == "ok":
            i += 1
            continue
        j = i
        while j + 1 < len(calls) and calls[j + 1][3] != "ok":
            j += 1
        if j - i + 1 >= streak:
            if j + 1 < len(calls):
                why = "a call succeeded"
            elif log.get("end_reason") == "consecutive_errors":
                why = f"the scaffold's error breaker ended session {s['session']}"
            else:
                why = f"session {s['session']} ended ({log.get('end_reason') or 'unrecorded'})"
            out.append(state("error_streak", i, j, why))
        i = j + 1
    return out


def _failures(metrics: MatchMetrics, logged: dict[str, list[dict[str, Any]]], wall: WallClock, rubric: Rubric,
              clock_of) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in metrics.agents}
    for a, rows in logged.items():
        for s in rows:
            out[a] += _session_stuck(s, rubric.study.error_streak_calls)
    final = metrics.final_tick
    for a, am in metrics.agents.items():
        rows = logged.get(a, [])
        for start, end in am.idle_spans:
            if end - start < rubric.idle_threshold_ticks:
                continue
            during = [s["session"] for s in rows if (s.get("log") or {}).get("start_tick") is not None
                      and s["log"]["start_tick"] < end and (s["log"].get("end_tick") or final) >= start]
            out[a].append({"kind": "went_dark", "start_tick": start, "end_tick": end, "clock": clock_of(start),
                           "started_at": iso(wall.at(start)), "duration_ticks": end - start,
                           "duration_s": _r3(None if wall.at(start) is None or wall.at(end) is None else wall.at(end) - wall.at(start)),
                           "cost_usd": _spend_in(rows, wall.at(start), wall.at(end)) if rows else 0.0, "sessions": during,
                           "ended_by": "it acted again" if end < final else "the match ended",
                           "evidence": {"ticks": [start, end]}})
    for entry in metrics.logs.get("cancellations", []):
        a, tick, nxt = entry["agent"], entry["tick"], entry["next_tick"]
        end = final if nxt is None else nxt
        if a not in out or end - tick < rubric.study.abandon_ticks:
            continue
        rows = logged.get(a, [])
        out[a].append({"kind": "plan_abandoned", "start_tick": tick, "end_tick": end, "clock": clock_of(tick), "action": entry["action"],
                       "started_at": iso(wall.at(tick)), "duration_ticks": end - tick,
                       "duration_s": _r3(None if wall.at(tick) is None or wall.at(end) is None else wall.at(end) - wall.at(tick)),
                       "cost_usd": _spend_in(rows, wall.at(tick), wall.at(end)) if rows else 0.0,
                       "ended_by": "the match ended" if nxt is None else "it started another operation",
                       "evidence": {"events": entry["evidence"]}})
    for a in out:
        out[a].sort(key=lambda st: (st.get("start_tick") if st.get("start_tick") is not None else -1, st["kind"]))
    return out


# ---- service interruptions ---------------------------------------------------------------------


def _interruptions(rows: list[dict[str, Any]]) -> dict[str, Any]:
    events = [{"session": s["session"], **m, "at": iso(m["at"])} for s in rows for m in (s.get("log") or {}).get("interruptions", ())]
    by_kind: dict[str, dict[str, float]] = {}
    for m in events:
        k = by_kind.setdefault(m["kind"], {"count": 0, "seconds": 0.0})
        k["count"] += 1
        k["seconds"] = _r3(k["seconds"] + m["duration_s"])
    total = sum(m["duration_s"] for m in events)
    return {"events": events, "by_kind": dict(sorted(by_kind.items())), "count": len(events), "seconds": _r3(total),
            "line": (f"{len(events)} interruption{'s' if len(events) != 1 else ''}, about {round(total / 60, 1)} minutes "
                     "(" + ", ".join(_count(int(v["count"]), k) for k, v in sorted(by_kind.items())) + ")") if events
            else "no service interruption recorded"}


INTERRUPTIONS = {"retry": ("retry after a provider error", "retries after provider errors"),
                 "provider_error": ("provider failure that stopped the arm", "provider failures that stopped the arm"),
                 "run_stopped": ("stop of the run", "stops of the run"),
                 "transcript_refused": ("transcript the provider refused", "transcripts the provider refused")}


def _count(n: int, kind: str) -> str:
    one, many = INTERRUPTIONS.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"


def stuck_lines(failures: list[dict[str, Any]]) -> list[str]:
    """A card's disclosure of its stuck states other than dark spans (which the card discloses already)."""
    out = []
    for f in failures:
        cost = "" if f.get("cost_usd") is None else f", ${f['cost_usd']:.4f} spent in it"
        if f["kind"] == "repetition":
            tools = ", ".join(t if TOOL_NAME.fullmatch(t) else "a tool that does not exist" for t in f["tools"])
            out.append(f"Stuck repeating {tools} {f['calls']} times in session {f['session']}{cost}; "
                       f"{f['ended_by']}.")
        elif f["kind"] == "error_streak":
            codes = ", ".join(c if TOOL_NAME.fullmatch(c) else "an unnamed error" for c in f["codes"])
            out.append(f"{f['calls']} failed tool calls in a row in session {f['session']} ({codes}){cost}; "
                       f"ended: {f['ended_by']}.")
        elif f["kind"] == "plan_abandoned":
            out.append(f"Abandoned a plan at {f['clock']}: cancelled {f['action']} and started nothing for "
                       f"{f['duration_ticks']} ticks{cost}; {f['ended_by']}.")
    return out
