"""The running match behind `wildhold serve`: one world, its lifecycle, and the parts that serve it.

The host is the only owner of a served world: every face (HTTP, MCP) calls it from one asyncio
event loop, and nothing else mutates the world. Whatever changes the event log — a join, an
action, an idle notice, the end — is a recorded input of the match, so a served match replays
from its archive like any other. Wall-clock time only decides *when* inputs happen.

`Host` composes its owners: `access` (tokens, records, rate limits), `clock` (the driver and
activity), `operations` (operation records), `archives` (archives and epilogues), `spectate` (the
live feed and views), `programs` and `health` (what degrades it);
what it answers about the world is in `wildhold.service.reads`, served through the query registry.
Every change goes through `changing`: one transaction, refused while the store takes no writes; a
write that fails leaves the store as it was, and the host takes the match up from its store again
once it takes writes (`recover`), as a restart would.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator

from wildhold.content import Content, default_content
from wildhold.service.access import Access, AgentRecord, HostConfig
from wildhold.service.archives import Archives
from wildhold.service.clock import Clock
from wildhold.service.errors import HostError, refuse_unless_running
from wildhold.service.health import Health
from wildhold.service.looks import Looks
from wildhold.service.match import Horizon, Match
from wildhold.service.operations import Operations
from wildhold.service.program_host import ProgramHost
from wildhold.service.spectate import FEED_KEPT, Spectate
from wildhold.store.private import private_folder, tighten
from wildhold.store.sqlite import StoreError, WriteFailed
from wildhold.world.errors import Rejected

DB_NAME = "match.sqlite"


class Host:
    """A match served to remote agents: its lifecycle (lobby, running, over), its inputs, and its owners."""

    def __init__(self, match: Match, config: HostConfig, data_dir: Path, *,
                 manifest_extra: dict[str, Any] | None = None, now: Callable[[], float] = time.monotonic):
        config.check()
        self.content = match.world.content
        self.config = config
        self.horizon: Horizon = match.horizon  # hidden: no face tells an agent when the match ends
        self.now = now
        self.started_at = now()
        self.counters: Counter[str] = Counter()
        self.rejections: Counter[str] = Counter()
        self.health = Health()
        self.access = Access(config, match.store, self.counters, now)
        self.archives = Archives(self, data_dir, dict(manifest_extra or {}), {})
        self.clock = Clock(self)
        # An end besides the season's, set by whoever runs the match (a task attempt's limits): a reason to end
        # it, or None; looked at after every tick and every submission.
        self.ends_when: Callable[[], str | None] | None = None
        # Whether the season's end ends the match: not for a task attempt, which its set-up may start past the
        # season's end and only its own limits (`ends_when`, or its driver) end.
        self.season_ends = True
        self._changing = False
        self._attach(match)

    def _attach(self, match: Match) -> None:
        """Serve `match` as its store left it: records, activity, operation records, the live feed, programs."""
        self.match = match
        self.world = match.world
        self.looks = Looks()  # what each agent was last shown, for observations as changes
        meta = match.store.meta() if match.store else {}
        self.state: str = "over" if match.ended else ("running" if meta.get("server_started") else "lobby")
        self.access.records.clear()
        self.access.load(meta, {args["name"]: agent for agent, args in match.joins().items()} if match.store else {})
        self.archives.epilogues = dict(meta.get("epilogues", {}))
        self.clock.forget()
        self.operations = Operations(self)
        self.spectate = Spectate(self)
        if match.store is not None:  # activity, operation records and the live feed as the stored log left them
            self.clock.replay(match.store.inputs(0))
            self.operations.note_events(match.store.events(0), count=False)
            self.spectate.note_events(match.store.events(max(0, self.world.events.seq - FEED_KEPT)))
        match.on_events = self._note_events
        if not self.config.lobby and self.state == "lobby":
            self._set_started()
        self.programs = ProgramHost(self)  # restores every program that was running or waiting

    @classmethod
    def open(cls, data_dir: Path | str, config: HostConfig, scenario: str = "default", seed: int = 0,
             content: Content | None = None, manifest_extra: dict[str, Any] | None = None,
             horizon: Horizon = "visible") -> Host:
        """Start a new match in `data_dir`, or resume the one stored there (scenario, seed, clock and horizon must agree).
        The folder and all it holds are its owner's only; a folder that others could read is made so, once said."""
        config.check()
        content = content or default_content()
        data_dir = Path(data_dir)
        loose = tighten(data_dir) if data_dir.is_dir() else []
        private_folder(data_dir)
        if loose:
            print(f"wildhold: {data_dir} was open to other users ({len(loose)} of its paths); its folders are now 0700 "
                  "and its files 0600, its owner's only", file=sys.stderr)
        db = data_dir / DB_NAME
        resumed = db.exists()
        if resumed:
            match = Match.resume(db, content)
            meta = match.store.meta()
            for key, want in (("scenario", scenario), ("seed", seed), ("clock", config.clock), ("horizon", horizon)):
                if meta.get(key, "visible" if key == "horizon" else None) != want:
                    match.store.close()
                    raise StoreError(f"{db} holds a match with {key} {meta.get(key)!r}, not {want!r}: "
                                     f"pass the same settings to resume it, or another --data folder")
        else:
            match = Match.create(scenario, seed, db, content, clock=config.clock, horizon=horizon)
        try:
            if not resumed:
                match.store.set_meta({"server_config": config.public(), "server_started": False})
            return cls(match, config, data_dir, manifest_extra=manifest_extra)
        except BaseException:
            match.store.close()
            raise

    # ---- the lifecycle: lobby, running, over ----------------------------------------------------

    def _set_started(self) -> None:
        self.state = "running"
        if self.match.store is not None:
            self.match.store.set_meta({"server_started": True})

    # ---- changes, and the store that keeps them ----------------------------------------------------

    @contextmanager
    def changing(self) -> Iterator[None]:
        """Every change to the match (a face's call, a tick) runs inside: refused while the store takes no writes, one
        transaction otherwise. A refusal or a fault inside keeps what was written before it, as the world applied it;
        a write that fails keeps nothing, degrades the host and refuses the change with `storage_unavailable`. An
        archive due is written once the change is committed. Nested calls (a program's action in its turn) are
        part of the change around them."""
        if self._changing:
            yield
            return
        self.health.refuse_changes()
        store = self.match.store
        self._changing = True
        try:
            error: BaseException | None = None
            with store.transaction() if store is not None else nullcontext():
                try:
                    yield
                except WriteFailed:
                    raise
                except BaseException as exc:
                    error = exc
            if error is not None:
                raise error
            if self.archives.due:
                self.archives.export()
        except WriteFailed as exc:
            self.health.storage_failed(exc, self.world.tick)
        finally:
            self._changing = False
        self.health.refuse_changes()  # a write failed: the change is refused like those that follow

    def recover(self) -> bool:
        """After a write failed: take the match up again from its store, as a restart would (the world may have run
        ahead of what was kept), once the store takes writes again (a snapshot written proves it). False while it
        still refuses them."""
        if self.health.storage is None:
            return True
        store = self.match.store
        assert store is not None  # only a store fails to write
        try:
            store.probe()
            with store.transaction():
                match = Match.from_store(store, self.content)
                match.flush(snapshot=True)
        except WriteFailed as exc:
            self.health.storage_failed(exc, self.world.tick)
            return False
        self.programs.close()
        waiting = self.operations
        self._attach(match)
        waiting.release_waiters()  # long polls on operations as they were answer now
        self.health.storage_back(self.world.tick)
        if self.state == "over" and self.archives.path is None:
            self.archives.due = True
        try:
            with self.changing():
                pass  # writes the archive that was due
        except HostError:
            return False
        self.clock.wake()
        return True

    # ---- the lifecycle, continued ---------------------------------------------------------------

    def _join(self, rec: AgentRecord) -> str:
        agent = self.match.join(rec.name, via="server", **rec.extra)
        self.clock.last_active[agent] = self.world.tick
        self.match.flush()
        return agent

    def register(self, name: str, extra: dict[str, str] | None = None) -> tuple[str, AgentRecord]:
        """A new agent and its bearer token; it joins the world now, or at the start when in the lobby."""
        with self.changing():
            return self.access.register(name, extra, self.state, self._join)

    def seat(self, name: str, extra: dict[str, str] | None = None) -> tuple[str, AgentRecord]:
        """A bearer token for the character named `name`, already in the world (a fork's): the operator's act, never
        an agent's; the character counts as active from now."""
        if self.state == "over":
            raise HostError("match_over", "The match has ended.")
        agent = next((c.id for c in self.world.chars.values() if c.name == name), None)
        if agent is None:
            raise HostError("not_found", f"No character named {name!r} in this match.")
        with self.changing():
            token, rec = self.access.seat(name, agent, extra)
        self.clock.acted(agent, self.world.tick)
        return token, rec

    def start(self) -> dict[str, Any]:
        """Close the lobby: every registered agent enters the world, in registration order."""
        if self.state != "lobby":
            raise HostError("already_started" if self.state == "running" else "match_over",
                            "The match has already started." if self.state == "running" else "The match has ended.")
        with self.changing():
            agents = self.access.close_lobby(self._join)
            self._set_started()
            self.match.flush(snapshot=True)
        self.clock.wake()
        return {"status": self.state, "tick": self.world.tick, "agents": agents}

    def stop(self, reason: str = "stopped by the operator") -> dict[str, Any]:
        """End the match now and write its archive."""
        with self.changing():
            if self.state != "over":
                self.finish(reason)
            elif self.archives.path is None:
                self.archives.due = True
        return {"status": self.state, "tick": self.world.tick, "archive": str(self.archives.path)}

    def finish(self, reason: str) -> None:
        """The match ends: programs stop, the end is recorded, the archive is due, every waiter released."""
        self.programs.stop_all("the match ended")
        self.match.end(reason)
        self.state = "over"
        self.archives.due = True
        self.clock.wake()
        self.operations.release_waiters()

    @property
    def season_over(self) -> bool:
        """The season has ended, and with it the match (unless `season_ends` is off)."""
        return self.season_ends and self.world.finished

    def end_if_due(self) -> None:
        """End the match when its season is over or `ends_when` names a reason."""
        if self.state != "running":
            return
        reason = "season over" if self.season_over else (self.ends_when() if self.ends_when is not None else None)
        if reason:
            self.finish(reason)

    def close(self) -> None:
        """Stop cleanly: end the program runner (programs stay stored), the archive if one is due, a final snapshot so
        a restart resumes exactly here (none while the store takes no writes: a restart replays its log instead)."""
        self.programs.close()
        if self.health.storage is None and self.archives.due:
            try:
                with self.changing():
                    pass
            except HostError:
                pass  # the store refused: the health says so, the log has it
        if self.health.storage is not None:  # the world may have run ahead of its store: nothing of it is written
            self.match.store.close()
            return
        try:
            self.match.close()
        except WriteFailed as exc:
            self.health.storage_failed(exc, self.world.tick)

    def _note_events(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        self.operations.note_events(records)
        self.spectate.note_events(records)

    # ---- inputs -----------------------------------------------------------------------------------

    def submit(self, agent: str, action: str, args: Any, issuer: str = "direct") -> dict[str, Any] | Rejected:
        """Record and apply one action; the operation's record, or the world's rejection."""
        refuse_unless_running(self.state)
        with self.changing():
            self.clock.acted(agent, self.world.tick)
            if issuer == "direct":
                self._go_ahead_of_program(agent, action, args)
            result = self.match.submit(agent, action, args, issuer)
            self.match.flush()
            self.spectate.submitted(agent, action, result)
            if isinstance(result, Rejected):
                self.rejections[result.code] += 1
                self.end_if_due()
                return result
            self.counters["actions_accepted"] += 1
            self.clock.submitted.add(agent)
            record = self.operations.operation(agent, result.op)
            self.end_if_due()
        self.clock.wake()
        return record

    def _go_ahead_of_program(self, agent: str, action: str, args: Any) -> None:
        """A direct action goes ahead of the character's own program: when the character is busy with an operation
        one of its programs started and the action would be accepted were it not, that operation is cancelled first,
        as the agent's own recorded `cancel` (so a replay does the same); the program's call returns it cancelled."""
        c = self.world.chars.get(agent)
        if c is None or c.op is None or c.op not in self.operations.issuers or not isinstance(args, dict):
            return
        refusal = self.world.check(agent, action, args)
        if refusal is None or refusal.code != "busy" or self.world.check(agent, action, args, as_idle=True) is not None:
            return
        cancelled = self.match.submit(agent, "cancel", {}, "direct")
        self.spectate.submitted(agent, "cancel", cancelled)
        self.counters["program_operations_preempted"] += 1

    def setup(self, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """An operator's setup command, recorded as an input like every change."""
        if self.state == "over":
            raise HostError("match_over", "The match has ended.")
        with self.changing():
            code = self.match.setup(command, args)
            self.match.flush()
        if code is not None:
            raise HostError("setup_refused", f"Setup command {command!r} was refused ({code}); the world is unchanged.")
        return {"command": command, "tick": self.world.tick}

    def record_spend(self, agent: str, usage: dict[str, Any]) -> None:
        """The operator's record of one model session of `agent` (its usage and price), kept in the match's
        inputs so the archive carries it. No agent can write one; once the match is over the archive is rewritten."""
        if agent not in self.world.chars:
            raise HostError("not_found", f"No character {agent!r} in this match.")
        with self.changing():
            self.match.record_spend(agent, usage)
            self.match.flush()
            self.archives.due = self.archives.due or self.state == "over"

    def count(self, name: str) -> None:
        """Count one request or error of a face, for the metrics."""
        self.counters[name] += 1
