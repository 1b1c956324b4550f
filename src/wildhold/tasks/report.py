"""The suite's table (seed 002, Table 3) as text: one table per player, success % ± std over repeats per
category x difficulty, totals, mean steps and, for a model arm, tokens and dollars per task; in the
terminal, Markdown and one static HTML page (Jinja2, autoescaped). A pure function of the results."""

from __future__ import annotations

from typing import Any

import jinja2

from wildhold.eval.html import TEMPLATES
from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES
from wildhold.tasks.suite import tables

COLUMNS = (*DIFFICULTIES, "all")


def title(player: str, t: dict[str, Any]) -> str:
    return (f"{player}: {t['tasks']} task{'s' * (t['tasks'] != 1)} x {t['repeats']} repeat{'s' * (t['repeats'] != 1)}, "
            f"{t['clock']} clock")


def success(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("success") is None:
        return "-" if not cell else f"error (n={cell['attempts']})"
    errors = f", {cell['errors']} error{'s' * (cell['errors'] != 1)}" if cell["errors"] else ""
    spread = "" if cell["std"] is None else f" ± {cell['std']:.1f}"
    return f"{cell['success']:.1f}{spread} (n={cell['attempts']}{errors})"


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def rows(t: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows as text: one row per category present, then the totals."""
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


CAPTION = ("success: mean ± std over repeats of the share of tasks solved (%); n: attempts; steps: agent turns "
           "(a scripted policy's actions, a model arm's model calls), mean per attempt")
SPEND_CAPTION = "; tokens and $ per task: a model arm's spend, mean per attempt"


def caption(results: list[dict[str, Any]]) -> str:
    return CAPTION + (SPEND_CAPTION if any("tokens" in r for r in results) else "")


def _escape_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(results: list[dict[str, Any]]) -> str:
    lines = []
    for player, t in tables(results).items():
        header, body = rows(t)
        lines += [f"### Tasks: {_escape_cell(title(player, t))}", "",
                  "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_escape_cell(c) for c in row) + " |" for row in body]
        lines += ["", f"_{caption(results)}_", ""]
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
        players.append({"title": title(player, t), "header": header, "rows": body,
                        "attempts": [r for r in results if r["policy"] == player]})
    return env.get_template("tasks.html.j2").render(players=players, caption=caption(results),
                                                    errors=[r for r in results if r["status"] == "error"])
