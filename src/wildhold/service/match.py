"""A match: one world driven by an input log, persisted to a store, with its agents.

Every input (join, action, setup, end) is recorded before it takes effect. Replaying the inputs
from the seed, or from the latest snapshot, rebuilds the world exactly; that is how a match
resumes after a crash and how `wildhold replay` checks an archive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

from wildhold import __version__
from wildhold.agents.base import AgentView, Policy
from wildhold.agents.scripted import make_policy
from wildhold.content import Content, default_content
from wildhold.store.archive import export_archive
from wildhold.store.sqlite import Input, MatchStore, StoreError
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.observe import observe, status
from wildhold.world.serialize import dumps, loads, state_hash
from wildhold.world.setup import SetupError, apply_setup
from wildhold.world.world import World


def apply_input(world: World, inp: Input) -> Accepted | Rejected | str | None:
    """Apply one recorded input to a world standing at the input's tick."""
    if inp.kind == "join":
        return world.join(inp.args["name"])
    if inp.kind == "action":
        return world.submit(inp.agent or "", inp.name, inp.args, inp.issuer)
    if inp.kind == "setup":
        try:
            apply_setup(world, inp.name, inp.args)
        except SetupError as exc:
            return exc.code
        return None
    if inp.kind == "end":
        world.emit("match_ended", reason=inp.args.get("reason", ""))
        return None
    raise StoreError(f"input {inp.seq}: unknown kind {inp.kind!r}")


def advance_to(world: World, tick: int, on_step: Callable[[], None] | None = None) -> None:
    if tick < world.tick:
        raise StoreError(f"input at tick {tick} is before the world's tick {world.tick}")
    while world.tick < tick:
        world.step()
        if on_step:
            on_step()


def replay(content: Content, scenario: str, seed: int, inputs: Iterable[Input], final_tick: int) -> World:
    """Re-simulate a match from its seed and inputs alone."""
    world = World(content, scenario, seed)
    drain = world.events.drain
    for inp in inputs:
        advance_to(world, inp.tick, drain)
        apply_input(world, inp)
        drain()
    advance_to(world, final_tick, drain)
    return world


