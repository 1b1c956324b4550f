"""Scripted baseline policies. They act only through their view: observations and the served action names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Callable, Iterable

from wildhold.agents.base import AgentView, Decision, Policy
from wildhold.agents.sampled import LegalRandomAgent
from wildhold.content import Content
from wildhold.world.actions import DIRECTIONS


class RandomAgent:
    """Picks a served action uniformly and fills its arguments at random, near itself."""

    name = "random"

    def __init__(self, content: Content):
        self.items = sorted(k for k, i in content.items.items() if i.pack is None)
        self.recipes = sorted(k for k, r in content.recipes.items() if r.pack is None)
        self.directions = sorted(DIRECTIONS)

    def decide(self, view: AgentView) -> Decision:
        rng = view.rng
        me = view.status()
        name = rng.choice(view.actions)
        carried = sorted(me["inventory"]) or self.items
        args: dict[str, Any]
        if name == "move":
            args = {"direction": rng.choice(self.directions)}
        elif name in ("gather", "move_to", "place"):
            args = {"x": me["x"] + rng.randint(-3, 3), "y": me["y"] + rng.randint(-3, 3)}
            if name == "place":
                args["item"] = rng.choice(carried)
        elif name in ("craft", "cook"):
            args = {"recipe": rng.choice(self.recipes)}
        elif name in ("eat", "equip"):
            args = {"item": rng.choice(carried)}
        elif name in ("drop", "pick_up"):
            args = {"item": rng.choice(carried), "qty": rng.randint(1, 2)}
        elif name in ("sleep", "rest", "wait"):
            args = {"ticks": rng.randint(1, 10)}
        elif name == "unequip":
            args = {"slot": "hand"}
        else:
            args = {}
        return name, args


class IdleAgent:
    """Does nothing at all: the floor every evaluation compares against."""

    name = "idle"

    def __init__(self, content: Content):
        pass

    def decide(self, view: AgentView) -> Decision:
        return None


class KnownMap:
    """A policy's picture of the map: view live, memory as remembered, kept across observations.

    It judges a tile the way move_to's path search does for this character: walkable terrain, no
    blocking structure, and, in view, no door it may not pass (out of view a door is remembered open).
    An observation with the whole memory replaces the picture; one with the memory changed since the
    tick of the last one (`memory_since`) is laid over it, and the view over that: the same picture
    either way, at a cost that does not grow with the memory.
    """

    def __init__(self, walkable: dict[str, bool], blocking: set[str]):
        self.walkable, self.blocking = walkable, blocking
        self.tiles: dict[tuple[int, int], dict[str, Any]] = {}
        self.tick: int | None = None  # of the observation the picture shows
        self.barred: set[tuple[int, int]] = set()
        self._stand: dict[int, bool] = {}  # can_stand's answers by `_key`, forgotten where a tile changes
        self._enclosed: tuple[tuple[int, int], set[tuple[int, int]]] = ((0, 0), set())  # see beside_unknown
        self._steps: tuple[tuple[int, int], int, Steps] | None = None
        self.built: set[tuple[int, int]] = set()  # known tiles holding a structure
        self._node_at: dict[tuple[int, int], str] = {}  # known tiles holding a node, and its kind
        self._nodes: dict[str, set[tuple[int, int]]] = {}  # the same, by kind
        self.pictures = 0  # observations taken in
        self._terrain: dict[str, set[tuple[int, int]]] = {}  # known tiles by terrain (which never changes)

    def absorb(self, obs: dict[str, Any]) -> None:
        since = obs.get("memory_since")
        if since is None:
            self.tiles, self._stand, self._enclosed = {}, {}, ((0, 0), set())
            self.built, self._node_at, self._nodes, self._terrain = set(), {}, {}, {}
        elif since != self.tick:
            raise ValueError(f"the memory changed since tick {since} was sent to a map of tick {self.tick}")
        tiles, stand, legend, view = self.tiles, self._stand, obs["legend"], obs["view"]
        by_terrain, index, node_at, built = self._terrain, self._index, self._node_at, self.built
        for m in obs.get("memory", []):
            xy = (m["x"], m["y"])
            if xy not in tiles:
                by_terrain.setdefault(m["terrain"], set()).add(xy)
            tiles[xy] = m
            stand.pop(((xy[1] + 2) << 16) + xy[0] + 2, None)
            if "node" in m or "structure" in m or xy in node_at or xy in built:
                index(xy, m)
        x0, y0 = view["x0"], view["y0"]
        for dy, row in enumerate(view["rows"]):
            for dx, glyph in enumerate(row):
                xy = (x0 + dx, y0 + dy)
                terrain = legend[glyph]
                held = tiles.get(xy)
                if held is None:
                    by_terrain.setdefault(terrain, set()).add(xy)
                elif len(held) == 1 and held["terrain"] == terrain:
                    continue  # a bare tile this map made from a view, unchanged: nothing to take in
                tiles[xy] = {"terrain": terrain}
                stand.pop(((xy[1] + 2) << 16) + xy[0] + 2, None)
                if xy in node_at or xy in built:
                    index(xy, tiles[xy])
        for t in view["tiles"]:
            xy = (t["x"], t["y"])
            tiles[xy].update(t)
            stand.pop(((xy[1] + 2) << 16) + xy[0] + 2, None)
            index(xy, t)
        barred = {(s["x"], s["y"]) for s in obs.get("structures", []) if s.get("may_pass") is False}
        for xy in barred ^ self.barred:
            stand.pop(((xy[1] + 2) << 16) + xy[0] + 2, None)
        self.tick, self.barred, self._steps = obs["time"]["tick"], barred, None
        self.pictures += 1

    def can_stand(self, xy: tuple[int, int]) -> bool:
        k = ((xy[1] + 2) << 16) + xy[0] + 2  # _key(xy)
        ok = self._stand.get(k)
        if ok is None:
            t = self.tiles.get(xy)
            if t is None or not self.walkable[t["terrain"]] or xy in self.barred:
                ok = False
            else:
                s = t.get("structure")
                ok = s is None or s["kind"] not in self.blocking
            self._stand[k] = ok
        return ok

    def beside_unknown(self, xy: tuple[int, int], width: int, height: int) -> bool:
        """Whether a tile of a `width` x `height` map has an unknown neighbour. Tiles once known stay
        known, so a tile found enclosed is remembered as such until the picture is replaced."""
        bounds, enclosed = self._enclosed
        if bounds != (width, height):
            bounds, enclosed = (width, height), set()
            self._enclosed = (bounds, enclosed)
        if xy in enclosed:
            return False
        x, y, tiles = xy[0], xy[1], self.tiles
        if all((x + dx, y + dy) in tiles or not (0 <= x + dx < width and 0 <= y + dy < height)
               for dx in (-1, 0, 1) for dy in (-1, 0, 1)):
            enclosed.add(xy)
            return False
        return True

    def steps_from(self, here: tuple[int, int], limit: int) -> Steps:
        """Steps to every known tile a move_to from `here` could reach (8-way, at most `limit` steps),
        as its path search finds them, in the order it finds them; worked out once per picture and start,
        and only as far as the questions asked of it need (see `Steps`)."""
        if self._steps is not None and self._steps[:2] == (here, limit):
            return self._steps[2]
        dist = Steps(self, here, limit)
        self._steps = (here, limit, dist)
        return dist

    def find(self, here: tuple[int, int], match: Callable[[dict[str, Any]], bool],
             among: Iterable[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
        """Known tiles that match, nearest first (ties broken by position, for determinism). `among` narrows
        the search to tiles that hold every match (`built`, `with_node`, `on` a terrain)."""
        tiles = self.tiles
        if among is None:
            hits = [xy for xy, t in tiles.items() if match(t)]
        else:
            hits = [xy for xy in among if match(tiles[xy])]
        return sorted(hits, key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))

    def _index(self, xy: tuple[int, int], t: dict[str, Any]) -> None:
        """Note what a tile now holds in the indexes `find` narrows its search with."""
        node = t.get("node")
        kind = None if node is None else node["kind"]
        was = self._node_at.get(xy)
        if was != kind:
            if was is not None:
                self._nodes[was].discard(xy)
                del self._node_at[xy]
            if kind is not None:
                self._node_at[xy] = kind
                self._nodes.setdefault(kind, set()).add(xy)
        if "structure" in t:
            self.built.add(xy)
        else:
            self.built.discard(xy)

    def with_node(self, kinds: Iterable[str]) -> set[tuple[int, int]]:
        """The known tiles holding a node of one of these kinds."""
        out: set[tuple[int, int]] = set()
        for kind in kinds:
            out |= self._nodes.get(kind, set())
        return out

    def on(self, terrain: str) -> set[tuple[int, int]]:
        """The known tiles of one terrain."""
        return self._terrain.get(terrain, set())

    def beside(self, here: tuple[int, int], target: tuple[int, int],
               reachable: dict[tuple[int, int], int] | None = None) -> tuple[int, int] | None:
        """The nearest tile from which `target` is within reach (among `reachable` ones, when given)."""
        spots = [
            (target[0] + dx, target[1] + dy)
            for dx in (-1, 0, 1) for dy in (-1, 0, 1)
            if self.can_stand((target[0] + dx, target[1] + dy))
            and (reachable is None or (target[0] + dx, target[1] + dy) in reachable)
        ]
        if not spots:
            return None
        return min(spots, key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))


class Steps(Mapping[tuple[int, int], int]):
    """The steps from a start to each known tile a move_to could reach: a breadth-first search, ring by
    ring, run only as far as needed. Asking whether a tile is reachable, or its steps, grows the search
    until the tile is found (a tile no one may stand on is never found, so it is answered at once);
    iterating or counting completes it. Every answer, and the order of iteration (the order the search
    finds the tiles), is that of the whole search run at once. Tiles are searched by `_key`: an integer
    hashes faster than a pair."""

    def __init__(self, known: KnownMap, here: tuple[int, int], limit: int):
        self._known, self._limit = known, limit
        self._picture = known.pictures
        start = _key(here)
        self._dist = {start: 0}
        self._ring: list[int] = [start]
        self._step = 0
        self._done = False
        self._tiles: list[tuple[int, int]] | None = None  # the reached tiles as pairs, once complete

    def _grow(self) -> None:
        """Add the next ring of tiles; done when it is empty or the limit is reached."""
        if self._known.pictures != self._picture:
            raise RuntimeError("steps asked of a map that has taken in another observation since")
        self._step = step = self._step + 1
        if step > self._limit:
            self._done = True
            return
        dist, nxt = self._dist, []
        stand, can_stand = self._known._stand, self._known.can_stand
        for p in self._ring:
            for d in _STEPS:
                q = p + d
                if q not in dist:
                    ok = stand.get(q)
                    if ok is None:
                        ok = can_stand(_pair(q))
                    if ok:
                        dist[q] = step
                        nxt.append(q)
        self._ring = nxt
        if not nxt:
            self._done = True

    def _complete(self) -> dict[int, int]:
        while not self._done:
            self._grow()
        return self._dist

    def __contains__(self, xy: object) -> bool:
        if not isinstance(xy, tuple):
            return False
        k, dist = _key(xy), self._dist
        if k in dist:
            return True
        if self._done or not self._known.can_stand(xy):
            return False
        while not self._done:
            self._grow()
            if k in dist:
                return True
        return False

    def __getitem__(self, xy: tuple[int, int]) -> int:
        if xy in self:
            return self._dist[_key(xy)]
        raise KeyError(xy)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        if self._tiles is None:
            self._tiles = [_pair(p) for p in self._complete()]
        return iter(self._tiles)

    def __len__(self) -> int:
        return len(self._complete())


_SHIFT, _OFFSET = 16, 2  # a tile's key: rows of 2**16 columns, offset so that the edge's outer neighbours stay positive
# a tile's eight neighbours as key differences, in the order the path search tries them
_STEPS = tuple((dy << _SHIFT) + dx for dx, dy in ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)))
_PAIRS: dict[int, tuple[int, int]] = {}


def _key(xy: tuple[int, int]) -> int:
    return ((xy[1] + _OFFSET) << _SHIFT) + xy[0] + _OFFSET


def _pair(k: int) -> tuple[int, int]:
    """The tile of a key (made once per key)."""
    got = _PAIRS.get(k)
    if got is None:
        got = _PAIRS[k] = ((k & ((1 << _SHIFT) - 1)) - _OFFSET, (k >> _SHIFT) - _OFFSET)
    return got


def _near(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) <= 1


def _cheb(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Chebyshev distance: steps between two tiles when diagonal steps count as one."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


class Survivor:
    """Keeps itself alive: eats when hungry, forages berries, shelters at night, sleeps when tired."""

    name = "survivor"
    food_reserve = 6

    def __init__(self, content: Content):
        self.content = content
        self.walkable = {k: t.walkable for k, t in content.terrain.items()}
        self.blocking = {k for k, s in content.structures.items() if not s.walkable}
        self.safe = {k for k, t in content.terrain.items() if t.safe}
        self.shelters = {k for k, s in content.structures.items() if s.shelter}
        self.beds = {k for k, s in content.structures.items() if s.bed}
        self.max_path = content.needs.max_path_length
        self.foods = sorted(
            (k for k, i in content.items.items() if i.category == "food"),
            key=lambda k: -content.items[k].satiety,
        )
        cal = content.calendar
        self.dusk = cal.night_start - 60
        # Each agent's map and the observation it last took in. The map is what that observation
        # shows, whether it came whole or as changes: decisions stay a function of the observation,
        # and a resumed match (whose first observation is whole) decides the same.
        self._maps: dict[str, tuple[dict, KnownMap]] = {}

    # -- the map as observed ---------------------------------------------------------------------

    def memory_since(self, agent: str) -> int | None:
        """The tick of the map held for `agent`: its next observation need carry only what changed since."""
        held = self._maps.get(agent)
        return None if held is None else held[1].tick

    def known(self, obs: dict[str, Any]) -> KnownMap:
        """The map as this observation shows it, taken in once per observation."""
        agent = obs["self"]["id"]
        held = self._maps.get(agent)
        if held is None or held[0] is not obs:
            known = held[1] if held is not None else KnownMap(self.walkable, self.blocking)
            known.absorb(obs)
            held = self._maps[agent] = (obs, known)
        return held[1]

    def reachable(self, known: KnownMap, here) -> Steps:
        """Steps to every known tile a move_to could reach from here: only these are worth asking for."""
        return known.steps_from(here, self.max_path)

    def walk(self, known: KnownMap, here, goal: tuple[int, int]) -> Decision:
        """move_to `goal` when a path over known tiles reaches it, else to the reachable tile nearest it;
        None when that is here."""
        dist = self.reachable(known, here)
        if goal not in dist:
            goal = min(dist, key=lambda xy: (_cheb(xy, goal), dist[xy], xy))
        if goal == here:
            return None
        return "move_to", {"x": goal[0], "y": goal[1]}

    def bed(self, known: KnownMap, me: dict[str, Any]) -> tuple[int, int] | None:
        """Our bed, unless the map shows it gone from where the status says it is (a raider broke it)."""
        if me["bed"] is None:
            return None
        bed = (me["bed"][0], me["bed"][1])
        s = (known.tiles.get(bed) or {}).get("structure")
        if bed in known.tiles and (s is None or s["kind"] not in self.beds or s["owner"] not in (None, me["id"])):
            return None
        return bed

    # -- shared needs logic; returns None when needs are met ------------------------------------

    def needs(self, view: AgentView) -> Decision:
        obs = view.observation()
        me, time = obs["self"], obs["time"]
        here = (me["x"], me["y"])
        inv = me["inventory"]
        minute = time["hour"] * 60 + time["minute"]
        if me["satiety"] < 45:
            for food in self.foods:
                if inv.get(food):
                    return "eat", {"item": food}
        evening = time["night"] or minute >= self.dusk
        if evening or me["energy"] < 20:
            return self.shelter(view, here, me, tired=me["energy"] < 60 or time["night"])
        return None

    def shelter(self, view: AgentView, here, me, tired: bool) -> Decision:
        """To bed (by a path that exists) and sleep there; else rest on safe ground or under a shelter."""
        known = self.known(view.observation())
        bed = self.bed(known, me)
        if bed is not None:
            if here == bed:
                return ("sleep", {"ticks": 120}) if tired else ("rest", {"ticks": 30})
            went = self.walk(known, here, bed)
            if went:
                return went
        if me["sheltered"]:
            return "rest", {"ticks": 30}
        dist = self.reachable(known, here)
        spots = known.find(here, lambda t: t["terrain"] in self.safe or (t.get("structure") or {}).get("kind") in self.shelters)
        for spot in spots:
            if spot in dist and spot != here:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return "rest", {"ticks": 10}

    def forage(self, view: AgentView, item: str) -> Decision:
        """Go to the nearest known node that yields `item` and can be reached, and gather it; explore if none is known."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        hand = me["equipment"].get("hand")
        bonus = self.content.items[hand].tool.yield_bonus if hand else {}
        nodes = {
            k for k, n in self.content.nodes.items()
            if n.item == item and (n.requires_tool is None or k in bonus)
        }
        targets = known.find(here, lambda t: (t.get("node") or {}).get("kind") in nodes and t["node"]["amount"] > 0, known.with_node(nodes))
        for target in targets:
            if _near(here, target):
                return "gather", {"x": target[0], "y": target[1]}
            spot = known.beside(here, target, self.reachable(known, here))
            if spot is not None:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return self.explore(view, known, here)

    def explore(self, view: AgentView, known: KnownMap, here) -> Decision:
        """A random reachable tile at the edge of the view; else a step to a random tile that can be stood on."""
        rng = view.rng
        r = 4
        dist = self.reachable(known, here)
        # row by row, as the view lists them: every tile r steps away is in view
        tiles, (hx, hy) = known.tiles, here
        ring = [(x, y) for y in range(hy - r, hy + r + 1)
                for x in (range(hx - r, hx + r + 1) if y in (hy - r, hy + r) else (hx - r, hx + r))]
        frontier = [xy for xy in ring if xy in tiles and xy in dist]  # the tiles r steps away, row by row
        if frontier:
            goal = frontier[rng.randrange(len(frontier))]
            return "move_to", {"x": goal[0], "y": goal[1]}
        steps = [d for d in sorted(DIRECTIONS) if known.can_stand((here[0] + DIRECTIONS[d][0], here[1] + DIRECTIONS[d][1]))]
        if steps:
            return "move", {"direction": rng.choice(steps)}
        return "rest", {"ticks": 10}

    def value(self, items: dict[str, int]) -> int:
        return sum(self.content.items[i].value_cents * q for i, q in items.items())

    def answer_trades(self, view: AgentView) -> Decision:
        """Accept an offer made to us when we carry what it asks and it gives at least as much value; decline others."""
        obs = view.observation()
        me = obs["self"]
        for trade in obs.get("economy", {}).get("trades", []):
            if trade["to"] != me["id"]:
                continue
            affordable = all(me["inventory"].get(i, 0) >= q for i, q in trade["want"].items())
            if affordable and self.value(trade["give"]) >= self.value(trade["want"]):
                return "accept_trade", {"offer": trade["id"]}
            return "decline_trade", {"offer": trade["id"]}
        return None

    def decide(self, view: AgentView) -> Decision:
        urgent = self.needs(view) or self.answer_trades(view)
        if urgent:
            return urgent
        inv = view.observation()["self"]["inventory"]
        if sum(inv.get(f, 0) for f in self.foods) < self.food_reserve:
            return self.forage(view, "berries")
        return "rest", {"ticks": 20}


