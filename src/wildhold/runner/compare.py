"""`wildhold compare A B`: two configurations (or two sweeps) side by side on every measure, per protocol: each
side's n, mean, std and 95% interval over seeds, and B - A with the interval and the test of one design (paired
over the seeds both sides ran, else Welch; wildhold.eval.stats). Markdown, HTML (every string escaped) and JSON.
Each cell's measures are first recomputed from its verified archives (`runner.cells.verify_cell`); a sweep's
results.json is a note of them, never a source of its own."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from wildhold.eval.identity import labels
from wildhold.eval.stats import DIFFERENCE, INTERVAL, PAIRED, describe, difference, interval_text, show
from wildhold.runner.summary import DIGITS, MEASURES, seed_values


class CompareError(ValueError):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def _results(folder: Path) -> list[dict[str, Any]]:
    path = folder / "results.json"
    if not path.is_file():
        raise CompareError(f"{folder} holds no results.json: give a folder `wildhold sweep` wrote", "compare_not_a_sweep")
    return json.loads(path.read_text())["results"]


def _verified(cells: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The cells, each held to its archives first (`verify_cell`): a cell whose result does not follow from them is
    refused, naming it and what differs."""
    from wildhold.runner.cells import CellUnverified, verify_cell
    from wildhold.store.archive import ArchiveError

    for r in cells:
        try:
            verify_cell(r, folder / "cells" / r["cell"])
        except (ArchiveError, CellUnverified) as exc:
            raise CompareError(f"{folder}: {exc}", getattr(exc, "code", CellUnverified.code)) from None
    return cells


def _pick(results: list[dict[str, Any]], selector: str | None, where: str) -> list[dict[str, Any]]:
    """The cells of one configuration: named by arm, label or a prefix of its key; none needed when only one."""
    identities = {r["config"]: r["identity"] for r in results}
    names = labels(identities)
    if selector is None:
        if len(identities) != 1:
            raise CompareError(f"{where} holds {len(identities)} configurations ({', '.join(sorted(names.values()))}); "
                               "name one (an arm, a label or a key prefix)", "compare_ambiguous")
        return results
    keys = {r["config"] for r in results if r["arm"] == selector or names[r["config"]] == selector
            or r["config"].startswith(selector)}
    if len(keys) != 1:
        found = "none" if not keys else f"{len(keys)} ({', '.join(sorted(names[k] for k in keys))})"
        raise CompareError(f"{selector!r} names {found} of the configurations in {where}: "
                           f"{', '.join(sorted(names.values()))}", "compare_unknown_config")
    return [r for r in results if r["config"] in keys]


def side(spec: str, sweep: Path | None) -> tuple[str, list[dict[str, Any]], Path]:
    """A side: a sweep folder (`DIR`, or `DIR@CONFIG`), or a configuration of `sweep`; its label, cells and folder."""
    folder, _, selector = spec.partition("@")
    if Path(folder).is_dir():
        where = Path(folder)
        cells = _pick(_results(where), selector or None, folder)
    elif sweep is not None:
        where = sweep
        cells = _pick(_results(sweep), spec, str(sweep))
    else:
        raise CompareError(f"{spec!r} is not a sweep folder; to name a configuration, give the sweep with --sweep DIR",
                           "compare_not_a_sweep")
    ident = cells[0]["identity"]
    return labels({cells[0]["config"]: ident})[cells[0]["config"]], cells, where


