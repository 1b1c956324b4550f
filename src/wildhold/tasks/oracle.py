"""The oracle: a policy told only its task's goal (what the description says, as the evaluator's
parameters) that sees what any agent sees, its view, and reuses the expedition's skills to reach it.
It proves a task can be done within its limits."""

from __future__ import annotations

from typing import Any

from wildhold.agents.base import AgentView, Decision
from wildhold.agents.scripted import Expedition
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
        if g == "settle":
            return self.nearby(view, "settle_animal", {"item": self.content.animals[p["animal"]].item})
        if g == "place":
            item = next(k for k, i in self.content.items.items() if i.places == p["structure"])
            return self.nearby(view, "place", {"item": item})
        if g in ("talk", "gift", "buy", "sell"):
            npc = p.get("npc")
            at = self.villager(view, npc)
            if at is not True:
                return at or self.explore_here(view)
            args = {"npc": npc} if g == "talk" else {"npc": npc, "item": p["item"]}
            return g, args
        return None

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
