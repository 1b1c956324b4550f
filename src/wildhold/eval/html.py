"""The match report as one static HTML page (Jinja2, no scripts, no network): scorecards, the
standings, seed 000's Table 3 with the composite score, the trial table, charts drawn here as
inline SVG, each agent's epilogue beside its log, and the manifest. A pure function of the report.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from wildhold.eval.chart import DOLLARS, PERCENT, QUANTITIES, Quantity, Unit, axes, axis, coord, legend, margins, plane, svg
from wildhold.eval.metrics import CATEGORIES
from wildhold.eval.report import clock, money, plural, verification_line
from wildhold.looks import palette

TEMPLATES = Path(__file__).parent / "templates"
CATEGORY_COLOURS = {
    "production": "#4E79A7", "construction": "#F28E2B", "combat": "#E15759",
    "maintenance": "#76B7B2", "movement": "#BAB0AC", "social": "#59A14F", "other": "#B07AA1",
}


# ---- charts (drawn with eval.chart's axes, units and legends) -----------------------------------

_t, _svg, _legend = coord, svg, legend
MARK_PX = 6.0  # marks of one kind closer than this on the page are drawn as one, whose title counts them
TITLE_ITEMS = 1  # what a merged mark's title lists before "and N more"
DOTS_SHOWN = 40  # a spend line of more sessions than this is drawn without a dot per session


def _near(marks: list[tuple[float, str, str]], sx) -> list[tuple[float, str, list[tuple[float, str]]]]:
    """Marks (x, key, what) grouped by key where they fall within MARK_PX of a group's first: a long match's
    hundreds of incidents stay readable (and the page light) as one mark per cluster."""
    groups: list[tuple[float, str, list[tuple[float, str]]]] = []
    latest: dict[str, tuple[float, str, list[tuple[float, str]]]] = {}
    for x, key, what in sorted(marks, key=lambda m: m[0]):
        group = latest.get(key)
        if group is not None and sx(x) - sx(group[0]) < MARK_PX:
            group[2].append((x, what))
        else:
            latest[key] = group = (x, key, [(x, what)])
            groups.append(group)
    return groups


def _titled(items: list[tuple[float, str]], at, noun: str) -> str:
    """A mark's title: what it stands for, or how many it merges, between when, and the first few."""
    if len(items) == 1:
        return f"{items[0][1]} at {at(items[0][0])}"
    listed = "; ".join(f"{what} at {at(x)}" for x, what in items[:TITLE_ITEMS])
    more = f"; and {len(items) - TITLE_ITEMS} more" if len(items) > TITLE_ITEMS else ""
    return f"{len(items)} {noun} from {at(items[0][0])} to {at(items[-1][0])}: {listed}{more}"


def _incidents_along_top(marks: list[tuple[float, str, str]], sx, top: float, at) -> list[str]:
    """Incidents as triangles along the top of a plot, in their character's colour, nearby ones merged."""
    return [f'<path class="incident" d="M{_t(sx(x) - 5)} {_t(top + 2)} L{_t(sx(x) + 5)} {_t(top + 2)} L{_t(sx(x))} {_t(top + 10)} Z" '
            f'fill="{colour}" stroke="#222" stroke-width="0.6"><title>{escape(_titled(items, at, "incidents"))}</title></path>'
            for x, colour, items in _near(marks, sx)]