def compare(a: str, b: str, sweep: Path | None = None, *, trust: bool = False) -> dict[str, Any]:
    """Each side's cells (verified against their archives unless `trust`), compared on every measure."""
    label_a, cells_a, where_a = side(a, sweep)
    label_b, cells_b, where_b = side(b, sweep)
    if not trust:  # both sides named well first: checking every cell against its archives is the slow part
        _verified(cells_a, where_a)
        _verified(cells_b, where_b)
    if label_a == label_b and cells_a[0]["config"] != cells_b[0]["config"]:  # one label, two configurations: told apart
        named = labels({cells[0]["config"]: cells[0]["identity"] for cells in (cells_a, cells_b)})
        label_a, label_b = named[cells_a[0]["config"]], named[cells_b[0]["config"]]
    protocols = sorted({r["protocol"] for r in cells_a} & {r["protocol"] for r in cells_b})
    if not protocols:
        raise CompareError("the two sides share no protocol", "compare_no_common_protocol")
    rows = []
    for protocol in protocols:
        pa = [r for r in cells_a if r["protocol"] == protocol]
        pb = [r for r in cells_b if r["protocol"] == protocol]
        measures = []
        for m in MEASURES:
            va, vb = seed_values(pa, m), seed_values(pb, m)
            if not va and not vb:
                continue
            measures.append({"measure": m, "a": describe(va.values()), "b": describe(vb.values()),
                             "difference": difference(va, vb)})
        rows.append({"protocol": protocol, "measures": measures})
    return {"a": {"spec": a, "label": label_a, "config": cells_a[0]["config"], "identity": cells_a[0]["identity"]},
            "b": {"spec": b, "label": label_b, "config": cells_b[0]["config"], "identity": cells_b[0]["identity"]},
            "statistic": f"each side: mean over seeds ± std (n-1) [{INTERVAL}]. {DIFFERENCE}",
            "verification": ("trusted: cells not checked against their archives (--trust)" if trust
                             else "every cell's measures recomputed from its verified archives"),
            "protocols": rows}


def _diff_text(d: dict[str, Any], digits: int) -> tuple[str, str, str]:
    diff = "-" if d["diff"] is None else f"{d['diff']:+.{digits}f}"
    over = (f"{d['n']} pairs" + (f", {d['unshared']} unshared seeds left out" if d["unshared"] else "")
            if d["method"] == PAIRED else f"n={d['n_a']} vs {d['n_b']}")
    test = "-" if d["p"] is None else f"p={d['p']:.4g} ({d['method']}, {over})"
    return diff, interval_text(d, digits, sign="+"), test


HEAD = ("measure", "A", "B", "B - A", "95% CI of B - A", "test")


def _rows(protocol: dict[str, Any]) -> list[tuple[str, ...]]:
    out = []
    for m in protocol["measures"]:
        digits = DIGITS.get(m["measure"], 2)
        out.append((m["measure"], show(m["a"], digits), show(m["b"], digits), *_diff_text(m["difference"], digits)))
    return out


def markdown(result: dict[str, Any]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [f"# Compare: A = {cell(result['a']['label'])} ({result['a']['config']}), "
             f"B = {cell(result['b']['label'])} ({result['b']['config']})", "", result["statistic"], "",
             f"Cells: {result['verification']}.", ""]
    for protocol in result["protocols"]:
        lines += [f"## {cell(protocol['protocol'])}", "", "| " + " | ".join(HEAD) + " |", "|---" * len(HEAD) + "|"]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in _rows(protocol)]
        lines.append("")
    return "\n".join(lines)


def render_html(result: dict[str, Any]) -> str:
    e = html.escape
    parts = ["<!doctype html>", "<html><head><meta charset=\"utf-8\"><title>Wildhold compare</title>",
             "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>",
             f"<h1>Compare: A = {e(result['a']['label'])} <code>{e(result['a']['config'])}</code>, "
             f"B = {e(result['b']['label'])} <code>{e(result['b']['config'])}</code></h1>", f"<p>{e(result['statistic'])}</p>", f"<p>Cells: {e(result['verification'])}.</p>"]
    for key in ("a", "b"):
        parts.append(f"<details><summary>{key.upper()}: identity</summary><pre>"
                     f"{e(json.dumps(result[key]['identity'], indent=1, sort_keys=True))}</pre></details>")
    for protocol in result["protocols"]:
        parts.append(f"<h2>{e(protocol['protocol'])}</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEAD) + "</tr>")
        for row in _rows(protocol):
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
