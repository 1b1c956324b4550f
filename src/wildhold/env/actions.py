"""The Discrete action table: every served action with its arguments filled relative to the character, generated
from the action registry's schemas, the content tables and `env.yaml`'s argument sources.

Entry 0 is `noop` (submit nothing; a tick passes). Every other entry is an action with, for each argument, a value
or a slot the character's observation fills when the entry is played: a tile offset from the character, the k-th
item it carries, the k-th id its observation lists. An entry whose slot is empty resolves to nothing and is never
legal; the legal-action mask is the world's would-accept check over every entry that resolves.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from wildhold.agents.sampled import ID_SOURCES
from wildhold.content import Content
from wildhold.content.loader import ContentError
from wildhold.env.spec import FILE, EnvSpec, Entries, content_table
from wildhold.server.surface import action_tools

if TYPE_CHECKING:
    from wildhold.world.world import World

NOOP = "noop"
TILE = "x,y"
AT_TILE_SECTIONS = ("view", "structures", "deposits")  # what `Context.at_tile` reads of an observation
SOLD_SECTIONS = ("villagers",)  # what `Context.sold` reads
Whole = Callable[[tuple[str, ...] | None], dict[str, Any]]  # the observation with (at least) these sections


@dataclass(frozen=True)
class Entry:
    """One action of the table: its name and, per argument, how it is filled: ("value", v), ("tile", (dx, dy)),
    ("carried", k), ("at_tile", k), ("sold", k), ("listed", k), ("goods_carried", k), ("goods_coin", n)."""

    action: str
    fills: tuple[tuple[str, tuple[str, Any]], ...]

    def text(self) -> str:
        parts = []
        for field, (kind, v) in self.fills:
            if kind == "value":
                parts.append(f"{field}={v}")
            elif kind == "tile":
                parts.append(f"x,y=self{v[0]:+d},{v[1]:+d}")
            elif kind == "goods_coin":
                parts.append(f"{field}={{coin: {v}}}")
            else:
                parts.append(f"{field}={kind}[{v}]")
        return f"{self.action}({', '.join(parts)})"


class Context:
    """What the slots of one character's entries resolve against, read from its observation: its position and
    what it carries at once, the rest (the ids listed for an argument, the items at a tile, what a villager
    sells) when an entry first needs it, since most entries need none of it.

    `whole(sections)` gives the observation with (at least) those of the parts' sections (quests, market,
    structures, villagers), which an observation built for the arrays alone leaves out until an entry needs them."""

    __slots__ = ("obs", "whole", "me", "x", "y", "carried", "coin", "_ids", "_at_tile", "_sold")

    def __init__(self, obs: dict[str, Any], coin: str, whole: Whole | None = None):
        me = obs["self"]
        self.obs, self.me, self.x, self.y, self.coin = obs, me["id"], me["x"], me["y"], coin
        self.whole: Whole = whole or (lambda sections=None: obs)
        self.carried = sorted(me["inventory"])
        self._ids: dict[str, list[str]] = {}
        self._at_tile: dict[tuple[int, int], list[str]] | None = None
        self._sold: dict[str, list[str]] | None = None

    def ids(self, field: str) -> list[str]:
        """The ids the observation lists for argument `field`, the character's own left out."""
        got = self._ids.get(field)
        if got is None:
            sections = tuple(path[0] for path in ID_SOURCES.get(field, ()))
            got = self._ids[field] = [i for i in _listed(self.whole(sections), field) if i != self.me]
        return got

    @property
    def at_tile(self) -> dict[tuple[int, int], list[str]]:
        """The items the observation shows at each tile: on the ground, in a structure, in a deposit."""
        if self._at_tile is None:
            obs, at = self.whole(AT_TILE_SECTIONS), {}
            for tile in obs["view"]["tiles"]:
                if "items" in tile:
                    at.setdefault((tile["x"], tile["y"]), set()).update(tile["items"])
            for s in obs.get("structures", ()):
                held = s.get("contents") or s.get("your_deposit")
                if held:
                    at.setdefault((s["x"], s["y"]), set()).update(held)
            for d in obs.get("deposits", ()):
                at.setdefault((d["x"], d["y"]), set()).update(d["items"])
            self._at_tile = {xy: sorted(items) for xy, items in at.items()}
        return self._at_tile

    @property
    def sold(self) -> dict[str, list[str]]:
        """What each villager in the observation with a shop sells, by name."""
        if self._sold is None:
            self._sold = {v["npc"]: sorted(v["shop"]["sells"]) for v in self.whole(SOLD_SECTIONS).get("villagers", ())
                          if v.get("shop")}
        return self._sold


