"""Markdown tables and bullet lists: the rules document's sections are written with these, by the
document itself and by each world part for its own sections."""

from __future__ import annotations

from typing import Any


def cell(value: Any) -> str:
    if value is None or value == {} or value == []:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out + [""]


def bullets(lines: list[str]) -> list[str]:
    return [f"- {line}" for line in lines] + [""]


def settings(values: dict[str, Any]) -> list[str]:
    """A table of a part's settings: each content key and its value."""
    return table(["setting", "value"], [[f"`{k}`", v] for k, v in values.items()])
