"""Charts drawn by hand as inline SVG (no script, nothing fetched): axes whose ticks are round numbers with
readable labels, one unit per quantity wherever it is shown (wealth in coins, spend in dollars), legends, and the
band chart a sweep draws. The report's charts (`eval.html`), the sweep's page and the worked analysis use these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Iterable

from markupsafe import Markup

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif"
CHAR_PX = 6.4  # the width of one character of an 11-pixel label, near enough to keep labels inside the chart
STEPS = (1, 2, 2.5, 5, 10)  # a tick step is one of these times a power of ten


@dataclass(frozen=True)
class Unit:
    """How values of a quantity are shown: the factor from the value as stored, a sign before the number, and
    whether it counts whole things (its ticks are then whole numbers)."""

    name: str
    scale: float = 1.0
    prefix: str = ""
    whole: bool = False

    def shown(self, stored: float) -> float:
        return stored * self.scale

    def label(self, value: float, step: float) -> str:
        """A value already shown in this unit, with as many decimals as `step` needs and thousands separated."""
        digits = decimals(step)
        text = f"{abs(value):,.{digits}f}"
        negative = value < 0 and text.strip("0.,") != ""
        return f"{'-' if negative else ''}{self.prefix}{text}"

    def text(self, stored: float, digits: int = 2) -> str:
        """One stored value as a table shows it."""
        return self.label(self.shown(stored), 10.0 ** -digits)


COINS = Unit("coins", scale=0.01)
DOLLARS = Unit("dollars", prefix="$")
TOKENS = Unit("tokens", whole=True)
SECONDS = Unit("seconds")
COUNT = Unit("count", whole=True)
PERCENT = Unit("percent")


@dataclass(frozen=True)
class Quantity:
    """A measure as a chart or a table names it: the title says the unit when the name alone does not."""

    title: str
    unit: Unit


QUANTITIES = {
    "wealth_cents": Quantity("wealth (coins)", COINS),
    "wealth": Quantity("wealth (coins)", Unit("coins")),  # already coins, as the sweep's summary holds it
    "cost_usd": Quantity("cumulative dollars", DOLLARS),
    "dollars": Quantity("cumulative dollars", DOLLARS),
    "spend_usd": Quantity("dollars spent", DOLLARS),
    "tokens": Quantity("cumulative tokens", TOKENS),
    "elapsed_s": Quantity("wall-clock seconds", SECONDS),
    "quests": Quantity("quests completed", COUNT),
    "trial_stages": Quantity("trial stages (cumulative rule)", COUNT),
}


def decimals(step: float) -> int:
    """The fewest decimals that write every multiple of `step` exactly (0.25 -> 2, 500 -> 0)."""
    for digits in range(0, 10):
        scaled = step * 10 ** digits
        if abs(scaled - round(scaled)) < 1e-6 * max(1.0, scaled):
            return digits
    return 10


def nice_ticks(lo: float, hi: float, count: int = 5, whole: bool = False) -> list[float]:
    """Round tick values from at or below `lo` to at or above `hi`, about `count` steps of 1, 2, 2.5 or 5 times a
    power of ten (whole numbers only when `whole`); an empty or flat range at zero becomes [0, 1]."""
    lo, hi = min(lo, hi), max(lo, hi)
    if hi == lo:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        if hi == lo:
            hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in STEPS if m * mag >= raw * (1 - 1e-9) and (not whole or float(m * mag).is_integer()))
    if whole:
        step = max(step, 1)
    digits = decimals(step)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(i * step, digits) + 0.0 for i in range(first, last + 1)]


def axis(lo: float, hi: float, unit: Unit, count: int = 5) -> list[tuple[float, str]]:
    """Ticks over stored values [lo, hi]: each (stored value, label in the unit)."""
    ticks = nice_ticks(unit.shown(lo), unit.shown(hi), count, unit.whole)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    return [(v / unit.scale, unit.label(v, step)) for v in ticks]


# ---- drawing ---------------------------------------------------------------------------------


def coord(x: float) -> str:
    """A coordinate with at most one decimal (stable text, small files)."""
    r = round(x, 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def svg(width: int, height: int, body: Iterable[str], title: str) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}" style="{FONT}"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


def legend(items: list[tuple[str, str]], x: float, y: float, width: float) -> tuple[list[str], float]:
    """Swatches in rows across `width`; returns the elements and the height used."""
    out, cx, cy = [], x, y
    for label, colour in items:
        w = 22 + 7.2 * len(label)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 20
        out.append(f'<rect x="{coord(cx)}" y="{coord(cy - 10)}" width="12" height="12" rx="2" fill="{colour}"/>'
                   f'<text x="{coord(cx + 17)}" y="{coord(cy)}" font-size="12" fill="#333">{escape(label)}</text>')
        cx += w + 14
    return out, cy - y + 20


def margins(ylabels: Iterable[str], xlabels: Iterable[str]) -> tuple[float, float]:
    """(left, right): room for the widest y label beside the axis title, and for half the last x label."""
    widest = max((len(s) for s in ylabels), default=1)
    last = list(xlabels)[-1:] or [""]
    return max(72.0, 30 + CHAR_PX * widest), max(16.0, 4 + CHAR_PX * len(last[0]) / 2)


def axes(x0: float, y0: float, w: float, h: float, xticks: list[tuple[float, str]], yticks: list[tuple[float, str]],
         xlabel: str, ylabel: str) -> list[str]:
    """The plot's frame, its grid lines at the ticks with their labels, and the two axis titles."""
    out = [f'<rect x="{coord(x0)}" y="{coord(y0)}" width="{coord(w)}" height="{coord(h)}" fill="#fcfcfc" stroke="#ccc"/>']
    for y, label in yticks:
        out.append(f'<line x1="{coord(x0)}" x2="{coord(x0 + w)}" y1="{coord(y)}" y2="{coord(y)}" stroke="#e6e6e6"/>'
                   f'<text x="{coord(x0 - 6)}" y="{coord(y + 4)}" font-size="11" text-anchor="end" fill="#555">{escape(label)}</text>')
    for x, label in xticks:
        out.append(f'<line x1="{coord(x)}" x2="{coord(x)}" y1="{coord(y0)}" y2="{coord(y0 + h)}" stroke="#eee"/>'
                   f'<text x="{coord(x)}" y="{coord(y0 + h + 16)}" font-size="11" text-anchor="middle" fill="#555">{escape(label)}</text>')
    out.append(f'<text x="{coord(x0 + w / 2)}" y="{coord(y0 + h + 34)}" font-size="12" text-anchor="middle" fill="#333">{escape(xlabel)}</text>')
    out.append(f'<text transform="translate({coord(x0 - 16 - CHAR_PX * max((len(s) for _, s in yticks), default=1))},{coord(y0 + h / 2)}) '
               f'rotate(-90)" font-size="12" text-anchor="middle" fill="#333">{escape(ylabel)}</text>')
    return out


