"""The program lifecycle over HTTP against the real app in-process: save, start, watch it act, logs, revise,
restart, stop; refusals with their codes; and the routes generated from the same table as the MCP tools."""

from __future__ import annotations

import hashlib

import pytest
from programs_support import FARMER_1, FARMER_2
from server_support import SIGNUP, auth, serving, until

from wildhold.server.http import STATUS
from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.service.errors import SERVICE_CODES

pytestmark = pytest.mark.anyio

BROKEN = "x = 1\nfor i in range(3)\n    wait(ticks=1)\n"  # line 2 lacks its colon


@pytest.fixture
def anyio_backend():
    return "asyncio"


def program_ops_started(s, agent: str, issuer: str) -> int:
    """Operations the world started for `agent` under `issuer`, read from the match's own event log."""
    import orjson

    return sum(1 for _, _, kind, payload, _ in s.host.match.store.events(0)
               if kind == "operation_started" and (d := orjson.loads(payload)["data"])["agent"] == agent
               and d["issuer"] == issuer)


async def test_save_start_watch_logs_revise_restart_and_stop_over_http(tmp_path):
    async with serving(tmp_path, clock="realtime", tick_seconds=0.01) as s:
        token, reg = await s.register("ann")
        me = auth(token)
        saved = (await s.http.post("/api/programs/farmer", json={"source": FARMER_1}, headers=me)).json()
        assert saved["name"] == "farmer" and saved["revision"] == 1
        assert saved["source_sha256"] == hashlib.sha256(FARMER_1.encode()).hexdigest()
        listed = (await s.http.get("/api/programs", headers=me)).json()["programs"]
        assert [(p["name"], p["state"]) for p in listed] == [("farmer", "stopped")]

        started = await s.http.post("/api/programs/farmer/start", headers=me)
        assert started.status_code == 200 and started.json()["state"] in ("running", "waiting")
        assert await until(lambda: program_ops_started(s, "a1", "program:farmer@1") >= 3)
        status = (await s.http.get("/api/programs/farmer", headers=me)).json()
        assert status["revision"] == 1 and status["actions"] >= 3 and status["host_calls"] >= status["actions"]

        logs = (await s.http.get("/api/programs/farmer/logs", headers=me)).json()
        assert logs["lines"][0]["text"] == "farmer rev 1 up" and logs["dropped"] == 0
        assert [line["seq"] for line in logs["lines"]] == list(range(1, len(logs["lines"]) + 1))
        later = (await s.http.get("/api/programs/farmer/logs", params={"after": logs["next"] - 1, "limit": 1}, headers=me)).json()
        assert len(later["lines"]) == 1 and later["lines"][0]["seq"] == logs["next"]

        revised = (await s.http.post("/api/programs/farmer", json={"source": FARMER_2}, headers=me)).json()
        assert revised["revision"] == 2
        assert (await s.http.get("/api/programs/farmer", headers=me)).json()["revision"] == 1  # still running rev 1
        again = await s.http.post("/api/programs/farmer/start", headers=me)
        assert again.status_code == 409 and again.json()["code"] == "program_running"
        old = (await s.http.get("/api/programs/farmer/source", params={"revision": 1}, headers=me)).json()
        assert old["source"] == FARMER_1 and old["revisions"] == 2
        assert (await s.http.get("/api/programs/farmer/source", headers=me)).json()["source"] == FARMER_2

        stopped = (await s.http.post("/api/programs/farmer/stop", headers=me)).json()
        assert stopped["state"] == "stopped"
        restarted = (await s.http.post("/api/programs/farmer/start", headers=me)).json()
        assert restarted["revision"] == 2
        assert await until(lambda: program_ops_started(s, "a1", "program:farmer@2") >= 1)
        assert (await s.http.post("/api/programs/farmer/stop", headers=me)).json()["state"] == "stopped"
        r = await s.http.post("/api/programs/farmer/stop", headers=me)
        assert r.status_code == 409 and r.json()["code"] == "program_not_running"


