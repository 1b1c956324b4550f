"""Helpers for the program tests: a served match without faces, stepping it, reading what it recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import orjson
from server_support import config

from wildhold.content import Content, default_content
from wildhold.service.errors import HostError
from wildhold.service.host import Host

# A farmer that greets its log once, then waits tick by tick and logs every 20th: one line a tick would
# fill the log's 200 lines within 2 s of a realtime test on a loaded machine and drop the greeting.
FARMER_1 = 'log("farmer rev 1 up")\nfor i in range(10000):\n    r = wait(ticks=1)\n    if i % 20 == 0:\n        log("tick", now(), r["status"])\n'
FARMER_2 = 'log("farmer rev 2 up")\nfor i in range(10000):\n    wait(ticks=2)\n'


def open_host(data: Path, scenario: str = "tiny", seed: int = 3, content: Content | None = None, **overrides: Any) -> Host:
    """A served match for program tests. The wall-clock limits are a safety net, not a budget: unless a test
    passes its own content, they get room (8x) so that a loaded machine does not trip them mid-test."""
    return Host.open(data, config(**overrides), scenario, seed, content=content or ROOMY)


def with_programs(**changes: Any) -> Content:
    """The shipped content with other program limits (same digest: for tests that never replay from files)."""
    c = default_content()
    return c.model_copy(update={"programs": c.programs.model_copy(update=changes)})


ROOMY = with_programs(call_wall_s=8 * default_content().programs.call_wall_s, turn_wall_s=8 * default_content().programs.turn_wall_s)


def join(host: Host, name: str) -> str:
    """Register an agent; its character id."""
    _, rec = host.register(name)
    assert rec.agent is not None
    return rec.agent


def steps(host: Host, n: int) -> None:
    for _ in range(n):
        host.clock.step()


def step_until(host: Host, done: Callable[[], bool], limit: int) -> int:
    """Step until `done()` holds (checked before each step); the ticks stepped. Fails past `limit` ticks."""
    for n in range(limit + 1):
        if done():
            return n
        host.clock.step()
    raise AssertionError(f"not done after {limit} ticks")


def state(host: Host, agent: str, name: str) -> str:
    return host.programs.status(agent, name)["state"]


def events(host: Host, kind: str | None = None) -> list[dict[str, Any]]:
    """Every stored event (the whole payload), optionally of one kind."""
    host.match.flush()
    out = [orjson.loads(payload) for _, _, k, payload, _ in host.match.store.events(0) if kind is None or k == kind]
    return out


def inputs(host: Host, kind: str | None = None) -> list[Any]:
    return [i for i in host.match.store.inputs(0) if kind is None or i.kind == kind]


def code_of(fn: Callable[[], Any]) -> str:
    try:
        fn()
    except HostError as exc:
        return exc.code
    raise AssertionError("no HostError raised")


def log_texts(host: Host, agent: str, name: str) -> list[str]:
    return [line["text"] for line in host.programs.logs(agent, name, limit=10_000)["lines"]]


# ---- a farmer that works a field for days, its agent silent ----------------------------------------

FARM_SCENARIO, FARM_SEED = "season", 1
FARM_KIT = {"hoe": 1, "watering_can": 1, "turnip_seed": 1, "bread": 12}
FARM = '''
PX, PY = {px}, {py}

def plot():
    for p in observe()["farming"]["plots"]:
        if p["x"] == PX and p["y"] == PY:
            return p
    return None

def need(r, what):
    if not r["ok"]:
        log(what, "failed:", r["code"], r["message"])
    return r["ok"]

def keep_going():
    me = observe()["self"]
    if me["satiety"] < 55 and me["inventory"].get("bread", 0) > 0:
        need(eat(item="bread"), "eat")
    if me["energy"] < 60:
        need(rest(ticks=240), "rest")

need(equip(item="hoe"), "equip hoe")
need(till(x=PX, y=PY), "till")
need(plant(x=PX, y=PY, seed="turnip_seed"), "plant")
need(equip(item="watering_can"), "equip can")
while True:
    keep_going()
    p = plot()
    if p is None:
        log("the plot is gone")
        break
    if p["mature"]:
        r = harvest(x=PX, y=PY)
        log("harvested", r["ok"], r["result"])
        break
    if not p["watered_today"]:
        r = water(x=PX, y=PY)
        log("day", now() // 1440 + 1, "watered", r["ok"], r["code"])
    sleep_until(now() + 480)
'''


def farm_site(w) -> tuple[tuple[int, int], tuple[int, int]]:
    """A free settlement tile (sheltered at night) beside empty soil: where the farmer stands, and its plot."""
    safe = {i for i, name in enumerate(w.terrain_names) if name == "settlement"}
    soil = {i for i, name in enumerate(w.terrain_names) if name in w.content.farming.soil}
    for p in range(w.width * w.height):
        if w.terrain[p] not in safe or p in w.structures or p in w.occupants:
            continue
        x, y = w.xy(p)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            q = w.pos(x + dx, y + dy)
            if q is not None and w.terrain[q] in soil and q not in w.nodes and q not in w.structures and q not in w.occupants:
                return (x, y), (x + dx, y + dy)
    raise AssertionError("no settlement tile beside free soil")


def start_farm(host: Host) -> str:
    """The operator places a farmer with its kit; the farmer saves and starts the program, then stays silent."""
    agent = join(host, "farmer")
    (sx, sy), (px, py) = farm_site(host.world)
    host.setup("move_character", {"agent": agent, "x": sx, "y": sy})
    for item, qty in FARM_KIT.items():
        host.setup("give_items", {"agent": agent, "item": item, "qty": qty})
    host.programs.save(agent, "farm", FARM.format(px=px, py=py))
    host.programs.start(agent, "farm")
    return agent


def farm_until(host: Host, data: Path, restart_at: tuple[int, ...] = (), limit: int = 8000) -> Host:
    """Step a farm match until its program ends, closing and reopening the host at the given ticks; the host."""
    agent = "a1"
    for _ in range(limit):
        if state(host, agent, "farm") not in ("running", "waiting"):
            return host
        if host.world.tick in restart_at:
            host.close()
            host = open_host(data, FARM_SCENARIO, FARM_SEED)
        host.clock.step()
    raise AssertionError(f"the farm program was still running after {limit} ticks")