def activity_chart(rows: list[tuple[str, dict[str, int]]], width: int = 1140) -> Markup:
    """Seed 000 Figure 5: each agent's executed actions by category, as a 100% bar."""
    cats = list(CATEGORIES) + sorted({c for _, counts in rows for c in counts} - set(CATEGORIES))
    legend, lh = _legend([(c, CATEGORY_COLOURS.get(c, "#999")) for c in cats], 170, 18, width - 180)
    top, bar, gap, left, right = 18 + lh + 6, 26, 12, 170, 90
    height = int(top + len(rows) * (bar + gap) + 28)
    span = width - left - right
    body = list(legend)
    for i, (label, counts) in enumerate(rows):
        y = top + i * (bar + gap)
        total = sum(counts.values())
        body.append(f'<text x="{left - 10}" y="{_t(y + bar / 2 + 4)}" font-size="13" text-anchor="end" fill="#222">{escape(label)}</text>')
        body.append(f'<text x="{width - right + 8}" y="{_t(y + bar / 2 + 4)}" font-size="12" fill="#555">{total} actions</text>')
        if not total:
            body.append(f'<rect x="{left}" y="{_t(y)}" width="{span}" height="{bar}" fill="#f3f3f3" stroke="#ddd"/>'
                        f'<text x="{_t(left + span / 2)}" y="{_t(y + bar / 2 + 4)}" font-size="12" text-anchor="middle" fill="#777">no executed actions</text>')
            continue
        x = left
        for c in cats:
            n = counts.get(c, 0)
            if not n:
                continue
            w = span * n / total
            body.append(f'<rect x="{_t(x)}" y="{_t(y)}" width="{_t(w)}" height="{bar}" fill="{CATEGORY_COLOURS.get(c, "#999")}">'
                        f'<title>{escape(c)}: {n} ({100 * n / total:.0f}%)</title></rect>')
            if w >= 34:
                body.append(f'<text x="{_t(x + w / 2)}" y="{_t(y + bar / 2 + 4)}" font-size="12" text-anchor="middle" fill="#fff">{100 * n / total:.0f}%</text>')
            x += w
    for pct in (0, 25, 50, 75, 100):
        x = left + span * pct / 100
        body.append(f'<text x="{_t(x)}" y="{height - 8}" font-size="11" text-anchor="middle" fill="#666">{pct}%</text>')
    return _svg(width, height, body, "Activity composition by category")


