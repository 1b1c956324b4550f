"""The live view of `wildhold run`: the season's ticks, and each arm's sessions, spend and state.

For the operator's terminal only. It reads the run's own counters (the world's tick, each arm's
ledger) and writes to the console; nothing here reaches an agent, so showing spend is safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

if TYPE_CHECKING:
    from wildhold.agents.scaffold.experiment import Run

REFRESH_S = 0.25


class LiveView:
    """Redraws the run's view on the event loop every REFRESH_S seconds while it is open."""

    def __init__(self, run: Run, console: Console):
        self.run, self.console = run, console
        self.bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[unit]}"), console=console, expand=False)
        self.tasks: dict[str, int] = {}
        self.live: Live | None = None
        self.refresher: asyncio.Task | None = None

    def renderable(self) -> Group:
        """Bars for the season and each model arm's spend against its budget, then one row per arm."""
        run = self.run
        w = run.host.world
        season = self._bar("world", f"season, day {w.day} ({run.host.state})", "ticks")
        self.bars.update(season, total=w.end_tick - w.start_tick, completed=w.tick - w.start_tick)
        table = Table(box=None, pad_edge=False, header_style="bold")
        numbers = (("sessions", 8), ("llm calls", 9), ("tokens", 10), ("spend", 9), ("alive", 10))
        names = min(16, max(len(a.name) for a in run.exp.arms))
        state_width = max(12, min(32, self.console.width - names - sum(w for _, w in numbers) - 2 * (len(numbers) + 1)))
        table.add_column("arm", no_wrap=True, width=names, overflow="ellipsis")
        table.add_column("state", no_wrap=True, width=state_width, overflow="ellipsis")
        for col, width in numbers:
            table.add_column(col, justify="right", no_wrap=True, width=width)
        for arm in run.exp.arms:
            state = run.states.get(arm.name, "waiting")
            if arm.provider == "scripted":
                table.add_row(arm.name, f"{state} ({arm.policy or 'producer'})", "-", "-", "-", "-", "-")
                continue
            ledger = run.ledger.arm(arm.name)
            budget_cents = max(1, round(run.budget(arm) * 100))
            cents = self._bar(arm.name, f"{arm.name} spend", f"cents (${run.budget(arm):g})")
            self.bars.update(cents, total=budget_cents, completed=min(round(ledger.cost_usd * 100), budget_cents))
            table.add_row(arm.name, state, str(ledger.sessions), str(ledger.llm_calls), f"{ledger.tokens:,}",
                          f"${ledger.cost_usd:.4f}", f"{run.elapsed(arm.name):.0f}/{run.ceiling(arm):g}s")
        return Group(self.bars, table)

    def _bar(self, key: str, description: str, unit: str) -> int:
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(description, total=None, unit=unit)
        self.bars.update(self.tasks[key], description=description, unit=unit)
        return self.tasks[key]

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


def summary_table(out: Path) -> Table:
    """The finished run, one row per arm, from its artifacts alone: how each arm ended, what it
    consumed (telemetry) and where it stands in the match (report)."""
    from wildhold.agents.scaffold.accounting import Telemetry, rebuild

    manifest = json.loads((out / "manifest.json").read_text())
    report = json.loads((out / "report.json").read_text())
    ledger = rebuild(Telemetry(out / "telemetry.jsonl").records())
    cards = {card["name"]: card for card in report["agents"]}
    metrics = {m["name"]: m for m in report["metrics"].values()}
    table = Table(title=f"{manifest.get('experiment', out.name)}: {report['match']['scenario']} seed {report['match']['seed']}",
                  header_style="bold")
    for col in ("arm", "model / policy", "ended", "sessions", "llm calls", "tokens", "cached", "cost", "quests",
                "wealth", "rank"):
        table.add_column(col, justify="left" if col in ("arm", "model / policy", "ended") else "right")
    for arm in manifest["arms"]:
        name = arm["name"]
        card, m = cards.get(name, {}), metrics.get(name, {})
        wealth = f"{card['wealth_cents'] / 100:,.2f}" if "wealth_cents" in card else "-"
        world = (str(m.get("quests_completed", "-")), wealth, str(card.get("rank", "-")))
        if arm["provider"] == "scripted":
            table.add_row(name, f"scripted {arm.get('policy')}", "season", "-", "-", "-", "-", "-", *world)
            continue
        a = ledger.arm(name)
        table.add_row(name, f"{arm['provider']} {arm.get('model') or ''}".strip(), a.complete or "unfinished",
                      str(a.sessions), str(a.llm_calls), f"{a.tokens:,}", f"{a.cached_input_tokens:,}",
                      f"${a.cost_usd:.4f}", *world)
    return table
