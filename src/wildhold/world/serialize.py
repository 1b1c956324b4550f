"""A world's full state as canonical JSON: for snapshots, resumption and the state hash."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import orjson

from wildhold.content import Content
from wildhold.world.events import EventLog
from wildhold.world.memory import BARE
from wildhold.world.parts import PARTS
from wildhold.world.parts.base import dump_parts, section_of
from wildhold.world.state import Character, Creature, Node, Operation, Structure
from wildhold.world.world import World

FORMAT = 2


def _rng_state(r: random.Random) -> list:
    version, internal, gauss = r.getstate()
    return [version, list(internal), gauss]


def _set_rng(r: random.Random, s: list) -> None:
    r.setstate((s[0], tuple(s[1]), s[2]))


def to_dict(w: World) -> dict[str, Any]:
    """Everything that determines the world's future, in a stable key order."""
    return {
        "format": FORMAT,
        "content_digest": w.content.digest,
        "scenario": w.scenario_name,
        "seed": w.seed,
        "tick": w.tick,
        "size": [w.width, w.height],
        "terrain_names": w.terrain_names,
        "terrain": w.terrain.hex(),
        "region_names": w.region_names,
        "region": w.region.hex(),
        "settlement": w.settlement,
        "spawns": w.spawns,
        "dungeon": w.dungeon,
        "weather": w.weather,
        "next_op": w.next_op,
        "next_creature": w.next_creature,
        "rngs": {k: _rng_state(r) for k, r in sorted(w.rngs.items())},
        "nodes": [[p, n.kind, n.amount, n.regrow_at] for p, n in sorted(w.nodes.items())],
        "structures": [[p, s.kind, s.owner, s.hp] for p, s in sorted(w.structures.items())],
        "ground": [[p, sorted(items.items())] for p, items in sorted(w.ground.items())],
        "containers": [[h, sorted(items.items())] for h, items in sorted(w.containers.items())],
        "parts": dump_parts(w, PARTS),
        "chars": [
            {
                "id": c.id, "name": c.name, "pos": c.pos, "health": c.health, "energy": c.energy,
                "satiety": c.satiety, "inventory": sorted(c.inventory.items()),
                "equipment": sorted(c.equipment.items()), "bed": c.bed, "op": c.op,
                "asleep": c.asleep, "knockdowns": c.knockdowns,
                "memory": [[p, list(s)] for p, s in sorted(c.memory.items())],
            }
            for c in w.chars.values()
        ],
        "creatures": [[cr.id, cr.kind, cr.pos, cr.hp, cr.target] for cr in w.creatures.values()],
        "ops": [
            {"id": o.id, "agent": o.agent, "action": o.action, "args": o.args, "started": o.started,
             "ends": o.ends, "energy": o.energy, "data": o.data}
            for o in w.ops.values()
        ],
        "events": {"seq": w.events.seq, "head": w.events.head},
    }


def state_hash(w: World) -> str:
    """Hash of the world state, excluding the event log: rejected actions must leave it unchanged."""
    d = to_dict(w)
    del d["events"]
    return hashlib.sha256(orjson.dumps(d, option=orjson.OPT_SORT_KEYS)).hexdigest()


def dumps(w: World) -> bytes:
    return orjson.dumps(to_dict(w), option=orjson.OPT_SORT_KEYS)


def from_dict(content: Content, d: dict[str, Any]) -> World:
    if d["format"] != FORMAT:
        raise ValueError(f"snapshot format {d['format']} is not {FORMAT}")
    if d["content_digest"] != content.digest:
        raise ValueError("snapshot was taken under different content files")
    w = World(content, d["scenario"], d["seed"], _generate=False)
    w.tick = d["tick"]
    w.width, w.height = d["size"]
    w.terrain_names, w.terrain = d["terrain_names"], bytearray.fromhex(d["terrain"])
    w.region_names, w.region = d["region_names"], bytearray.fromhex(d["region"])
    w.settlement, w.spawns, w.dungeon = d["settlement"], d["spawns"], d["dungeon"]
    w._index_terrain()
    w.weather, w.next_op, w.next_creature = d["weather"], d["next_op"], d["next_creature"]
    w.nodes, w.structures = {}, {}
    for k, s in d["rngs"].items():
        _set_rng(w.rng(k), s)
    for p, kind, amount, regrow_at in d["nodes"]:
        w.nodes[p] = Node(kind, amount, regrow_at)
        if regrow_at is not None:
            w.regrow_due.setdefault(regrow_at, []).append(p)
    w.structures = {p: Structure(kind, owner, hp) for p, kind, owner, hp in d["structures"]}
    w.ground = {p: dict(items) for p, items in d["ground"]}
    w.containers = {h: dict(items) for h, items in d["containers"]}
    for cd in d["chars"]:
        c = Character(
            cd["id"], cd["name"], cd["pos"], cd["health"], cd["energy"], cd["satiety"],
            dict(cd["inventory"]), dict(cd["equipment"]), cd["bed"], cd["op"], cd["asleep"], cd["knockdowns"],
            memory=w.new_memory(),
        )
        records: dict[tuple, int] = {}
        for p, (tick, *held) in cd["memory"]:
            record = (*held[:4], tuple(tuple(pair) for pair in held[4]))
            i = 0 if record == BARE else records.get(record) or records.setdefault(record, w.contents.add(record))
            c.memory.remember(p, tick, i)
        w.chars[c.id] = c
        w.occupants.setdefault(c.pos, []).append(c.id)
    w.creatures = {i: Creature(i, kind, pos, hp, target) for i, kind, pos, hp, target in d["creatures"]}
    for od in d["ops"]:
        w.ops[od["id"]] = Operation(od["id"], od["agent"], od["action"], od["args"], od["started"], od["ends"], od["energy"], od["data"])
    for part in PARTS:
        part.init(w)
        part.load(w, d["parts"][section_of(part)])
    w.events = EventLog(d["events"]["seq"], d["events"]["head"])
    return w


def loads(content: Content, blob: bytes) -> World:
    return from_dict(content, orjson.loads(blob))