def _time_ticks(start: int, end: int, per_day: int) -> list[int]:
    """Tick marks at day boundaries, or at round hours when the match is short."""
    span = max(end - start, 1)
    if span >= 2 * per_day:
        step = per_day * max(1, math.ceil(span / per_day / 10))
    else:
        step = 60 * next(h for h in (1, 2, 3, 4, 6, 12, 24) if span / (60 * h) <= 10)
    first = -(-start // step) * step
    return list(range(first, end + 1, step))


def line_chart(series: list[tuple[str, str, list[list[float]]]], start: int, end: int, per_day: int, y: Quantity,
               width: int = 580, height: int = 320, title: str = "", marks: list[tuple[int, str, str]] = ()) -> Markup:
    """Lines over match time, one per agent, with a legend underneath: [tick, value as stored] points shown in
    `y`'s unit; `marks` (tick, colour, what) are incidents, drawn as triangles along the top at their tick."""
    ys = [p[1] for _, _, pts in series for p in pts] or [0]
    yt = axis(min(0, min(ys)), max(ys), y.unit)
    lo, hi = yt[0][0], yt[-1][0]
    times = _time_ticks(start, end, per_day)
    tlabels = [clock(t, per_day).rsplit(" ", 1)[0] if (end - start) >= 2 * per_day else clock(t, per_day).split(" ")[-1]
               for t in times]
    x0, right = margins([s for _, s in yt], tlabels)
    y0 = 14
    items, lh = legend([(label, colour) for label, colour, _ in series], x0, height - 12, width - x0 - right)
    w, h = width - x0 - right, height - y0 - 60
    sx = lambda t: x0 + w * (t - start) / max(end - start, 1)  # noqa: E731
    sy = lambda v: y0 + h - h * (v - lo) / (hi - lo)  # noqa: E731
    body = axes(x0, y0, w, h, [(sx(t), s) for t, s in zip(times, tlabels)], [(sy(v), s) for v, s in yt], "match time", y.title)
    if lo < 0 < hi:
        body.append(f'<line x1="{_t(x0)}" x2="{_t(x0 + w)}" y1="{_t(sy(0))}" y2="{_t(sy(0))}" stroke="#999"/>')
    for label, colour, pts in series:
        if not pts:
            continue
        coords = " ".join(f"{_t(sx(t))},{_t(sy(v))}" for t, v in pts)
        body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2.2" stroke-linejoin="round" points="{coords}"><title>{escape(label)}</title></polyline>')
    body += _incidents_along_top(marks, sx, y0, lambda t: clock(int(t), per_day))
    body.extend(items)
    return _svg(width, int(height + lh), body, title or y.title)


def spend_chart(series: list[tuple[str, str, list[list[float]]]], x: Quantity, y: Quantity, width: int = 560,
                height: int = 300, title: str = "", marks: list[tuple[float, str, str]] = ()) -> Markup:
    """Progress against cumulative spend, one line per agent with a dot per session: [x, y] points as stored, shown
    in the quantities' units; `marks` (x, colour, what) are incidents, drawn as triangles along the top at the
    spend their agent had reached."""
    p = plane([a for _, _, pts in series for a, _ in pts] + [m[0] for m in marks], [b for _, _, pts in series for _, b in pts],
              x, y, [(label, colour) for label, colour, _ in series], width, height)
    sx, sy, y0, body = p.x, p.y, p.top, p.frame
    xtext, ytext = (lambda v: x.unit.text(v, 4 if x.unit is DOLLARS else 0)), (lambda v: y.unit.text(v, 0 if y.unit.whole else 2))
    for label, colour, pts in series:
        if not pts:
            continue
        coords = " ".join(f"{_t(sx(a))},{_t(sy(b))}" for a, b in pts)
        body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2.2" stroke-linejoin="round" points="{coords}"><title>{escape(label)}</title></polyline>')
        if len(pts) <= DOTS_SHOWN:
            body += [f'<circle cx="{_t(sx(a))}" cy="{_t(sy(b))}" r="3" fill="{colour}"><title>{escape(label)}: {escape(ytext(b))} at {escape(xtext(a))}</title></circle>'
                     for a, b in pts]
    body += _incidents_along_top(marks, sx, y0, xtext)
    return _svg(width, p.total_height, body + p.key, title or f"{y.title} against {x.title}")


HOURS = Quantity("wall-clock hours since the first session", Unit("hours"))
CLEAR_RATE = Quantity("clears per attempt (%)", PERCENT)
DAMAGE = Quantity("mean damage taken per clear (health)", Unit("health"))
SPEND_AXES = ("dollars", "tokens")  # the report's spend curves' keys, named in eval.chart.QUANTITIES
SPEND_MEASURES = ("quests", "trial_stages", "wealth_cents")


def spend_charts(curves: dict[str, Any], names: dict[str, str], colour: dict[str, str],
                 annotations: dict[str, list[dict[str, Any]]] | None = None) -> list[tuple[str, Markup]]:
    """Quests, trial stages and wealth against cumulative dollars and against cumulative tokens; with
    `annotations` (the study block's), each arm's incidents marked at the spend it had reached."""
    out = []
    for key in SPEND_MEASURES:
        for axis_key in SPEND_AXES:
            x, y = QUANTITIES[axis_key], QUANTITIES[key]
            series = [(names[a], colour[a], [[p[axis_key], p[key]] for p in arm["points"]]) for a, arm in curves[axis_key].items()]
            marks = [(m[axis_key], colour[a], f"{names[a]}: incident {m['n']} ({m['kind']})")
                     for a in curves[axis_key] for m in (annotations or {}).get(a, [])]
            title = f"{y.title.split(' (')[0].capitalize()} against {x.title}"
            out.append((title, spend_chart(series, x, y, title=title, marks=marks)))
    return out


LANE_MARKS = {"quest": ("quest completed", "quests completed"), "knockdown": ("knocked down", "knockdowns"),
              "incident": ("incident", "incidents")}  # (what one mark is, what merged ones are) on a timeline lane


def timeline_chart(lanes: list[tuple[str, str, list[tuple[int, str, str]]]], start: int, end: int, per_day: int,
                   width: int = 1140, title: str = "Quests and achievements over time") -> Markup:
    """One lane per agent along match time: a diamond (labelled) for each trial stage or task
    attained, a dot for each quest completed, a cross for each knockdown. Marks: (tick, kind, label)."""
    left, right, lane, top = 150, 200, 54, 30
    height = top + lane * len(lanes) + 46
    span = width - left - right
    sx = lambda t: left + span * (t - start) / max(end - start, 1)  # noqa: E731
    at = lambda t: clock(int(t), per_day)  # noqa: E731
    body = []
    legend = [("◆", "trial stage or task"), ("●", "quest completed"), ("✕", "knockdown")]
    if any(kind == "incident" for _, _, marks in lanes for _, kind, _ in marks):
        legend.append(("▼", "incident with another character"))
    x = left
    for glyph, label in legend:
        body.append(f'<text x="{x}" y="16" font-size="12" fill="#333">{glyph} {escape(label)}</text>')
        x += 36 + 7 * len(label)
    for t in _time_ticks(start, end, per_day):
        label = clock(t, per_day) if (end - start) < 2 * per_day else clock(t, per_day).rsplit(" ", 1)[0]
        body.append(f'<line x1="{_t(sx(t))}" x2="{_t(sx(t))}" y1="{top}" y2="{top + lane * len(lanes)}" stroke="#e6e6e6"/>'
                    f'<text x="{_t(sx(t))}" y="{top + lane * len(lanes) + 16}" font-size="11" text-anchor="middle" fill="#555">{escape(label)}</text>')
    body.append(f'<text x="{_t(left + span / 2)}" y="{height - 6}" font-size="12" text-anchor="middle" fill="#333">match time</text>')
    for i, (name, colour, marks) in enumerate(lanes):
        y = top + lane * i + lane / 2
        stages = sum(1 for _, k, _ in marks if k == "achievement")
        quests = sum(1 for _, k, _ in marks if k == "quest")
        downs = sum(1 for _, k, _ in marks if k == "knockdown")
        body.append(f'<line x1="{left}" x2="{left + span}" y1="{_t(y)}" y2="{_t(y)}" stroke="{colour}" stroke-opacity="0.35" stroke-width="6" stroke-linecap="round"/>'
                    f'<text x="{left - 10}" y="{_t(y + 4)}" font-size="13" text-anchor="end" fill="#222">{escape(name)}</text>'
                    f'<text x="{left + span + 10}" y="{_t(y + 4)}" font-size="11" fill="#444">{stages} achieved · {plural(quests, "quest")} · {plural(downs, "down")}</text>')
        last_label_x = [-1e9, -1e9]  # labels alternate above and below the lane, each row spaced apart
        for t, _, label in sorted(m for m in marks if m[1] == "achievement"):  # each drawn: few, and labelled
            cx = sx(t)
            body.append(f'<path d="M{_t(cx)} {_t(y - 8)} L{_t(cx + 7)} {_t(y)} L{_t(cx)} {_t(y + 8)} L{_t(cx - 7)} {_t(y)} Z" fill="{colour}" stroke="#222" stroke-width="0.8">'
                        f'<title>{escape(label)} at {escape(at(t))}</title></path>')
            room = 6.2 * len(label) + 8
            for row, dy in ((0, -12), (1, 21)):
                if cx - last_label_x[row] > room:
                    body.append(f'<text x="{_t(cx)}" y="{_t(y + dy)}" font-size="10.5" text-anchor="middle" fill="#222">{escape(label)}</text>')
                    last_label_x[row] = cx
                    break
        for t, kind, items in _near([(t, kind, label or LANE_MARKS[kind][0]) for t, kind, label in marks if kind != "achievement"], sx):
            cx, what = sx(t), escape(_titled(items, at, LANE_MARKS[kind][1]))
            if kind == "quest":
                body.append(f'<circle cx="{_t(cx)}" cy="{_t(y)}" r="4" fill="{colour}" stroke="#fff" stroke-width="1"><title>{what}</title></circle>')
            elif kind == "incident":
                body.append(f'<path class="incident" d="M{_t(cx - 5)} {_t(y - 17)} L{_t(cx + 5)} {_t(y - 17)} L{_t(cx)} {_t(y - 9)} Z" fill="#444">'
                            f'<title>{what}</title></path>')
            else:
                body.append(f'<text x="{_t(cx)}" y="{_t(y + 5)}" font-size="13" text-anchor="middle" fill="#b42318">✕<title>{what}</title></text>')
    return _svg(width, height, body, title)


def level_bars(levels: list[str], series: list[tuple[str, str, list[float | None]]], y: Quantity, ymax: float | None = None,
               width: int = 580, height: int = 320, title: str = "") -> Markup:
    """Grouped bars: one group per dungeon level, one bar per agent, each labelled in `y`'s unit; a dash where it
    never got there."""
    vals = [v for _, _, vs in series for v in vs if v is not None]
    yt = axis(0, ymax if ymax is not None else max(vals, default=0), y.unit)
    x0, right = margins([s for _, s in yt], [""])
    y0 = 14
    items, lh = legend([(label, colour) for label, colour, _ in series], x0, height - 12, width - x0 - right)
    w, h = width - x0 - right, height - y0 - 60
    hi = yt[-1][0]
    sy = lambda v: y0 + h - h * v / hi  # noqa: E731
    group = w / max(len(levels), 1)
    bw = min(28, (group - 16) / max(len(series), 1))
    xt = [(x0 + group * (i + 0.5), name) for i, name in enumerate(levels)]
    body = axes(x0, y0, w, h, xt, [(sy(v), s) for v, s in yt], "dungeon level", y.title)
    for i in range(len(levels)):
        gx = x0 + group * i + (group - bw * len(series)) / 2
        for j, (label, colour, vs) in enumerate(series):
            v = vs[i]
            x = gx + j * bw
            if v is None:
                body.append(f'<text x="{_t(x + bw / 2)}" y="{_t(y0 + h - 4)}" font-size="11" text-anchor="middle" fill="#aaa">–</text>')
                continue
            shown = y.unit.text(v, 0)
            body.append(f'<rect x="{_t(x + 1)}" y="{_t(sy(v))}" width="{_t(bw - 2)}" height="{_t(y0 + h - sy(v))}" fill="{colour}">'
                        f'<title>{escape(label)}, {escape(levels[i])}: {escape(shown)}</title></rect>')
            body.append(f'<text x="{_t(x + bw / 2)}" y="{_t(sy(v) - 4)}" font-size="10" text-anchor="middle" fill="#333">{escape(shown)}</text>')
    body.extend(items)
    return _svg(width, int(height + lh), body, title or y.title)


def dimension_bars(scores: dict[str, float], colour: str) -> Markup:
    """A card's five dimensions as labelled bars out of 100."""
    rows = list(scores.items())
    width, left, bar = 300, 118, 14
    height = len(rows) * 22 + 4
    body = []
    for i, (dim, v) in enumerate(rows):
        y = 4 + i * 22
        span = width - left - 44
        body.append(f'<text x="{left - 8}" y="{y + 11}" font-size="12" text-anchor="end" fill="#333">{escape(dim.title())}</text>'
                    f'<rect x="{left}" y="{y}" width="{span}" height="{bar}" rx="3" fill="#eee"/>'
                    f'<rect x="{left}" y="{y}" width="{_t(span * max(0.0, min(v, 100.0)) / 100)}" height="{bar}" rx="3" fill="{colour}"/>'
                    f'<text x="{left + span + 6}" y="{y + 11}" font-size="12" fill="#222">{v:.1f}</text>')
    return _svg(width, height, body, "dimension scores")


# ---- the page --------------------------------------------------------------------------------


INCIDENTS_LISTED = 150  # a longer incident log is tabled by kind and parties (the JSON report keeps every one)


def incident_groups(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A long incident log in one row per kind and parties, in order of the first: how many, from when to when,
    whether a study pair's, and the events cited; each incident stays in the report's JSON with its own evidence."""
    rows: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for i in log:
        row = rows.setdefault((i["kind"], tuple(i["names"])), {"kind": i["kind"], "names": i["names"], "count": 0,
                                                              "first": i, "study_pair": i["study_pair"], "evidence": 0})
        row["count"] += 1
        row["last"] = i
        row["evidence"] += len(i["evidence"])
    return list(rows.values())


def _log_highlights(report: dict[str, Any], agent: str, limit: int = 14) -> list[str]:
    """The agent's own record in a few lines, in time order: what the epilogue can be judged against."""
    per_day = report["match"]["ticks_per_day"]
    m = report["metrics"][agent]
    lines: list[tuple[int, str]] = [(m["spawn_tick"], "joined the match")]
    lines += [(t, "knocked down") for t in m["knockdown_ticks"]]
    lines += [(t, f"attained {label}") for t, label in report["curves"]["achievements"][agent]]
    lines += [(t, "completed a quest") for t in report["curves"]["quests"][agent]]
    card = next(c for c in report["agents"] if c["agent"] == agent)
    lines += [(s, f"went dark for {e - s} ticks") for s, e in card["idle"]["dark_spans"]]
    lines.sort(key=lambda x: x[0])
    shown = [f"{clock(t, per_day)}: {text}" for t, text in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"... and {len(lines) - limit} more")
    by_programs = f", {m['program_actions']} by programs" if m.get("program_actions") else ""
    totals = (f"{m['actions']} actions ({m['rejected']} rejected{by_programs}), {m['goods']} goods, {m['crafts']} crafts, "
              f"{m['exchanges']} exchanges, {m['messages']} messages; tiles walked: {m['moves']}; "
              f"wealth {money(m['wealth_start_cents'])} -> {money(m['wealth_cents'])}")
    return [totals, *shown]


def render_html(report: dict[str, Any]) -> str:
    """The report page. Same report, same bytes."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    match = report["match"]
    per_day = match["ticks_per_day"]
    ids = list(report["metrics"])
    names = {a: report["metrics"][a]["name"] for a in ids}
    by_name = palette.colours(names[a] for a in ids)  # joining order: as the viewer and the live page colour them
    colour = {a: by_name[names[a]] for a in ids}
    start, end = match["start_tick"], match["final_tick"]
    charts: dict[str, Markup | None] = {}
    study = report.get("study")
    charts["activity"] = activity_chart([(names[a], report["activity"][a]["counts"]) for a in ids])
    incident_marks = [(i["tick"], colour[p], f"{names[p]}: incident {i['n']} ({i['kind']})")
                      for i in (study["incidents"]["log"] if study else []) for p in dict.fromkeys(i["parties"])]
    charts["wealth"] = line_chart([(names[a], colour[a], report["curves"]["wealth"][a]) for a in ids], start, end, per_day,
                                  QUANTITIES["wealth_cents"], title="Wealth over time", width=1140, height=340, marks=incident_marks)
    lanes = []
    for a in ids:
        marks = [(t, "achievement", label) for t, label in report["curves"]["achievements"][a]]
        marks += [(t, "quest", "") for t in report["curves"]["quests"][a]]
        marks += [(t, "knockdown", "") for t in report["metrics"][a]["knockdown_ticks"]]
        if study is not None:
            marks += [(i["tick"], "incident", f"incident {i['n']}: {i['kind']} ({' -> '.join(i['names'])})")
                      for i in study["incidents"]["log"] if a in i["parties"]]
        lanes.append((names[a], colour[a], marks))
    charts["timeline"] = timeline_chart(lanes, start, end, per_day)
    curves = report["curves"]
    spend = spend_charts(curves, names, colour, study["incidents"]["annotations"] if study else None) if curves["tokens"] else []
    if study is not None and study["pacing"]:
        charts["spend_rate"] = spend_chart([(names[a], colour[a], p["spend_rate"]["points"]) for a, p in study["pacing"].items()],
                                           HOURS, QUANTITIES["dollars"], width=1140, title="Spend over wall-clock time")
    dungeon = report["dungeon"]
    if dungeon["recorded"]:
        level_names = [lv["name"] for lv in dungeon["levels"]]
        keys = [lv["level"] for lv in dungeon["levels"]]
        rows = {r["agent"]: r["levels"] for r in dungeon["rows"]}
        charts["clear_rate"] = level_bars(level_names, [(names[a], colour[a], [None if rows[a][k] is None or rows[a][k]["clear_rate"] is None
                                                                               else 100 * rows[a][k]["clear_rate"] for k in keys]) for a in ids],
                                          CLEAR_RATE, ymax=100, title="Clear rate by level")
        charts["damage"] = level_bars(level_names, [(names[a], colour[a], [None if rows[a][k] is None or rows[a][k]["mean_damage"] is None
                                                                           else rows[a][k]["mean_damage"] for k in keys]) for a in ids],
                                      DAMAGE, title="Damage per clear by level")
    cards = []
    for card in report["agents"]:
        a = card["agent"]
        cards.append({**card, "colour": colour[a], "bars": dimension_bars(card["scores"], colour[a]),
                      "log": _log_highlights(report, a), "epilogue": report["epilogues"].get(a)})
    manifest = report["manifest"]
    plain = {k: v for k, v in manifest.items() if not isinstance(v, (dict, list))}
    nested = {k: v for k, v in manifest.items() if isinstance(v, (dict, list)) and k not in ("agents", "epilogues")}
    return env.get_template("report.html.j2").render(
        r=report, match=match, cards=cards, charts=charts, names=names, colour=colour, ids=ids,
        clock=lambda t: clock(t, per_day), manifest_plain=plain, manifest_nested=nested, spend=spend,
        manifest_agents=manifest.get("agents", []), categories=CATEGORIES, study=study,
        verification=verification_line(report.get("verification")),
        dots_shown=DOTS_SHOWN, incident_groups=incident_groups(study["incidents"]["log"]) if study and len(study["incidents"]["log"]) > INCIDENTS_LISTED else None,
    )
