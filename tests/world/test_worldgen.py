"""World generation over arrays makes, bit for bit, the map its tile-by-tile definition makes: the definition is
written out below as the plain loops it is (value noise, terrain thresholds, the settlement nearest the centre, the
dungeon on the farthest walkable tile, regions by the nearest seed, one node draw per candidate), and the two are
compared over scenarios, seeds and map shapes, odd ones included."""

from __future__ import annotations

import random
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from wildhold.content import default_content
from wildhold.world import worldgen
from wildhold.world.state import Node, Structure
from wildhold.world.worldgen import FOREST_MOISTURE, HILLS_ABOVE, SAND_BELOW, WATER_BELOW, stream

CONTENT = default_content()


def _noise(rng: random.Random, w: int, h: int, cell: int) -> list[float]:
    gw, gh = w // cell + 2, h // cell + 2
    lattice = [[rng.random() for _ in range(gw)] for _ in range(gh)]
    out = [0.0] * (w * h)
    inv = 1.0 / cell
    for y in range(h):
        gy, fy = divmod(y * inv, 1.0)
        sy = fy * fy * (3 - 2 * fy)
        row0, row1 = lattice[int(gy)], lattice[int(gy) + 1]
        for x in range(w):
            gx, fx = divmod(x * inv, 1.0)
            gx = int(gx)
            sx = fx * fx * (3 - 2 * fx)
            top = row0[gx] + (row0[gx + 1] - row0[gx]) * sx
            bottom = row1[gx] + (row1[gx + 1] - row1[gx]) * sx
            out[y * w + x] = top + (bottom - top) * sy
    return out


def _layered(rng: random.Random, w: int, h: int) -> list[float]:
    coarse, fine = _noise(rng, w, h, 14), _noise(rng, w, h, 5)
    return [0.75 * a + 0.25 * b for a, b in zip(coarse, fine)]


def _steps(start: int, walkable: list[bool], w: int, h: int) -> dict[int, int]:
    dist, queue = {start: 0}, deque([start])
    while queue:
        p = queue.popleft()
        x, y = p % w, p // w
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            q = ny * w + nx
            if 0 <= nx < w and 0 <= ny < h and walkable[q] and q not in dist:
                dist[q] = dist[p] + 1
                queue.append(q)
    return dist


def defined(content, scenario: str, seed: int) -> dict:
    """The map as the tile-by-tile definition makes it."""
    sc = content.scenario(scenario)
    w, h, r = sc.width, sc.height, sc.settlement.radius
    rng = stream(seed, scenario, "worldgen")
    names = list(content.terrain)
    tid = {name: i for i, name in enumerate(names)}
    elevation, moisture = _layered(rng, w, h), _layered(rng, w, h)
    terrain = bytearray(w * h)
    for p in range(w * h):
        e = elevation[p]
        kind = ("water" if e < WATER_BELOW else "sand" if e < SAND_BELOW else "hills" if e > HILLS_ABOVE
                else "forest" if moisture[p] > FOREST_MOISTURE else "meadow")
        terrain[p] = tid[kind]
    cx, cy = w // 2, h // 2
    centre = min((p for p in range(w * h) if terrain[p] != tid["water"] and r <= p % w < w - r and r <= p // w < h - r),
                 key=lambda p: (abs(p % w - cx) + abs(p // w - cy), p), default=cy * w + cx)
    for y in range(centre // w - r, centre // w + r + 1):
        for x in range(centre % w - r, centre % w + r + 1):
            terrain[y * w + x] = tid["settlement"]
    dist = _steps(centre, [content.terrain[names[t]].walkable for t in terrain], w, h)
    far = max(dist.values())
    candidates = sorted(p for p, d in dist.items() if d == far)
    dungeon = candidates[rng.randrange(len(candidates))]
    terrain[dungeon] = tid["dungeon_entrance"]
    seeds = [(rng.randrange(w), rng.randrange(h)) for _ in range(sc.regions)]
    combos = [f"{a} {b}" for a in content.regions.first for b in content.regions.second if a != b]
    region_names = rng.sample(combos, sc.regions)
    region = bytearray(min(range(sc.regions), key=lambda i: (abs(seeds[i][0] - p % w) + abs(seeds[i][1] - p // w), i))
                       for p in range(w * h))
    structures = {(centre // w - r) * w + centre % w - r + 1 + 2 * i: Structure(kind, None, content.structures[kind].hp)
                  for i, kind in enumerate(sc.settlement.stations)}
    nodes = {}
    for p in range(w * h):
        if p in structures or p == dungeon:
            continue
        for node, spec in content.nodes.items():
            if names[terrain[p]] in spec.terrain:
                if rng.random() < spec.density * sc.node_density_scale:
                    nodes[p] = Node(node, spec.capacity)
                    break
    return {"terrain": terrain, "region": region, "region_names": region_names, "settlement": centre,
            "dungeon": dungeon, "structures": structures, "nodes": nodes}


def made(content, scenario: str, seed: int) -> dict:
    m = worldgen.generate(content, scenario, seed)
    return {"terrain": m.terrain, "region": m.region, "region_names": m.region_names, "settlement": m.settlement,
            "dungeon": m.dungeon, "structures": m.structures, "nodes": m.nodes}


def test_every_scenario_s_map_is_its_definition_s():
    for scenario in CONTENT.scenarios:
        for seed in (0, 1, 7):
            assert made(CONTENT, scenario, seed) == defined(CONTENT, scenario, seed), (scenario, seed)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), width=st.integers(12, 70), height=st.integers(12, 70),
       base=st.sampled_from(sorted(CONTENT.scenarios)))
def test_a_map_of_any_shape_and_seed_is_its_definition_s(seed, width, height, base):
    sc = CONTENT.scenario(base)
    radius = min(sc.settlement.radius, (min(width, height) - 3) // 2)
    stations = sc.settlement.stations[:max(0, radius)]
    shaped = sc.model_copy(update={"width": width, "height": height,
                                   "settlement": sc.settlement.model_copy(update={"radius": radius, "stations": stations})})
    content = CONTENT.model_copy(update={"scenarios": {**CONTENT.scenarios, "shaped": shaped}})
    assert made(content, "shaped", seed) == defined(content, "shaped", seed)
