"""The suite's table (seed 002, Table 3) as text: one table per player, success % per category x difficulty
and totals as mean ± sample std over repeats with the 95% interval of the mean, mean steps and, for a model
arm, tokens and dollars per task; and the same means in seed 002's own layout (difficulty rows, category
columns, mean ± std), to set beside it. In the terminal, Markdown and one static HTML page (Jinja2,
autoescaped). A pure function of the results."""

from __future__ import annotations

from typing import Any

import jinja2

from wildhold.eval.html import TEMPLATES
from wildhold.eval.stats import interval_text
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES
from wildhold.tasks.suite import tables

COLUMNS = (*DIFFICULTIES, "all")
LAYOUTS = ("wildhold", "seed002")  # this suite's table, or seed 002's Table 3 layout


def title(player: str, t: dict[str, Any], layout: str = "wildhold") -> str:
    return (f"{player}: {t['tasks']} task{'s' * (t['tasks'] != 1)} x {t['repeats']} repeat{'s' * (t['repeats'] != 1)}, "
            f"{t['clock']} clock" + (", as seed 002's Table 3" if layout == "seed002" else ""))


def mean_std(cell: dict[str, Any] | None) -> str:
    """`mean ± std` of a cell's success rate (the mean alone from one repeat); '-' for no cell."""
    if not cell or cell.get("success") is None:
        return "-" if not cell else f"error (n={cell['attempts']})"
    return f"{cell['success']:.1f}" + ("" if cell["std"] is None else f" ± {cell['std']:.1f}")


def success(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("success") is None:
        return mean_std(cell)
    errors = f", {cell['errors']} error{'s' * (cell['errors'] != 1)}" if cell["errors"] else ""
    ci = "" if cell["ci95"] is None else f" {interval_text(cell, 1)}"
    return f"{mean_std(cell)}{ci} (n={cell['attempts']}{errors})"


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def seed002_rows(t: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Seed 002's Table 3 for one player: a row per difficulty and the total, a column per category present and
    the total, each cell mean ± std."""
    cells = t["cells"]
    categories = [c for c in CATEGORIES if f"{c}/all" in cells]
    header = ["difficulty", *categories, "total"]
    out = [[diff, *(mean_std(cells.get(f"{c}/{diff}")) for c in [*categories, "total"])]
           for diff in (*DIFFICULTIES, "all") if cells.get(f"total/{diff}")]
    return header, [["total", *row[1:]] if row[0] == "all" else row for row in out]


def rows(t: dict[str, Any], layout: str = "wildhold") -> tuple[list[str], list[list[str]]]:
    """The table's header and rows as text: one row per category present, then the totals (or seed 002's)."""
    if layout == "seed002":
        return seed002_rows(t)
    cells = t["cells"]
    header = ["category", *COLUMNS, "mean steps"] + (["tokens / task", "$ / task"] if t["model"] else [])
    out = []
    for cat in [*CATEGORIES, "total"]:
        whole = cells.get(f"{cat}/all")
        if not whole:
            continue
        row = [cat, *(success(cells.get(f"{cat}/{c}")) for c in COLUMNS), _number(whole["steps"], ".1f")]
        if t["model"]:
            row += [_number(whole.get("tokens"), ",.0f"), _number(whole.get("dollars"), ".4f")]
        out.append(row)
    return header, out


CAPTION = ("success: the share of tasks solved (%) per repeat, as mean ± sample std (n-1) over repeats, then "
           "the 95% interval of that mean, in brackets: Student-t over repeats, clipped to 0-100 (a BCa bootstrap from 30 "
           "repeats on, marked BCa); n: attempts; steps: agent turns (the actions a scripted policy or an outside "
           "agent submitted itself, a model arm's model calls), mean per attempt")
SPEND_CAPTION = ("; tokens and $ per task: a model arm's spend, or an outside agent's metered by the proxy, mean "
                 "per attempt")
SEED002_CAPTION = ("success rate (%) by difficulty x category, in seed 002's Table 3 layout and convention: the "
                   "share of tasks solved per repeat, mean ± sample std (n-1) over repeats (the other table gives "
                   "each cell's 95% interval and counts)")


def caption(results: list[dict[str, Any]], layout: str = "wildhold") -> str:
    if layout == "seed002":
        return SEED002_CAPTION
    return CAPTION + (SPEND_CAPTION if any("tokens" in r for r in results) else "")


def _escape_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(results: list[dict[str, Any]]) -> str:
    lines = []
    for player, t in tables(results).items():
        for layout in LAYOUTS:
            header, body = rows(t, layout)
            lines += [f"### Tasks: {_escape_cell(title(player, t, layout))}", "",
                      "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(_escape_cell(c) for c in row) + " |" for row in body]
            lines += ["", f"_{caption(results, layout)}_", ""]
    errors = [r for r in results if r["status"] == "error"]
    if errors:
        lines += ["Task errors (a set-up the world refused; never counted against the player):", ""]
        lines += [f"- {_escape_cell(r['task'])} r{r['repeat']} ({_escape_cell(r['policy'])}): {_escape_cell(r['error'])}"
                  for r in errors]
        lines.append("")
    return "\n".join(lines)


def html(results: list[dict[str, Any]]) -> str:
    """The results page. Same results, same bytes."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    players = []
    for player, t in tables(results).items():
        header, body = rows(t)
        seed002_header, seed002_body = seed002_rows(t)
        players.append({"title": title(player, t), "header": header, "rows": body,
                        "seed002": {"title": title(player, t, "seed002"), "header": seed002_header, "rows": seed002_body},
                        "attempts": [r for r in results if r["policy"] == player]})
    return env.get_template("tasks.html.j2").render(players=players, caption=caption(results),
                                                    seed002_caption=caption(results, "seed002"),
                                                    errors=[r for r in results if r["status"] == "error"])
