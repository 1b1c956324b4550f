"""Observations for the RL faces, built only from the character's own observation (`world.observe`): symbolic
arrays (the view's channels, a memory map, inventory, equipment, needs, time), the text a language agent reads,
and the view drawn as an RGB image (`wildhold.looks`, as the `view_image` query draws it).

A `Seat` is one character's side of an env: it keeps the memory map and asks the world only for the memory
changed since its last observation, so an observation costs the same however much the character remembers.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from gymnasium import spaces

from wildhold.content import Content
from wildhold.env.spec import EnvSpec
from wildhold.looks import Picture
from wildhold.server.surface import action_tools
from wildhold.world.observe import observe, observe_parts
from wildhold.world.parts import PARTS, Part

if TYPE_CHECKING:
    from wildhold.world.world import World

KEYS = ("symbolic", "text", "image")
VIEW_CHANNELS = ("terrain", "structures", "nodes", "creatures", "characters")
MEMORY_CHANNELS = ("terrain", "nodes", "structures")
TIME_FIELDS = ("hour", "minute", "day", "season", "night", "weather")
STATUS_FIELDS = ("x", "y", "asleep", "sheltered", "busy", "knockdowns")
BIG = 2**31 - 1
TEXT_CHARSET = frozenset(chr(c) for c in range(32, 127)) | {"\n"}
TEXT_MAX = 1 << 20
SECTION_PART = {key: part for part in PARTS for key in part.observation_fields}  # a section's key -> the part adding it
FEW = 4  # characters in view counted one by one; more are counted in one pass


def equipment_slots() -> list[str]:
    """The slots equipment sits in: the values the served actions' `slot` argument takes."""
    for d in action_tools().values():
        prop = d.json_schema().get("properties", {}).get("slot", {})
        if "enum" in prop:
            return list(prop["enum"])
    return []


