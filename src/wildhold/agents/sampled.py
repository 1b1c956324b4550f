"""A random policy that plays only legal actions: arguments drawn from each action's schema and from what
the character sees, each candidate put to the world's check (the action mask) before it is submitted.

It is the honest load for the engine benchmark (and the random baseline of the RL faces): unlike
`RandomAgent`, whose guesses the world mostly refuses, nearly everything it submits is accepted.
"""

from __future__ import annotations

import random
from math import floor
from typing import Any, Callable

from wildhold.agents.base import AgentView, Decision
from wildhold.content import Content

# Where the observation lists the entries whose ids fill an argument of this name: (section, list) paths.
ID_SOURCES = {"offer": (("economy", "trades"),), "contract": (("economy", "contracts"),),
              "order": (("economy", "orders"), ("economy", "market")), "enemy": (("dungeon", "room", "enemies"),),
              "quest": (("quest_board",), ("quest_log", "active")), "character": (("view", "characters"),),
              "to": (("view", "characters"),)}
NEAR = 1  # tile arguments fall on the character's tile or a neighbour: where most tile actions reach
TRIES = 24  # candidates put to the check before the policy falls back to resting a tick
DRAWS = 4 * TRIES  # actions drawn at most, counting those passed over unchecked (unready, or an id and none listed)


class LegalRandomAgent:
    """Draws actions uniformly from those its view names, with arguments that fit their schemas, and
    submits the first the world would accept; `accepted_share` is how often a candidate passed.

    A drawn action whose `ready` code says the world refuses it whatever its arguments is passed over before
    its arguments are drawn or checked. That leaves what it plays unchanged in law: the draws are independent
    and alike, and the one played is the first whose candidate passes, distributed as one draw given that it
    passes; a passed-over draw could never have passed, so conditioning on passing already excludes it. Only
    the budget changes: a passed-over draw is no try, so falling back to rest is rarer, and the random stream
    (fewer numbers drawn) is not the same as before.
    """

    name = "legal_random"

    def __init__(self, content: Content):
        self.pools = {"recipe": sorted(content.recipes), "structure": sorted(content.structures),
                      "attribute": sorted(content.attributes), "npc": sorted(content.npcs), "item": sorted(content.items)}
        self.candidates = self.passed = 0
        self.observed: dict[str, int] = {}  # agent -> tick of its last observation
        self.streams: dict[str, random.Random] = {}  # agent -> its random stream
        self.compiled: dict[int, tuple[dict[str, Any], tuple[tuple[str, bool, str, Any], ...]]] = {}  # see `_fields`
        self.by_action: tuple[dict[str, Any], dict[str, tuple[tuple[str, bool, str, Any], ...]]] | None = None

    def memory_since(self, agent: str) -> int | None:
        """Only the memory changed since this agent's last observation: the policy reads none of it, but
        takes its observation the way a long-lived agent does."""
        return self.observed.get(agent)

    @property
    def accepted_share(self) -> float:
        return self.passed / self.candidates if self.candidates else 0.0

    def stream(self, view: AgentView) -> random.Random:
        """The agent's one random stream, seeded from the match seed and the agent when it first decides:
        a run replays the same from its start (seeding a fresh stream per decision cost more than the
        decision itself)."""
        rng = self.streams.get(view.agent)
        if rng is None:
            rng = self.streams[view.agent] = random.Random(f"{view.seed}:{view.agent}:{self.name}")
        return rng

    def decide(self, view: AgentView) -> Decision:
        rng, obs = self.streams.get(view.agent) or self.stream(view), view.observation()
        self.observed[view.agent] = view.tick
        me, seen = obs["self"], _Seen(obs)
        tries = 0
        actions, draw = view.actions, rng.random
        fields_of = self._fields_by_action(view.schemas)
        ready, refusal = view.asks()
        count = len(actions)
        for _ in range(DRAWS):
            name = actions[floor(draw() * count)]
            if ready(name) is not None:  # refused whatever its arguments
                continue
            args = self._draw(fields_of.get(name, ()), me, seen, draw)
            if args is None:  # it needs an id the observation does not list: the world would refuse it
                continue
            self.candidates += 1
            if refusal(name, args) is None:
                self.passed += 1
                return name, args
            tries += 1
            if tries == TRIES:
                break
        return "rest", {"ticks": 1}

    def arguments(self, schema: dict[str, Any], obs: dict[str, Any], seen: _Seen,
                  rng: random.Random) -> dict[str, Any] | None:
        """A value for each required field and, half the time, each optional one; None when a required
        field names an id (ID_SOURCES) and the observation lists none to name."""
        return self._draw(self._fields(schema), obs["self"], seen, rng.random)

    def _draw(self, fields: tuple[tuple[str, bool, str, Any], ...], me: dict[str, Any], seen: _Seen,
              draw: Callable[[], float]) -> dict[str, Any] | None:
        """`arguments` from a schema's fields as `_fields` reads them, the character's status and its stream's
        `random`: every draw below is one uniform number, floored (cheaper than choice, randint or int, as uniform)."""
        out: dict[str, Any] = {}
        for field, required, kind, spec in fields:
            if not (required or draw() < 0.5):
                continue
            if kind == "range":
                low, high = spec
                out[field] = low + floor(draw() * (high - low + 1))
            elif kind == "tile":  # its number is drawn and set aside: the tile is drawn near the character below
                draw()
                out[field] = None
            elif kind == "id":
                got = seen.pick(field, draw)
                if got is None and required:
                    return None
                out[field] = "" if got is None else got
            elif kind == "item":
                items = seen.carried() or self.pools["item"]
                out[field] = items[floor(draw() * len(items))]
            elif kind == "enum" or kind == "pool":
                out[field] = spec[floor(draw() * len(spec))]
            elif kind == "goods":  # one unit of something carried
                carried = seen.carried()
                out[field] = {carried[floor(draw() * len(carried))]: 1} if carried else {}
            elif kind == "slot":
                slots = sorted(me["equipment"]) or ["hand"]
                out[field] = slots[floor(draw() * len(slots))]
            else:  # "fixed"
                out[field] = spec
        if "x" in out and "y" in out:
            span = 2 * NEAR + 1
            out["x"], out["y"] = me["x"] - NEAR + floor(draw() * span), me["y"] - NEAR + floor(draw() * span)
        return out

    def _fields_by_action(self, schemas: dict[str, dict[str, Any]]) -> dict[str, tuple[tuple[str, bool, str, Any], ...]]:
        """`_fields` of every action's schema, read once per table of schemas (a client hands the same one to
        every view)."""
        held = self.by_action
        if held is None or held[0] is not schemas:
            held = self.by_action = (schemas, {name: self._fields(schema) for name, schema in schemas.items()})
        return held[1]

    def _fields(self, schema: dict[str, Any]) -> tuple[tuple[str, bool, str, Any], ...]:
        """(field, required, how its value is drawn, what it is drawn from) for each field of an argument
        schema, in order: read once per schema."""
        held = self.compiled.get(id(schema))
        if held is None or held[0] is not schema:
            required = set(schema.get("required", ()))
            fields = [(field, field in required, *self.draw(field, spec)) for field, spec in schema.get("properties", {}).items()]
            if {"x", "y"} <= required:  # always drawn again near the character: their own numbers are set aside
                fields = [(f, True, "tile", None) if f in ("x", "y") and kind == "range" else (f, r, kind, spec)
                          for f, r, kind, spec in fields]
            held = self.compiled[id(schema)] = (schema, tuple(fields))
        return held[1]

    def draw(self, field: str, spec: dict[str, Any]) -> tuple[str, Any]:
        """How a value of this field is drawn: from its enum, the items carried (or any item), a pool of
        content names, the ids the observation lists, the slots worn, the goods carried, a fixed value, or
        an integer range."""
        if "enum" in spec:
            return "enum", spec["enum"]
        if field in ("item", "seed"):
            return "item", None
        if field in self.pools:
            return "pool", self.pools[field]
        if field in ID_SOURCES:
            return "id", None
        if field == "slot":
            return "slot", None
        if spec.get("type") == "object":
            return "goods", None
        if spec.get("type") == "string" or "anyOf" in spec:
            return "fixed", "hello" if "anyOf" not in spec else 1
        low = spec["exclusiveMinimum"] + 1 if "exclusiveMinimum" in spec else spec.get("minimum", 1)
        return "range", (low, min(spec.get("maximum", low + 9), low + 9))


