"""World generation: a pure function of (seed, scenario, content) to the starting map."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from wildhold.content import Content
from wildhold.content.models import ScenarioSpec
from wildhold.world.state import Node, Structure

WATER_BELOW, SAND_BELOW, HILLS_ABOVE, FOREST_MOISTURE = 0.30, 0.35, 0.66, 0.52


@dataclass(slots=True)
class GeneratedMap:
    width: int
    height: int
    terrain_names: list[str]
    terrain: bytearray
    region_names: list[str]
    region: bytearray
    nodes: dict[int, Node]
    structures: dict[int, Structure]
    settlement: int
    spawns: list[int]
    dungeon: int


def stream(seed: int, scenario: str, name: str) -> random.Random:
    """A named, independent RNG stream of a world."""
    return random.Random(f"wildhold:{seed}:{scenario}:{name}")


def _noise(rng: random.Random, w: int, h: int, cell: int) -> list[float]:
    """Smooth value noise in [0, 1): random lattice values blended with a smoothstep."""
    gw, gh = w // cell + 2, h // cell + 2
    lattice = [[rng.random() for _ in range(gw)] for _ in range(gh)]
    out = [0.0] * (w * h)
    inv = 1.0 / cell
    for y in range(h):
        gy, fy = divmod(y * inv, 1.0)
        gy = int(gy)
        sy = fy * fy * (3 - 2 * fy)
        row0, row1 = lattice[gy], lattice[gy + 1]
        base = y * w
        for x in range(w):
            gx, fx = divmod(x * inv, 1.0)
            gx = int(gx)
            sx = fx * fx * (3 - 2 * fx)
            top = row0[gx] + (row0[gx + 1] - row0[gx]) * sx
            bottom = row1[gx] + (row1[gx + 1] - row1[gx]) * sx
            out[base + x] = top + (bottom - top) * sy
    return out


def _layered(rng: random.Random, w: int, h: int) -> list[float]:
    coarse, fine = _noise(rng, w, h, 14), _noise(rng, w, h, 5)
    return [0.75 * a + 0.25 * b for a, b in zip(coarse, fine)]


def _bfs_distances(start: int, walkable: list[bool], w: int, h: int) -> dict[int, int]:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        p = queue.popleft()
        x, y = p % w, p // w
        d = dist[p] + 1
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < w and 0 <= ny < h:
                q = ny * w + nx
                if walkable[q] and q not in dist:
                    dist[q] = d
                    queue.append(q)
    return dist


def generate(content: Content, scenario_name: str, seed: int) -> GeneratedMap:
    sc: ScenarioSpec = content.scenario(scenario_name)
    w, h = sc.width, sc.height
    rng = stream(seed, scenario_name, "worldgen")
    names = list(content.terrain)
    tid = {name: i for i, name in enumerate(names)}
    elevation, moisture = _layered(rng, w, h), _layered(rng, w, h)

    terrain = bytearray(w * h)
    for p in range(w * h):
        e = elevation[p]
        if e < WATER_BELOW:
            kind = "water"
        elif e < SAND_BELOW:
            kind = "sand"
        elif e > HILLS_ABOVE:
            kind = "hills"
        elif moisture[p] > FOREST_MOISTURE:
            kind = "forest"
        else:
            kind = "meadow"
        terrain[p] = tid[kind]

    settlement = _paint_settlement(terrain, tid, w, h, sc.settlement.radius)
    walkable = [content.terrain[names[t]].walkable for t in terrain]
    dist = _bfs_distances(settlement, walkable, w, h)
    far = max(dist.values())
    candidates = sorted(p for p, d in dist.items() if d == far)
    dungeon = candidates[rng.randrange(len(candidates))]
    terrain[dungeon] = tid["dungeon_entrance"]

    region, region_names = _regions(rng, content, sc.regions, w, h)
    structures = _settlement_stations(content, sc, settlement, w)
    nodes = _place_nodes(rng, content, sc, terrain, names, structures, w, h, dungeon)
    r = sc.settlement.radius
    sx, sy = settlement % w, settlement // w
    spawns = [
        y * w + x
        for y in range(sy - r + 1, sy + r)
        for x in range(sx - r + 1, sx + r)
        if y * w + x not in structures
    ]
    return GeneratedMap(w, h, names, terrain, region_names, region, nodes, structures, settlement, spawns, dungeon)


def _paint_settlement(terrain: bytearray, tid: dict[str, int], w: int, h: int, r: int) -> int:
    """Pave a square around the land tile nearest the centre; return the centre."""
    water = tid["water"]
    cx, cy = w // 2, h // 2
    best = min(
        (p for p in range(w * h) if terrain[p] != water and r <= p % w < w - r and r <= p // w < h - r),
        key=lambda p: (abs(p % w - cx) + abs(p // w - cy), p),
        default=cy * w + cx,
    )
    bx, by = best % w, best // w
    for y in range(by - r, by + r + 1):
        for x in range(bx - r, bx + r + 1):
            terrain[y * w + x] = tid["settlement"]
    return best


def _settlement_stations(content: Content, sc: ScenarioSpec, centre: int, w: int) -> dict[int, Structure]:
    """Public stations along the settlement's top edge, owned by no one."""
    r = sc.settlement.radius
    cx, cy = centre % w, centre // w
    out = {}
    for i, kind in enumerate(sc.settlement.stations):
        x = cx - r + 1 + 2 * i
        out[(cy - r) * w + x] = Structure(kind, None, content.structures[kind].hp)
    return out


def _regions(rng: random.Random, content: Content, count: int, w: int, h: int) -> tuple[bytearray, list[str]]:
    seeds = [(rng.randrange(w), rng.randrange(h)) for _ in range(count)]
    combos = [f"{a} {b}" for a in content.regions.first for b in content.regions.second if a != b]
    names = rng.sample(combos, count)
    region = bytearray(w * h)
    for y in range(h):
        for x in range(w):
            region[y * w + x] = min(range(count), key=lambda i: (abs(seeds[i][0] - x) + abs(seeds[i][1] - y), i))
    return region, names


def _place_nodes(rng, content, sc, terrain, names, structures, w, h, dungeon) -> dict[int, Node]:
    by_terrain: dict[int, list[tuple[str, float, int]]] = {}
    for t, tname in enumerate(names):
        by_terrain[t] = [
            (node, spec.density * sc.node_density_scale, spec.capacity)
            for node, spec in content.nodes.items()
            if tname in spec.terrain
        ]
    nodes = {}
    for p in range(w * h):
        if p in structures or p == dungeon:
            continue
        for node, chance, capacity in by_terrain[terrain[p]]:
            if rng.random() < chance:
                nodes[p] = Node(node, capacity)
                break
    return nodes
