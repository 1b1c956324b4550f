"""What cost an outside agent turns, each reproduced as an agent meets it over the served faces: a wait right
after an operation ended, a direct action while its own program acts, characters named by name, trade offers
in the inbox, program start arguments."""

from __future__ import annotations

import pytest

from server_support import auth, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow(seconds=10)]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_wait_operation_without_an_id_answers_the_last_operation_once_it_has_ended(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        get = lambda path, **params: s.http.get(path, params=params, headers=auth(token))  # noqa: E731
        none_yet = await get("/api/wait_operation", timeout_s=0)
        assert none_yet.status_code == 404 and "started no operation" in none_yet.json()["message"]
        started = (await s.http.post("/api/actions/wait", json={"ticks": 1}, headers=auth(token))).json()
        ended = (await get("/api/wait_operation", op=started["op"], timeout_s=5)).json()
        assert ended["status"] == "completed"
        again = await get("/api/wait_operation", timeout_s=0)  # nothing in progress: the last one, as it ended
        assert again.status_code == 200 and again.json()["op"] == started["op"]
        assert again.json()["status"] == "completed" and again.json()["timed_out"] is False
        async with s.mcp(token) as client:
            r = await client.call_tool("wait_operation", {})
            assert not r.is_error and r.structured_content["op"] == started["op"]