class _Seen:
    """The ids the observation lists for each argument named in ID_SOURCES, less the character's own, and the items it
    carries: read on first ask (most candidates take no id), each path once however many arguments it fills."""

    __slots__ = ("obs", "me", "paths", "fields", "listed", "_carried")  # one is made per decision

    def __init__(self, obs: dict[str, Any]):
        self.obs = obs
        self.me = obs["self"]["id"]
        self.paths: dict[tuple[str, ...], list[str]] = {}
        self.fields: dict[str, list[str]] = {}
        self.listed: dict[str, tuple[list[list[Any]], int]] = {}  # field -> the lists at its paths, and their length
        self._carried: list[str] | None = None

    def carried(self) -> list[str]:
        """The items the character carries, sorted: read once per observation however many arguments name one."""
        if self._carried is None:
            self._carried = sorted(self.obs["self"]["inventory"])
        return self._carried

    def pick(self, field: str, draw: Any) -> str | None:
        """One of `get(field)` drawn uniformly (None: there is none), from one uniform number `draw()` when the entry
        it falls on holds an id other than the character's own, as observations list them: no list of ids is built.
        Otherwise it is drawn again from `get(field)`, which keeps the draw uniform over those ids."""
        listed = self.listed.get(field)
        if listed is None:  # asked of most decisions, most often of lists that are empty: one plain loop
            lists, total = [], 0
            for path in ID_SOURCES.get(field, ()):
                node = self._node(path)
                if isinstance(node, list) and node:
                    lists.append(node)
                    total += len(node)
            listed = self.listed[field] = (lists, total)
        lists, total = listed
        if not total:
            return None
        i = floor(draw() * total)
        for node in lists:
            if i < len(node):
                entry = node[i]
                break
            i -= len(node)
        if isinstance(entry, dict) and isinstance(got := entry.get("id"), str) and got != self.me:
            return got
        ids = self.get(field, ())
        return ids[floor(draw() * len(ids))] if ids else None

    def _node(self, path: tuple[str, ...]) -> Any:
        node: Any = self.obs
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    def get(self, field: str, default: Any = ()) -> Any:
        got = self.fields.get(field)
        if got is None:
            me = self.me
            got = self.fields[field] = [i for path in ID_SOURCES.get(field, ()) for i in self._at(path) if i != me]
        return got or default

    def _at(self, path: tuple[str, ...]) -> list[str]:
        got = self.paths.get(path)
        if got is None:
            node = self._node(path)
            got = self.paths[path] = [i for entry in node if isinstance(entry, dict) and isinstance(i := entry.get("id"), str)] \
                if isinstance(node, list) else []
        return got


def _ids(obs: dict[str, Any]) -> _Seen:
    """For each argument named in ID_SOURCES, the ids listed at its paths in the observation (read when asked)."""
    return _Seen(obs)
