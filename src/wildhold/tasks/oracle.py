"""The oracle: a policy told only its task's goal (what the description says, as the evaluator's
parameters) that sees what any agent sees, its view, and reuses the expedition's skills to reach it.
It proves a task can be done within its limits. A goal of several acts (`all`) it takes one act at a
time, in order, each until what it sees says it is done."""

from __future__ import annotations

from typing import Any

from wildhold.agents.base import AgentView, Decision
from wildhold.agents.scripted import Expedition, Survivor, _cheb
from wildhold.content import Content

_AROUND = ((0, 1), (1, 0), (-1, 0), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


class Oracle(Expedition):
    name = "oracle"

    def __init__(self, content: Content, evaluator: str, params: dict[str, Any]):
        super().__init__(content)
        self.goal, self.params = evaluator, params
        self.origin: tuple[int, int] | None = None  # where it stood when it first decided
        self.held: dict[str, int] = {}  # what it carried then: gathering counts from there
        self.aim: str | None = None  # the gift it chose to come by
        self.plots: dict[tuple[int, int], str | None] = {}  # plots it has seen, and the crop each held
        self.searched, self.given_up = 0, set()  # turns spent looking for the aim's nodes; aims given up
        self.produce = {crop.product: name for name, crop in content.crops.items()}
        self.coop = next(k for k, st in content.structures.items() if st.part == "coop")
        self.finished: set[int] = set()  # the acts of an `all` goal it has seen done
        self.start: dict[str, Any] = {}  # what it saw when it first decided: friendships, its structures
        self.cut_off: set[tuple[int, int]] = set()  # corners of the map it found no way toward
        self.hunting: str | None = None  # the ordinary enemy a `defeat` goal asks for
        self.instances: set[str] = set()  # the dungeon instances it has been in

    def decide(self, view: AgentView) -> Decision:
        if self.origin is None:
            obs = view.observation()
            me = obs["self"]
            self.origin, self.held = (me["x"], me["y"]), dict(me["inventory"])
            self.start = {"friendship": {k: dict(v) for k, v in (obs.get("friendship") or {}).items()},
                          "owned": self.owned(obs)}
        self.ripe(view, "")  # the plots it sees, remembered: it may walk off and come back to them
        if self.goal == "all":
            return self.each(view)
        return self.act(view, self.goal, self.params)

    def each(self, view: AgentView) -> Decision:
        """The next step of the first act not yet seen done (farming's acts together: till, plant, water)."""
        terms = [(t["evaluator"], t.get("params", {})) for t in self.params["terms"]]
        crops = {p["crop"] for g, p in terms if g in ("plant", "water")}
        if crops and all(g in ("till", "plant", "water") for g, _ in terms):
            return self.farm(view, crops.pop())
        for i, (g, p) in enumerate(terms):
            if i in self.finished:
                continue
            if self.seen_done(view, g, p):
                self.finished.add(i)
                continue
            decision = self.act(view, g, p)
            if decision is not None or self.params.get("ordered"):
                return decision
        return None

    def owned(self, obs: dict[str, Any]) -> dict[str, int]:
        me = obs["self"]["id"]
        kinds: dict[str, int] = {}
        for st in obs.get("structures") or []:
            if st.get("owner") == me:
                kinds[st["kind"]] = kinds.get(st["kind"], 0) + 1
        return kinds

    def seen_done(self, view: AgentView, g: str, p: dict[str, Any]) -> bool:
        """Whether what it sees says an act is done: what it came by, placed, settled, gave, earned since it began
        (an act it cannot see done, such as a sale or a fight, comes last in every goal)."""
        obs = view.observation()
        inv, qty = obs["self"]["inventory"], p.get("qty", 1)

        def gained(item: str) -> int:
            return inv.get(item, 0) - self.held.get(item, 0)

        if g in ("obtain", "buy"):
            return gained(p["item"]) >= qty
        if g == "harvest":
            return gained(self.content.crops[p["crop"]].product) >= qty
        if g == "earn":
            return gained(self.content.economy.coin) >= qty
        if g == "settle":
            return -gained(self.content.animals[p["animal"]].item) >= qty
        if g == "place":
            return self.owned(obs).get(p["structure"], 0) - self.start["owned"].get(p["structure"], 0) >= qty
        if g == "gift":
            now, then = (obs.get("friendship") or {}).get(p["npc"]) or {}, self.start["friendship"].get(p["npc"]) or {}
            return now.get("gifts_today", 0) > then.get("gifts_today", 0)
        return False

    def act(self, view: AgentView, g: str, p: dict[str, Any]) -> Decision:
        """The next step toward one act."""
        if g == "gather_all":
            inv = view.status()["inventory"]
            for item, qty in p["items"].items():
                if inv.get(item, 0) < self.held.get(item, 0) + qty:
                    return self.gather(view, item)
            return None
        if g in ("reach", "find"):
            return self.reach(view, p)
        if g == "repair":
            for item, qty in self.content.structures[p["structure"]].repair.materials.items():
                got = self.carrying(view, item, qty)
                if got:
                    return got
            return self.at_structure(view, p["structure"], "repair")
        if g == "obtain":
            if p.get("via") in ("craft", "cook"):
                return self.make(view, self.recipe_for(view, p["item"], p["via"])) or self.explore_here(view)
            if p.get("via") == "own":
                return self.carrying(view, p["item"], self.held.get(p["item"], 0) + p.get("qty", 1))
            return self.gather(view, p["item"])
        if g == "earn":
            coin = self.content.economy.coin
            return self.earn(view, self.held.get(coin, 0) + p.get("qty", 1) - view.status()["inventory"].get(coin, 0), None)
        if g == "plant":
            return self.farm(view, p["crop"])
        if g == "water":
            return self.in_hand(view, self.content.farming.water_tool) or self.at_crop(view, "water")
        if g == "harvest":
            return self.at_crop(view, "harvest")
        if g == "fertilise":
            return self.carrying(view, self.content.farming.fertilizer) or self.at_crop(view, "fertilise")
        if g == "settle":
            return self.settle(view, self.content.animals[p["animal"]].item)
        if g == "feed":
            animal = self.content.animals[p["animal"]]
            if view.status()["inventory"].get(animal.item):
                return self.settle(view, animal.item)
            return self.carrying(view, animal.feed, animal.feed_qty) or self.at_structure(view, p["animal"], "feed")
        if g in ("enter_dungeon", "clear_tier", "defeat"):
            return self.dungeon(view, p)
        if g == "survive":
            return self.survive(view)
        if g == "visit":  # regions are broad: the corners of the map lie in several
            obs = view.observation()
            self.observe_bounds(obs)
            here = (obs["self"]["x"], obs["self"]["y"])
            return self.seek(view, self.known(obs), here)
        if g == "place" and p["structure"] in self.buildable:
            return self.build(view, p["structure"])
        if g == "place":
            item = next(k for k, i in self.content.items.items() if i.places == p["structure"])
            return self.carrying(view, item) or self.nearby(view, "place", {"item": item})
        if g in ("gift", "sell"):
            got = self.carrying(view, p["item"])
            if got:
                return got
        if g == "buy":
            got = self.coins_for(view, p["npc"], p["item"])
            if got:
                return got
        if g == "befriend" and ((view.observation().get("friendship", {}).get(p["npc"]) or {}).get("talked_today")):
            item, way = self.gift_plan(view, p["npc"], p.get("qty", 1))
            if item is None:
                return way  # come by the gift before walking back to the villager
        if g in ("talk", "gift", "buy", "sell", "befriend"):
            npc = p.get("npc")
            at = self.villager(view, npc)
            if at is not True:
                return at or self.explore_here(view)
            if g == "befriend":
                return self.befriend(view, npc, p.get("qty", 1))
            args = {"npc": npc} if g == "talk" else {"npc": npc, "item": p["item"]}
            return g, args
        return None

    @property
    def buildable(self) -> set[str]:
        return {k for k, s in self.content.structures.items() if s.build and not any(
            i.places == k for i in self.content.items.values())}

    def carrying(self, view: AgentView, item: str, qty: int = 1) -> Decision:
        """None when `qty` of `item` are carried, else the way to get them: gather, or craft or cook from what the land gives."""
        inv = view.status()["inventory"]
        if inv.get(item, 0) >= qty:
            return None
        if item in self.produce and self.ripe(view, self.produce[item]):
            return self.to_crop(view, self.produce[item])
        bought = self.buy_from(view, item)
        if bought:
            return bought
        for via in ("craft", "cook"):
            if any(item in r.outputs and r.kind == via for r in self.content.recipes.values()) and item not in self.node_items:
                return self.make(view, self.recipe_for(view, item, via)) or self.explore_here(view)
        return self.gather(view, item)

    def gather(self, view: AgentView, item: str) -> Decision:
        """Gather `item` with the best tool carried, making the tool its nodes need first when none is carried."""
        me = view.status()
        have = set(me["inventory"]) | set(me["equipment"].values())
        needs = {n.requires_tool for n in self.content.nodes.values() if n.item == item}
        if needs and None not in needs and not needs & have:
            tool = sorted(needs)[0]
            if any(tool in r.outputs for r in self.content.recipes.values()):
                return self.make(view, self.recipe_for(view, tool, "craft"))
        return self.with_tool_for(view, item) or self.forage(view, item)

    def in_hand(self, view: AgentView, tool: str) -> Decision:
        return None if view.status()["equipment"].get("hand") == tool else ("equip", {"item": tool})

    def befriend(self, view: AgentView, npc: str, points: int) -> Decision:
        """A talk, then a gift the villager thinks well enough of to reach the points asked."""
        f = view.observation().get("friendship", {}).get(npc) or {}
        if not f.get("talked_today"):
            return "talk", {"npc": npc}
        item, way = self.gift_plan(view, npc, points)
        return ("gift", {"npc": npc, "item": item}) if item else way

    def gift_plan(self, view: AgentView, npc: str, points: int) -> tuple[str | None, Decision]:
        """The gift to give, when one worth the points asked is carried; else None and the way to come by
        the easiest one (kept to once chosen, given up after a while when its nodes are not found)."""
        social = self.content.social
        spec, inv = self.content.npcs[npc], view.status()["inventory"]
        groups = [g for g, felt in ((spec.loves, "loved"), (spec.likes, "liked"))
                  if social.talk_points + social.gift_points[felt] >= points] or [spec.loves]
        for group in groups:
            item = next((i for i in group if inv.get(i)), None)
            if item:
                return item, None
        candidates = [i for g in groups for i in g if i not in self.given_up]
        if self.aim is not None and (self.effort(view, self.aim) or 0) >= 5:  # its nodes are still not found
            self.searched += 1
            if self.searched > 40:
                self.given_up.add(self.aim)
                self.aim, self.searched = None, 0
        if self.aim not in candidates or self.effort(view, self.aim) is None:  # keep to one gift once chosen
            ways = [(self.effort(view, i), n, i) for n, i in enumerate(candidates)]
            ways = [w for w in ways if w[0] is not None]
            self.aim = min(ways)[2] if ways else None
        return None, (self.carrying(view, self.aim) if self.aim else ("rest", {"ticks": 30}))

    def effort(self, view: AgentView, item: str) -> int | None:
        """How hard `item` is to come by from here (lower is easier); None when the oracle knows no way."""
        inv = view.status()["inventory"]
        if self.price(item) is not None and inv.get(self.content.economy.coin, 0) >= self.price(item)[0]:
            return 0
        if item in self.produce and self.ripe(view, self.produce[item]):
            return 0
        for r in self.content.recipes.values():
            if item in r.outputs and all(inv.get(i, 0) >= q for i, q in r.inputs.items()):
                return 1 + self.far_station(view, r.station)
        if item in self.node_items:
            return 2 if self.seen(view, item) else 5
        ways = [(3 if all(inv.get(i, 0) >= q or self.seen(view, i) for i, q in r.inputs.items()) else 6)
                + self.far_station(view, r.station) for r in self.content.recipes.values()
                if item in r.outputs and all(i in self.node_items or inv.get(i, 0) >= q for i, q in r.inputs.items())]
        return min(ways, default=None)

    def far_station(self, view: AgentView, station: str | None) -> int:
        """Extra effort of a recipe whose station is neither on the map as known nor carried."""
        if station is None:
            return 0
        me = view.status()
        if any(self.content.items[k].places == station for k in me["inventory"]):
            return 0
        known = self.known(view.observation())
        return 0 if known.find((me["x"], me["y"]), lambda t: (t.get("structure") or {}).get("kind") == station) else 4

    def forage(self, view: AgentView, item: str) -> Decision:
        """Gather at a known node; with none known, sweep outward from where it began (nearest-first search
        swings between two edges of what it knows)."""
        if self.seen(view, item):
            return super().forage(view, item)
        obs = view.observation()
        self.observe_bounds(obs)
        me = obs["self"]
        here, known = (me["x"], me["y"]), self.known(obs)
        return self.frontier(known, here, self.origin or here, None, outward=True) or self.explore(view, known, here)

    def seen(self, view: AgentView, item: str) -> bool:
        """Whether a node yielding `item` is on the map as the character knows it, and a tool it needs is carried."""
        me = view.status()
        have = set(me["inventory"]) | set(me["equipment"].values())
        kinds = {k for k, n in self.content.nodes.items() if n.item == item and (n.requires_tool is None or n.requires_tool in have)}
        obs = view.observation()
        return bool(self.known(obs).find((me["x"], me["y"]), lambda t: (t.get("node") or {}).get("kind") in kinds
                                          and t["node"].get("amount", 1) > 0))

    def price(self, item: str) -> tuple[int, str] | None:
        """The lowest listed price of `item` and the villager asking it, when a villager sells it."""
        offers = [(spec.shop.sells[item], name) for name, spec in self.content.npcs.items()
                  if spec.shop and item in spec.shop.sells]
        return min(offers) if offers else None

    def buy_from(self, view: AgentView, item: str) -> Decision:
        """The way to buy `item` when a villager sells it and the coins for it are carried; else None."""
        offer = self.price(item)
        if offer is None or view.status()["inventory"].get(self.content.economy.coin, 0) < offer[0]:
            return None
        at = self.villager(view, offer[1])
        if at is not True:
            return at or self.explore_here(view)
        args = {"npc": offer[1], "item": item}
        return ("buy", args) if view.refusal("buy", args) is None else ("rest", {"ticks": 20})

    def ripe(self, view: AgentView, crop: str) -> bool:
        """Whether a plot it has seen holds this crop (plots in view are seen afresh, the rest remembered)."""
        for p in view.observation().get("farming", {}).get("plots", []):
            self.plots[(p["x"], p["y"])] = p.get("crop")
        return crop in self.plots.values()

    def to_crop(self, view: AgentView, crop: str) -> Decision:
        """Harvest a crop in view; else walk back to the nearest plot remembered to hold `crop`."""
        obs = view.observation()
        if any(p.get("crop") == crop for p in obs.get("farming", {}).get("plots", [])):
            return self.at_crop(view, "harvest")
        me = obs["self"]
        here = (me["x"], me["y"])
        spot = min((xy for xy, c in self.plots.items() if c == crop), key=lambda xy: (_cheb(xy, here), xy))
        return self.go(self.known(obs), here, spot, view) or self.explore_here(view)

    def settle(self, view: AgentView, item: str) -> Decision:
        """Settle the animal beside a coop: building the coop first when none takes it and its materials are carried."""
        me = view.status()
        for dx, dy in _AROUND:
            full = {"item": item, "x": me["x"] + dx, "y": me["y"] + dy}
            if view.refusal("settle_animal", full) is None:
                return "settle_animal", full
        obs = view.observation()
        known = self.known(obs)
        if known.find((me["x"], me["y"]), lambda t: (t.get("structure") or {}).get("kind") == self.coop):
            return self.at_structure(view, self.coop, None)
        for i, q in self.content.structures[self.coop].build.materials.items():
            got = self.carrying(view, i, q)
            if got:
                return got
        return self.nearby(view, "build", {"structure": self.coop})

    def at_structure(self, view: AgentView, kind: str, action: str | None) -> Decision:
        """The action on a tile around the character that takes it; else walk beside the nearest known
        `kind` structure (with no action: until beside it); else explore."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        if action is not None:
            for dx, dy in _AROUND:
                xy = {"x": me["x"] + dx, "y": me["y"] + dy}
                if view.refusal(action, xy) is None:
                    return action, xy
        known = self.known(obs)
        spots = known.find(here, lambda t: (t.get("structure") or {}).get("kind") == kind)
        for spot in spots:
            if max(abs(spot[0] - here[0]), abs(spot[1] - here[1])) > 1:
                beside = known.beside(here, spot, self.reachable(known, here))
                if beside is not None:
                    return "move_to", {"x": beside[0], "y": beside[1]}
        return self.explore_here(view)

    def reach(self, view: AgentView, p: dict[str, Any]) -> Decision:
        """Walk to the nearest known tile of the terrain (or beside the node) far enough from where it began,
        one tile farther than asked (the evaluator measures from the first step); else look into the corners of
        the map, then outward (`seek`)."""
        obs = view.observation()
        self.observe_bounds(obs)
        me = obs["self"]
        here = (me["x"], me["y"])
        known = self.known(obs)
        away = p["away"] + 1
        if "terrain" in p:
            goals = [xy for xy, t in known.tiles.items() if t["terrain"] == p["terrain"]]
        else:
            nodes = [xy for xy, t in known.tiles.items() if (t.get("node") or {}).get("kind") == p["node"]]
            goals = [(x + dx, y + dy) for x, y in nodes for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]
        dist = self.reachable(known, here)
        goals = [xy for xy in goals if xy in dist and _cheb(xy, self.origin) >= away]
        if goals:
            return self.walk(known, here, min(goals, key=lambda xy: (dist[xy], xy)))
        return self.seek(view, known, here)

    def coins_for(self, view: AgentView, npc: str, item: str) -> Decision:
        """None when the coins for `item` are carried; else gather the ware the land gives that earns most per
        gather (with the tools carried) and, once what is held covers the price, sell it all at once."""
        coin = self.content.economy.coin
        return self.earn(view, self.content.npcs[npc].shop.sells[item] - view.status()["inventory"].get(coin, 0), item)

    def earn(self, view: AgentView, need: int, item: str | None) -> Decision:
        """None when `need` coins are no longer wanted; else the next step of earning them (never selling `item`):
        gathering the ware that earns most per gather among those whose nodes it knows (with the tools it carries)."""
        inv = view.status()["inventory"]
        if need <= 0:
            return None
        best: dict[str, tuple[int, str]] = {}  # ware -> (price, buyer)
        for buyer, spec in self.content.npcs.items():
            for ware, price in (spec.shop.buys if spec.shop else {}).items():
                if ware in self.node_items and ware != item and price > best.get(ware, (0, ""))[0]:
                    best[ware] = (price, buyer)
        held = sum(best[w][0] * inv.get(w, 0) for w in best)
        if held >= need:
            ware = max((w for w in best if inv.get(w)), key=lambda w: (best[w][0] * inv[w], w))
            buyer = best[ware][1]
            at = self.villager(view, buyer)
            if at is not True:
                return at or self.explore_here(view)
            args = {"npc": buyer, "item": ware, "qty": inv[ware]}
            return ("sell", args) if view.refusal("sell", args) is None else ("rest", {"ticks": 20})
        tools = set(inv)

        def rate(ware: str) -> tuple[float, str]:
            per = 0.0
            for name, n in self.content.nodes.items():
                if n.item != ware or (n.requires_tool and n.requires_tool not in tools):
                    continue
                bonus = max((self.content.items[t].tool.yield_bonus.get(name, 0) for t in tools
                             if self.content.items[t].tool), default=0)
                per = max(per, (n.base_yield + bonus) * min(1.0, n.density * 10))
            return best[ware][0] * per, ware

        wares = sorted(best, key=rate, reverse=True)
        return self.gather(view, next((w for w in wares if self.seen(view, w)), wares[0]))  # a ware whose nodes it knows

    def build(self, view: AgentView, structure: str) -> Decision:
        for item, qty in self.content.structures[structure].build.materials.items():
            got = self.carrying(view, item, qty)
            if got:
                return got
        return self.nearby(view, "build", {"structure": structure})

    def dungeon(self, view: AgentView, p: dict[str, Any]) -> Decision:
        """Armed and armoured, to the entrance and into the tier; inside, the expedition's fight."""
        obs = view.observation()
        self.observe_bounds(obs)
        if (obs.get("dungeon") or {}).get("in_dungeon"):
            bosses = {t.boss for t in self.content.dungeon.tiers.values()}
            self.hunting = p["enemy"] if p.get("enemy") not in (None, *bosses) else None
            return self.fight(view, obs)
        me = obs["self"]
        weapons = [k for k, i in self.content.items.items() if i.tool and i.tool.damage]
        if not any(me["inventory"].get(k) or me["equipment"].get("hand") == k for k in weapons):
            makeable = [k for k, r in self.content.recipes.items() if any(o in weapons for o in r.outputs)
                        and self.effort(view, next(iter(r.outputs))) is not None]
            if makeable:
                return self.make(view, min(makeable, key=lambda k: (self.effort(view, next(iter(self.content.recipes[k].outputs))), k)))
        for item in me["inventory"]:
            tool = self.content.items[item].tool
            slot = tool.slot if tool else None
            if slot and me["equipment"].get(slot) is None and view.refusal("equip", {"item": item}) is None:
                return "equip", {"item": item}
        tier = p.get("tier") or next(t.level for t in self.content.dungeon.tiers.values()
                                     if p["enemy"] in (*t.enemies, t.boss))
        here = (me["x"], me["y"])
        known = self.known(obs)
        entrance = next(iter(known.find(here, lambda t: t["terrain"] == "dungeon_entrance")), None)
        if entrance is None:
            return self.seek(view, known, here)
        if view.refusal("enter_dungeon", {"tier": tier}) is None:
            return "enter_dungeon", {"tier": tier}
        return self.walk(known, here, entrance) or self.seek(view, known, here)

    def seek(self, view: AgentView, known: Any, here: tuple[int, int]) -> Decision:
        """Into each corner of the map not yet seen, the nearest first, then outward: the entrance lies as far from
        the settlement as the land allows (in a corner, mostly), and the corners lie in several regions."""
        width, height = self._bounds
        corners = [] if width >= 10**9 else [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)]
        for corner in sorted((c for c in corners if c not in known.tiles and c not in self.cut_off),
                             key=lambda c: (_cheb(c, here), c)):
            step = self.walk(known, here, corner)
            if step is not None:
                return step
            self.cut_off.add(corner)
        return super().seek(view, known, here)

    def fight(self, view: AgentView, obs: dict[str, Any]) -> Decision:
        """The expedition's fight, but a rest in a cleared room lasts until the energy it waits for is back: one
        turn, not one per 20 minutes (turns are few); and hunting an ordinary enemy, after its first instance it
        walks out of a room that holds none of its kind (its next entry draws fresh rooms) rather than fight it."""
        dungeon, enemies = obs["dungeon"], obs["dungeon"]["room"]["enemies"]
        self.instances.add(dungeon["instance"])
        if (self.hunting and len(self.instances) > 1 and enemies and all(e["kind"] != self.hunting for e in enemies)
                and not any(e["next"]["damage"] for e in enemies)):
            return "leave_dungeon", {}
        decision = super().fight(view, obs)
        if decision is None or decision[0] != "rest" or obs["dungeon"]["room"]["enemies"]:
            return decision
        energy, needs = obs["self"]["energy"], self.content.needs
        goal = 90 if energy >= 60 else 60  # before the altar or the king it waits for 90, else for 60
        ticks = (goal - energy) * needs.rest_energy_every
        return "rest", {"ticks": min(needs.max_sleep_ticks, max(decision[1]["ticks"], ticks))}

    def make(self, view: AgentView, recipe_name: str) -> Decision:
        """Gather, harvest, buy or make what the recipe lacks, then make it at its station: putting down a
        carried one when none is within reach."""
        recipe = self.content.recipes[recipe_name]
        inv = view.status()["inventory"]
        for item, qty in recipe.inputs.items():
            if inv.get(item, 0) >= qty:
                continue
            if item in self.produce and self.ripe(view, self.produce[item]):
                return self.to_crop(view, self.produce[item])
            bought = self.buy_from(view, item)
            if bought:
                return bought
            if item not in self.node_items and any(item in r.outputs and r.kind == "craft" for r in self.content.recipes.values()):
                return self.make(view, self.recipe_for(view, item, "craft"))
            if item not in self.node_items:
                return None
            return self.with_tool_for(view, item) or self.forage(view, item)
        action = "cook" if recipe.kind == "cook" else "craft"
        if recipe.station is None:
            return action, {"recipe": recipe_name}
        at = self.station(view, recipe.station)
        if at is True:
            return action, {"recipe": recipe_name}
        carried = next((k for k, i in self.content.items.items() if i.places == recipe.station and inv.get(k)), None)
        if carried is not None:
            return self.nearby(view, "place", {"item": carried})
        return at

    def survive(self, view: AgentView) -> Decision:
        """Eat, shelter at dusk (putting down a carried shelter, made first from carried materials), keep food
        in the pack, rest (long: turns are few)."""
        me = view.status()
        for item in me["inventory"]:
            places = self.content.items[item].places
            if places and self.content.structures[places].shelter:
                return self.nearby(view, "place", {"item": item})
        for name, r in self.content.recipes.items():
            out = self.content.items[next(iter(r.outputs))]
            if (r.station is None and out.places and self.content.structures[out.places].shelter
                    and all(me["inventory"].get(i, 0) >= q for i, q in r.inputs.items())):
                return "craft", {"recipe": name}
        decision = Survivor.decide(self, view)
        return ("rest", {"ticks": 60}) if decision and decision[0] == "rest" else decision

    def recipe_for(self, view: AgentView, item: str, via: str) -> str:
        """The recipe for `item`: one whose inputs it carries, else one whose inputs the land yields, else the first."""
        inv = view.status()["inventory"]
        ways = [k for k, r in self.content.recipes.items() if item in r.outputs and r.kind == via]

        def rank(name: str) -> tuple[bool, bool]:
            inputs = self.content.recipes[name].inputs
            return (any(inv.get(i, 0) < q for i, q in inputs.items()),
                    any(i not in self.node_items and i not in self.content.recipes for i in inputs))

        return min(ways, key=rank)

    def explore_here(self, view: AgentView) -> Decision:
        obs = view.observation()
        me = obs["self"]
        return self.explore(view, self.known(obs), (me["x"], me["y"]))

    def nearby(self, view: AgentView, action: str, args: dict[str, Any]) -> Decision:
        """The action on the first tile around the character that the world would accept it on; else move on."""
        me = view.status()
        for dx, dy in _AROUND:
            full = {**args, "x": me["x"] + dx, "y": me["y"] + dy}
            if view.refusal(action, full) is None:
                return action, full
        return self.explore_here(view)

    def at_crop(self, view: AgentView, action: str) -> Decision:
        """The action on a crop in view that takes it, walking beside the nearest crop when none in reach does;
        with no crop in view, back to the nearest one it remembers (it may have walked off to gather)."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        crops = sorted(((p["x"], p["y"]) for p in obs.get("farming", {}).get("plots", []) if p.get("crop")),
                       key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))
        for x, y in crops:
            if view.refusal(action, {"x": x, "y": y}) is None:
                return action, {"x": x, "y": y}
        remembered = sorted((xy for xy, crop in self.plots.items() if crop), key=lambda xy: (_cheb(xy, here), xy))
        if crops or remembered:
            return self.go(self.known(obs), here, (crops or remembered)[0], view) or self.explore_here(view)
        return self.explore_here(view)

    def farm(self, view: AgentView, crop: str) -> Decision:
        """Water what is planted and dry (the can in hand), plant where a tilled plot allows it, till where it does
        not (the hoe in hand)."""
        obs = view.observation()
        me = obs["self"]
        seed = self.content.crops[crop].seed
        can, hoe = self.content.farming.water_tool, self.content.farming.till_tool
        around = [{"x": me["x"] + dx, "y": me["y"] + dy} for dx, dy in _AROUND]
        if can in me["inventory"] or me["equipment"].get("hand") == can:
            for xy in around:
                if view.refusal("water", xy) is None:
                    return "water", xy
            dry = [q for q in obs.get("farming", {}).get("plots", []) if q.get("crop") == crop and not q.get("watered_today")
                   and max(abs(q["x"] - me["x"]), abs(q["y"] - me["y"])) <= 1]
            if dry and me["equipment"].get("hand") != can:
                return "equip", {"item": can}
        for xy in around:
            if me["inventory"].get(seed) and view.refusal("plant", {**xy, "seed": seed}) is None:
                return "plant", {**xy, "seed": seed}
        for xy in around:
            if view.refusal("till", xy) is None:
                return "till", xy
        if me["equipment"].get("hand") != hoe and hoe in me["inventory"]:
            return "equip", {"item": hoe}
        return self.to_soil(view)

    def to_soil(self, view: AgentView) -> Decision:
        """Walk beside the nearest known soil tile a plot could take; with none known, search outward from where it began."""
        obs = view.observation()
        self.observe_bounds(obs)
        me = obs["self"]
        here, known = (me["x"], me["y"]), self.known(obs)
        plots = {(q["x"], q["y"]) for q in obs.get("farming", {}).get("plots", [])}
        dist = self.reachable(known, here)
        free = [xy for soil in self.content.farming.soil for xy in known.on(soil)
                if xy in dist and xy not in plots and not {"node", "structure"} & set(known.tiles[xy])]
        if free:
            return self.go(known, here, min(free, key=lambda xy: (dist[xy], xy)), view) or self.explore(view, known, here)
        return self.frontier(known, here, self.origin or here, None, outward=True) or self.explore(view, known, here)