def _listed(obs: dict[str, Any], field: str) -> list[str]:
    """The ids the observation lists where the served ids of argument `field` appear."""
    found: list[str] = []
    for path in ID_SOURCES.get(field, ()):
        node: Any = obs
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        for entry in node if isinstance(node, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                found.append(entry["id"])
    return found


def _slot(items: list[str], k: int) -> str | None:
    return items[k] if k < len(items) else None


class ActionTable:
    """Entries in a fixed order (the registry's actions by name, then the product of their argument choices)."""

    def __init__(self, content: Content, spec: EnvSpec):
        self.spec = spec.actions
        self.coin = content.economy.coin
        self.schemas = {name: d.json_schema() for name, d in sorted(action_tools().items())}
        entries = [Entry(NOOP, ())]
        for name, schema in self.schemas.items():
            entries += self._entries(name, schema, content)
        self.entries: tuple[Entry, ...] = tuple(entries)
        self.ranges: dict[str, tuple[int, int]] = {}
        for i, e in enumerate(self.entries):
            first, _ = self.ranges.get(e.action, (i, i))
            self.ranges[e.action] = (first, i)
        self.actions = tuple(self.ranges)  # noop first
        self.starts = np.array([first for first, _ in self.ranges.values()])  # each action's first entry, in order
        self._needs()
        # Entries of the actions a busy character may still submit (the registry's `while_busy`), and noop.
        tools = action_tools()
        self.while_busy = np.array([e.action == NOOP or tools[e.action].while_busy for e in self.entries])
        # Per action that declares a `sift`: it, and where each entry's value of the arguments it may narrow is read.
        self.sifted = {action: (tools[action].sift, self._sift_positions(action)) for action in self.ranges
                       if action != NOOP and tools[action].sift is not None}

    def _sift_positions(self, action: str) -> dict[str, tuple[tuple[Any, ...], np.ndarray]]:
        """Per argument of an action its `sift` may narrow, the values its entries name and, per entry of the
        action's run, where its value is read in the mask's lookup: [one per value named | one per carried slot |
        always kept]. An entry that fills the argument another way (an id listed, an item at a tile) is always kept."""
        first, last = self.ranges[action]
        run, slots = self.entries[first:last + 1], self.spec.carried_slots
        out = {}
        for field, _ in self.entries[first].fills:
            fills = [dict(e.fills)[field] for e in run]
            values = tuple(dict.fromkeys(v for kind, v in fills if kind == "value"))
            at = {v: k for k, v in enumerate(values)}
            positions = [at[v] if kind == "value" else len(values) + v if kind == "carried" else len(values) + slots
                         for kind, v in fills]
            if any(kind in ("value", "carried") for kind, _ in fills):
                out[field] = (values, np.array(positions))
        return out

    def _needs(self) -> None:
        """Per entry, the slots it needs filled (-1: none), so that `resolvable` tells every entry that resolves
        now from one pass over arrays: the k-th carried item, the k-th id listed for each argument, the k-th
        item at the target tile (as an index into `offsets`), the k-th item the named villager sells."""
        n, r = len(self.entries), self.spec.tile_radius
        self.offsets = [(dx, dy) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
        at_offset = {d: i for i, d in enumerate(self.offsets)}
        self.need_carried, self.need_at, self.need_sold = np.full(n, -1), np.full(n, -1), np.full(n, -1)
        self.need_listed: dict[str, np.ndarray] = {}
        self.at_offset, self.sold_npc = np.full(n, at_offset[(0, 0)]), np.zeros(n, dtype=np.int64)
        self.npcs: list[str] = []
        never = np.zeros(n, dtype=bool)
        for i, e in enumerate(self.entries):
            npc: str | None = None
            for field, (kind, v) in e.fills:
                if kind == "tile":
                    self.at_offset[i] = at_offset[v]
                elif kind == "value":
                    never[i] |= v is None
                    if field == "npc":
                        npc = v
                elif kind in ("carried", "goods_carried"):
                    self.need_carried[i] = max(self.need_carried[i], v)
                elif kind == "listed":
                    need = self.need_listed.setdefault(field, np.full(n, -1))
                    need[i] = max(need[i], v)
                elif kind == "at_tile":
                    self.need_at[i] = max(self.need_at[i], v)
                elif kind == "sold":
                    if npc is None:  # no villager named before it: resolves to nothing
                        never[i] = True
                    else:
                        if npc not in self.npcs:
                            self.npcs.append(npc)
                        self.sold_npc[i], self.need_sold[i] = self.npcs.index(npc), max(self.need_sold[i], v)
        self.may_resolve = ~never
        # The needs of every kind as rows of one array: each listed field's (in `listed_fields` order), at, sold.
        self.listed_fields = tuple(self.need_listed)
        self.slot_needs = np.array([*(self.need_listed[f] for f in self.listed_fields), self.need_at, self.need_sold])

    def _kept(self, values: tuple[Any, ...], carried: list[str], kept: Any) -> np.ndarray:
        """The mask's lookup for one sifted argument (see `_sift_positions`): whether the sift keeps each value named,
        each carried item (an empty slot: no, though such an entry never resolves), and True last."""
        slots = self.spec.carried_slots
        out = np.zeros(len(values) + slots + 1, dtype=bool)
        out[:len(values)] = [v in kept for v in values]
        out[len(values):len(values) + len(carried)] = [v in kept for v in carried]
        out[-1] = True
        return out

    def resolvable(self, ctx: Context, among: np.ndarray | None = None) -> np.ndarray:
        """True where `resolve(i, ctx)` gives an action: every slot entry i needs is filled. With `among`, only
        among those entries (False elsewhere): the slots no entry left there needs are not looked up, since the ids
        an observation lists and the items at tiles are read from sections built only when first needed."""
        ok = self.may_resolve & (self.need_carried < len(ctx.carried))
        if among is not None:
            ok &= among
        # Which slots some entry left needs, for every kind of slot in one pass: only those are looked up.
        wanted = (self.slot_needs[:, ok] >= 0).any(axis=1).tolist()
        for k, field in enumerate(self.listed_fields):
            if wanted[k]:
                ok &= self.slot_needs[k] < len(ctx.ids(field))
        if wanted[-2]:
            at = ctx.at_tile
            held = np.array([len(at.get((ctx.x + dx, ctx.y + dy), ())) for dx, dy in self.offsets])
            ok &= self.need_at < held[self.at_offset]
        if wanted[-1]:
            sold = ctx.sold
            sells = np.array([len(sold.get(npc, ())) for npc in self.npcs] or [0])
            ok &= self.need_sold < sells[self.sold_npc]
        return ok

    def __len__(self) -> int:
        return len(self.entries)

    def _source(self, action: str, field: str) -> Any:
        own = self.spec.per_action.get(action, {})
        return own.get(field, self.spec.arguments.get(field))

    def _entries(self, action: str, schema: dict[str, Any], content: Content) -> list[Entry]:
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        named = set(self.spec.per_action.get(action, {}))
        fields = [f for f in props if f in required or f in named]
        choices: list[tuple[str, list[tuple[str, Any]]]] = []
        if "x" in fields and "y" in fields:
            r = self.spec.tile_radius
            offsets = [(dx, dy) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
            choices.append((TILE, [("tile", d) for d in offsets]))
            fields = [f for f in fields if f not in ("x", "y")]
        for field in fields:
            source = self._source(action, field)
            if source is None:
                raise ContentError(FILE, f"actions.arguments.{field}", f"no source for {action}'s argument {field!r}")
            choices.append((field, self._choices(action, field, source, props[field], content)))
        return [Entry(action, tuple(zip([f for f, _ in choices], combo)))
                for combo in itertools.product(*(c for _, c in choices))]

    def _choices(self, action: str, field: str, source: Any, prop: dict[str, Any], content: Content) -> list[tuple[str, Any]]:
        s = self.spec
        if isinstance(source, Entries):
            return [("value", v) for v in content_table(content, source.content, source.having, source.where)]
        if isinstance(source, dict):
            (kind, values), = source.items()
            return [("value" if kind == "values" else kind, v) for v in values]
        if source == "enum":
            if "enum" not in prop:
                raise ContentError(FILE, f"actions.arguments.{field}", f"{action}'s {field!r} has no enum in its schema")
            return [("value", v) for v in prop["enum"]]
        if source.startswith("content:"):
            return [("value", v) for v in content_table(content, source[len("content:"):])]
        slots = {"carried": s.carried_slots, "goods_carried": s.carried_slots, "at_tile": s.at_tile_slots,
                 "sold": s.sold_slots, "listed": s.listed_slots}[source]
        return [(source, k) for k in range(slots)]

    # ---- playing entries --------------------------------------------------------------------------

    def context(self, obs: dict[str, Any], whole: Whole | None = None) -> Context:
        return Context(obs, self.coin, whole)

    def resolve(self, index: int, ctx: Context) -> tuple[str, dict[str, Any]] | None:
        """The action and arguments entry `index` stands for now, or None when a slot it needs is empty."""
        e = self.entries[index]
        args: dict[str, Any] = {}
        x, y = ctx.x, ctx.y
        for field, (kind, v) in e.fills:
            if kind == "tile":
                x, y = ctx.x + v[0], ctx.y + v[1]
                args["x"], args["y"] = x, y
            elif kind == "value":
                args[field] = v
            elif kind == "carried":
                args[field] = _slot(ctx.carried, v)
            elif kind == "goods_carried":
                item = _slot(ctx.carried, v)
                args[field] = None if item is None else {item: 1}
            elif kind == "goods_coin":
                args[field] = {ctx.coin: v}
            elif kind == "listed":
                args[field] = _slot(ctx.ids(field), v)
            elif kind == "at_tile":
                args[field] = _slot(ctx.at_tile.get((x, y), []), v)
            elif kind == "sold":
                args[field] = _slot(ctx.sold.get(args.get("npc", ""), []), v)
            if args.get(field, 0) is None:
                return None
        return e.action, args

    def mask(self, world: World, agent: str, ctx: Context) -> np.ndarray:
        """1 where the entry resolves and the world would accept it now (noop: always), else 0: the world's
        `refusal_code` over every entry that resolves, less the entries it would refuse unasked: while the character
        is busy, those of actions the registry does not take from a busy character; those of an action whose
        `ready_code` says it is refused whatever its arguments; those with a value the action's `sift` leaves out."""
        c = world.chars[agent]
        ok = self.may_resolve & (self.need_carried < len(ctx.carried))
        if c.op is not None:
            ok &= self.while_busy
        ready, sifted, actions = world.ready_code, self.sifted, self.actions
        carried = ctx.carried[:self.spec.carried_slots]
        for k in np.flatnonzero(np.logical_or.reduceat(ok, self.starts)).tolist():  # the actions with some entry left
            action = actions[k]
            if action == NOOP:
                continue
            first, last = self.ranges[action]
            if ready(agent, action) is not None:
                ok[first:last + 1] = False
            elif action in sifted:
                sift, fields = sifted[action]
                for field, kept in sift(world, c).items():
                    if field in fields:
                        values, positions = fields[field]
                        ok[first:last + 1] &= self._kept(values, carried, kept)[positions]
        ok = self.resolvable(ctx, ok)
        out = np.zeros(len(self.entries), dtype=np.int8)
        out[0] = 1
        code, resolve = world.refusal_code, self.resolve
        for i in np.flatnonzero(ok)[1:].tolist():
            got = resolve(i, ctx)
            if got is not None and code(agent, got[0], got[1]) is None:
                out[i] = 1
        return out

    # ---- the document -----------------------------------------------------------------------------

    def describe(self) -> list[dict[str, Any]]:
        """Per action: its index range and how each argument is filled, in the order the product runs."""
        rows = []
        for action, (first, last) in self.ranges.items():
            e = self.entries[first]
            rows.append({"action": action, "first": first, "last": last, "count": last - first + 1,
                         "arguments": {field: self._describe_fill(action, field) for field, _ in e.fills}})
        return rows

    def _describe_fill(self, action: str, field: str) -> str:
        if field == TILE:
            r = self.spec.tile_radius
            return f"your x, y plus an offset dx, dy in -{r}..{r} (dy outer, dx inner)"
        source = self._source(action, field)
        if isinstance(source, Entries):
            having = f" whose `{source.having}` is set" if source.having else ""
            where = "".join(f" whose `{k}` is {v}" for k, v in source.where.items())
            return f"each name of the {source.content} table{having}{where}"
        if isinstance(source, dict):
            (kind, values), = source.items()
            return f"one of {values}" if kind == "values" else f"{{{self.coin}: n}}, n one of {values}"
        return {
            "enum": "each value the schema allows",
            "carried": f"the k-th item you carry, by name (k < {self.spec.carried_slots})",
            "goods_carried": f"one unit of the k-th item you carry (k < {self.spec.carried_slots})",
            "at_tile": f"the k-th item your observation shows at the target tile (k < {self.spec.at_tile_slots})",
            "sold": f"the k-th item that villager's shop sells, by name (k < {self.spec.sold_slots})",
            "listed": f"the k-th id your observation lists for {field!r}, yours left out (k < {self.spec.listed_slots})",
        }.get(source, f"each name of the {source[len('content:'):]} table" if source.startswith("content:") else source)

    def markdown(self) -> str:
        lines = ["# The Discrete action table (`wildhold.env`)", "",
                 f"{len(self.entries)} entries. Entry 0 is `noop`: nothing is submitted and one tick passes. "
                 "Entry `first + i` of an action is the i-th of the product of its argument choices, the first "
                 "argument outermost. An entry whose slot is empty is never legal; the mask in `info['action_mask']` "
                 "is the world's would-accept check over every other entry.", "",
                 "| entries | action | arguments |", "|---|---|---|"]
        for row in self.describe():
            args = "; ".join(f"`{f}`: {how}" for f, how in row["arguments"].items()) or "-"
            lines.append(f"| {row['first']}..{row['last']} ({row['count']}) | `{row['action']}` | {args} |")
        return "\n".join(lines) + "\n"
