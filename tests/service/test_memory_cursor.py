"""Observations as what changed since the agent's last look (observe's default): laid over what the agent was
sent before, they make the whole observation; map_memory pages the whole memory a page at a time."""

from __future__ import annotations

from typing import Any

import pytest

from server_support import auth, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow(seconds=5)]
FEATURES = ("node", "structure", "items")


@pytest.fixture
def anyio_backend():
    return "asyncio"


def picture(obs: dict[str, Any], over: dict | None = None, legend: dict | None = None) -> dict[tuple[int, int], Any]:
    """What the agent holds of the map after this observation: its memory laid over what it held, the view (when
    sent: unchanged, it is laid already) over that; each tile as its terrain and what stands on it (a tile not
    repeated keeps the tick it was shown at)."""
    held = dict(over or {})
    for m in obs["memory"]:
        held[(m["x"], m["y"])] = {k: m[k] for k in ("terrain", *FEATURES) if k in m}
    view, legend = obs.get("view"), obs.get("legend", legend)
    if view is None:
        return held
    for dy, row in enumerate(view["rows"]):
        for dx, glyph in enumerate(row):
            held[(view["x0"] + dx, view["y0"] + dy)] = {"terrain": legend[glyph]}
    for t in view["tiles"]:
        held[(t["x"], t["y"])] = {"terrain": held[(t["x"], t["y"])]["terrain"], **{k: t[k] for k in FEATURES if k in t}}
    return held


def sections(obs: dict[str, Any], over: dict | None = None) -> dict[str, Any]:
    """Every section the agent holds after this observation: those sent, laid over those it held."""
    held = dict(over or {})
    held.update({k: v for k, v in obs.items() if k not in ("memory", "memory_since", "changes_since", "unchanged")})
    return held


async def test_changes_since_the_last_look_make_the_whole_observation(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        get = lambda **params: s.http.get("/api/observe", params=params, headers=auth(token))  # noqa: E731
        first = (await get()).json()
        assert "changes_since" not in first and "unchanged" not in first, "nothing shown yet: the whole observation"
        held, parts, walked = picture(first), sections(first), 0
        smaller = []
        for step in ["e"] * 6 + ["s"] * 6 + ["w"] * 6:
            moved = (await s.http.post("/api/actions/move", json={"direction": step}, headers=auth(token))).json()
            if "op" not in moved:
                continue  # a step into water or a wall is refused; the walk goes on
            done = await s.http.get("/api/wait_operation", params={"op": moved["op"], "timeout_s": 5}, headers=auth(token))
            assert done.json()["status"] in ("completed", "failed")
            changes = (await get()).json()
            again = (await get()).json()
            assert again == changes, "asked twice in one tick, answered the same"
            whole = (await get(memory="full")).json()
            assert changes["changes_since"] < changes["time"]["tick"] and {"time", "self"} <= set(changes)
            assert not set(changes["unchanged"]) & {"time", "self", "memory"}
            held, parts = picture(changes, held, parts["legend"]), sections(changes, parts)
            assert held == picture(whole) and parts == sections(whole)
            smaller.append(len(changes["memory"]) < len(whole["memory"]) and "legend" in changes["unchanged"])
            walked += 1
        assert walked >= 6 and all(smaller), "the changes are less than the whole"
        both = await get(memory="changes", memory_since=0)
        assert both.status_code == 400 and both.json()["code"] == "bad_request"


async def test_a_read_without_memory_is_no_look(tmp_path):
    """A program's observe (memory none) or another read does not take the agent's changes away from it."""
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        get = lambda **params: s.http.get("/api/observe", params=params, headers=auth(token))  # noqa: E731
        first = (await get()).json()
        await s.http.post("/api/actions/wait", json={"ticks": 2}, headers=auth(token))
        await s.http.get("/api/wait_operation", params={"timeout_s": 5}, headers=auth(token))
        bare = (await get(memory="none")).json()
        assert "memory" not in bare and "unchanged" not in bare and "view" in bare
        changes = (await get()).json()
        assert changes["changes_since"] == first["time"]["tick"]


async def test_map_memory_pages_make_the_whole_memory(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        for step in "eeeeeesssss":
            moved = (await s.http.post("/api/actions/move", json={"direction": step}, headers=auth(token))).json()
            if "op" in moved:
                await s.http.get("/api/wait_operation", params={"op": moved["op"], "timeout_s": 5}, headers=auth(token))
        whole = (await s.http.get("/api/observe", params={"memory": "full"}, headers=auth(token))).json()["memory"]
        pages, start = [], 0
        while start is not None:
            page = (await s.http.get("/api/map_memory", params={"start": start, "limit": 7}, headers=auth(token))).json()
            assert page["total"] == len(whole) and len(page["memory"]) <= 7
            pages += page["memory"]
            start = page["next"]
        assert pages == whole and len(whole) > 7
