"""The live view of `wildhold run`: the world's ticks, and each arm's sessions, spend and state.

For the operator's terminal only. It reads the run's own counters (the world's tick, each arm's
ledger) and writes to the console; nothing here reaches an agent, so showing spend is safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Column

from wildhold.terminal import Col, FitTable

if TYPE_CHECKING:
    from wildhold.agents.scaffold.experiment import Run

REFRESH_S = 0.25
BAR_WIDTH = (8, 40)  # the bars shrink to fit the texts beside them into the console's width, within these
VIEW_COLUMNS = (Col("arm", "left", key=True), Col("state", "left", min_width=12), Col("sessions", short="sess"),
                Col("llm calls", short="calls"), Col("tokens"), Col("spend"), Col("alive"))
SUMMARY_COLUMNS = (Col("arm", "left", key=True), Col("model / policy", "left", short="model"), Col("ended", "left"),
                   Col("sessions", short="sess"), Col("llm calls", short="calls"), Col("tokens"), Col("cached"),
                   Col("cost"), Col("quests"), Col("wealth"), Col("rank", short="#"))


class LiveView:
    """Redraws the run's view on the event loop every REFRESH_S seconds while it is open."""

    def __init__(self, run: Run, console: Console):
        self.run, self.console = run, console
        self.bar = BarColumn(bar_width=BAR_WIDTH[1])
        texts = [TextColumn(f"{{task.{field}}}", table_column=Column(overflow="fold"))
                 for field in ("description", "fields[count]", "fields[unit]")]
        self.bars = Progress(texts[0], self.bar, *texts[1:], console=console, expand=False)
        self.tasks: dict[str, int] = {}
        self.live: Live | None = None
        self.refresher: asyncio.Task | None = None

    def renderable(self) -> Group:
        """Bars for the world and each model arm's spend against its budget, then one row per arm
        (laid out for the console's width by FitTable: names are never cut)."""
        run = self.run
        self._world_bar()
        table = FitTable(VIEW_COLUMNS, box=None, pad_edge=False, header_style="bold")
        for arm in run.exp.arms:
            state = run.states.get(arm.name, "waiting")
            if arm.provider == "scripted":
                table.add_row(arm.name, f"{state} ({arm.policy or 'producer'})", "-", "-", "-", "-", "-")
                continue
            ledger = run.ledger.arm(arm.name)
            budget_cents, cents = max(1, round(run.budget(arm) * 100)), round(ledger.cost_usd * 100)
            self._bar(arm.name, f"{arm.name} spend", f"{cents}/{budget_cents}", f"cents (${run.budget(arm):g})",
                      total=budget_cents, completed=min(cents, budget_cents))
            table.add_row(arm.name, state, str(ledger.sessions), str(ledger.llm_calls), f"{ledger.tokens:,}",
                          f"${ledger.cost_usd:.4f}", f"{run.elapsed(arm.name):.0f}/{run.ceiling(arm):g}s")
        self._fit_bars()
        return Group(self.bars, table)

    def _world_bar(self) -> None:
        """The world's ticks under its scenario's name. A match is over when the arms end it early too:
        its bar is then full, beside the tick it reached of those planned."""
        run = self.run
        w, state = run.host.world, run.host.state
        planned, done = w.end_tick - w.start_tick, w.tick - w.start_tick
        early = state == "over" and done < planned
        self._bar("world", f"{run.exp.scenario}, day {w.day} ({state})", f"{done}/{planned}",
                  "ticks, ended early" if early else "ticks", total=planned, completed=planned if state == "over" else done)

    def _bar(self, key: str, description: str, count: str, unit: str, total: int, completed: int) -> None:
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(description, total=total, count=count, unit=unit)
        self.bars.update(self.tasks[key], description=description, count=count, unit=unit, total=total,
                         completed=completed)

    def _fit_bars(self) -> None:
        """Narrow the bars so that every description, count and unit beside them is printed whole."""
        tasks = self.bars.tasks
        texts = (max(cell_len(t.description) for t in tasks) + max(cell_len(t.fields["count"]) for t in tasks)
                 + max(cell_len(t.fields["unit"]) for t in tasks) + 3)  # and a space between columns
        self.bar.bar_width = max(BAR_WIDTH[0], min(BAR_WIDTH[1], self.console.width - texts))

    async def __aenter__(self) -> LiveView:
        self.live = Live(self.renderable(), console=self.console, auto_refresh=False, transient=False)
        self.live.start()
        self.refresher = asyncio.create_task(self._refresh(), name="wildhold-run-view")
        return self

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_S)
            self.live.update(self.renderable(), refresh=True)

    async def __aexit__(self, *exc: object) -> None:
        if self.refresher is not None:
            self.refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.refresher
        if self.live is not None:
            self.live.update(self.renderable(), refresh=True)
            self.live.stop()


def summary_table(out: Path) -> FitTable:
    """The finished run, one row per arm, from its artifacts alone: how each arm ended, what it
    consumed (telemetry) and where it stands in the match (report)."""
    from wildhold.agents.scaffold.accounting import Telemetry, rebuild

    manifest = json.loads((out / "manifest.json").read_text())
    report = json.loads((out / "report.json").read_text())
    ledger = rebuild(Telemetry(out / "telemetry.jsonl").records())
    cards = {card["name"]: card for card in report["agents"]}
    metrics = {m["name"]: m for m in report["metrics"].values()}
    table = FitTable(SUMMARY_COLUMNS, header_style="bold",
                     title=f"{manifest.get('experiment', out.name)}: {report['match']['scenario']} seed {report['match']['seed']}")
    for arm in manifest["arms"]:
        name = arm["name"]
        card, m, a = cards.get(name, {}), metrics.get(name, {}), ledger.arm(name)
        wealth = f"{card['wealth_cents'] / 100:,.2f}" if "wealth_cents" in card else "-"
        world = (str(m.get("quests_completed", "-")), wealth, str(card.get("rank", "-")))
        if arm["provider"] == "scripted":
            table.add_row(name, f"scripted {arm.get('policy')}", a.complete or "unfinished", "-", "-", "-", "-", "-", *world)
            continue
        table.add_row(name, f"{arm['provider']} {arm.get('model') or ''}".strip(), a.complete or "unfinished",
                      str(a.sessions), str(a.llm_calls), f"{a.tokens:,}", f"{a.cached_input_tokens:,}",
                      f"${a.cost_usd:.4f}", *world)
    return table
