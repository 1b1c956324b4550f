"""The clock driver of a served match: when the world steps, and who has been active.

Realtime steps at the configured rate, lockstep when every active agent has its turn in (or the
deadline passes), fast as quickly as the loop allows. The driver also owns activity: the tick each
agent last acted, who is idle (recorded once, as an input of the match), who submitted this tick.
While the store takes no writes the driver pauses and tries it again; a driver that fails for any other
reason stops, and the host's health says why.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Iterable

from wildhold.service.errors import HostError
from wildhold.service.health import STORAGE_RETRY_S

if TYPE_CHECKING:
    from wildhold.service.host import Host
    from wildhold.store.sqlite import Input


class Clock:
    """Steps the host's world and follows its agents' activity."""

    def __init__(self, host: Host):
        self.host = host
        self.last_active: dict[str, int] = {}
        self.idle: set[str] = set()
        self.submitted: set[str] = set()  # agents that started an operation since the last tick (lockstep)
        self._activity: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    # ---- activity ---------------------------------------------------------------------------------

    def forget(self) -> None:
        """No activity known: the host is about to replay it from a store."""
        self.last_active.clear()
        self.idle.clear()
        self.submitted.clear()

    def acted(self, agent: str, tick: int) -> None:
        """The agent called for its character at `tick`: active, and no longer idle."""
        self.last_active[agent] = tick
        self.idle.discard(agent)

    def busy_until(self, agent: str, tick: int) -> None:
        """The character ran an operation until `tick`: at least that active."""
        self.last_active[agent] = max(self.last_active.get(agent, tick), tick)

    def replay(self, inputs: Iterable[Input]) -> None:
        """Activity as the stored inputs left it, after a restart."""
        records = self.host.access.records.values()
        for inp in inputs:
            if inp.kind == "action" and inp.agent:
                self.acted(inp.agent, inp.tick)
            elif inp.kind == "idle" and inp.agent:
                self.idle.add(inp.agent)
            elif inp.kind == "join":
                agent = next((r.agent for r in records if r.name == inp.args["name"]), None)
                if agent:
                    self.last_active.setdefault(agent, inp.tick)

    def _track_activity(self) -> None:
        """A character running an operation counts as active; silence past the threshold is recorded once."""
        host = self.host
        w, limit = host.world, host.config.idle_after_ticks
        for rec in host.access.joined():
            agent = rec.agent
            if w.chars[agent].op is not None:
                self.last_active[agent] = w.tick
                continue
            since = self.last_active.get(agent, w.tick)
            if agent not in self.idle and w.tick - since >= limit:
                self.idle.add(agent)
                host.match.mark_idle(agent, since)

    def active_agents(self) -> list[str]:
        return [r.agent for r in self.host.access.joined() if r.agent not in self.idle]

    def turn_ready(self) -> bool:
        """Lockstep: every active agent is running an operation, started one this tick, or has a program
        running for it (which acts at the boundary) — and there is one such agent."""
        chars, programs = self.host.world.chars, self.host.programs
        active = self.active_agents()
        return bool(active) and all(a in self.submitted or chars[a].op is not None or programs.active(a)
                                    for a in active)

    # ---- stepping ---------------------------------------------------------------------------------

    def step(self) -> None:
        """Advance one tick, give running programs their turn, follow activity, end the match when its time is up
        (or its owner's end condition holds)."""
        host = self.host
        with host.changing():
            host.match.step()
            self.submitted.clear()
            host.counters["ticks"] += 1
            if not host.season_over:
                host.programs.tick()
            self._track_activity()
            host.end_if_due()

    def wake(self) -> None:
        """Something happened (an action, a start, the end): a waiting driver looks again."""
        if self._activity is not None:
            self._activity.set()

    async def _until_activity(self, timeout: float) -> bool:
        """Sleep until something happens or `timeout` passes."""
        assert self._activity is not None
        self._activity.clear()
        try:
            await asyncio.wait_for(self._activity.wait(), timeout)
            return True
        except TimeoutError:
            return False

    async def run(self) -> None:
        """Drive the world until the match is over (and its archive written); a failure other than the store's ends
        the driver, and the host's health names it."""
        try:
            await self._drive()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - never silent: the health and the log carry it
            self.host.health.clock_stopped(exc, self.host.world.tick)

    def _step(self) -> None:
        """One tick, unless the store refuses it: the driver then waits for the store (see `_drive`)."""
        try:
            self.step()
        except HostError as exc:
            if exc.code != "storage_unavailable":
                raise

    async def _drive(self) -> None:
        """Realtime at the configured rate, lockstep turn by turn, or fast; paused while the store takes no writes."""
        self._activity = asyncio.Event()
        loop = asyncio.get_running_loop()
        host, c = self.host, self.host.config
        next_at = loop.time() + c.tick_seconds
        while host.state != "over" or host.health.storage is not None:
            if host.health.storage is not None:
                await asyncio.sleep(STORAGE_RETRY_S)
                host.recover()
                next_at = loop.time() + c.tick_seconds
                continue
            if host.state == "lobby" or (c.clock == "fast" and not host.access.joined()):
                await self._until_activity(1.0)
                next_at = loop.time() + c.tick_seconds
                continue
            if c.clock == "fast":
                self._step()
                await asyncio.sleep(0)
            elif c.clock == "realtime":
                delay = next_at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if host.state != "running":
                    continue
                self._step()
                next_at = max(next_at + c.tick_seconds, loop.time() - 5 * c.tick_seconds)
            else:
                deadline = loop.time() + c.turn_deadline_s
                while host.state == "running" and not self.turn_ready():
                    remaining = deadline - loop.time()
                    if remaining <= 0 or not await self._until_activity(remaining):
                        break
                if host.state == "running":
                    self._step()
                    await asyncio.sleep(0)

    def start(self) -> asyncio.Task:
        """Run the driver as a task of the running event loop (the loop every face calls from)."""
        if self._task is None or self._task.done():
            self.host.health.clock = None
            self._task = asyncio.get_running_loop().create_task(self.run(), name="wildhold-clock")
        return self._task

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    @property
    def running(self) -> bool:
        """Whether the driver runs now: started, not stopped, and not ended (by the match's end or a failure)."""
        return self._task is not None and not self._task.done()
