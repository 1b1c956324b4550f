"""`World`: the one owner of a match's state, its spatial indexes and its event log."""

from __future__ import annotations

import math
import random
from array import array
from collections import deque
from typing import Any

import numpy as np
import orjson
from pydantic import ValidationError

from wildhold.content import Content
from wildhold.readable import describe_validation
from wildhold.world import kept, systems
from wildhold.world.actions import REGISTRY, check_registry, suggest
from wildhold.world.actions.registry import exact_args, json_args
from wildhold.world.errors import Accepted, Rejected
from wildhold.world.events import EventLog
from wildhold.world.kept import Kept, KeptMismatch
from wildhold.world.memory import PAGE, PAGE_BITS, Contents, Memory
from wildhold.world.parts import PARTS, Part
from wildhold.world.parts.base import PartState
from wildhold.world.positions import Positions
from wildhold.world.state import Character, Creature, Node, Operation, Structure
from wildhold.world.worldgen import generate, stream

GROUND = "ground@"
SETUP_EVENT = "setup"  # the event of a set-up command (see `wildhold.world.setup`)
EVERY_PART = "*"  # what `part_changes` counts a set-up command as a change of
CHUNK_BITS = 3  # tiles changes are tracked per 8 x 8 block (see `World.touched`)
TOUCHES_KEPT = 4096  # the latest touches whose tiles `World.touched_since` can tell


