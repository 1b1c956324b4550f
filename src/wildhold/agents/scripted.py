"""Scripted baseline policies. They act only through observations and the action registry."""

from __future__ import annotations

from typing import Any, Callable

from wildhold.agents.base import AgentView, Decision, Policy
from wildhold.content import Content
from wildhold.world.actions import DIRECTIONS, REGISTRY


class RandomAgent:
    """Picks a registered action uniformly and fills its arguments at random, near itself."""

    name = "random"

    def __init__(self, content: Content):
        self.actions = sorted(REGISTRY)
        self.items = sorted(content.items)
        self.recipes = sorted(content.recipes)
        self.directions = sorted(DIRECTIONS)

    def decide(self, view: AgentView) -> Decision:
        rng = view.rng
        me = view.status()
        name = rng.choice(self.actions)
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
    """A policy's picture of the map, built from one observation (view live, memory as remembered)."""

    def __init__(self, obs: dict[str, Any], walkable: dict[str, bool], blocking: set[str]):
        legend = obs["legend"]
        view = obs["view"]
        self.tiles: dict[tuple[int, int], dict[str, Any]] = {}
        for m in obs.get("memory", []):
            self.tiles[(m["x"], m["y"])] = m
        for dy, row in enumerate(view["rows"]):
            for dx, glyph in enumerate(row):
                self.tiles[(view["x0"] + dx, view["y0"] + dy)] = {"terrain": legend[glyph]}
        for t in view["tiles"]:
            self.tiles[(t["x"], t["y"])].update(t)
        self.walkable, self.blocking = walkable, blocking

    def can_stand(self, xy: tuple[int, int]) -> bool:
        t = self.tiles.get(xy)
        if t is None or not self.walkable[t["terrain"]]:
            return False
        s = t.get("structure")
        return s is None or s["kind"] not in self.blocking

    def find(self, here: tuple[int, int], match: Callable[[dict[str, Any]], bool]) -> list[tuple[int, int]]:
        """Known tiles that match, nearest first (ties broken by position, for determinism)."""
        hits = [xy for xy, t in self.tiles.items() if match(t)]
        return sorted(hits, key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))

    def beside(self, here: tuple[int, int], target: tuple[int, int]) -> tuple[int, int] | None:
        """The nearest tile from which `target` is within reach."""
        spots = [
            (target[0] + dx, target[1] + dy)
            for dx in (-1, 0, 1) for dy in (-1, 0, 1)
            if self.can_stand((target[0] + dx, target[1] + dy))
        ]
        if not spots:
            return None
        return min(spots, key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))


def _near(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) <= 1


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
        self.foods = sorted(
            (k for k, i in content.items.items() if i.category == "food"),
            key=lambda k: -content.items[k].satiety,
        )
        cal = content.calendar
        self.dusk = cal.night_start - 60

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
        known = KnownMap(view.observation(), self.walkable, self.blocking)
        if me["bed"] is not None:
            bed = tuple(me["bed"])
            if here == bed:
                return ("sleep", {"ticks": 120}) if tired else ("rest", {"ticks": 30})
            return "move_to", {"x": bed[0], "y": bed[1]}
        if me["sheltered"]:
            return "rest", {"ticks": 30}
        spots = known.find(here, lambda t: t["terrain"] in self.safe or (t.get("structure") or {}).get("kind") in self.shelters)
        for spot in spots[:3]:
            if known.can_stand(spot):
                return "move_to", {"x": spot[0], "y": spot[1]}
        return "rest", {"ticks": 10}

    def forage(self, view: AgentView, item: str) -> Decision:
        """Go to the nearest known node that yields `item` and gather it; explore if none is known."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        known = KnownMap(obs, self.walkable, self.blocking)
        hand = me["equipment"].get("hand")
        bonus = self.content.items[hand].tool.yield_bonus if hand else {}
        nodes = {
            k for k, n in self.content.nodes.items()
            if n.item == item and (n.requires_tool is None or k in bonus)
        }
        targets = known.find(here, lambda t: (t.get("node") or {}).get("kind") in nodes and t["node"]["amount"] > 0)
        for target in targets[:4]:
            if _near(here, target):
                return "gather", {"x": target[0], "y": target[1]}
            spot = known.beside(here, target)
            if spot is not None:
                return "move_to", {"x": spot[0], "y": spot[1]}
        return self.explore(view, known, here)

    def explore(self, view: AgentView, known: KnownMap, here) -> Decision:
        rng = view.rng
        r = 4
        frontier = [
            xy for xy in known.tiles
            if max(abs(xy[0] - here[0]), abs(xy[1] - here[1])) == r and known.can_stand(xy)
        ]
        if frontier:
            goal = frontier[rng.randrange(len(frontier))]
            return "move_to", {"x": goal[0], "y": goal[1]}
        return "move", {"direction": rng.choice(sorted(DIRECTIONS))}

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
        for goal in self.goals:
            if goal == "bed" and me["bed"] is not None:
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
        known = KnownMap(obs, self.walkable, self.blocking)
        for station in known.find(here, lambda t: (t.get("structure") or {}).get("kind") == recipe.station):
            if _near(here, station):
                return action, {"recipe": recipe_name}
            spot = known.beside(here, station)
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
        known = KnownMap(obs, self.walkable, self.blocking)
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
            return "move_to", {"x": v["x"], "y": v["y"]}
        return None


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
        known = KnownMap(obs, self.walkable, self.blocking)
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
            return "move_to", {"x": spot[0], "y": spot[1]}
        for t in obs["view"]["tiles"]:
            s = t.get("structure")
            spot = (t["x"], t["y"])
            if s and s["owner"] not in (None, me["id"]) and outside(spot):
                if _near(here, spot):
                    return "attack_structure", {"x": spot[0], "y": spot[1]}
                beside = known.beside(here, spot)
                if beside:
                    return "move_to", {"x": beside[0], "y": beside[1]}
        return Producer.decide(self, view)

    def leave_settlement(self, view: AgentView, known: KnownMap, here) -> Decision:
        out = known.find(here, lambda t: t["terrain"] not in self.safe and self.walkable.get(t["terrain"], False))
        for spot in out[:3]:
            if known.can_stand(spot):
                return "move_to", {"x": spot[0], "y": spot[1]}
        return self.explore(view, known, here)


POLICIES: dict[str, type] = {
    "random": RandomAgent,
    "idle": IdleAgent,
    "survivor": Survivor,
    "producer": Producer,
    "trader": Trader,
    "raider": Raider,
}


def make_policy(name: str, content: Content) -> Policy:
    try:
        return POLICIES[name](content)
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None
