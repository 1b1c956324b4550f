"""The oracle: a policy told only its task's goal (what the description says, as the evaluator's
parameters) that sees what any agent sees, its view, and reuses the expedition's skills to reach it.
It proves a task can be done within its limits."""

from __future__ import annotations

from typing import Any

from wildhold.agents.base import AgentView, Decision
from wildhold.agents.scripted import Expedition, Survivor
from wildhold.content import Content

_AROUND = ((0, 1), (1, 0), (-1, 0), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


class Oracle(Expedition):
    name = "oracle"

    def __init__(self, content: Content, evaluator: str, params: dict[str, Any]):
        super().__init__(content)
        self.goal, self.params = evaluator, params

    def decide(self, view: AgentView) -> Decision:
        p = self.params
        g = self.goal
        if g == "obtain":
            if p.get("via") in ("craft", "cook"):
                return self.make(view, self.recipe_for(view, p["item"], p["via"])) or self.explore_here(view)
            return self.with_tool_for(view, p["item"]) or self.forage(view, p["item"])
        if g == "plant":
            return self.farm(view, p["crop"])
        if g == "water":
            return self.in_hand(view, self.content.farming.water_tool) or self.at_crop(view, "water")
        if g == "harvest":
            return self.at_crop(view, "harvest")
        if g == "fertilise":
            return self.carrying(view, self.content.farming.fertilizer) or self.at_crop(view, "fertilise")
        if g == "settle":
            return self.nearby(view, "settle_animal", {"item": self.content.animals[p["animal"]].item})
        if g == "feed":
            animal = self.content.animals[p["animal"]]
            if view.status()["inventory"].get(animal.item):
                return self.nearby(view, "settle_animal", {"item": animal.item})
            return self.carrying(view, animal.feed, animal.feed_qty) or self.nearby(view, "feed", {})
        if g in ("enter_dungeon", "clear_tier", "defeat"):
            return self.dungeon(view, p)
        if g == "survive":
            return self.survive(view)
        if g == "visit":
            return self.explore_here(view)
        if g == "place" and p["structure"] in self.buildable:
            return self.build(view, p["structure"])
        if g == "place":
            item = next(k for k, i in self.content.items.items() if i.places == p["structure"])
            return self.nearby(view, "place", {"item": item})
        if g in ("gift", "sell"):
            got = self.carrying(view, p["item"])
            if got:
                return got
        if g == "buy":
            got = self.coins_for(view, p["npc"], p["item"])
            if got:
                return got
        if g in ("talk", "gift", "buy", "sell", "befriend"):
            npc = p.get("npc")
            at = self.villager(view, npc)
            if at is not True:
                return at or self.explore_here(view)
            if g == "befriend":
                return self.befriend(view, npc)
            args = {"npc": npc} if g == "talk" else {"npc": npc, "item": p["item"]}
            return g, args
        return None

    @property
    def buildable(self) -> set[str]:
        return {k for k, s in self.content.structures.items() if s.build and not any(
            i.places == k for i in self.content.items.values())}

    def carrying(self, view: AgentView, item: str, qty: int = 1) -> Decision:
        """None when `qty` of `item` are carried, else the way to get them: gather, or craft or cook from what the land gives."""
        if view.status()["inventory"].get(item, 0) >= qty:
            return None
        for via in ("craft", "cook"):
            if any(item in r.outputs and r.kind == via for r in self.content.recipes.values()) and item not in self.node_items:
                return self.make(view, self.recipe_for(view, item, via)) or self.explore_here(view)
        return self.with_tool_for(view, item) or self.forage(view, item)

    def in_hand(self, view: AgentView, tool: str) -> Decision:
        return None if view.status()["equipment"].get("hand") == tool else ("equip", {"item": tool})

    def befriend(self, view: AgentView, npc: str) -> Decision:
        """A talk, then the gift the villager thinks best of among what is carried."""
        f = view.observation().get("friendship", {}).get(npc) or {}
        if not f.get("talked_today"):
            return "talk", {"npc": npc}
        spec, inv = self.content.npcs[npc], view.status()["inventory"]
        for group in (spec.loves, spec.likes):
            item = next((i for i in group if inv.get(i)), None)
            if item:
                return "gift", {"npc": npc, "item": item}
        return "rest", {"ticks": 30}

    def coins_for(self, view: AgentView, npc: str, item: str) -> Decision:
        """None when the coins for `item` are carried, else selling what the land gives to whoever buys it dearest."""
        coin = self.content.economy.coin
        inv = view.status()["inventory"]
        if inv.get(coin, 0) >= self.content.npcs[npc].shop.sells[item]:
            return None
        offers = [(price, buyer, ware) for buyer, spec in self.content.npcs.items() if spec.shop
                  for ware, price in spec.shop.buys.items() if ware in self.node_items]
        held = [o for o in offers if inv.get(o[2])]
        price, buyer, ware = max(held or offers)
        if not held:
            return self.carrying(view, ware)
        at = self.villager(view, buyer)
        return ("sell", {"npc": buyer, "item": ware}) if at is True else at or self.explore_here(view)

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
            return self.fight(view, obs)
        me = obs["self"]
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

    def survive(self, view: AgentView) -> Decision:
        """Eat, shelter at dusk (putting down a carried shelter), keep food in the pack, rest (long: turns are few)."""
        me = view.status()
        for item in me["inventory"]:
            places = self.content.items[item].places
            if places and self.content.structures[places].shelter:
                return self.nearby(view, "place", {"item": item})
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
        """The action on a crop in view that takes it, walking beside the nearest crop when none in reach does."""
        obs = view.observation()
        me = obs["self"]
        here = (me["x"], me["y"])
        crops = sorted(((p["x"], p["y"]) for p in obs.get("farming", {}).get("plots", []) if p.get("crop")),
                       key=lambda xy: (max(abs(xy[0] - here[0]), abs(xy[1] - here[1])), xy))
        for x, y in crops:
            if view.refusal(action, {"x": x, "y": y}) is None:
                return action, {"x": x, "y": y}
        if crops:
            return self.go(self.known(obs), here, crops[0], view) or self.explore_here(view)
        return self.explore_here(view)

    def farm(self, view: AgentView, crop: str) -> Decision:
        """Plant where a tilled plot allows it, water what is planted, till where it does not; the hoe in hand to till."""
        me = view.status()
        seed = self.content.crops[crop].seed
        can = self.content.farming.water_tool
        for dx, dy in _AROUND:
            xy = {"x": me["x"] + dx, "y": me["y"] + dy}
            if can in me["inventory"] and view.refusal("water", xy) is None:
                return "water", xy
            if me["inventory"].get(seed) and view.refusal("plant", {**xy, "seed": seed}) is None:
                return "plant", {**xy, "seed": seed}
        tool = self.content.farming.till_tool
        for dx, dy in _AROUND:
            xy = {"x": me["x"] + dx, "y": me["y"] + dy}
            if view.refusal("till", xy) is None:
                return "till", xy
        if me["equipment"].get("hand") != tool and tool in me["inventory"]:
            return "equip", {"item": tool}
        return self.explore_here(view)
