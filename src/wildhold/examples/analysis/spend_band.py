"""A worked analysis of a sweep's exports with pandas: quests (or any curve measure) against cumulative dollars,
one line per configuration with its band over seeds, redrawn from curve_points.parquet alone.

    wildhold sweep examples/sweep-smoke.yaml --out runs/sweep
    wildhold export runs/sweep --out runs/sweep-data
    python examples/analysis/spend_band.py runs/sweep-data --y wealth_cents --out band.svg

Each run's value at a budget is its last point at or under it (a step: what it had reached having spent that
much); the line is the mean over seeds and the band runs from the lowest seed to the highest. The table printed
is the band at each budget on a grid; the SVG draws it.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

import numpy as np

from wildhold.extras import require_script

pd = require_script("analysis", "examples/analysis/spend_band.py")  # pandas, and pyarrow beneath it for the Parquet


def band(points: pd.DataFrame, x: str, y: str, grid: int = 12) -> pd.DataFrame:
    """For each configuration and protocol: mean, min and max over seeds of each run's value at each budget."""
    rows = []
    for (label, protocol), group in points.groupby(["label", "protocol"]):
        budgets = np.linspace(0.0, group[x].max(), grid + 1)
        for budget in budgets:
            reached = group[group[x] <= budget + 1e-12].sort_values([x, "session"])
            last = reached.groupby(["seed", "repeat"])[y].last()  # each run's value at this budget
            per_seed = last.groupby(level="seed").mean()
            if len(per_seed):
                rows.append({"label": label, "protocol": protocol, x: budget, "n": len(per_seed),
                             "mean": per_seed.mean(), "min": per_seed.min(), "max": per_seed.max()})
    return pd.DataFrame(rows)


def svg(table: pd.DataFrame, x: str, y: str, protocol: str, width: int = 480, height: int = 300) -> str:
    part = table[table["protocol"] == protocol]
    left, top, pw, ph = 60, 24, width - 80, height - 90
    xmax = part[x].max() or 1.0
    lo, hi = part["min"].min(), part["max"].max()
    lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)

    def at(px: float, py: float) -> str:
        return f"{left + pw * px / xmax:.1f},{top + ph * (1 - (py - lo) / (hi - lo)):.1f}"

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
           f'<text x="{left}" y="16" font-size="12">{html.escape(f"{y} against {x} on {protocol}")}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#444"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#444"/>']
    colours = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
    for i, (label, rows) in enumerate(part.groupby("label")):
        c = colours[i % len(colours)]
        upper = " ".join(at(a, b) for a, b in zip(rows[x], rows["max"]))
        lower = " ".join(at(a, b) for a, b in zip(rows[x][::-1], rows["min"][::-1]))
        out.append(f'<polygon points="{upper} {lower}" fill="{c}" fill-opacity="0.2"/>')
        out.append(f'<polyline points="{" ".join(at(a, b) for a, b in zip(rows[x], rows["mean"]))}" fill="none" '
                   f'stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{left}" y="{top + ph + 24 + 14 * i}" font-size="11" fill="{c}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", type=Path, help="a folder `wildhold export SWEEP_DIR --out` wrote")
    parser.add_argument("--x", default="cost_usd", choices=("cost_usd", "tokens", "elapsed_s"))
    parser.add_argument("--y", default="quests", choices=("quests", "trial_stages", "wealth_cents"))
    parser.add_argument("--out", type=Path, help="write the chart of the first protocol here (SVG)")
    args = parser.parse_args()
    points = pd.read_parquet(args.exports / "curve_points.parquet")
    table = band(points, args.x, args.y)
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        args.out.write_text(svg(table, args.x, args.y, sorted(table["protocol"].unique())[0]))
        print(f"chart: {args.out}")


if __name__ == "__main__":
    main()