class Encoder:
    """The observation space of one scenario's characters, and the arrays of one observation."""

    def __init__(self, content: Content, spec: EnvSpec, scenario: str, keys: tuple[str, ...] = ("symbolic", "text")):
        unknown = set(keys) - set(KEYS)
        if unknown or not keys:
            raise ValueError(f"observation keys are some of {', '.join(KEYS)}; not {', '.join(sorted(unknown)) or 'none'}")
        sc = content.scenario(scenario)
        self.keys = keys
        self.width, self.height = sc.width, sc.height
        self.radius = content.needs.view_radius
        self.size = 2 * self.radius + 1
        self.terrain = list(content.terrain)
        self.nodes, self.structures, self.creatures = list(content.nodes), list(content.structures), list(content.creatures)
        self.items, self.slots = list(content.items), equipment_slots()
        self.seasons, self.weathers = list(content.calendar.seasons), list(content.calendar.weathers)
        self.season_index = {n: i for i, n in enumerate(self.seasons)}
        self.weather_index = {n: i for i, n in enumerate(self.weathers)}
        self.code = {
            "terrain": {n: i + 1 for i, n in enumerate(self.terrain)},
            "nodes": {n: i + 1 for i, n in enumerate(self.nodes)},
            "structures": {n: i + 1 for i, n in enumerate(self.structures)},
            "creatures": {n: i + 1 for i, n in enumerate(self.creatures)},
        }
        self.item_index = {n: i for i, n in enumerate(self.items)}
        self.glyph_lut = np.zeros(256, dtype=np.uint8)
        for name, t in content.terrain.items():
            self.glyph_lut[ord(t.glyph)] = self.code["terrain"][name]
        needs = content.needs
        self.max_needs = np.array([needs.max_health, needs.max_energy, needs.max_satiety], dtype=np.int32)
        self.picture = Picture(content) if "image" in keys else None
        self.space = spaces.Dict(self._spaces())

    def _spaces(self) -> dict[str, spaces.Space]:
        s, out = self.size, {}
        if "symbolic" in self.keys:
            top = max(len(self.terrain), len(self.nodes), len(self.structures), len(self.creatures), 255)
            out["view"] = spaces.Box(0, top, (len(VIEW_CHANNELS), s, s), np.uint8)
            out["memory"] = spaces.Box(0, top, (len(MEMORY_CHANNELS), self.height, self.width), np.uint8)
            out["inventory"] = spaces.Box(0, BIG, (len(self.items),), np.int32)
            out["equipment"] = spaces.Box(0, len(self.items), (len(self.slots),), np.int32)
            out["needs"] = spaces.Box(0, self.max_needs, (3,), np.int32)
            out["time"] = spaces.Box(0, BIG, (len(TIME_FIELDS),), np.int32)
            out["status"] = spaces.Box(0, BIG, (len(STATUS_FIELDS),), np.int32)
        if "text" in self.keys:
            out["text"] = spaces.Text(TEXT_MAX, min_length=0, charset=TEXT_CHARSET)
        if "image" in self.keys:
            px = self.picture.width  # type: ignore[union-attr]
            out["image"] = spaces.Box(0, 255, (px, px, 3), np.uint8)
        return out

    def ground(self, me: dict[str, Any], v: dict[str, Any]) -> np.ndarray:
        """The view's channels, centred on the character (0 outside the map or where nothing is), of what stays put
        (terrain, structures, nodes); those of creatures and characters 0 (`movers` writes them)."""
        r, s = self.radius, self.size
        out = np.zeros((len(VIEW_CHANNELS), s, s), dtype=np.uint8)
        bx, by = me["x"] - r, me["y"] - r
        ox, oy = v["x0"] - bx, v["y0"] - by  # where the (clipped) view starts in the square
        rows = v["rows"]
        if rows:
            grid = self.glyph_lut[np.frombuffer("".join(rows).encode(), dtype=np.uint8)].reshape(len(rows), len(rows[0]))
            out[0, oy:oy + grid.shape[0], ox:ox + grid.shape[1]] = grid
        structures, nodes = self.code["structures"], self.code["nodes"]
        for t in v["tiles"]:
            if "structure" in t:
                out[1, t["y"] - by, t["x"] - bx] = structures[t["structure"]["kind"]]
            if "node" in t:
                out[2, t["y"] - by, t["x"] - bx] = nodes[t["node"]["kind"]]
        return out

    def movers(self, out: np.ndarray, me: dict[str, Any], v: dict[str, Any]) -> None:
        """Write the view's channels of creatures and characters into `out` (where they are 0)."""
        r, s = self.radius, self.size
        bx, by = me["x"] - r, me["y"] - r
        creatures = self.code["creatures"]
        for cr in v["creatures"]:
            out[3, cr["y"] - by, cr["x"] - bx] = creatures.get(cr["kind"], 0)
        characters = v["characters"]
        if len(characters) <= FEW:  # how many others stand on each tile: a handful counted one by one
            crowd = out[4]
            for ch in characters:
                crowd[ch["y"] - by, ch["x"] - bx] += 1
        else:  # at most 255
            count = np.bincount([(ch["y"] - by) * s + ch["x"] - bx for ch in characters], minlength=s * s)
            out[4] = (count if len(characters) <= 255 else np.minimum(count, 255)).reshape(s, s)

    def text(self, obs: dict[str, Any]) -> str:
        """The observation as the served `observe` answers it, as JSON (ASCII, non-ASCII escaped)."""
        raw = orjson.dumps(obs, option=orjson.OPT_SORT_KEYS).decode()
        if not raw.isascii():
            raw = json.dumps(obs, sort_keys=True, separators=(",", ":"))
        return raw if len(raw) <= TEXT_MAX else raw[:TEXT_MAX]


def image(picture: Picture, obs: dict[str, Any]) -> np.ndarray:
    """The view as an (h, w, 3) uint8 array."""
    w, h, raw = picture.rgb(obs)
    return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)