class Producer(Survivor):
    """Works up the tool chain: axe, pickaxe, a bed placed near the settlement, food cooked at a stove."""

    name = "producer"
    goals = ("wooden_axe", "stone_pickaxe", "bed", "fishing_rod", "sickle")

    def decide(self, view: AgentView) -> Decision:
        urgent = self.needs(view) or self.answer_trades(view)
        if urgent:
            return urgent
        obs = view.observation()
        me = obs["self"]
        inv, hand = me["inventory"], me["equipment"].get("hand")
        if "bed" in inv:
            return self.place_bed(view)
        food = sum(inv.get(f, 0) for f in self.foods)
        if food < 3:
            return self.forage(view, "berries")
        if inv.get("berries", 0) >= 8:
            made = self.make(view, "berry_stew")
            if made:
                return made
        has_bed = self.bed(self.known(obs), me) is not None
        for goal in self.goals:
            if goal == "bed" and has_bed:
                continue
            if inv.get(goal, 0) == 0 and hand != goal:
                return self.make(view, goal) or self.forage(view, "berries")
        if hand is None and inv.get("wooden_axe"):
            return "equip", {"item": "wooden_axe"}
        return self.forage(view, view.rng.choice(["wood", "stone", "fiber", "berries"]))

    def make(self, view: AgentView, recipe_name: str) -> Decision:
        """Gather what the recipe lacks, then go to its station and make it."""
        recipe = self.content.recipes[recipe_name]
        obs = view.observation()
        me = obs["self"]
        inv = me["inventory"]
        for item, qty in recipe.inputs.items():
            if inv.get(item, 0) < qty:
                if item not in {n.item for n in self.content.nodes.values()}:
                    return None
                return self.with_tool_for(view, item) or self.forage(view, item)
        action = "cook" if recipe.kind == "cook" else "craft"
        if recipe.station is None:
            return action, {"recipe": recipe_name}
        here = (me["x"], me["y"])
        known = self.known(obs)
        for station in known.find(here, lambda t: (t.get("structure") or {}).get("kind") == recipe.station, known.built):
            if _near(here, station):
                return action, {"recipe": recipe_name}
            spot = known.beside(here, station, self.reachable(known, here))
            if spot is not None:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return None

    def with_tool_for(self, view: AgentView, item: str) -> Decision:
        """Equip the carried tool that opens or speeds up the nodes yielding `item`, if not in hand."""
        me = view.observation()["self"]
        hand = me["equipment"].get("hand")
        nodes = {k for k, n in self.content.nodes.items() if n.item == item}
        best = None
        for tool in sorted(me["inventory"]):
            spec = self.content.items[tool].tool
            if spec and nodes & set(spec.yield_bonus):
                best = tool
        if best and best != hand:
            return "equip", {"item": best}
        return None

    def place_bed(self, view: AgentView) -> Decision:
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        for dx, dy in ((0, 1), (1, 0), (-1, 0), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
            xy = (here[0] + dx, here[1] + dy)
            t = known.tiles.get(xy)
            if t and known.can_stand(xy) and "structure" not in t and "node" not in t and t["terrain"] != "dungeon_entrance":
                return "place", {"item": "bed", "x": xy[0], "y": xy[1]}
        return self.explore(view, known, here)


class Trader(Producer):
    """Gathers, then sells its surplus: to characters it meets (escrowed offers for coins) and to villagers' shops."""

    name = "trader"
    goods = ("wood", "stone", "fiber", "berries")
    surplus = 6
    lot = 3

    def decide(self, view: AgentView) -> Decision:
        urgent = self.needs(view) or self.answer_trades(view)
        if urgent:
            return urgent
        obs = view.observation()
        me = obs["self"]
        inv = me["inventory"]
        if not inv.get("wooden_axe"):
            return self.make(view, "wooden_axe") or self.forage(view, "berries")
        spare = [g for g in self.goods if inv.get(g, 0) >= self.surplus]
        if spare:
            return self.sell(view, spare) or self.forage(view, view.rng.choice(self.goods))
        return self.forage(view, view.rng.choice(self.goods))

    def sell(self, view: AgentView, spare: list[str]) -> Decision:
        obs = view.observation()
        me = obs["self"]
        coin = self.content.economy.coin
        open_offer = any(t["from"] == me["id"] for t in obs.get("economy", {}).get("trades", []))
        others = sorted(obs["view"]["characters"], key=lambda ch: ch["id"])
        if others and not open_offer:
            item = spare[0]
            price = max(1, self.value({item: self.lot}) // self.content.items[coin].value_cents)
            return "offer_trade", {"to": others[0]["id"], "give": {item: self.lot}, "want": {coin: price}, "ticks": 240}
        here = (me["x"], me["y"])
        for v in obs.get("villagers", []):
            shop = v.get("shop")
            if not shop or not shop["open"]:
                continue
            wanted = [g for g in spare if g in shop["buys"]]
            if not wanted:
                continue
            if _near(here, (v["x"], v["y"])):
                return "sell", {"npc": v["npc"], "item": wanted[0], "qty": self.lot}
            went = self.walk(self.known(obs), here, (v["x"], v["y"]))
            if went:
                return went
        return None


class Quester(Producer):
    """Takes quests from the villagers' board that gathering (or a recipe of gathered things) can fill, fetches what
    each asks, and turns it in to its issuer: where it last saw them, else towards the settlement."""

    name = "quester"

    def __init__(self, content: Content):
        super().__init__(content)
        self.gatherable = {n.item for n in content.nodes.values() if n.requires_tool is None}
        self.settlement = {k for k, t in content.terrain.items() if t.safe}
        self._seen: dict[str, dict[str, tuple[int, int]]] = {}  # agent -> villager -> where it was last in view

    def obtainable(self, item: str) -> bool:
        """Whether gathering, or one recipe of gathered inputs, makes the item."""
        if item in self.gatherable:
            return True
        recipe = self.content.recipes.get(item)
        return recipe is not None and all(i in self.gatherable for i in recipe.inputs)

    def decide(self, view: AgentView) -> Decision:
        urgent = self.needs(view) or self.answer_trades(view)
        if urgent:
            return urgent
        obs = view.observation()
        me = obs["self"]
        seen = self._seen.setdefault(me["id"], {})
        seen.update({v["npc"]: (v["x"], v["y"]) for v in obs.get("villagers", [])})
        active = obs["quest_log"]["active"]
        for quest in active:
            if me["inventory"].get(quest["item"], 0) >= quest["qty"] and (
                    quest["kind"] != "gather" or quest["gathered"] >= quest["qty"]):
                return self.turn_in(view, quest, seen)
        if active:
            return self.fetch(view, active[0]["item"])
        doable = [q for q in obs.get("quest_board", []) if self.obtainable(q["item"])
                  and (q["kind"] == "deliver" or q["item"] in self.gatherable)]
        if doable:
            best = min(doable, key=lambda q: (q["qty"], q["id"]))
            return "accept_quest", {"quest": best["id"]}
        return super().decide(view)

    def fetch(self, view: AgentView, item: str) -> Decision:
        if item in self.gatherable:
            return self.with_tool_for(view, item) or self.forage(view, item)
        return self.make(view, item) or self.forage(view, "berries")

    def turn_in(self, view: AgentView, quest: dict[str, Any], seen: dict[str, tuple[int, int]]) -> Decision:
        """Hand the quest in when its issuer is within reach; else walk to where it is (or was last seen), else
        look for it in the settlement."""
        obs = view.observation()
        here = (obs["self"]["x"], obs["self"]["y"])
        issuer = quest["issuer"]
        in_view = {v["npc"] for v in obs.get("villagers", [])}
        where = seen.get(issuer)
        if issuer in in_view and where is not None and _near(here, where):
            return "turn_in", {"quest": quest["id"]}
        if issuer not in in_view and where is not None and _cheb(here, where) <= 1:
            del seen[issuer]  # it has gone from where it stood
            where = None
        known = self.known(obs)
        if where is None:
            spots = [xy for xy in known.find(here, lambda t: t["terrain"] in self.settlement) if _cheb(xy, here) > 2]
            if not spots:
                return self.explore(view, known, here)
            where = spots[view.rng.randrange(min(len(spots), 8))]
        return self.walk(known, here, where) or self.explore(view, known, here)


class Raider(Producer):
    """Takes what others hold: attacks characters and their structures outside the settlement when strong enough."""

    name = "raider"
    brave_health = 50

    def decide(self, view: AgentView) -> Decision:
        urgent = self.needs(view) or self.answer_trades(view)
        if urgent:
            return urgent
        obs = view.observation()
        me = obs["self"]
        if me["health"] < self.brave_health:
            return "rest", {"ticks": 20}
        known = self.known(obs)
        here = (me["x"], me["y"])
        outside = lambda xy: known.tiles.get(xy, {}).get("terrain") not in self.safe  # noqa: E731
        if not outside(here):
            return self.leave_settlement(view, known, here)
        for other in sorted(obs["view"]["characters"], key=lambda ch: ch["id"]):
            spot = (other["x"], other["y"])
            if not outside(spot):
                continue
            if _near(here, spot):
                return "attack", {"character": other["id"]}
            if spot in self.reachable(known, here):
                return "move_to", {"x": spot[0], "y": spot[1]}
        for t in obs["view"]["tiles"]:
            s = t.get("structure")
            spot = (t["x"], t["y"])
            if s and s["owner"] not in (None, me["id"]) and outside(spot):
                if _near(here, spot):
                    return "attack_structure", {"x": spot[0], "y": spot[1]}
                beside = known.beside(here, spot, self.reachable(known, here))
                if beside:
                    return "move_to", {"x": beside[0], "y": beside[1]}
        return Producer.decide(self, view)

    def leave_settlement(self, view: AgentView, known: KnownMap, here) -> Decision:
        dist = self.reachable(known, here)
        out = known.find(here, lambda t: t["terrain"] not in self.safe and self.walkable.get(t["terrain"], False))
        for spot in out:
            if spot in dist:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return self.explore(view, known, here)


class Expedition(Producer):
    """Plays the season's protocol (seed 000) end to end. It prepares (tools, a weapon and armour, food
    and healing potions, a bed, a locked 3x3 home, cloth from the loom once the tailor's friendship
    opens it, the tailor's design, leather from tanned hides, T-coins), clears the dungeon tier by tier
    by its telegraphs (dodge every announced strike, strike otherwise, first whoever is vulnerable),
    tailors the travel outfit and, past the Royal Tomb's altar, defeats the Shadow King.

    Stateless like every scripted policy: each decision is read off the observation alone (what it
    carries, its home, its friendships, its dungeon standing), so a resumed match decides the same.
    """

    name = "expedition"
    weapon, axe, armour = "wooden_club", "wooden_axe", "padded_armor"
    meal, potion = "berry_stew", "healing_potion"
    tailor, smith, gift = "ines", "bram", "berries"
    cloth_recipe, leather_recipe = "cloth_from_fiber", "leather"
    potions_carried = 2
    food_reserve = 3  # meals (or their berries) carried before leaving the settlement for long
    run_until_hour = 16  # no new walk to the dungeon starts after this hour (inside, the night is safe)
    site_radius = 24  # how far from the settlement centre a home site is sought
    home_size = 3  # floor tiles per side: 3 x 3 = the trial's 9
    reach_walk = 80  # farther goals are walked to by way of the known tile nearest them within this distance

    def __init__(self, content: Content):
        super().__init__(content)
        self.outfit_recipe = content.trial.outfit_recipe
        self.outfit = next(iter(content.recipes[self.outfit_recipe].outputs))
        self.design = next(i for i in content.recipes[self.outfit_recipe].inputs if i in content.npcs[self.tailor].shop.sells)
        self.coin = content.economy.coin
        self.node_items = {n.item for n in content.nodes.values()}
        self.tiers = len(content.dungeon.tiers)
        self.places = {k: tuple(v) for k, v in content.social.places.items()}
        roles = {k: s.part for k, s in content.structures.items()}
        self.wall = next(k for k, r in roles.items() if r == "wall" and content.structures[k].build and "wood" in content.structures[k].build.materials)
        self.floor = next(k for k, r in roles.items() if r == "floor")
        self.door = next(k for k, r in roles.items() if r == "door")
        self.lock = content.structures[self.door].lock_item
        cal = content.calendar
        self.night_start, self.day_ticks = cal.night_start, cal.ticks_per_day
        self._bounds: tuple[int, int] = (10**9, 10**9)

    # ---- reading the observation ---------------------------------------------------------------

    @staticmethod
    def _has(me: dict[str, Any], item: str) -> int:
        return me["inventory"].get(item, 0) + sum(1 for v in me["equipment"].values() if v == item)

    def centre(self, known: KnownMap) -> tuple[int, int] | None:
        """The settlement's centre: the middle of the paved tiles it has seen."""
        paved = known.on("settlement")
        if not paved:
            return None
        xs, ys = [x for x, _ in paved], [y for _, y in paved]
        return (min(xs) + max(xs)) // 2, (min(ys) + max(ys)) // 2

    def go(self, known: KnownMap, here, target: tuple[int, int], view: AgentView) -> Decision:
        """Walk next to `target` (or onto it when it can be stood on)."""
        if _near(here, target):
            return None
        spot = target if known.can_stand(target) else known.beside(here, target)
        if spot is None or spot == here:
            return self.explore(view, known, here)
        return self.walk(known, here, spot) or self.explore(view, known, here)

    def station(self, view: AgentView, kind: str) -> Decision | bool:
        """True when a `kind` station is within reach, else the move toward the nearest known one."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        for spot in known.find(here, lambda t: (t.get("structure") or {}).get("kind") == kind, known.built):
            if _near(here, spot):
                return True
            beside = known.beside(here, spot)
            if beside is not None:
                return self.walk(known, here, beside)
        return self.survey(view, known, here)

    def survey(self, view: AgentView, known: KnownMap, here) -> Decision:
        """Look over the settlement (its public stations stand there): the nearest paved tile at the edge of the unknown."""
        tiles = known.tiles
        dist = self.reachable(known, here)
        edge = [
            xy for xy, t in tiles.items()
            if t["terrain"] == "settlement" and xy != here and xy in dist
            and any((xy[0] + dx, xy[1] + dy) not in tiles for dx in (-1, 0, 1) for dy in (-1, 0, 1))
        ]
        if edge:
            return self.walk(known, here, min(edge, key=lambda xy: (_cheb(here, xy), xy)))
        return self.explore(view, known, here)

    def make(self, view: AgentView, recipe_name: str) -> Decision:
        """Gather what the recipe lacks (crafting intermediate items first), then make it at its station."""
        recipe = self.content.recipes[recipe_name]
        inv = view.observation()["self"]["inventory"]
        for item, qty in recipe.inputs.items():
            if inv.get(item, 0) >= qty:
                continue
            if item in self.content.recipes and self.content.recipes[item].kind == "craft" and item not in self.node_items:
                return self.make(view, item)
            if item not in self.node_items:
                return None
            return self.with_tool_for(view, item) or self.forage(view, item)
        action = "cook" if recipe.kind == "cook" else "craft"
        if recipe.station is None:
            return action, {"recipe": recipe_name}
        at = self.station(view, recipe.station)
        return (action, {"recipe": recipe_name}) if at is True else at

    # ---- the decision --------------------------------------------------------------------------

    def decide(self, view: AgentView) -> Decision:
        obs = view.observation()
        self.observe_bounds(obs)
        dungeon = obs.get("dungeon") or {}
        if dungeon.get("in_dungeon"):
            return self.fight(view, obs)
        urgent = self.needs(view)
        if urgent:
            return urgent
        for step in (self.gear, self.food, self.friends, self.shopping, self.expedition, self.home,
                     self.weave, self.tan, self.tailoring):
            got = step(view)
            if got:
                return got
        return self.idle(view)

    def needs(self, view: AgentView) -> Decision:
        """Eat when hungry; be in bed (or on safe ground) before dark, leaving early enough to get there."""
        obs = view.observation()
        me, time = obs["self"], obs["time"]
        here = (me["x"], me["y"])
        inv = me["inventory"]
        if me["satiety"] < 45:
            for food in self.foods:
                if inv.get(food):
                    return "eat", {"item": food}
        minute = time["hour"] * 60 + time["minute"]
        bed = self.bed(self.known(obs), me)
        way = _cheb(here, bed) if bed else 0
        dusk = self.night_start - 45 - way
        if time["night"] or minute >= dusk or me["energy"] < 15:
            # The dungeon shelters too: at its door with a tier to play, go in rather than walk home in the dark.
            if self.next_tier(obs) is not None and me["health"] >= 60 and me["energy"] >= 30:
                known = self.known(obs)
                entrance = next(iter(known.find(here, lambda t: t["terrain"] == "dungeon_entrance", known.on("dungeon_entrance"))), None)
                if entrance is not None and _cheb(here, entrance) < min(way, 12):
                    if _near(here, entrance):
                        return "enter_dungeon", {"tier": self.next_tier(obs)}
                    return self.walk(known, here, entrance)
            return self.shelter(view, here, me, tired=me["energy"] < 60 or time["night"])
        return None

    def forage(self, view: AgentView, item: str) -> Decision:
        """Gather `item` at the nearest known node that yields it (with the tool in hand) and can be reached; else explore."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        hand = me["equipment"].get("hand")
        bonus = self.content.items[hand].tool.yield_bonus if hand else {}
        nodes = {k for k, n in self.content.nodes.items() if n.item == item and (n.requires_tool is None or k in bonus)}
        dist = self.reachable(known, here)
        best = None
        for xy in known.find(here, lambda t: (t.get("node") or {}).get("kind") in nodes and t["node"]["amount"] > 0, known.with_node(nodes)):
            if _near(here, xy):
                return "gather", {"x": xy[0], "y": xy[1]}
            spots = [(xy[0] + dx, xy[1] + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (xy[0] + dx, xy[1] + dy) in dist]
            for spot in spots:
                key = (dist[spot], spot)
                if best is None or key < best[0]:
                    best = (key, spot)
        if best is not None:
            return "move_to", {"x": best[1][0], "y": best[1][1]}
        return self.frontier(known, here, here, None, outward=False) or self.explore(view, known, here)

    def idle(self, view: AgentView) -> Decision:
        """Nothing left to do now: wait by the bed."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        bed = self.bed(known, me)
        if bed is not None and here != bed:
            return self.walk(known, here, bed) or ("rest", {"ticks": 30})
        return "rest", {"ticks": 30}

    # ---- preparation ---------------------------------------------------------------------------

    def gear(self, view: AgentView) -> Decision:
        """A weapon, an axe, a bed placed, armour; armour worn and the weapon in an empty hand."""
        obs = view.observation()
        me = obs["self"]
        inv, eq = me["inventory"], me["equipment"]
        if not self._has(me, self.weapon):
            return self.make(view, self.weapon)
        if not self._has(me, self.axe):
            return self.make(view, self.axe)
        if self.bed(self.known(obs), me) is None:
            return self.place_bed(view) if inv.get("bed") else self.make(view, "bed")
        if not self._has(me, self.armour):
            return self.make(view, self.armour)
        if eq.get("body") != self.armour:
            return "equip", {"item": self.armour}
        if eq.get("hand") is None:
            return "equip", {"item": self.weapon}
        return None

    def food(self, view: AgentView) -> Decision:
        """Keep a cooked meal and some berries; healing potions before the deeper tiers."""
        obs = view.observation()
        me = obs["self"]
        inv = me["inventory"]
        if not inv.get(self.meal):
            return self.make(view, self.meal)
        cleared = (obs.get("dungeon") or {}).get("cleared", [])
        if cleared and inv.get(self.potion, 0) < self.potions_carried:
            return self.make(view, self.potion)
        if sum(inv.get(f, 0) for f in self.foods) < self.food_reserve + 2:
            return self.make(view, self.meal) if inv.get("berries", 0) >= 4 else self.forage(view, "berries")
        return None

    def friends(self, view: AgentView) -> Decision:
        """Each day while the tailor's shop hours last: a talk and a gift, until her friendship opens the loom recipe."""
        obs = view.observation()
        me, hour = obs["self"], obs["time"]["hour"]
        f = obs.get("friendship", {}).get(self.tailor)
        needed = self._level_needed(self.cloth_recipe)
        if f is None or f["level"] >= needed or not self._open(self.tailor, hour):
            return None
        if f["talked_today"] and (f["gifts_today"] or not me["inventory"].get(self.gift)):
            return None
        at = self.villager(view, self.tailor)
        if at is not True:
            return at
        if not f["talked_today"]:
            return "talk", {"npc": self.tailor}
        return "gift", {"npc": self.tailor, "item": self.gift}

    def _level_needed(self, recipe: str) -> int:
        levels = [u.level for u in self.content.npcs[self.tailor].unlocks if recipe in u.recipes]
        return min(levels) if levels else 0

    def _open(self, npc: str, hour: int) -> bool:
        opens, closes = self.content.npcs[npc].shop.open_hours
        return opens <= hour < closes

    def villager(self, view: AgentView, npc: str) -> Decision | bool:
        """True when the villager stands within reach, else the way to where it is (or should be at this hour)."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        seen = next((v for v in obs.get("villagers", []) if v["npc"] == npc), None)
        if seen is not None:
            spot = (seen["x"], seen["y"])
        else:
            centre = self.centre(known)
            if centre is None:
                return None
            place = self._place(npc, obs["time"]["hour"])
            dx, dy = self.places[place]
            spot = (centre[0] + dx, centre[1] + dy)
        if _near(here, spot):
            return True
        return self.go(known, here, spot, view)

    def _place(self, npc: str, hour: int) -> str:
        entries = sorted(self.content.npcs[npc].schedule, key=lambda e: e.start_hour)
        place = entries[-1].place
        for e in entries:
            if e.start_hour <= hour:
                place = e.place
        return place

    def shopping(self, view: AgentView) -> Decision:
        """The tailor's outfit design, and a lock from the smith while the home has no locked door."""
        obs = view.observation()
        me, hour = obs["self"], obs["time"]["hour"]
        inv = me["inventory"]
        coins = inv.get(self.coin, 0)
        prices = {v["npc"]: v["shop"]["sells"] for v in obs.get("villagers", []) if v.get("shop")}
        want = []
        if not inv.get(self.design) and not inv.get(self.outfit):
            want.append((self.tailor, self.design))
        home = obs.get("home")
        if not inv.get(self.lock) and not (home and home["complete"]):
            want.append((self.smith, self.lock))
        for npc, item in want:
            price = prices.get(npc, {}).get(item, self.content.npcs[npc].shop.sells[item])
            if coins < price or not self._open(npc, hour):
                continue
            at = self.villager(view, npc)
            if at is True:
                return "buy", {"npc": npc, "item": item}
            if at:
                return at
        return None

    # ---- the home ------------------------------------------------------------------------------

    def home(self, view: AgentView) -> Decision:
        """A 3x3 home on the chosen site: planks and wood, the floors, the walls, the door, then its lock."""
        obs = view.observation()
        me = obs["self"]
        home = obs.get("home")
        if home and home["complete"] and home["area"] >= self.home_size ** 2:
            return None
        here = (me["x"], me["y"])
        known = self.known(obs)
        site = self.site(known, me["id"])
        if site is None:
            return self.frontier(known, here, self.centre(known) or here, self.site_radius + 3, outward=False)
        plan = self.plan(site)
        todo = [(xy, kind) for xy, kind in plan if ((known.tiles.get(xy) or {}).get("structure") or {}).get("kind") != kind]
        inv = me["inventory"]
        if not todo:
            door = next(xy for xy, kind in plan if kind == self.door)
            locked = any(d["locked"] for d in (home or {}).get("doors", []) if (d["x"], d["y"]) == door)
            if locked:
                return None
            if not inv.get(self.lock):
                return None  # shopping buys one while the smith is open
            if not _near(here, door):
                return self.walk(known, here, door)
            return "lock", {"x": door[0], "y": door[1]}
        planks = sum(1 + (kind == self.door) for _, kind in todo if kind in (self.floor, self.door))
        walls = sum(1 for _, kind in todo if kind == self.wall)
        wood_for_walls = walls * self.content.structures[self.wall].build.materials["wood"]
        if inv.get("plank", 0) < planks:
            return self.make(view, "plank")
        if inv.get("wood", 0) < wood_for_walls:
            return self.with_tool_for(view, "wood") or self.forage(view, "wood")
        xy, kind = todo[0]
        if here == xy or not _near(here, xy):
            # Stand beside it (the floors inside do as well as the ground outside: the door's gap is the way out).
            dist = self.reachable(known, here)
            spots = [(xy[0] + dx, xy[1] + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx or dy) and (xy[0] + dx, xy[1] + dy) in dist]
            if not spots:
                return None
            spot = min(spots, key=lambda p: (dist[p], p))
            if spot != here:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return "build", {"structure": kind, "x": xy[0], "y": xy[1]}

    def plan(self, site: tuple[int, int]) -> list[tuple[tuple[int, int], str]]:
        """Floors first, then the walls, the door (middle of the north wall) last."""
        x0, y0 = site
        n = self.home_size + 2
        door = (x0 + n // 2, y0)
        floors = [((x, y), self.floor) for y in range(y0 + 1, y0 + n - 1) for x in range(x0 + 1, x0 + n - 1)]
        ring = [((x, y), self.wall) for y in range(y0, y0 + n) for x in range(x0, x0 + n)
                if (x in (x0, x0 + n - 1) or y in (y0, y0 + n - 1)) and (x, y) != door]
        return floors + ring + [(door, self.door)]

    def site(self, known: KnownMap, me: str) -> tuple[int, int] | None:
        """The home's north-west corner: the known square (walls included) already holding the most of
        its own parts, else the nearest fully buildable one to the settlement, off the paved ground."""
        centre = self.centre(known)
        if centre is None:
            return None
        n = self.home_size + 2
        best = None
        cx, cy = centre
        left, top = cx - self.site_radius - n // 2, cy - self.site_radius - n // 2
        span = 2 * self.site_radius + 1
        barred = self._barred_counts(known, me, left, top, span + n - 1)
        for y0 in range(top, top + span):
            for x0 in range(left, left + span):
                i, j = x0 - left, y0 - top
                if barred[j + n][i + n] - barred[j][i + n] - barred[j + n][i] + barred[j][i]:
                    continue  # a tile in the square rules out any home there
                score = self._site_score(known, me, (x0, y0), n)
                if score is None:
                    continue
                key = (-score, _cheb((x0 + n // 2, y0 + n // 2), centre), y0, x0)
                if best is None or key < best[0]:
                    best = (key, (x0, y0))
        return None if best is None else best[1]

    def _barred_counts(self, known: KnownMap, me: str, left: int, top: int, size: int) -> list[list[int]]:
        """Prefix sums over a size x size area of the tiles no home part may use whatever it is (unknown,
        unwalkable, paved, a node, another's structure or one not a home part), so that `site` skips
        a square holding one in constant time; `_site_score` still judges every square it does not skip."""
        parts = (self.floor, self.wall, self.door)
        sums = [[0] * (size + 1) for _ in range(size + 1)]
        for j in range(size):
            row, above, total = sums[j + 1], sums[j], 0
            for i in range(size):
                t = known.tiles.get((left + i, top + j))
                if t is None or not self.walkable[t["terrain"]] or t["terrain"] in ("settlement", "dungeon_entrance"):
                    total += 1
                else:
                    s = t.get("structure")
                    total += (s["owner"] != me or s["kind"] not in parts) if s is not None else "node" in t
                row[i + 1] = above[i + 1] + total
        return sums

    def _site_score(self, known: KnownMap, me: str, corner: tuple[int, int], n: int) -> int | None:
        x0, y0 = corner
        plan = dict(self.plan(corner))
        door = next(xy for xy, kind in plan.items() if kind == self.door)
        if not known.can_stand((door[0], door[1] - 1)):  # the way in and out
            return None
        mine = 0
        for y in range(y0, y0 + n):
            for x in range(x0, x0 + n):
                t = known.tiles.get((x, y))
                if t is None or not self.walkable[t["terrain"]] or t["terrain"] in ("settlement", "dungeon_entrance"):
                    return None
                s = t.get("structure")
                want = plan[(x, y)]
                if s is not None:
                    if s["owner"] != me or s["kind"] != want:
                        return None
                    mine += 1
                elif "node" in t or (t.get("items") and want == self.wall):
                    return None
        return mine

    # ---- the dungeon ---------------------------------------------------------------------------

    def expedition(self, view: AgentView) -> Decision:
        """In the morning, well fed and rested: walk to the entrance (exploring for it) and enter the next tier."""
        obs = view.observation()
        me, time = obs["self"], obs["time"]
        tier = self.next_tier(obs)
        if tier is None or time["hour"] >= self.run_until_hour or time["night"]:
            return None
        if me["satiety"] < 70:
            food = next((f for f in self.foods if me["inventory"].get(f)), None)
            if food:
                return "eat", {"item": food}
        if me["health"] < 85 or me["energy"] < 70 or me["satiety"] < 55:
            return None
        eq = me["equipment"]
        if eq.get("hand") != self.weapon:
            return "equip", {"item": self.weapon}
        if eq.get("body") != self.armour:
            return "equip", {"item": self.armour}
        here = (me["x"], me["y"])
        known = self.known(obs)
        entrance = next(iter(known.find(here, lambda t: t["terrain"] == "dungeon_entrance", known.on("dungeon_entrance"))), None)
        if entrance is None:
            return self.seek(view, known, here)
        if not _near(here, entrance):
            return self.walk(known, here, entrance) or self.seek(view, known, here)
        return "enter_dungeon", {"tier": tier}

    def next_tier(self, obs: dict[str, Any]) -> int | None:
        """The first tier not yet cleared; more hides from tier 1 while leather is short; tier 3 again for the Shadow King."""
        d = obs.get("dungeon") or {}
        cleared = set(d.get("cleared", []))
        for tier in range(1, self.tiers + 1):
            if tier not in cleared:
                return tier if tier in d.get("unlocked", [1]) else None
        me = obs["self"]
        inv = me["inventory"]
        leather = inv.get("leather", 0) + inv.get("hide", 0)
        if leather < self.content.recipes[self.outfit_recipe].inputs.get("leather", 0) and not inv.get(self.outfit):
            return 1
        if not d.get("shadow_king_defeats"):
            return self.tiers
        return None

    def seek(self, view: AgentView, known: KnownMap, here) -> Decision:
        """Explore outward for the entrance, which lies as far from the settlement as the land allows."""
        return self.frontier(known, here, self.centre(known) or here, None, outward=True) or self.explore(view, known, here)

    def frontier(self, known: KnownMap, here, centre, radius: int | None, outward: bool) -> Decision:
        """Walk to a known standable tile beside the unknown: outward, the one farthest from `centre`
        (corners first) less half the way there; else the nearest one within `radius` of `centre`."""
        width, height = self._bounds
        dist = self.reachable(known, here)
        best = None
        for (x, y) in dist:
            if (x, y) == here or (radius is not None and _cheb((x, y), centre) > radius):
                continue
            if not known.beside_unknown((x, y), width, height):
                continue
            away = dist[(x, y)]
            score = abs(x - centre[0]) + abs(y - centre[1]) - away // 2 if outward else -away
            key = (-score, y, x)
            if best is None or key < best[0]:
                best = (key, (x, y))
        return None if best is None else self.walk(known, here, best[1])

    def observe_bounds(self, obs: dict[str, Any]) -> None:
        """The map's size: that of the scenario this match is (the one whose length ends at the observed
        tick), as the rules document lists it; unbounded when no single scenario matches, or when the match
        does not say when it ends (a hidden horizon)."""
        end = obs["time"].get("ends_at_tick")
        sizes = {
            (s.width, s.height) for s in self.content.scenarios.values()
            if s.start_hour * 60 + s.days * self.day_ticks == end
        }
        self._bounds = sizes.pop() if len(sizes) == 1 else (10**9, 10**9)

    def fight(self, view: AgentView, obs: dict[str, Any]) -> Decision:
        """Inside: dodge whatever is announced to land next tick; otherwise strike, the vulnerable first.
        Rest in cleared rooms before going on; face the Shadow King only rested; leave when done."""
        me = obs["self"]
        room = obs["dungeon"]["room"]
        inv = me["inventory"]
        enemies = room["enemies"]
        energy = me["energy"]
        dodge, strike = self.content.actions["dodge"].energy, self.content.actions["strike"].energy
        if enemies:
            if any(e["next"]["damage"] for e in enemies):
                return ("dodge", {}) if energy >= dodge else ("guard", {})
            if me["health"] < 45 and inv.get(self.potion):
                return "use_consumable", {"item": self.potion}
            if me["satiety"] < 25:
                food = next((f for f in self.foods if inv.get(f)), None)
                if food:
                    return "eat", {"item": food}
            if energy < strike:
                food = next((f for f in self.foods if inv.get(f) and self.content.items[f].energy), None)
                return ("eat", {"item": food}) if food else ("guard", {})
            target = min(enemies, key=lambda e: (not e["next"]["vulnerable"], e["hp"], e["id"]))
            return "strike", {"enemy": target["id"]}
        if me["satiety"] < 50:
            food = next((f for f in self.foods if inv.get(f)), None)
            if food:
                return "eat", {"item": food}
        time = obs["time"]
        king = room.get("shadow_king")
        last = room["room"] == room["rooms"]
        if room["cleared"] and room["altar"] == "ready" and not obs["dungeon"].get("shadow_king_defeats"):
            if energy < 90 or me["health"] < 90:
                return "rest", {"ticks": 20}
            return "activate_altar", {}
        if king is not None and not king["defeated"] and not last:
            if energy < 90:
                return "rest", {"ticks": 20}
            return "advance", {}
        if room["cleared"] and (king is None or king["defeated"]):
            if time["night"] or time["hour"] >= 19:
                return "rest", {"ticks": 30}
            return "leave_dungeon", {}
        if energy < 60 or me["health"] < 80:
            return "rest", {"ticks": 20}
        return "advance", {}

    # ---- the outfit ----------------------------------------------------------------------------

    def weave(self, view: AgentView) -> Decision:
        """Cloth at the loom, from fiber, once the tailor's friendship opens the recipe."""
        obs = view.observation()
        me = obs["self"]
        inv = me["inventory"]
        need = self.content.recipes[self.outfit_recipe].inputs.get("cloth", 0)
        f = obs.get("friendship", {}).get(self.tailor) or {"level": 0}
        if inv.get(self.outfit) or inv.get("cloth", 0) >= need or f["level"] < self._level_needed(self.cloth_recipe):
            return None
        return self.make(view, self.cloth_recipe)

    def tan(self, view: AgentView) -> Decision:
        """Leather from the dungeon's hides, as much as the outfit takes."""
        inv = view.observation()["self"]["inventory"]
        need = self.content.recipes[self.outfit_recipe].inputs.get("leather", 0)
        if inv.get(self.outfit) or inv.get("leather", 0) >= need or not inv.get("hide"):
            return None
        return self.make(view, self.leather_recipe)

    def tailoring(self, view: AgentView) -> Decision:
        """The travel outfit at a tailor's table, once every input is carried."""
        inv = view.observation()["self"]["inventory"]
        recipe = self.content.recipes[self.outfit_recipe]
        if inv.get(self.outfit) or any(inv.get(i, 0) < q for i, q in recipe.inputs.items()):
            return None
        return self.make(view, self.outfit_recipe)


class Unarmoured(Expedition):
    """The expedition's plan without armour and without reading telegraphs: it never makes or wears
    armour and meets every blow by striking back and drinking potions. Seed 000 saw agents that never
    equipped armour stall in the first tiers; this policy is that baseline."""

    name = "unarmoured"
    armour = None

    def gear(self, view: AgentView) -> Decision:
        obs = view.observation()
        me = obs["self"]
        inv, eq = me["inventory"], me["equipment"]
        if not self._has(me, self.weapon):
            return self.make(view, self.weapon)
        if not self._has(me, self.axe):
            return self.make(view, self.axe)
        if self.bed(self.known(obs), me) is None:
            return self.place_bed(view) if inv.get("bed") else self.make(view, "bed")
        if eq.get("body") is not None:
            return "unequip", {"slot": "body"}
        if eq.get("hand") is None:
            return "equip", {"item": self.weapon}
        return None

    def fight(self, view: AgentView, obs: dict[str, Any]) -> Decision:
        me, room = obs["self"], obs["dungeon"]["room"]
        enemies = room["enemies"]
        if enemies:
            if me["health"] < 45 and me["inventory"].get(self.potion):
                return "use_consumable", {"item": self.potion}
            if me["health"] < 25:
                return "leave_dungeon", {}
            target = min(enemies, key=lambda e: (e["hp"], e["id"]))
            return "strike", {"enemy": target["id"]}
        return super().fight(view, obs)


POLICIES: dict[str, type] = {
    "random": RandomAgent,
    "legal_random": LegalRandomAgent,
    "idle": IdleAgent,
    "survivor": Survivor,
    "producer": Producer,
    "trader": Trader,
    "quester": Quester,
    "raider": Raider,
    "unarmoured": Unarmoured,
    "expedition": Expedition,
}


def make_policy(name: str, content: Content) -> Policy:
    try:
        return POLICIES[name](content)
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None