@dataclass
class Plane:
    """A plot with two numeric axes: where a stored value lands, and what is drawn around the plot (its frame,
    ticks, titles and the legend under it) for a chart `height` pixels high in all."""

    left: float
    top: float
    width: float
    height: float
    xticks: list[tuple[float, str]]
    yticks: list[tuple[float, str]]
    frame: list[str]
    key: list[str]
    total_height: int

    def x(self, v: float) -> float:
        lo, hi = self.xticks[0][0], self.xticks[-1][0]
        return self.left + self.width * (v - lo) / (hi - lo)

    def y(self, v: float) -> float:
        lo, hi = self.yticks[0][0], self.yticks[-1][0]
        return self.top + self.height - self.height * (v - lo) / (hi - lo)


def plane(xs: list[float], ys: list[float], x: Quantity, y: Quantity, items: list[tuple[str, str]], width: int,
          height: int) -> Plane:
    """The plane over stored values: x from zero, y from zero or below, ticks in the quantities' units."""
    xt, yt = axis(0.0, max(xs, default=0.0), x.unit), axis(min([0.0, *ys]), max(ys, default=0.0), y.unit)
    left, right = margins([s for _, s in yt], [s for _, s in xt])
    top = 14
    key, lh = legend(items, left, height - 12, width - left - right)
    out = Plane(left, top, width - left - right, height - top - 60, xt, yt, [], key, int(height + lh))
    out.frame = axes(left, top, out.width, out.height, [(out.x(v), s) for v, s in xt], [(out.y(v), s) for v, s in yt],
                     x.title, y.title)
    return out


def band_chart(series: list[tuple[str, str, list[tuple[float, float, float, float]]]], x: Quantity, y: Quantity,
               title: str, width: int = 460, height: int = 300) -> Markup:
    """Lines with a band each: (label, colour, [(x, line, band low, band high)]) in stored units, drawn in the
    quantities' units, one legend entry per line."""
    p = plane([a for _, _, pts in series for a, *_ in pts], [v for _, _, pts in series for _, *vs in pts for v in vs],
              x, y, [(label, colour) for label, colour, _ in series], width, height)
    body = p.frame
    for label, colour, pts in series:
        if not pts:
            continue
        upper = " ".join(f"{coord(p.x(a))},{coord(p.y(hi))}" for a, _, _, hi in pts)
        lower = " ".join(f"{coord(p.x(a))},{coord(p.y(lo))}" for a, _, lo, _ in reversed(pts))
        body.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.18" stroke="none"/>')
        line = " ".join(f"{coord(p.x(a))},{coord(p.y(v))}" for a, v, _, _ in pts)
        body.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2" stroke-linejoin="round">'
                    f'<title>{escape(label)}</title></polyline>')
    return svg(width, p.total_height, body + p.key, title)