class Match:
    """A world with its store and its scripted agents, advanced one tick at a time."""

    def __init__(self, world: World, store: MatchStore | None, policies: dict[str, Policy]):
        self.world = world
        self.store = store
        self.policies = policies
        self.snapshot_every = world.scenario.snapshot_every
        self.ended = False
        self.on_ack: Callable[[Input], None] | None = None
        self._decided: tuple[int, str] | None = None
        self._known_events: dict[int, str] = {}

    # ---- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def create(cls, scenario: str = "default", seed: int = 0, db: Path | str | None = None,
               content: Content | None = None, policies: list[str] | None = None,
               agents: int | None = None, clock: str = "fast") -> Match:
        content = content or default_content()
        world = World(content, scenario, seed)
        store = None
        if db is not None:
            store = MatchStore(db)
            if store.last_input:
                raise StoreError(f"{db} already holds a match; resume it instead")
            store.set_meta({
                "wildhold_version": __version__, "scenario": scenario, "seed": seed,
                "content_digest": content.digest, "clock": clock,
            })
        match = cls(world, store, {})
        names = policies or world.scenario.policies
        count = agents or world.scenario.agents
        for i in range(count):
            policy = names[i % len(names)]
            match.join(f"{policy}-{i + 1}", policy)
        match.flush(snapshot=True)
        return match

    @classmethod
    def resume(cls, db: Path | str, content: Content | None = None) -> Match:
        """Rebuild a stored match from its latest snapshot and the inputs recorded after it."""
        content = content or default_content()
        store = MatchStore(db)
        meta = store.meta()
        if not meta:
            raise StoreError(f"{db} holds no match")
        if meta["content_digest"] != content.digest:
            raise StoreError(f"{db} was played under other content files ({meta['content_digest'][:12]})")
        snap = store.latest_snapshot()
        if snap is None:
            world, after_input = World(content, meta["scenario"], meta["seed"]), 0
        else:
            _, after_input, _, blob = snap
            world = loads(content, blob)
        match = cls(world, store, {})
        match._known_events = store.event_hashes(world.events.seq)
        for inp in list(store.inputs(after_input)):
            advance_to(world, inp.tick, match._flush_events)
            result = apply_input(world, inp)
            if inp.kind == "action" and inp.issuer == "direct":
                match._decided = (inp.tick, inp.agent)
            if inp.kind == "join":
                match.policies[result] = make_policy(inp.args["policy"], content)
            if inp.kind == "end":
                match.ended = True
            match._flush_events()
        reached = store.last_event_tick()
        if reached is not None and reached > world.tick:
            advance_to(world, reached, match._flush_events)
        for inp in store.inputs(0):
            if inp.kind == "join" and inp.seq <= after_input:
                agent = next(c.id for c in world.chars.values() if c.name == inp.args["name"])
                match.policies[agent] = make_policy(inp.args["policy"], content)
        match.policies = dict(sorted(match.policies.items(), key=lambda kv: int(kv[0][1:])))
        return match

    def close(self) -> None:
        """Stop cleanly: a final snapshot, so a resume starts exactly here."""
        if self.store:
            self.flush(snapshot=True)
            self.store.close()

    # ---- inputs -------------------------------------------------------------------------------

    def _record(self, kind: str, agent: str | None, name: str, args: dict[str, Any], issuer: str = "direct") -> Input:
        seq = self.store.record_input(self.world.tick, kind, agent, name, args, issuer) if self.store else 0
        inp = Input(seq, self.world.tick, kind, agent, name, args, issuer)
        if self.on_ack:
            self.on_ack(inp)
        return inp

    def join(self, name: str, policy: str) -> str:
        agent = apply_input(self.world, self._record("join", None, "join", {"name": name, "policy": policy}))
        self.policies[agent] = make_policy(policy, self.world.content)
        return agent

    def submit(self, agent: str, action: str, args: dict[str, Any], issuer: str = "direct") -> Accepted | Rejected:
        """Record, then apply: once this returns, the action is acknowledged and durable."""
        return apply_input(self.world, self._record("action", agent, action, args, issuer))

    def setup(self, command: str, args: dict[str, Any]) -> str | None:
        return apply_input(self.world, self._record("setup", None, command, args, "admin"))

    def end(self, reason: str) -> None:
        if not self.ended:
            apply_input(self.world, self._record("end", None, "end", {"reason": reason}))
            self.ended = True
        self.flush(snapshot=True)

    # ---- time ---------------------------------------------------------------------------------

    def act(self) -> None:
        """Let every idle scripted agent choose one action for this tick.

        Agents decide in a fixed order. After a crash in the middle of a tick, the agents up to
        the last one whose action was recorded have already decided; they are not asked twice.
        """
        w = self.world
        done_through = self._decided[1] if self._decided and self._decided[0] == w.tick else None
        self._decided = None
        for agent, policy in self.policies.items():
            if done_through is not None:
                if agent == done_through:
                    done_through = None
                continue
            c = w.chars[agent]
            if c.op is not None:
                continue
            view = AgentView(agent, w.tick, w.seed, lambda mem, a=agent: observe(w, a, mem), lambda c=c: status(w, c))
            decision = policy.decide(view)
            if decision is not None:
                self.submit(agent, decision[0], decision[1])

    def step(self) -> None:
        self.world.step()
        self.flush(snapshot=self.world.tick % self.snapshot_every == 0)

    def run(self, on_tick: Callable[[World], None] | None = None, until: int | None = None) -> None:
        """Play the scripted agents until the scenario's end (or `until`), then end the match."""
        stop = self.world.end_tick if until is None else min(until, self.world.end_tick)
        while self.world.tick < stop and not self.ended:
            self.act()
            self.step()
            if on_tick:
                on_tick(self.world)
        if self.world.finished:
            self.end("season over")

    # ---- persistence --------------------------------------------------------------------------

    def _flush_events(self) -> None:
        records = self.world.events.drain()
        if self.store is None or not records:
            return
        for seq, _, _, _, digest in records:
            known = self._known_events.pop(seq, None)
            if known is not None and known != digest:
                raise StoreError(f"event {seq} differs from the stored log: the world diverged on resume")
        self.store.append_events(records)

    def flush(self, snapshot: bool = False) -> None:
        self._flush_events()
        if snapshot and self.store is not None:
            w = self.world
            self.store.save_snapshot(w.tick, self.store.last_input, w.events.seq, dumps(w))

    # ---- archive ------------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        w = self.world
        meta = self.store.meta() if self.store else {}
        return {
            "wildhold_version": __version__,
            "scenario": w.scenario_name,
            "seed": w.seed,
            "content_digest": w.content.digest,
            "clock": meta.get("clock", "fast"),
            "agents": [
                {"id": a, "name": w.chars[a].name, "policy": p.name} for a, p in self.policies.items()
            ],
            "start_tick": w.start_tick,
            "final_tick": w.tick,
            "state_hash": state_hash(w),
            "chain_head": w.events.head,
            "event_count": w.events.seq,
        }

    def export(self, path: Path | str) -> Path:
        """Write the one-file archive of this match (it needs a store)."""
        if self.store is None:
            raise StoreError("an archive needs a match with a store")
        self.flush()
        return export_archive(self.store, self.manifest(), dumps(self.world), path)
