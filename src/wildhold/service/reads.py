"""What a served match answers about its world: the reads the query registry serves, and the views
of the spectator and the operator. Each is a function of the host; none changes anything.

Agents ask these through `wildhold.service.queries.QUERIES` (every face is generated from it); the
spectator's state, the roster and the metrics are the public and admin routes of the HTTP face.
When the match's horizon is hidden, no read says when it ends, how long it lasts, or that spend is measured.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from wildhold import __version__
from wildhold.docs.rules import wealth_formula
from wildhold.looks import Picture
from wildhold.service.errors import HostError
from wildhold.world.observe import clock as world_clock
from wildhold.world.observe import observe as world_observe
from wildhold.world.observe import remembered_page
from wildhold.world.observe import status
from wildhold.world.parts import PARTS, society
from wildhold.world.wealth import formula_summary, rank_standard, wealth_cents

if TYPE_CHECKING:
    from wildhold.service.host import Host


def shows_end(host: Host) -> bool:
    """Whether this match tells its agents when it ends (its horizon is visible)."""
    return host.horizon == "visible"


def require_started(host: Host) -> None:
    if host.state == "lobby":
        raise HostError("not_started", "The match is still in its lobby.")


# ---- an agent's reads ------------------------------------------------------------------------------

def observe(host: Host, agent: str, memory: str = "changes", memory_since: int | None = None) -> dict[str, Any]:
    """The agent's observation: what changed since its last look (`memory` "changes", see `service.looks`), the
    whole of it (`full`, its memory only since `memory_since` when given), or all but the memory (`none`, which is no
    look: a program's or another read's asking changes nothing of the agent's changes)."""
    require_started(host)
    w = host.world
    if memory == "changes":
        if memory_since is not None:
            raise HostError("bad_request", "observe: memory_since goes with memory='full'; the changes are since your "
                            "last look already.")
        since = host.looks.since(agent, w.tick)
        return host.looks.changes(agent, world_observe(w, agent, True, since, shows_end(host)))
    obs = world_observe(w, agent, memory == "full", memory_since, shows_end(host))
    if memory == "full":
        host.looks.shown(agent, obs, memory_since)
    return obs


_PICTURES: dict[str, Picture] = {}  # content digest -> its picture (keeps the tiles it has drawn)


def view_image(host: Host, agent: str) -> dict[str, Any]:
    """The character's view square as a PNG, drawn from its observation alone."""
    obs = observe(host, agent, memory="none")
    content = host.world.content
    picture = _PICTURES.get(content.digest)
    if picture is None:
        picture = _PICTURES[content.digest] = Picture(content)
    png = picture.png(obs)
    return {"tick": obs["time"]["tick"], "width": picture.width, "height": picture.width, "mime": "image/png",
            "png_base64": base64.b64encode(png).decode()}


def map_memory(host: Host, agent: str, start: int = 0, limit: int | None = None) -> dict[str, Any]:
    """The view and one page of the remembered tiles (ordered by position): `next` starts the next page.
    Only the page is built, so a page costs the same however much is remembered."""
    obs = observe(host, agent, memory="none")
    tiles, total = remembered_page(host.world, host.world.chars[agent], start, limit)
    end = total if limit is None else min(total, start + limit)
    return {"time": obs["time"], "view": obs["view"], "memory": tiles, "legend": obs["legend"],
            "total": total, "next": end if end < total else None}


def inventory(host: Host, agent: str) -> dict[str, Any]:
    require_started(host)
    s = status(host.world, host.world.chars[agent])
    return {"inventory": s["inventory"], "equipment": s["equipment"]}


def recipes(host: Host, agent: str) -> list[dict[str, Any]]:
    """Every recipe, with why it is closed to this character (or null when open)."""
    require_started(host)
    w, c = host.world, host.world.chars[agent]
    out = []
    for name, recipe in host.content.recipes.items():
        locked = next((why for part in PARTS if (why := part.recipe_locked(w, c, name))), None)
        out.append({"name": name, **recipe.model_dump(mode="json"), "locked": locked})
    return out


def quest_log(host: Host, agent: str) -> dict[str, Any]:
    obs = observe(host, agent, memory="none")
    return {"board": obs.get("quest_board", []), "log": obs.get("quest_log", {})}


def world_info(host: Host, agent: str) -> dict[str, Any]:
    """Time, season, the one-line wealth formula and this character's rank: cheap enough for every poll."""
    require_started(host)
    w, config = host.world, host.config
    cents = {a: wealth_cents(w, a) for a in w.chars}
    return {
        "time": world_clock(w, shows_end(host)),
        "status": host.state,
        "clock": config.clock,
        "tick_seconds": config.tick_seconds if config.clock == "realtime" else None,
        "scenario": w.scenario_name,
        "agents": len(w.chars),
        "wealth_formula": formula_summary(host.content),
        "wealth_cents": cents[agent],
        "rank": rank_standard(cents)[agent],
        "operation": host.operations.current_operation(agent),
    }


def scoring_info(host: Host) -> dict[str, Any]:
    """What is scored and how, stated in full: the same for every agent for the whole match. A hidden horizon
    leaves out the scenario's length and its description (which states the length and how runs are read)."""
    content, scenario = host.content, host.world.scenario_name
    spec = content.scenario(scenario)
    about = {"name": scenario, "description": spec.description, "days": spec.days, "conflict": spec.conflict}
    if not shows_end(host):
        about = {"name": scenario, "conflict": spec.conflict}
    return {
        "scenario": about,
        "wealth": wealth_formula(content),
        "ranking": "Rank is by wealth under the formula above, valued at the moment of ranking. Standard competition "
                   "ranking: characters with exactly equal wealth (in cents) share a rank and the next rank skips "
                   "(1, 1, 3); a tie is never broken by registration order, spawn order, name or seed.",
        "reports": "After the match, report cards are computed from the match archive alone, under the rubric "
                   "version each report names. The epilogue (write_epilogue) is never scored.",
        "static": True,
    }


# ---- public and operator views --------------------------------------------------------------------

def spectator_state(host: Host) -> dict[str, Any]:
    """What anyone may see: the time, the roster and ranks, the public board. No positions, no inventories."""
    w, records, started = host.world, host.access.records, host.state != "lobby"
    board = society.state(w).board if started else []
    ranks = rank_standard({a: wealth_cents(w, a) for a in w.chars}) if started else {}
    return {
        "status": host.state,
        "clock": host.config.clock,
        "scenario": w.scenario_name,
        "time": world_clock(w, shows_end(host)) if started else None,
        "lobby": [r.name for r in records.values() if r.agent is None],
        "agents": sorted(({"agent": a, "name": c.name, "rank": ranks[a]} for a, c in w.chars.items()),
                         key=lambda row: (row["rank"], row["agent"])) if ranks else [],
        "registered": len(records),
        "joined": len(host.access.joined()),
        "board": [dict(post) for post in board],
    }


def roster(host: Host) -> list[dict[str, Any]]:
    """The operator's view of every registration: character, activity, idle flag."""
    w, clock, epilogues = host.world, host.clock, host.archives.epilogues
    out = []
    for r in host.access.records.values():
        out.append({"name": r.name, "agent": r.agent, "extra": r.extra,
                    "last_active_tick": clock.last_active.get(r.agent) if r.agent else None,
                    "idle": r.agent in clock.idle if r.agent else False,
                    "epilogue": r.agent in epilogues if r.agent else False,
                    "silent_ticks": w.tick - clock.last_active.get(r.agent, w.tick) if r.agent else None})
    return out


def metrics(host: Host) -> dict[str, Any]:
    """Raw counters: requests by face, actions, rejections by code, events by kind, clock state, what degrades the host."""
    w = host.world
    return {
        "wildhold_version": __version__,
        "status": host.state,
        "clock": host.config.clock,
        "tick": w.tick,
        "uptime_s": round(host.now() - host.started_at, 3),
        "registered": len(host.access.records),
        "joined": len(host.access.joined()),
        "idle": len(host.clock.idle),
        "operations_running": len(w.ops),
        "clock_running": host.clock.running,
        "health": host.health.view(),
        "counters": dict(sorted(host.counters.items())),
        "rejections": dict(sorted(host.rejections.items())),
        "events": dict(sorted(host.operations.events_by_kind.items())),
    }
