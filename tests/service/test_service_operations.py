"""Operation records are bounded per character: each keeps its most recent finished operations readable, older
ones are forgotten, so a busy match's memory stops growing and one busy agent never pushes out another's."""

from __future__ import annotations

import pytest
from server_support import auth, serving

from wildhold.service.operations import FINISHED_OPS_PER_AGENT

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _wait_then_cancel(s, token: str) -> list[str]:
    """A wait, cancelled: two finished operations (the wait, cancelled; the cancel, completed), their ids."""
    ops = []
    for action, args in (("wait", {"ticks": 60}), ("cancel", {})):
        answer = await s.http.post(f"/api/actions/{action}", json=args, headers=auth(token))
        assert answer.status_code == 200, answer.text
        ops.append(answer.json()["op"])
    return ops


async def _status(s, token: str, op: str):
    return await s.http.get("/api/operation_status", params={"op": op}, headers=auth(token))


@pytest.mark.slow(seconds=60)
async def test_each_character_keeps_its_latest_finished_operations_and_forgets_older_ones(tmp_path):
    async with serving(tmp_path) as s:
        busy, _ = await s.register("busy")
        calm, _ = await s.register("calm")
        calm_ops = await _wait_then_cancel(s, calm)
        ops = [op for _ in range(FINISHED_OPS_PER_AGENT // 2 + 5) for op in await _wait_then_cancel(s, busy)]
        forgotten = await _status(s, busy, ops[0])
        assert forgotten.status_code == 404 and forgotten.json()["code"] == "unknown_operation"
        assert f"last {FINISHED_OPS_PER_AGENT} finished" in forgotten.json()["message"]
        for op in ops[-FINISHED_OPS_PER_AGENT:]:
            answer = await _status(s, busy, op)
            assert answer.status_code == 200 and answer.json()["status"] in ("cancelled", "completed"), (op, answer.text)
        for op in calm_ops:  # another character's stay readable
            assert (await _status(s, calm, op)).status_code == 200
        assert len(s.host.operations.ops) == FINISHED_OPS_PER_AGENT + len(calm_ops)