async def test_refusals_carry_their_codes_and_change_nothing(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        me = auth(token)
        r = await s.http.get("/api/programs/ghost", headers=me)
        assert r.status_code == 404 and r.json()["code"] == "unknown_program"
        for path in ("/api/programs/ghost/start", "/api/programs/ghost/stop"):
            assert (await s.http.post(path, headers=me)).json()["code"] == "unknown_program"
        r = await s.http.post("/api/programs/bad", json={"source": BROKEN}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "program_invalid" and "line 2" in r.json()["message"]
        r = await s.http.post("/api/programs/bad", json={"source": "wait(tick=1)\n"}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "program_invalid" and "line 1" in r.json()["message"]
        r = await s.http.post("/api/programs/bad", json={"src": "log(1)"}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "invalid_arguments" and "source" in r.json()["message"]
        r = await s.http.post("/api/programs/Bad%20Name", json={"source": "log(1)"}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "invalid_arguments"
        r = await s.http.post("/api/programs/big", json={"source": "#" * 20001}, headers=me)
        assert r.status_code == 413 and r.json()["code"] == "program_too_large"
        r = await s.http.post("/api/programs/bad", json={"source": "log(1)", "name": "other"}, headers=me)
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        r = await s.http.post("/api/programs/bad", json=["log(1)"], headers=me)
        assert r.status_code == 400
        r = await s.http.get("/api/programs/bad/logs", params={"limit": 0}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "invalid_arguments" and "limit" in r.json()["message"]
        r = await s.http.post("/api/programs/bad/start", json={"revision": "two"}, headers=me)
        assert r.status_code == 422 and r.json()["code"] == "invalid_arguments"
        assert (await s.http.get("/api/programs", headers=me)).json() == {"programs": []}

        r = await s.http.get("/api/programs")
        assert r.status_code == 401 and r.json()["code"] == "unauthorised"
        r = await s.http.post("/api/programs/x", json={"source": "log(1)"}, headers=auth("made-up-token"))
        assert r.status_code == 401
        r = await s.http.get("/api/programs", headers=auth(SIGNUP))
        assert r.status_code == 403 and r.json()["code"] == "forbidden"


async def test_an_agent_sees_and_drives_only_its_own_programs(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        await s.http.post("/api/programs/farmer", json={"source": FARMER_1}, headers=auth(ann))
        assert (await s.http.get("/api/programs", headers=auth(bob))).json() == {"programs": []}
        for method, path in (("GET", "/api/programs/farmer"), ("GET", "/api/programs/farmer/logs"),
                             ("GET", "/api/programs/farmer/source"), ("POST", "/api/programs/farmer/start"),
                             ("POST", "/api/programs/farmer/stop")):
            r = await s.http.request(method, path, headers=auth(bob))
            assert r.status_code == 404 and r.json()["code"] == "unknown_program", path
        mine = (await s.http.post("/api/programs/farmer", json={"source": FARMER_2}, headers=auth(bob))).json()
        assert mine["revision"] == 1  # bob's own program of the same name
        assert (await s.http.get("/api/programs/farmer/source", headers=auth(ann))).json()["source"] == FARMER_1


async def test_routes_come_from_the_lifecycle_table(tmp_path):
    async with serving(tmp_path) as s:
        paths = (await s.http.get("/openapi.json")).json()["paths"]
    for op in PROGRAM_OPS:
        documented = paths[op.path][op.method.lower()]
        assert documented["operationId"] == op.tool and documented["description"] == op.description()
        names = {p["name"] for p in documented.get("parameters", [])}
        fields = set(op.args.model_fields)
        if op.method == "GET":
            assert names == fields
        else:
            body = documented.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            assert names | set(body.get("properties", {})) == fields


def test_every_service_code_has_an_http_status():
    assert set(SERVICE_CODES) <= set(STATUS)