class Seat:
    """One character's side of an env: its memory map and the tick of its last observation.

    The arrays and the image encode the view and the character only, so without `text` the parts' sections
    (quests, market, structures, villagers) are built only when an action entry's slot first needs them
    (`whole`), before the world moves on, and only those of the parts that declare the sections it reads.

    Every observation's arrays are its own (Gymnasium's checker holds an env to that): the seat keeps what it
    encoded last (the view's ground channels, the carried and worn items) and hands out copies while it still holds."""

    def __init__(self, encoder: Encoder, agent: str):
        self.enc, self.agent = encoder, agent
        self.memory = np.zeros((len(MEMORY_CHANNELS), encoder.height, encoder.width), dtype=np.uint8)
        self.since: int | None = None
        self.last: dict[str, Any] | None = None
        self._partial: tuple[World, int, int] | None = None  # (world, tick, events) of a last observation without parts
        self._todo: list[Part] | None = None  # the parts that have not yet added their sections to it (None: all)
        self._spans: dict[str, tuple[int, int]] = {}  # part -> where the keys it added stand among the observation's
        # The last view square encoded: (x, y, x0, y0), its rows and tiles, and its ground channels (`Encoder.ground`).
        self._square: tuple[tuple[int, int, int, int], list[str], list[dict[str, Any]], np.ndarray] | None = None
        self._laid: np.ndarray | None = None  # the ground channels last laid over the memory map
        self._gear: tuple[dict[str, int], dict[str, str], np.ndarray] | None = None  # inventory, equipment, their array

    def observe(self, world: World) -> dict[str, Any]:
        """The character's observation now, its memory as the changes since the seat's last one."""
        parts = "text" in self.enc.keys
        obs = observe(world, self.agent, memory_since=self.since, parts=parts)
        self.since = world.tick
        self.last = obs
        self._partial = None if parts else (world, world.tick, world.events.seq)
        self._todo = None
        return obs

    def whole(self, sections: tuple[str, ...] | None = None) -> dict[str, Any]:
        """The last observation with the parts' sections, added now if they were left out (with `sections`, only
        those of the parts that declare them; all of them once every part has observed, in the order an eager
        observation holds them); refused once the world has moved since (a tick or an event), as they would no
        longer be what the character saw."""
        obs = self.last
        assert obs is not None
        if self._partial is None:
            return obs
        world, tick, seq = self._partial
        todo = PARTS if self._todo is None else self._todo
        if sections is None or any(k not in obs and k not in SECTION_PART for k in sections):
            parts = list(todo)  # a section no part declares: every part, as an eager observation would
        else:
            parts = [p for p in todo if any(k not in obs and SECTION_PART.get(k) is p for k in sections)]
            if not parts:
                return obs
        if (world.tick, world.events.seq) != (tick, seq):
            raise RuntimeError("the world moved since this observation: its parts' sections cannot be built now")
        c = world.chars[self.agent]
        if self._todo is None and len(parts) == len(PARTS):  # every part at once, as an eager observation
            observe_parts(world, c, obs)
            self._partial = None
            return obs
        if self._todo is None:
            self._todo, self._spans = list(PARTS), {}
        for part in parts:
            before = len(obs)
            part.observe(world, c, obs)
            self._spans[part.name] = (before, len(obs))
            self._todo.remove(part)
        if not self._todo:  # the eager order: the observation's own keys, then each part's in PARTS order
            keys = list(obs)
            order = keys[:min(start for start, _ in self._spans.values())]
            order += [k for part in PARTS for k in keys[slice(*self._spans[part.name])]]
            if order != keys:
                items = [(k, obs[k]) for k in order]
                obs.clear()
                obs.update(items)
            self._partial = None
        return obs

    def encode(self, obs: dict[str, Any], world: World) -> dict[str, Any]:
        enc, out = self.enc, {}
        if "symbolic" in enc.keys:
            me, t, v = obs["self"], obs["time"], obs["view"]
            ground = self._ground(me, v)
            view = ground.copy()
            if v["creatures"] or v["characters"]:
                enc.movers(view, me, v)
            if obs.get("memory") or ground is not self._laid:
                self._remember(obs, ground)
            out["view"] = view
            out["memory"] = self.memory.copy()
            gear, n = self._carried(me["inventory"], me["equipment"]).copy(), len(enc.items)
            out["inventory"] = gear[:n]
            out["equipment"] = gear[n:]
            # One array of the other scalars, cut into the keys' arrays (views of it, made afresh each step).
            flat = np.array([me["health"], me["energy"], me["satiety"],
                             t["hour"], t["minute"], t["day"], enc.season_index[t["season"]], int(t["night"]),
                             enc.weather_index[t["weather"]],
                             me["x"], me["y"], int(me["asleep"]), int(me["sheltered"]), int(me["operation"] is not None),
                             me["knockdowns"]], dtype=np.int32)
            out["needs"] = flat[:3]
            out["time"] = flat[3:3 + len(TIME_FIELDS)]
            out["status"] = flat[3 + len(TIME_FIELDS):]
        if "text" in enc.keys:
            out["text"] = enc.text(obs)
        if "image" in enc.keys:
            assert enc.picture is not None
            out["image"] = image(enc.picture, obs)
        return out

    def _ground(self, me: dict[str, Any], v: dict[str, Any]) -> np.ndarray:
        """The view's ground channels: those of the last square while its place, rows and tiles are the same."""
        key, held = (me["x"], me["y"], v["x0"], v["y0"]), self._square
        if held is not None and held[0] == key and held[1] == v["rows"] and held[2] == v["tiles"]:
            return held[3]
        ground = self.enc.ground(me, v)
        self._square = (key, v["rows"], v["tiles"], ground)
        return ground

    def _carried(self, inventory: dict[str, int], worn: dict[str, str]) -> np.ndarray:
        """The inventory's counts then the equipment's item codes (0: nothing worn), in one array kept while they
        are the same."""
        held = self._gear
        if held is None or held[0] != inventory or held[1] != worn:
            enc = self.enc
            index, arr = enc.item_index, np.zeros(len(enc.items) + len(enc.slots), dtype=np.int32)
            for item, qty in inventory.items():
                arr[index[item]] = qty
            arr[len(enc.items):] = [index[worn[s]] + 1 if s in worn else 0 for s in enc.slots]
            held = self._gear = (inventory, worn, arr)
        return held[2]

    def _remember(self, obs: dict[str, Any], ground: np.ndarray) -> None:
        """Lay the new memory, then the view, over the map the seat holds (`encode` passes over it when neither would
        change it: no new memory and the same view square laid last time)."""
        enc, mem = self.enc, self.memory
        for t in obs.get("memory", ()):
            x, y = t["x"], t["y"]
            mem[0, y, x] = enc.code["terrain"][t["terrain"]]
            mem[1, y, x] = enc.code["nodes"][t["node"]["kind"]] if "node" in t else 0
            mem[2, y, x] = enc.code["structures"][t["structure"]["kind"]] if "structure" in t else 0
        r, me, v = enc.radius, obs["self"], obs["view"]
        x0, y0 = v["x0"], v["y0"]
        h, w = len(v["rows"]), len(v["rows"][0]) if v["rows"] else 0
        ox, oy = x0 - (me["x"] - r), y0 - (me["y"] - r)
        mem[0, y0:y0 + h, x0:x0 + w] = ground[0, oy:oy + h, ox:ox + w]
        mem[1, y0:y0 + h, x0:x0 + w] = ground[2, oy:oy + h, ox:ox + w]
        mem[2, y0:y0 + h, x0:x0 + w] = ground[1, oy:oy + h, ox:ox + w]
        self._laid = ground
