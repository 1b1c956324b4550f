"""What the spectator and the operator watch live: the whole map, every character, the event feed.

`Spectate` keeps the recent events and each character's recent submissions as the host records
them, and builds the live view once per change of the world, whoever asks and however often: the
live page's stream sends the same view to every watcher. It is never an agent's read: the routes
that serve it take the spectator or the admin token, never an agent's.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Iterable

import orjson

from wildhold.looks import palette
from wildhold.world.errors import Rejected
from wildhold.world.observe import clock as world_clock
from wildhold.world.parts import dungeon
from wildhold.world.wealth import rank_standard, wealth_cents

if TYPE_CHECKING:
    from wildhold.service.host import Host
    from wildhold.world.world import World

FEED_KEPT = 200  # events the feed holds
FEED_SHOWN = 60  # events a live view carries
RECENT_KEPT = 8  # submissions kept per character


class Spectate:
    """The live feed and views of one served match."""

    def __init__(self, host: Host):
        self.host = host
        self.feed: deque[tuple[int, int, str, bytes]] = deque(maxlen=FEED_KEPT)
        self.recent: dict[str, deque[dict[str, Any]]] = {}
        self._submissions = 0
        self._view: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def note_events(self, records: Iterable[tuple[int, int, str, bytes, str]]) -> None:
        for seq, tick, kind, payload, _ in records:
            self.feed.append((seq, tick, kind, payload))

    def submitted(self, agent: str, action: str, result: Any) -> None:
        """One submission of `agent` (by its agent or its program) and what became of it."""
        row: dict[str, Any] = {"tick": self.host.world.tick, "action": action}
        if isinstance(result, Rejected):
            row.update(accepted=False, code=result.code, message=result.message)
        else:
            row.update(accepted=True, op=result.op)
        self.recent.setdefault(agent, deque(maxlen=RECENT_KEPT)).append(row)
        self._submissions += 1

    def map(self) -> dict[str, Any]:
        return world_map(self.host.world)

    def key(self) -> tuple[Any, ...]:
        """Changes whenever anything the live view shows may have changed."""
        host = self.host
        return (host.world.tick, host.world.events.seq, self._submissions, host.state, len(host.access.records),
                host.health.cause)

    def view(self) -> dict[str, Any]:
        """The live view now: built once per change, shared by every watcher."""
        key = self.key()
        if self._view is None or self._view[0] != key:
            self._view = (key, self._build())
        return self._view[1]

    def _build(self) -> dict[str, Any]:
        host = self.host
        started = host.state != "lobby"
        records = {r.agent: r for r in host.access.records.values() if r.agent}
        view = world_frame(host.world, host.horizon == "visible", ranked=started)
        for row in view["characters"]:
            a, rec = row["agent"], records.get(row["agent"])
            row.update(idle=a in host.clock.idle, model=rec.extra.get("model", "") if rec else "",
                       harness=rec.extra.get("harness", "") if rec else "",
                       programs=[{"name": p["name"], "revision": p["revision"], "state": p["state"], "error": p["error"]}
                                 for p in host.programs.list(a)["programs"]] if started else [],
                       recent=list(self.recent.get(a, ())))
        feed = list(self.feed)[-FEED_SHOWN:]
        return {"status": host.state, "clock": host.config.clock, "degraded": host.health.cause,
                "lobby": [r.name for r in host.access.records.values() if r.agent is None], **view,
                "feed": [feed_row(seq, tick, kind, payload) for seq, tick, kind, payload in reversed(feed)]}


def feed_row(seq: int, tick: int, kind: str, payload: bytes) -> dict[str, Any]:
    return {"seq": seq, "tick": tick, "kind": kind, "data": orjson.loads(payload).get("data", {})}


def world_map(w: World) -> dict[str, Any]:
    """What does not change in a match: the size, the terrain (one index a tile, row by row) and its kinds."""
    return {"width": w.width, "height": w.height, "terrain_names": list(w.terrain_names), "terrain": list(w.terrain),
            "regions": list(w.region_names), "terrain_glyphs": {n: w.content.terrain[n].glyph for n in w.terrain_names}}


def world_frame(w: World, show_end: bool, ranked: bool = True) -> dict[str, Any]:
    """The whole world at this tick as a watcher sees it: the live page's and the replay viewer's frame."""
    wealth = {a: wealth_cents(w, a) for a in w.chars} if ranked else {}
    ranks = rank_standard(wealth) if ranked else {}
    colour = palette.colours(c.name for c in w.chars.values())  # joining order: the same at every tick, whatever the ranks
    chars = []
    for a, c in w.chars.items():
        x, y = w.xy(c.pos)
        op = w.ops.get(c.op) if c.op else None
        chars.append({
            "agent": a, "name": c.name, "colour": colour[c.name], "x": x, "y": y,
            "dungeon": dungeon.inside_instance(w, a) is not None,
            "health": c.health, "energy": c.energy, "satiety": c.satiety, "asleep": c.asleep,
            "knockdowns": c.knockdowns, "wealth_cents": wealth.get(a, 0), "rank": ranks.get(a),
            "inventory": dict(sorted(c.inventory.items())),
            "operation": None if op is None else {"op": op.id, "action": op.action, "started": op.started, "ends": op.ends},
        })
    chars.sort(key=lambda row: (row["rank"] if row["rank"] is not None else 1 << 30, row["agent"]))
    return {
        "scenario": w.scenario_name,
        "time": world_clock(w, show_end),
        "characters": chars,
        "creatures": [{"id": cr.id, "kind": cr.kind, "x": cr.pos % w.width, "y": cr.pos // w.width, "hp": cr.hp}
                      for cr in w.creatures.values()],
        "structures": [[p % w.width, p // w.width, s.kind, s.owner] for p, s in sorted(w.structures.items())],
        "nodes": [[p % w.width, p // w.width, n.kind, n.amount] for p, n in sorted(w.nodes.items())],
    }
