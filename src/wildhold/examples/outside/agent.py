"""A small outside agent for Wildhold's task suite: plain Python over the official MCP SDK, no Wildhold import.

It reads what `wildhold tasks run --agent-cmd` puts in its environment (WILDHOLD_MCP_URL, WILDHOLD_TOKEN,
WILDHOLD_OBJECTIVE), reads its objective, looks at the world with `observe` (and the rules where it must know
which node yields what), acts, waits for each operation, and exits when it has done what it can. It knows a
handful of easy task shapes: craft or cook a recipe, put a carried item down, harvest a ripe crop beside it, and
gather an item from the land. Any other objective it says it cannot do, and exits.

    wildhold tasks run --suite crafting/craft-bed-v1,exploration/gather-stone-v1 \\
        --agent-cmd 'python examples/outside/agent.py' --harness example --repeats 1 --out runs/outside
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REACH = [(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)]


class ToolError(Exception):
    """A tool call the server refused: its text starts with the error code."""


class World:
    """The character's tools, over one MCP session."""

    def __init__(self, client: Client):
        self.client = client

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        result = await self.client.call_tool(name, args or {})
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            raise ToolError(text)
        return result.structured_content if result.structured_content is not None else json.loads(text or "null")

    async def observe(self) -> dict[str, Any]:
        return await self.call("observe", {"memory": "none"})

    async def act(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Submit an action and wait until its operation ends; the operation as it ended."""
        op = await self.call(name, args)
        print(f"{name} {json.dumps(args)} -> {op.get('status')}", flush=True)
        while op.get("status") == "running":
            op = await self.call("wait_operation", {"op": op["op"], "timeout_s": 10.0})
        if op.get("status") != "completed":
            print(f"  {op.get('error') or op}", flush=True)
        return op


def near(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) <= 1


def here(obs: dict[str, Any]) -> tuple[int, int]:
    return obs["self"]["x"], obs["self"]["y"]


async def open_tiles(world: World, obs: dict[str, Any]) -> set[tuple[int, int]]:
    """The tiles in view a character could stand on: walkable terrain (the rules say which) with nothing on it."""
    terrain = (await world.call("rules", {"section": "terrain"}))["value"]
    view = obs["view"]
    taken = {(t["x"], t["y"]) for t in view["tiles"] if "node" in t or "structure" in t}
    taken |= {(c["x"], c["y"]) for c in view["characters"]}
    tiles = set()
    for dy, row in enumerate(view["rows"]):
        for dx, glyph in enumerate(row):
            xy = (view["x0"] + dx, view["y0"] + dy)
            if terrain[obs["legend"][glyph]]["walkable"] and xy not in taken:
                tiles.add(xy)
    return tiles


async def make(world: World, action: str, recipe: str) -> None:
    await world.act(action, {"recipe": recipe})


async def put_down(world: World, item: str) -> None:
    obs = await world.observe()
    me = here(obs)
    for spot in sorted(await open_tiles(world, obs), key=lambda xy: (abs(xy[0] - me[0]) + abs(xy[1] - me[1]), xy)):
        if near(spot, me) and spot != me:
            await world.act("place", {"item": item, "x": spot[0], "y": spot[1]})
            return
    print(f"no free tile beside me to put the {item} on", flush=True)


async def harvest(world: World, crop: str) -> None:
    obs = await world.observe()
    for plot in obs["farming"]["plots"]:
        if plot["crop"] == crop and plot["mature"]:
            if not near(here(obs), (plot["x"], plot["y"])):
                await walk_beside(world, obs, (plot["x"], plot["y"]))
            await world.act("harvest", {"x": plot["x"], "y": plot["y"]})
            return
    print(f"no ripe {crop} in sight", flush=True)


async def walk_beside(world: World, obs: dict[str, Any], target: tuple[int, int]) -> None:
    """Walk to the open tile beside `target` nearest the character."""
    me = here(obs)
    spots = [xy for xy in await open_tiles(world, obs) if near(xy, target)]
    if spots:
        goal = min(spots, key=lambda xy: (max(abs(xy[0] - me[0]), abs(xy[1] - me[1])), xy))
        await world.act("move_to", {"x": goal[0], "y": goal[1]})


async def gather(world: World, qty: int, item: str, tool: str | None) -> None:
    """Gather `qty` of `item`: the nodes that yield it are read from the rules, the nearest in view worked first."""
    nodes = (await world.call("rules", {"section": "nodes"}))["value"]
    kinds = {kind for kind, node in nodes.items() if node["item"] == item and node["requires_tool"] in (None, tool)}
    if tool:
        await world.act("equip", {"item": tool})
    start = (await world.observe())["self"]["inventory"].get(item, 0)
    for _ in range(4 * qty):
        obs = await world.observe()
        if obs["self"]["inventory"].get(item, 0) - start >= qty:
            return
        me = here(obs)
        found = sorted(((t["x"], t["y"]) for t in obs["view"]["tiles"]
                        if (t.get("node") or {}).get("kind") in kinds and t["node"]["amount"] > 0),
                       key=lambda xy: (max(abs(xy[0] - me[0]), abs(xy[1] - me[1])), xy))
        if not found:
            print(f"no node yielding {item} in sight", flush=True)
            return
        if not near(me, found[0]):
            await walk_beside(world, obs, found[0])
            continue
        await world.act("gather", {"x": found[0][0], "y": found[0][1]})


async def play(world: World, objective: str) -> None:
    """Read the objective, then do it."""
    if m := re.match(r"(Craft|Cook) (?:an? )?(\w+)", objective):
        await make(world, m.group(1).lower(), m.group(2))
    elif m := re.match(r"Put the (\w+) you carry on the ground", objective):
        await put_down(world, m.group(1))
    elif m := re.match(r"Harvest the ripe (\w+)", objective):
        await harvest(world, m.group(1))
    elif m := re.match(r"Gather (\d+) (\w+) from the land(?:; you carry an? (\w+))?", objective):
        await gather(world, int(m.group(1)), m.group(2), m.group(3))
    else:
        print(f"I do not know how to do this: {objective}", flush=True)


async def main() -> None:
    url, token, objective = (os.environ[k] for k in ("WILDHOLD_MCP_URL", "WILDHOLD_TOKEN", "WILDHOLD_OBJECTIVE"))
    print(f"objective: {objective}", flush=True)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60.0, trust_env=False) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            try:
                await play(World(client), objective)
            except ToolError as exc:
                print(f"refused: {exc}", flush=True)
                sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
