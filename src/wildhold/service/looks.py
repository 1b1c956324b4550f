"""What each agent was last shown, so that its next observation can be what changed since.

An observation as changes (observe's default) holds the time and the character always; every other section only when
it differs from the agent's last look (the others are named in `unchanged`); and, of its memory, the tiles remembered
since that look less those the look's view showed as they are remembered now. Laid over what the agent was shown,
the answer is what a whole observation shows (a tile not repeated keeps the tick it was shown at). The host keeps
the looks; they are never recorded (an observation changes nothing), so after a restart the first look is whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALWAYS = ("time", "self")  # sections every observation as changes holds
FEATURES = ("node", "structure", "items")  # what a tile record holds besides its place and terrain


@dataclass(frozen=True)
class Look:
    """One observation with memory as sent: its tick, the memory_since it was built with (None: the whole memory),
    its sections, and what its view showed on each tile holding something (the view's bare tiles hold nothing)."""

    tick: int
    since: int | None
    sections: dict[str, Any]
    shown: dict[tuple[int, int], dict[str, Any]]
    bounds: tuple[int, int, int, int]  # x0, x1, y0, y1 of the view


def _look(obs: dict[str, Any], since: int | None) -> Look:
    view = obs["view"]
    x0, y0 = view["x0"], view["y0"]
    bounds = (x0, x0 + len(view["rows"][0]) - 1 if view["rows"] else x0 - 1, y0, y0 + len(view["rows"]) - 1)
    shown = {(t["x"], t["y"]): _features(t) for t in view["tiles"]}
    return Look(obs["time"]["tick"], since, {k: v for k, v in obs.items() if k != "memory"}, shown, bounds)


def _features(tile: dict[str, Any]) -> dict[str, Any]:
    return {k: tile[k] for k in FEATURES if k in tile}


class Looks:
    """Each agent's last look and the one before it: asked again in the same tick, an observation as changes answers
    the same, built against the look before that tick."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[Look | None, Look]] = {}  # agent -> (the look before, the last look)

    def base(self, agent: str, tick: int) -> Look | None:
        """The look an observation as changes at `tick` is built against (None: none yet, the answer is whole)."""
        held = self._held.get(agent)
        if held is None:
            return None
        before, last = held
        return before if last.tick == tick else last

    def since(self, agent: str, tick: int) -> int | None:
        """The memory_since an observation as changes at `tick` is built with: the tick of the look it is built
        against (None: the whole memory)."""
        base = self.base(agent, tick)
        return None if base is None else base.tick

    def shown(self, agent: str, obs: dict[str, Any], since: int | None) -> None:
        """The agent was sent this whole observation with memory (built with `since`): its last look now."""
        look = _look(obs, since)
        held = self._held.get(agent)
        before = None if held is None else (held[0] if held[1].tick == look.tick else held[1])
        self._held[agent] = (before, look)

    def changes(self, agent: str, obs: dict[str, Any]) -> dict[str, Any]:
        """A whole observation (its memory the tiles remembered since `since(agent, tick)`) as what changed since the
        agent's last look; it becomes the last look."""
        tick = obs["time"]["tick"]
        base = self.base(agent, tick)
        self.shown(agent, obs, obs.get("memory_since"))
        if base is None:
            return obs
        out: dict[str, Any] = {}
        unchanged = []
        for key, value in obs.items():
            if key in ALWAYS or key in ("memory", "memory_since") or base.sections.get(key, _ABSENT) != value:
                out[key] = value
            else:
                unchanged.append(key)
        out["memory"] = [m for m in obs["memory"] if not _as_shown(m, base)]
        out["changes_since"] = base.tick
        out["unchanged"] = unchanged
        return out


_ABSENT = object()


def _as_shown(tile: dict[str, Any], base: Look) -> bool:
    """Whether the look's view showed this remembered tile as it is remembered now (its terrain never changes)."""
    x0, x1, y0, y1 = base.bounds
    x, y = tile["x"], tile["y"]
    return x0 <= x <= x1 and y0 <= y <= y1 and base.shown.get((x, y), {}) == _features(tile)
