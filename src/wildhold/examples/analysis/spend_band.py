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
from pathlib import Path

import numpy as np

from wildhold.extras import require_script

pd = require_script("analysis", "examples/analysis/spend_band.py")  # pandas, and pyarrow beneath it for the Parquet

from wildhold.eval.chart import QUANTITIES, band_chart
from wildhold.looks import palette


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


def svg(table: pd.DataFrame, x: str, y: str, protocol: str) -> str:
    """The band table of one protocol drawn with Wildhold's charts: round ticks, each quantity in its unit (wealth
    in coins, spend in dollars), one line and band per configuration."""
    part = table[table["protocol"] == protocol]
    colour = palette.colours(sorted(table["label"].unique()))  # as the sweep's own page colours each configuration
    series = [(label, colour[label], list(zip(rows[x], rows["mean"], rows["min"], rows["max"])))
              for label, rows in part.groupby("label")]
    what = f"{QUANTITIES[y].title} against {QUANTITIES[x].title} on {protocol}"
    return str(band_chart(series, QUANTITIES[x], QUANTITIES[y], what))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", type=Path, help="a folder `wildhold export SWEEP_DIR --out` wrote")
    parser.add_argument("--x", default="cost_usd", choices=("cost_usd", "tokens", "elapsed_s"))
    parser.add_argument("--y", default="quests", choices=("quests", "trial_stages", "wealth_cents"))
    parser.add_argument("--out", type=Path, help="write the chart of the first protocol here (SVG)")
    args = parser.parse_args()
    points = pd.read_parquet(args.exports / "curve_points.parquet")
    table = band(points, args.x, args.y)
    x, y = QUANTITIES[args.x], QUANTITIES[args.y]
    shown = table.assign(**{k: table[k].map(x.unit.shown) for k in (args.x,)},
                         **{k: table[k].map(y.unit.shown) for k in ("mean", "min", "max")})
    print(f"{y.title} (mean, min and max over seeds) at each budget of {x.title}")
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:,.4g}"))
    if args.out:
        args.out.write_text(svg(table, args.x, args.y, sorted(table["protocol"].unique())[0]))
        print(f"chart: {args.out}")


if __name__ == "__main__":
    main()