class World:
    """A deterministic world: `submit` takes actions, `step` advances one tick.

    Only methods of this class change state, and every change emits an event. Given the same
    (content, scenario, seed) and the same sequence of `join`, `submit`, `setup` and `step`
    calls, two worlds emit identical event chains.
    """

    def __init__(self, content: Content, scenario: str = "default", seed: int = 0, *, _generate: bool = True):
        check_registry(content)
        self.content = content
        self.scenario_name = scenario
        self.scenario = content.scenario(scenario)
        self.seed = seed
        self.needs = content.needs
        self.calendar = content.calendar
        self.events = EventLog()
        # Parts that follow every event (the trial): computed once, so a world without any pays nothing per event.
        self.listeners = tuple(part for part in PARTS if type(part).on_event is not Part.on_event)
        # Likewise the parts that may confine, shelter or bar a character: asked on every check and step.
        self._confining = tuple(part for part in PARTS if type(part).confines is not Part.confines)
        # Whom they may hold in place, asked again only after one of their events (see `_confined_now`): a check asks of
        # every candidate, and almost every character is held by none.
        self._confined: frozenset[str] | None = None
        # The owners (see `_count_change`) of the events after which they are asked again: those parts and set-up.
        self._confined_by = frozenset((EVERY_PART, *(part.name for part in self._confining)))
        self._sheltering = tuple(part for part in PARTS if type(part).shelters is not Part.shelters)
        self._barring = tuple(part for part in PARTS if type(part).bars is not Part.bars)
        self._unheard: deque[tuple[int, str, dict[str, Any]]] = deque()  # events listeners have yet to see
        self._telling = False  # whether listeners are being told of an event (see `_tell_listeners`)
        self._listening: tuple | None = None  # (listener, kinds, from tick) as each says it is `listening`, until told
        self._passed: tuple | None = None  # see `_passed_check`
        self.rngs: dict[str, random.Random] = {
            name: stream(seed, scenario, name) for name in ("spawn", "creatures", "weather")
        }
        self.chars: dict[str, Character] = {}
        self.states: dict[str, PartState] = {}  # each part's state, under its name (`Part.state` reads it typed)
        self.creatures: dict[int, Creature] = {}
        self.ops: dict[str, Operation] = {}
        self.ground: dict[int, dict[str, int]] = {}
        self.containers: dict[str, dict[str, int]] = {}
        self.occupants: dict[int, list[str]] = {}
        self.regrow_due: dict[int, list[int]] = {}
        self._bare_snapshot: tuple = (None,)
        self.contents = Contents()  # every tile record characters remember, by index (see `world.memory`)
        # When the contents of a tile (node, structure, items on the ground) last changed, kept
        # per block of tiles (CHUNK_BITS) as the count of `touched` calls: the observation builder keeps what it
        # built for a view square until a block under it changes. Derived, never saved.
        self.touches = 0
        self.moves = 0  # characters placed or moved so far: what was built from `occupants` holds while it stays
        self.stored = 0  # item changes in containers so far (chests, deposits, escrows): likewise for `containers`
        self.stored_in: dict[str, int] = {}  # likewise per kind of container, under the holder's name up to its "@"
        self.builds = 0  # structures placed or removed so far: likewise for who owns which structure
        self.holdings: dict[str, int] = {}  # holder -> item changes of its own so far (`give`, `take`): likewise for what it holds
        self.chunk_touched: list[int] = []
        self._touch_log: list[int] = []  # the tile of each of the latest touches, after the first `_touches_dropped`
        self._touches_dropped = 0
        self.chunk_moved: list[int] = []  # likewise, per block, the count of `moves` when a character last entered or left it
        self.kept = Kept()  # what is derived from the state and kept between uses: declared in `world.kept`
        # How many events of each part's own kinds were emitted so far (under the part's name): every change of a
        # part's state emits one of its events, so what was built from that state holds while the count stays.
        # Under (part, character id), the count at the part's last event naming that character (as any of its
        # values); under (part, None), at its last event naming none. Derived, never saved.
        self.part_changes: dict[Any, int] = dict.fromkeys((part.name for part in PARTS), 0)
        self._owner_of = {kind: part.name for part in PARTS for kind in part.events}
        self._owner_of[SETUP_EVENT] = EVERY_PART  # a set-up command writes parts' state directly (a friendship, a tier opened)
        self.next_op = 0
        self.next_creature = 0
        self.weather = "clear"
        self.tick = self.scenario.start_hour * 60
        self.start_tick = self.tick
        self.end_tick = self.start_tick + self.scenario.days * self.calendar.ticks_per_day
        if _generate:
            m = generate(content, scenario, seed)
            self.width, self.height = m.width, m.height
            self.terrain_names, self.terrain = m.terrain_names, m.terrain
            self.region_names, self.region = m.region_names, m.region
            self.nodes, self.structures = m.nodes, m.structures
            self.settlement, self.spawns, self.dungeon = m.settlement, m.spawns, m.dungeon
            self._index_terrain()
            for part in PARTS:
                part.init(self)
            systems.start_day(self)

    def _index_terrain(self) -> None:
        specs = [self.content.terrain[n] for n in self.terrain_names]
        self.walkable_terrain = [s.walkable for s in specs]
        self.safe_terrain = [s.safe for s in specs]
        self.blocking = {k for k, s in self.content.structures.items() if not s.walkable}
        self.sheltering = {k for k, s in self.content.structures.items() if s.shelter}

    # ---- geometry -------------------------------------------------------------------------

    def xy(self, p: int) -> tuple[int, int]:
        return p % self.width, p // self.width

    def pos(self, x: int, y: int) -> int | None:
        """The tile index of (x, y), or None outside the map."""
        if 0 <= x < self.width and 0 <= y < self.height:
            return y * self.width + x
        return None

    def distance(self, a: int, b: int) -> int:
        """Chebyshev distance: diagonal steps count as one."""
        w = self.width
        return max(abs(a % w - b % w), abs(a // w - b // w))

    def is_walkable(self, p: int) -> bool:
        s = self.structures.get(p)
        return self.walkable_terrain[self.terrain[p]] and (s is None or s.kind not in self.blocking)

    def is_sheltered(self, c: Character) -> bool:
        if self.safe_terrain[self.terrain[c.pos]]:
            return True
        s = self.structures.get(c.pos)
        if s is not None and s.kind in self.sheltering:
            return True
        return any(part.shelters(self, c) for part in self._sheltering)

    def barred(self, c: Character, p: int) -> str | None:
        """Why this character may not step onto a walkable tile (a locked door), or None."""
        for part in self._barring:
            why = part.bars(self, c, p)
            if why:
                return why
        return None

    def is_night(self, tick: int | None = None) -> bool:
        t = (self.tick if tick is None else tick) % self.calendar.ticks_per_day
        return t >= self.calendar.night_start or t < self.calendar.night_end

    def rng(self, name: str) -> random.Random:
        """The world's named random stream, created on first use; saved with the state."""
        r = self.rngs.get(name)
        if r is None:
            r = self.rngs[name] = stream(self.seed, self.scenario_name, name)
        return r

    @property
    def day(self) -> int:
        return self.tick // self.calendar.ticks_per_day + 1

    @property
    def season(self) -> str:
        seasons = self.calendar.seasons
        return seasons[((self.day - 1) // self.calendar.days_per_season) % len(seasons)]

    @property
    def finished(self) -> bool:
        return self.tick >= self.end_tick

    # ---- events and items -------------------------------------------------------------------

    def emit(self, kind: str, /, **data: Any) -> int:
        seq = self.events.emit(self.tick, kind, data)
        owner = self._owner_of.get(kind)
        if owner is not None:
            self._count_change(owner, data)
        if self.listeners:
            if self._telling:  # an outer call is telling them: it reaches this event after the current one
                self._unheard.append((seq, kind, data))
            else:  # most events no listener hears: asked first (if of a kind it may hear), they are spared the telling
                tick = self.tick
                for part, kinds, every_kind_from in self._listening or self._listen():
                    if ((kinds is None or kind in kinds or (every_kind_from is not None and tick >= every_kind_from))
                            and part.hears(self, kind, data)):
                        self._tell_listeners(seq, kind, data)
                        break
        return seq

    def _listen(self) -> tuple[tuple[Part, frozenset[str] | None, int | None], ...]:
        """Each listener with the kinds it may hear and the tick from which it may hear any (see `Part.listening`)."""
        listening = []
        for part in self.listeners:
            kinds, every_kind_from = part.listening(self) or (None, None)
            listening.append((part, kinds, every_kind_from))
        self._listening = tuple(listening)
        return self._listening

    def _count_change(self, owner: str, data: dict[str, Any]) -> None:
        """One more event of part `owner` (of every part: a set-up command): see `part_changes`."""
        changes, chars = self.part_changes, self.chars
        if owner in self._confined_by:
            self._confined = None  # whom a part holds in place may have changed (see `_confined_now`)
        if owner == EVERY_PART:
            for part in PARTS:
                n = changes[part.name] = changes[part.name] + 1
                changes[part.name, None] = n
            return
        n = changes[owner] = changes[owner] + 1
        named = False
        for value in data.values():
            if value.__class__ is str and value in chars:
                changes[owner, value] = n
                named = True
        if not named:
            changes[owner, None] = n

    def _tell_listeners(self, seq: int, kind: str, data: dict[str, Any]) -> None:
        """Each listener is told once, in sequence order, of every event it `hears` then, even those a listener
        emits itself: those wait in `_unheard` until this event and the ones before them are told. Most events
        find it empty, so the event in hand is told without queueing it."""
        listeners, unheard = self.listeners, self._unheard
        self._telling = True
        try:
            while True:
                for part in listeners:
                    if part.hears(self, kind, data):
                        part.on_event(self, seq, kind, data)
                        self._listening = None  # what it listens for may have changed
                if not unheard:
                    return
                seq, kind, data = unheard.popleft()
        except BaseException:
            unheard.clear()
            raise
        finally:
            self._telling = False

    def structures_of(self, owner: str) -> list[Structure]:
        """The structures a character owns, in the order of `structures`: an index kept until one is placed
        or removed (the wealth formula asks for every character's, every observation)."""
        held = self.kept.owners
        if held is None or held[0] != self.builds:
            index: dict[str, list[Structure]] = {}
            for s in self.structures.values():
                if s.owner is not None:
                    index.setdefault(s.owner, []).append(s)
            held = self.kept.owners = (self.builds, index)
        return held[1].get(owner, [])

    def positions(self) -> Positions:
        """Where every character stands, by row (see `world.positions`): kept while no one joins, `relocate`
        writing each move into it."""
        held = self.kept.positions
        if held is None or len(held.row) != len(self.chars):
            held = self.kept.positions = Positions(self.chars)
        elif kept.CHECKING and not held.same_as(Positions(self.chars)):
            raise KeptMismatch(f"the positions kept at tick {self.tick} differ from where the characters stand")
        return held

    def characters_within(self, p: int, radius: int, but: str | None = None) -> tuple[list[str], np.ndarray]:
        """The characters within `radius` of tile `p` (by `distance`), but `but`, in the order they joined: their
        ids and their rows in `positions`."""
        held = self.positions()
        rows = held.within(p, radius, self.width, but)
        return held.ids[rows].tolist(), rows

    def holder_items(self, holder: str) -> dict[str, int]:
        """The items of a holder: a character id, `ground@<tile>`, or a part's container
        (a chest, a storehouse deposit, an escrow) named `<kind>@<key>`."""
        if holder.startswith(GROUND):
            return self.ground.setdefault(int(holder[len(GROUND):]), {})
        c = self.chars.get(holder)
        if c is not None:
            return c.inventory
        if "@" not in holder:
            raise KeyError(f"unknown holder {holder!r}")
        return self.containers.setdefault(holder, {})

    def forget(self) -> None:
        """Drop everything kept (`world.kept`): each value is rebuilt from the state when next asked."""
        self.kept = Kept()

    def touched(self, p: int) -> None:
        """Tile `p` now holds something else (a node, a structure, items): see `chunk_touched`."""
        self.touches += 1
        at = self.kept.contents_at
        if at:
            at[p] = -1
        log = self._touch_log
        log.append(p)
        if len(log) > TOUCHES_KEPT:
            del log[:TOUCHES_KEPT // 2]
            self._touches_dropped += TOUCHES_KEPT // 2
        if self.chunk_touched:
            self.chunk_touched[self.chunk_of(p)] = self.touches

    def touched_since(self, count: int) -> list[int] | None:
        """The tiles touched after the first `count` touches, in order (repeats included), or None when that is
        further back than the log keeps: a few tiles change in a tick, so what was built from them at some count
        is patched at those instead of rebuilt."""
        start = count - self._touches_dropped
        return self._touch_log[start:] if start >= 0 else None

    def chunk_stamps(self) -> list[int]:
        """For each block of tiles (row by row, `(width >> CHUNK_BITS) + 1` across), the count of touches
        when a tile in it last changed: a block whose stamp is unchanged holds what it held."""
        stamps = self.chunk_touched
        if not stamps:  # sized on first use: worlds are built and loaded in several ways
            stamps = self.chunk_touched = [self.touches] * self._chunks()
        return stamps

    def chunk_moves(self) -> list[int]:
        """For each block of tiles (as `chunk_stamps`), the count of moves when a character last entered or
        left it: a block whose stamp is unchanged holds the same characters on the same tiles."""
        stamps = self.chunk_moved
        if not stamps:
            stamps = self.chunk_moved = [self.moves] * self._chunks()
        return stamps

    def _chunks(self) -> int:
        return ((self.width >> CHUNK_BITS) + 1) * ((self.height >> CHUNK_BITS) + 1)

    def chunk_of(self, p: int) -> int:
        """The index of the block holding tile `p` in `chunk_stamps` and `chunk_moves`."""
        w = self.width
        return (p // w >> CHUNK_BITS) * ((w >> CHUNK_BITS) + 1) + (p % w >> CHUNK_BITS)

    def _moved(self, p: int) -> None:
        """A character entered or left tile `p` (after `moves` was counted): see `chunk_moved`."""
        if self.chunk_moved:
            self.chunk_moved[self.chunk_of(p)] = self.moves

    def give(self, holder: str, item: str, qty: int, source: str) -> None:
        """The only way items enter a holder (a character or a ground pile)."""
        if qty <= 0:
            return
        items = self.holder_items(holder)
        if "@" in holder:
            if holder.startswith(GROUND):
                self.touched(int(holder[len(GROUND):]))
            else:
                self._stored(holder)
        items[item] = items.get(item, 0) + qty
        self._held(holder)
        self.emit("item_gained", holder=holder, item=item, qty=qty, source=source)

    def take(self, holder: str, item: str, qty: int, source: str) -> None:
        """The only way items leave a holder; callers check availability first."""
        if qty <= 0:
            return
        items = self.holder_items(holder)
        if "@" in holder:
            if holder.startswith(GROUND):
                self.touched(int(holder[len(GROUND):]))
            else:
                self._stored(holder)
        left = items[item] - qty
        if left < 0:
            raise AssertionError(f"{holder} has fewer than {qty} {item}")
        if left:
            items[item] = left
        else:
            del items[item]
            if not items:
                if holder.startswith(GROUND):
                    del self.ground[int(holder[len(GROUND):])]
                elif holder in self.containers:
                    del self.containers[holder]
            self._unequip_missing(holder, item)
        self._held(holder)
        self.emit("item_lost", holder=holder, item=item, qty=qty, source=source)

    def _stored(self, holder: str) -> None:
        """One more item change in container `holder`: see `stored` and `stored_in`."""
        self.stored += 1
        kind, counts = holder[:holder.index("@") + 1], self.stored_in
        counts[kind] = counts.get(kind, 0) + 1

    def _held(self, holder: str) -> None:
        """One more change of what `holder` holds: see `holdings`."""
        holdings = self.holdings
        holdings[holder] = holdings.get(holder, 0) + 1

    def _unequip_missing(self, holder: str, item: str) -> None:
        c = self.chars.get(holder)
        if c is None:
            return
        for slot, equipped in list(c.equipment.items()):
            if equipped == item:
                del c.equipment[slot]
                self.emit("equipped", agent=c.id, slot=slot, item=None)

    def set_needs(self, c: Character, cause: str, health: int, energy: int, satiety: int) -> None:
        n = self.needs  # each clamped to 0..its maximum (comparisons, not min and max: needs change every few ticks)
        health = 0 if health < 0 else n.max_health if health > n.max_health else health
        energy = 0 if energy < 0 else n.max_energy if energy > n.max_energy else energy
        satiety = 0 if satiety < 0 else n.max_satiety if satiety > n.max_satiety else satiety
        if health != c.health or energy != c.energy or satiety != c.satiety:
            c.health, c.energy, c.satiety = health, energy, satiety
            self.emit("needs", agent=c.id, cause=cause, health=health, energy=energy, satiety=satiety)

    # ---- space ------------------------------------------------------------------------------

    def tile_snapshot(self, p: int) -> tuple:
        """What a character notes about a tile when it sees it (terrain is static).

        Most tiles hold nothing: those seen in the same tick share one snapshot, which spares an
        allocation (and garbage-collector work) for nearly every tile a walking character passes.
        """
        n = self.nodes.get(p)
        s = self.structures.get(p)
        g = self.ground.get(p)
        if n is None and s is None and not g:
            if self._bare_snapshot[0] != self.tick:
                self._bare_snapshot = (self.tick, None, 0, None, None, ())
            return self._bare_snapshot
        return (
            self.tick,
            n.kind if n else None,
            n.amount if n else 0,
            s.kind if s else None,
            s.owner if s else None,
            tuple(sorted(g.items())) if g else (),
        )

    def view_bounds(self, p: int) -> tuple[int, int, int, int]:
        """(x0, x1, y0, y1) of the view square around tile `p`, clipped to the map: kept per tile (asked
        several times per observation)."""
        kept = self.kept.bounds
        got = kept.get(p)
        if got is None:
            r = self.needs.view_radius
            x, y = p % self.width, p // self.width
            got = kept[p] = (max(0, x - r), min(self.width - 1, x + r), max(0, y - r), min(self.height - 1, y + r))
        return got

    def remember_leaving(self, c: Character, old: int, new: int | None) -> None:
        """Record the tiles that leave the character's view when it goes from `old` to `new`.

        Tiles still in view need no record: an observation shows them live. This keeps each
        remembered tile exactly as it was when it left the character's view: the tick, and the record of what it
        held in `contents` (one per tile until it is touched, shared by everyone who saw it so).
        """
        x0, x1, y0, y1 = self.view_bounds(old)
        if new is not None:
            nx0, nx1, ny0, ny1 = self.view_bounds(new)
        else:
            nx0, nx1, ny0, ny1 = 1, 0, 1, 0
        # Rows the new view still covers lose the same columns on each side, so the spans are
        # computed once per move rather than once per row: this runs on every step of every walk.
        kept_row_spans = (range(x0, min(x1, nx0 - 1) + 1), range(max(x0, nx1 + 1), x1 + 1))
        whole_row_spans = (range(x0, x1 + 1),)
        w, tick, mem = self.width, self.tick, c.memory
        size, seen_at = mem.size, self.tick + 1  # see `world.memory`
        nodes, structures, ground = self.nodes, self.structures, self.ground
        at = self.kept.contents_at or self._size_contents_at()
        listed = mem.listed(tick)
        for y in range(y0, y1 + 1):
            row = y * w
            for span in kept_row_spans if ny0 <= y <= ny1 else whole_row_spans:
                p, stop = row + span.start, row + span.stop
                listed.extend(range(p, stop))
                while p < stop:  # the span, page by page of the memory
                    k = p >> PAGE_BITS
                    page, base, end = mem.page(k), k << PAGE_BITS, min(stop, (k + 1) << PAGE_BITS)
                    for q in range(p, end):
                        i = q - base
                        if not page[i]:
                            size += 1
                        page[i] = seen_at
                        if q in nodes or q in structures or ground.get(q):
                            held = at[q]
                            page[PAGE + i] = held if held >= 0 else self._record_contents(q)
                        else:
                            page[PAGE + i] = 0  # holds nothing: the bare record
                    p = end
        mem.size, mem.newest, mem.stamp = size, tick, mem.stamp + 1

    def _record_contents(self, p: int) -> int:
        """Record what tile `p` holds now in `contents` (kept for the tile until it is `touched`); its index."""
        i = self.kept.contents_at[p] = self.contents.add(self.tile_snapshot(p)[1:])
        return i

    def _size_contents_at(self) -> array:
        at = self.kept.contents_at = array("i", [-1]) * (self.width * self.height)
        return at

    def new_memory(self) -> Memory:
        """An empty memory of this world's map."""
        return Memory(self.contents)

    def adopt_memories(self, memories: dict[str, Memory]) -> None:
        """Give characters these memories (copies), whose records are in another table of contents (a world rebuilt
        from a save kept without memories): that table becomes the world's."""
        for agent, memory in memories.items():
            self.chars[agent].memory = memory.copy()
            self.contents = memory.contents
        self.kept.contents_at = array("i")

    def relocate(self, c: Character, new: int, event: bool = True) -> None:
        """Move a character; the only writer of `occupants` and of positions."""
        old = c.pos
        self.remember_leaving(c, old, new)
        here = self.occupants[old]
        here.remove(c.id)
        if not here:
            del self.occupants[old]
        self.occupants.setdefault(new, []).append(c.id)
        c.pos = new
        held = self.kept.positions
        if held is not None:
            held.tiles[held.row[c.id]] = new
        self.moves += 1
        self._moved(old)
        self._moved(new)
        if event:
            w = self.width
            self.emit("moved", agent=c.id, **{"from": (old % w, old // w)}, to=(new % w, new // w))

    def place_structure(self, p: int, kind: str, owner: str | None) -> Structure:
        s = Structure(kind, owner, self.content.structures[kind].hp)
        self.structures[p] = s
        self.touched(p)
        self.builds += 1
        x, y = self.xy(p)
        self.emit("structure_placed", x=x, y=y, structure=kind, owner=owner, hp=s.hp)
        return s

    def remove_structure(self, p: int) -> Structure:
        """Take a structure off its tile; every part forgets what it kept about it. Callers emit the event."""
        s = self.structures.pop(p)
        self.touched(p)
        self.builds += 1
        for c in self.chars.values():
            if c.bed == p:  # a destroyed bed is no longer where its owner wakes (or what it is told it has)
                c.bed = None
        for part in PARTS:
            part.structure_removed(self, p, s)
        return s

    def set_node(self, p: int, node: Node, amount: int) -> None:
        node.amount = amount
        self.touched(p)
        x, y = self.xy(p)
        self.emit("node_changed", x=x, y=y, node=node.kind, amount=amount)

    # ---- characters -------------------------------------------------------------------------

    def join(self, name: str) -> str:
        """Add a character at a settlement spawn point with the scenario's starting items."""
        agent = f"a{len(self.chars) + 1}"
        p = self.spawns[self.rngs["spawn"].randrange(len(self.spawns))]
        n = self.needs
        c = Character(agent, name, p, n.max_health, n.max_energy, n.max_satiety, memory=self.new_memory())
        self.chars[agent] = c
        self.occupants.setdefault(p, []).append(agent)
        self.moves += 1
        self._moved(p)
        x, y = self.xy(p)
        self.emit("agent_spawned", agent=agent, name=name, x=x, y=y)
        for item, qty in self.scenario.start_items.items():
            self.give(agent, item, qty, "start")
        for part in PARTS:
            part.joined(self, c)
        return agent

    # ---- actions ----------------------------------------------------------------------------

    def submit(self, agent: str, action: str, args: dict[str, Any] | None = None, issuer: str = "direct") -> Accepted | Rejected:
        """Validate an action now; accept it as an operation or reject it without changing state."""
        args = {} if args is None else args
        result = self._passed_check(agent, action, args) or self._check(agent, action, args)
        if isinstance(result, Rejected):
            self.emit("action_rejected", agent=agent, action=action, code=result.code, message=result.message, issuer=issuer)
            return result
        spec, c, sent, plan = result
        self.next_op += 1
        op = Operation(f"op{self.next_op}", agent, action, sent, self.tick, self.tick + plan.duration, plan.energy, plan.data)
        self.emit("operation_started", agent=agent, op=op.id, action=action, args=op.args, ends=op.ends, issuer=issuer)
        if plan.duration == 0:
            systems.finish_operation(self, c, op)
        else:
            self.ops[op.id] = op
            c.op = op.id
            if spec.begin is not None:
                spec.begin(self, c, op)
        return Accepted(op.id, action, op.ends)

    def check(self, agent: str, action: str, args: dict[str, Any] | None = None, as_idle: bool = False) -> Rejected | None:
        """What `submit` would answer now, without submitting: None for an action it would accept, else
        the refusal. Records and changes nothing (an action mask asks this of each candidate). `as_idle`: what it
        would answer were the character's operation cancelled first."""
        result = self._check(agent, action, {} if args is None else args, as_idle=as_idle)
        return result if isinstance(result, Rejected) else None

    def refusal_code(self, agent: str, action: str, args: dict[str, Any] | None = None) -> str | None:
        """`check`'s answer as its code only, the action mask's question: arguments that name a field the action
        does not take, or leave out one it needs, are refused before the argument model is built, and the
        core's refusals build no sentence."""
        args = {} if args is None else args
        result = self._check(agent, action, args, False)
        if isinstance(result, Rejected):
            return result.code
        as_sent = _as_sent(args)
        if as_sent is not None:  # kept for a submission of the same action that follows with nothing changed
            self._passed = (self._moment(), agent, action, as_sent, result)
        return None

    def ready_code(self, agent: str, action: str) -> str | None:
        """A refusal `refusal_code` gives this action now whatever its arguments, or None when some arguments may
        pass: the world's own refusals in `_check`'s order (unknown agent or action, busy, held in place), then the
        action's `ready` precondition. Arguments that break their schema are refused as `bad_arguments` first, and a
        check that reads its arguments before the precondition may refuse some with another code; every one is
        refused. Reads no arguments and changes nothing (an action mask asks it once per action)."""
        try:  # subscripts, not `get`: asked of about every action a mask draws
            c, spec = self.chars[agent], REGISTRY[action]
        except KeyError:
            return "unknown_agent" if agent not in self.chars else "unknown_action"
        if c.op is not None and not spec.while_busy:
            return "busy"
        held = self._confined
        if held is None:
            held = self._confined_now()
        if agent in held and any(part.confines(self, c, action) for part in self._confining):
            return "held_in_place"
        ready = spec.ready
        return ready(self, c) if ready is not None else None

    def character_id(self, ref: str) -> str | None:
        """The id of the character `ref` names: its id, else its name (as registered, else ignoring case, when
        only one character has it); None when none does."""
        if ref in self.chars:
            return ref
        named = [cid for cid, c in self.chars.items() if c.name == ref]
        if not named:
            named = [cid for cid, c in self.chars.items() if c.name.casefold() == ref.casefold()]
        return named[0] if len(named) == 1 else None

    def by_id(self, args: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
        """The arguments with each character named by name in `fields` given by its id (a copy when one is): the
        operation carries ids, and a replay resolves the recorded names to the same ones."""
        out = args
        for name in fields:
            ref = args.get(name)
            if isinstance(ref, str) and ref not in self.chars:
                cid = self.character_id(ref)
                if cid is not None:
                    out = {**out, name: cid}
        return out

    def _confined_now(self) -> frozenset[str]:
        """The ids of the characters a part may hold in place (`Part.confined`), kept until one of those parts' events
        (or a set-up command) is counted: every change of a part's state emits one of its events (`_count_change`
        drops them then)."""
        self._confined = frozenset(cid for part in self._confining for cid in part.confined(self))
        return self._confined

    def _moment(self) -> tuple[int, ...]:
        """What differs after any change of state: every change emits an event (a character moved without one is
        counted in `moves`), and a tick's systems run under a new tick."""
        return self.events.seq, self.tick, self.moves, self.touches, self.builds, self.stored

    def _passed_check(self, agent: str, action: str, args: Any):
        """The check `refusal_code` last passed, when it was of this action with these arguments and nothing has
        changed since (the check reads only the world's state and the arguments: it would pass the same again), else
        None. Used once: an action mask asks of each candidate, and the one it submits is usually the last it asked."""
        passed, self._passed = self._passed, None
        if passed is None or passed[1] != agent or passed[2] != action or passed[0] != self._moment():
            return None
        return passed[4] if _as_sent(args) == passed[3] else None

    def _check(self, agent: str, action: str, args: Any, explain: bool = True, as_idle: bool = False):
        """A refusal, or (the action, the character, the arguments as JSON, the plan) for an action `submit` accepts.
        Arguments that `exact_args` finds exactly of their fields' JSON types are taken as they are; only others build
        the model (whose validation explains what is wrong). `explain=False` builds no sentence for the core's
        refusals: the code is the answer."""
        try:  # subscripts, not `get`: asked of every candidate a mask puts
            c, spec = self.chars[agent], REGISTRY[action]
        except KeyError:
            if agent not in self.chars:
                return Rejected("unknown_agent", f"No character has id {agent!r}.")
            return Rejected("unknown_action", f"There is no action {action!r}.{suggest(action)}")
        if not isinstance(args, dict):
            return Rejected("bad_arguments", f"{action}: arguments must be an object.")
        sent = exact_args(spec.args, args)  # None also for arguments that name an unknown field or lack a needed one
        if sent is None and not explain and not (spec.fields.issuperset(args) and spec.required.issubset(args)):
            return UNEXPLAINED["bad_arguments"]
        if sent is None:
            try:
                sent = json_args(spec.args.model_validate(args))
            except ValidationError as exc:
                return Rejected("bad_arguments", f"{action}: " + describe_validation(exc)) if explain else UNEXPLAINED["bad_arguments"]
        if spec.characters:
            sent = self.by_id(sent, spec.characters)
        if c.op is not None and not spec.while_busy and not as_idle:
            if not explain:
                return UNEXPLAINED["busy"]
            op = self.ops[c.op]
            return Rejected("busy", f"Still doing {op.action} ({op.id}) until tick {op.ends}; wait for it or cancel it.")
        held = self._confined
        if held is None:
            held = self._confined_now()
        if agent in held:
            for part in self._confining:
                why = part.confines(self, c, action)
                if why:
                    return Rejected("held_in_place", why)
        plan = spec.check(self, c, sent)
        if isinstance(plan, Rejected):
            return plan
        if plan.energy > c.energy:
            if not explain:
                return UNEXPLAINED["not_enough_energy"]
            return Rejected("not_enough_energy", f"{action} needs {plan.energy} energy and you have {c.energy}; eat, rest or sleep first.")
        return spec, c, sent, plan

    SYSTEMS = (
        systems.advance_calendar,
        systems.advance_operations,
        systems.decay_needs,
        systems.night_creatures,
        systems.resolve_knockdowns,
        systems.regrow_nodes,
    )

    def step(self) -> None:
        """Advance one tick: the core systems in `SYSTEMS` order, then each part's tick in `PARTS` order."""
        self.tick += 1
        for system in self.SYSTEMS:
            system(self)
        for part in PARTS:
            part.tick(self)

    def knockdown_drop(self, qty: int) -> int:
        """Units of a stack left behind on a knockdown (rounded up)."""
        return math.ceil(qty * self.needs.knockdown_drop_fraction)


# The core's refusals as `refusal_code` returns them: the code is the answer, so no sentence is built.
UNEXPLAINED = {code: Rejected(code, "") for code in ("bad_arguments", "busy", "not_enough_energy")}

def _as_sent(args: dict[str, Any]) -> bytes | None:
    """Arguments as JSON bytes, every nested value included (what a check read), or None when they are not JSON."""
    try:
        return orjson.dumps(args)
    except TypeError:
        return None


