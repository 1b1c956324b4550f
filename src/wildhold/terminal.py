"""Tables that stay readable at any terminal width.

Rich squeezes a table wider than the terminal by cutting every cell (`p…`). A `FitTable` instead
picks, each time it is drawn, the first layout that fits the width it is given: the whole table;
the whole table with abbreviated headers and a legend; or its columns split into stacked tables
that repeat the key columns (with whichever headers need fewer tables). Cells are never cut: only
columns marked `wrap` may wrap, at spaces, and nothing is ever shortened with an ellipsis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

WRAP_MIN = 20  # the narrowest a wrapping column is squeezed before the table is split instead
MEASURE_WIDTH = 10_000  # wide enough that a measurement is a table's natural width


@dataclass(frozen=True)
class Col:
    """One column: its header, and how it may give way at narrow widths."""

    header: str
    justify: str = "right"
    short: str | None = None  # the abbreviation used (explained in a legend) when the whole table does not fit
    key: bool = False  # repeated in every part when the table is split, so each part's rows can be read alone
    wrap: bool = False  # free text that may wrap at spaces (down to WRAP_MIN) rather than split the table
    min_width: int | None = None  # a steady width for a live view, whose cells change between redraws

    def heading(self, short: bool) -> str:
        return self.short if short and self.short else self.header


class FitTable:
    """A rich renderable like `Table`, laid out for the width it is drawn at (see the module docstring)."""

    def __init__(self, columns: Sequence[Col], *, title: str | None = None, caption: str | None = None, **options: Any):
        self.columns, self.title, self.caption, self.options = list(columns), title, caption, options
        self.rows: list[tuple[RenderableType, ...]] = []
        self._measured: list[tuple[int, int]] | None = None
        self._edges: tuple[int, int] | None = None

    def add_row(self, *cells: RenderableType) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(cells)
        self._measured = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for i, part in enumerate(self.layout(console, options.max_width)):
            if i:
                yield Text()
            yield part

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        whole = list(range(len(self.columns)))
        return Measurement(min(self._needed(console, whole, short=True), options.max_width),
                           min(self._needed(console, whole, short=False), options.max_width))

    def layout(self, console: Console, width: int) -> list[Table]:
        """The tables to print at `width`: the first layout that fits, in the order of the module docstring.
        Where none does (a very narrow terminal), the one that overflows least, its cells folded, not cut."""
        whole = list(range(len(self.columns)))
        layouts = [(False, [whole]), (True, [whole])]
        for short in (False, True):
            layouts.append((short, self._balanced(console, width, short, len(self._split(console, width, short)))))

        def overflow(short: bool, parts: list[list[int]]) -> int:
            return sum(max(0, self._needed(console, part, short) - width) for part in parts)

        short, parts = min(layouts, key=lambda layout: (overflow(*layout), len(layout[1]), layout[0]))
        return [self._table(cols, short, first=i == 0, last=i == len(parts) - 1,
                            squeeze=self._needed(console, cols, short) > width,
                            legend_width=min(self._needed(console, cols, short), width))
                for i, cols in enumerate(parts)]

    def _balanced(self, console: Console, width: int, short: bool, count: int) -> list[list[int]]:
        """The split into `count` parts at the narrowest width that still needs no more, so parts come out
        even (8 and 8 columns rather than 12 and 4)."""
        low, high = 1, width
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if len(self._split(console, middle, short)) <= count else (middle + 1, high)
        return self._split(console, low, short)

    def _split(self, console: Console, width: int, short: bool) -> list[list[int]]:
        """Greedy: each part takes the key columns and as many of the next columns as fit."""
        keys = [i for i, c in enumerate(self.columns) if c.key]
        parts: list[list[int]] = []
        part: list[int] = []
        for i in (i for i, c in enumerate(self.columns) if not c.key):
            if part and self._needed(console, sorted(keys + part + [i]), short) > width:
                parts.append(part)
                part = []
            part.append(i)
        parts.append(part)
        return [sorted(keys + p) for p in parts]

    def _needed(self, console: Console, cols: list[int], short: bool) -> int:
        """The width these columns take with every cell whole and wrapping columns at WRAP_MIN at most."""
        widths = self._widths(console)
        return self._overhead(console, len(cols)) + sum(widths[i][short] for i in cols)

    def _widths(self, console: Console) -> list[tuple[int, int]]:
        """Each column's width with its full header and with its short one, every cell measured once."""
        if self._measured is None:
            options = console.options.update_width(MEASURE_WIDTH)

            def width(cell: RenderableType, wrap: bool) -> int:
                m = Measurement.get(console, options, console.render_str(cell) if isinstance(cell, str) else cell)
                return m.minimum if wrap else m.maximum

            self._measured = []
            for i, c in enumerate(self.columns):
                body = max((width(row[i], False) for row in self.rows), default=0)
                if c.wrap:
                    body = min(body, max(WRAP_MIN, max((width(row[i], True) for row in self.rows), default=0)))
                self._measured.append(tuple(max(body, c.min_width or 0, width(c.heading(short), False))
                                            for short in (False, True)))
        return self._measured

    def _overhead(self, console: Console, count: int) -> int:
        """Borders and padding of a table of `count` columns in this style (linear in the count)."""
        def empty(n: int) -> int:
            table = Table(**self.options)
            for _ in range(n):
                table.add_column("")
            return Measurement.get(console, console.options.update_width(MEASURE_WIDTH), table).maximum

        if self._edges is None:
            one, two = empty(1), empty(2)
            self._edges = (one - (two - one), two - one)
        return self._edges[0] + self._edges[1] * count

    def _table(self, cols: list[int], short: bool, *, first: bool, last: bool, squeeze: bool = False,
               legend_width: int = MEASURE_WIDTH) -> Table:
        """One part. Only `wrap` columns may wrap, unless even this layout is too wide (`squeeze`): then
        every cell may, so rich folds it instead of cropping it."""
        legend = self._legend(short, legend_width) if last else None
        caption = "\n".join(filter(None, (legend, self.caption))) if last else None
        table = Table(title=self.title if first else None, caption=caption, **self.options)
        for i in cols:
            c = self.columns[i]
            table.add_column(c.heading(short), justify=c.justify, no_wrap=not (c.wrap or squeeze), overflow="fold",
                             min_width=c.min_width)
        for row in self.rows:
            table.add_row(*(row[i] for i in cols))
        return table

    def _legend(self, short: bool, width: int) -> str | None:
        """`legend: a = b, c = d`, its lines broken between pairs only (no wider than the table, `width`), so that
        no abbreviation is parted from what it stands for."""
        pairs = [f"{c.short} = {c.header}" for c in self.columns if short and c.short and c.short != c.header]
        if not pairs:
            return None
        lines = ["legend:"]
        for i, pair in enumerate(pairs):
            item = pair + ("," if i < len(pairs) - 1 else "")
            if len(lines[-1]) + 1 + len(item) > width and lines[-1] != "legend:":
                lines.append(item)
            else:
                lines[-1] += " " + item
        return "\n".join(lines)

