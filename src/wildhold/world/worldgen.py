"""World generation: a pure function of (seed, scenario, content) to the starting map.

The map is computed over numpy arrays in the order the draws are made: the named stream's values come from Python's
Mersenne Twister (the lattices, the dungeon, the regions) and, for the nodes, from numpy's, started from the same
state (`_draws`: the same generator, so the same values). Every float is computed by the same operations in the same
order as the tile-by-tile definition, so a seed gives the same map, bit for bit, on every machine."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

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


def _noise(rng: random.Random, w: int, h: int, cell: int) -> np.ndarray:
    """Smooth value noise in [0, 1), row by row: random lattice values blended with a smoothstep."""
    gw, gh = w // cell + 2, h // cell + 2
    lattice = np.array([[rng.random() for _ in range(gw)] for _ in range(gh)])
    inv = 1.0 / cell
    gx, sx = _blend(np.arange(w) * inv)
    gy, sy = _blend(np.arange(h) * inv)
    row0, row1 = lattice[gy], lattice[gy + 1]  # (h, gw): the lattice rows above and below each map row
    top = row0[:, gx] + (row0[:, gx + 1] - row0[:, gx]) * sx
    bottom = row1[:, gx] + (row1[:, gx + 1] - row1[:, gx]) * sx
    return (top + (bottom - top) * sy[:, None]).ravel()


def _blend(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lattice cell of each coordinate (in cells) and its smoothstep weight, as `divmod(at, 1.0)` splits it."""
    frac = np.fmod(at, 1.0)
    return (at - frac).astype(np.intp), frac * frac * (3 - 2 * frac)


def _layered(rng: random.Random, w: int, h: int) -> np.ndarray:
    coarse, fine = _noise(rng, w, h, 14), _noise(rng, w, h, 5)
    return 0.75 * coarse + 0.25 * fine


def _farthest(start: int, walkable: np.ndarray, w: int, h: int) -> list[int]:
    """The walkable tiles farthest from `start` in steps along the four directions, in tile order."""
    from scipy.sparse import csr_matrix  # a breadth-first search in C; imported with the first map made
    from scipy.sparse.csgraph import shortest_path

    n = w * h
    tiles = np.arange(n).reshape(h, w)
    pairs = [(tiles[:, :-1], tiles[:, 1:]), (tiles[:-1, :], tiles[1:, :])]  # neighbours across and down
    sources = np.concatenate([a.ravel() for a, b in pairs] + [b.ravel() for a, b in pairs])
    targets = np.concatenate([b.ravel() for a, b in pairs] + [a.ravel() for a, b in pairs])
    steppable = walkable.copy()
    steppable[start] = True  # a step is from the start or a walkable tile onto a walkable one
    keep = steppable[sources] & walkable[targets]
    graph = csr_matrix((np.ones(int(keep.sum())), (sources[keep], targets[keep])), shape=(n, n))
    steps = shortest_path(graph, directed=True, unweighted=True, indices=start)
    reached = np.isfinite(steps)
    return np.flatnonzero(reached & (steps == steps[reached].max())).tolist()


def generate(content: Content, scenario_name: str, seed: int) -> GeneratedMap:
    sc: ScenarioSpec = content.scenario(scenario_name)
    w, h = sc.width, sc.height
    rng = stream(seed, scenario_name, "worldgen")
    names = list(content.terrain)
    tid = {name: i for i, name in enumerate(names)}
    elevation, moisture = _layered(rng, w, h), _layered(rng, w, h)

    kinds = np.select([elevation < WATER_BELOW, elevation < SAND_BELOW, elevation > HILLS_ABOVE, moisture > FOREST_MOISTURE],
                      [tid["water"], tid["sand"], tid["hills"], tid["forest"]], tid["meadow"])
    terrain = bytearray(kinds.astype(np.uint8).tobytes())

    settlement = _paint_settlement(terrain, tid, w, h, sc.settlement.radius)
    walkable = np.array([content.terrain[name].walkable for name in names])[np.frombuffer(terrain, dtype=np.uint8)]
    candidates = _farthest(settlement, walkable, w, h)
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
    """Pave a square around the land tile nearest the centre (the first in tile order of the nearest, and the
    whole square on the map); return the centre."""
    cx, cy = w // 2, h // 2
    ys, xs = np.divmod(np.arange(w * h), w)
    land = (np.frombuffer(terrain, dtype=np.uint8) != tid["water"]) & (r <= xs) & (xs < w - r) & (r <= ys) & (ys < h - r)
    if land.any():
        far = np.where(land, np.abs(xs - cx) + np.abs(ys - cy), w + h)
        best = int(np.argmin(far))  # the first of the nearest
    else:
        best = cy * w + cx
    bx, by = best % w, best // w
    paved = bytes([tid["settlement"]]) * (2 * r + 1)
    for y in range(by - r, by + r + 1):
        terrain[y * w + bx - r:y * w + bx + r + 1] = paved
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
    """Each tile belongs to the nearest of `count` random seeds in steps across and down (the first on a tie)."""
    seeds = [(rng.randrange(w), rng.randrange(h)) for _ in range(count)]
    combos = [f"{a} {b}" for a in content.regions.first for b in content.regions.second if a != b]
    names = rng.sample(combos, count)
    ys, xs = np.divmod(np.arange(w * h), w)
    apart = np.stack([np.abs(sx - xs) + np.abs(sy - ys) for sx, sy in seeds])
    return bytearray(np.argmin(apart, axis=0).astype(np.uint8).tobytes()), names


def _place_nodes(rng, content, sc, terrain, names, structures, w, h, dungeon) -> dict[int, Node]:
    """Tile by tile, each node its terrain may hold in the content's order is drawn for at its density, and the
    first drawn is placed. The stream's last use: its values are drawn ahead in one block (`_draws`)."""
    by_terrain: list[list[tuple[str, float, int]]] = [
        [(node, spec.density * sc.node_density_scale, spec.capacity)
         for node, spec in content.nodes.items() if tname in spec.terrain]
        for tname in names]
    held = np.frombuffer(terrain, dtype=np.uint8)
    eligible = np.array([bool(kinds) for kinds in by_terrain])[held]
    for p in (*structures, dungeon):
        eligible[p] = False
    tiles = np.flatnonzero(eligible).tolist()
    kinds_of = [by_terrain[t] for t in held[eligible].tolist()]
    draws = iter(_draws(rng, sum(map(len, kinds_of))))
    nodes = {}
    for p, kinds in zip(tiles, kinds_of):
        for node, chance, capacity in kinds:
            if next(draws) < chance:
                nodes[p] = Node(node, capacity)
                break
    return nodes


def _draws(rng: random.Random, count: int) -> list[float]:
    """The next `count` values `rng.random()` would give, drawn at once by numpy's Mersenne Twister from the same
    state (it makes each double from two words as Python does). `rng` itself is not advanced."""
    state = rng.getstate()[1]
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1]))
    return twister.random_sample(count).tolist()
