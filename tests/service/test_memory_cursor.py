"""Observations with the memory as changes, the place kept by the server: laid over what the agent was
sent before, they make the whole memory; map_memory pages the whole memory a page at a time."""

from __future__ import annotations

from typing import Any

import pytest

from server_support import auth, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow(seconds=5)]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def picture(obs: dict[str, Any], over: dict | None = None) -> dict[tuple[int, int], Any]:
    """What the agent holds after this observation: its memory laid over what it held, the view over that."""
    held = dict(over or {})
    for m in obs["memory"]:
        held[(m["x"], m["y"])] = m
    view = obs["view"]
    for dy, row in enumerate(view["rows"]):
        for dx, glyph in enumerate(row):
            held[(view["x0"] + dx, view["y0"] + dy)] = {"terrain": obs["legend"][glyph]}
    for t in view["tiles"]:
        held[(t["x"], t["y"])] = {"terrain": held[(t["x"], t["y"])]["terrain"], **t}
    return held


async def test_changes_since_the_last_observation_make_the_whole_memory(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        get = lambda **params: s.http.get("/api/observe", params=params, headers=auth(token))  # noqa: E731
        first = (await get(changes=True)).json()
        assert "memory_since" not in first, "nothing kept yet: the whole memory"
        held, walked = picture(first), 0
        for step in ["e"] * 6 + ["s"] * 6 + ["w"] * 6:
            moved = (await s.http.post("/api/actions/move", json={"direction": step}, headers=auth(token))).json()
            if "op" not in moved:
                continue  # a step into water or a wall is refused; the walk goes on
            done = await s.http.get("/api/wait_operation", params={"op": moved["op"], "timeout_s": 5}, headers=auth(token))
            assert done.json()["status"] in ("completed", "failed")
            changes = (await get(changes=True)).json()
            again = (await get(changes=True)).json()
            assert again == changes, "asked twice in one tick, answered the same"
            whole = (await get()).json()
            assert changes["memory_since"] < changes["time"]["tick"]
            assert all(m["seen_tick"] >= changes["memory_since"] for m in changes["memory"])
            held = picture(changes, held)
            assert held == picture(whole)
            walked += 1
        assert walked >= 6 and len(changes["memory"]) < len(whole["memory"]), "the changes are less than the memory"
        both = await s.http.get("/api/observe", params={"changes": True, "memory_since": 0}, headers=auth(token))
        assert both.status_code == 400 and both.json()["code"] == "bad_request"


async def test_map_memory_pages_make_the_whole_memory(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        for step in "eeeeeesssss":
            moved = (await s.http.post("/api/actions/move", json={"direction": step}, headers=auth(token))).json()
            if "op" in moved:
                await s.http.get("/api/wait_operation", params={"op": moved["op"], "timeout_s": 5}, headers=auth(token))
        whole = (await s.http.get("/api/observe", headers=auth(token))).json()["memory"]
        pages, start = [], 0
        while start is not None:
            page = (await s.http.get("/api/map_memory", params={"start": start, "limit": 7}, headers=auth(token))).json()
            assert page["total"] == len(whole) and len(page["memory"]) <= 7
            pages += page["memory"]
            start = page["next"]
        assert pages == whole and len(whole) > 7
