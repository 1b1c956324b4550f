"""What cost an outside agent turns, each reproduced as an agent meets it over the served faces: a wait right
after an operation ended, a direct action while its own program acts, characters named by name, trade offers
in the inbox, program start arguments."""

from __future__ import annotations

import pytest

from server_support import auth, serving, until

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


async def test_a_character_is_named_by_id_or_name_and_an_unknown_one_is_told_what_ids_look_like(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, joined = await s.register("Bob")
        async with s.mcp(ann) as client:
            refused = await client.call_tool("whisper", {"to": "carol", "text": "hello"})
            offered = await client.call_tool("offer_trade", {"to": "bob", "give": {"wood": 1}, "ticks": 30})
            assert not offered.is_error, offered.content[0].text
        assert refused.is_error and refused.structured_content["code"] == "unknown_character"
        message = refused.structured_content["message"]
        assert "Ids look like 'a1'" in message and f"{joined['agent']} (Bob)" in message, message
        op = s.host.operations.ops[offered.structured_content["op"]]
        assert op["args"]["to"] == joined["agent"], "the operation carries the id the name stands for"


async def test_a_trade_offered_to_a_character_reaches_its_inbox(tmp_path):
    async with serving(tmp_path) as s:
        ann, me = await s.register("ann")
        bob, _ = await s.register("bob")
        await s.http.post("/api/actions/wait", json={"ticks": 30}, headers=auth(bob))  # the lockstep clock runs on
        offered = await s.http.post("/api/actions/offer_trade", headers=auth(ann),
                                    json={"to": "bob", "give": {"wood": 2}, "want": {"berries": 1}, "ticks": 30})
        assert offered.status_code == 200, offered.text
        trade = offered.json()["op"]
        await s.http.get("/api/wait_operation", params={"op": trade, "timeout_s": 5}, headers=auth(ann))
        inbox = (await s.http.get("/api/observe", headers=auth(bob))).json()["messages"]["inbox"]
        offer = next(m for m in inbox if m["kind"] == "trade_offer")
        assert offer["from"] == me["agent"] and "2 wood for 1 berries" in offer["text"] and "accept_trade" in offer["text"]


async def finished_log(s, client, agent: str, name: str) -> list[str]:
    """The lines a program logged, once it has finished."""
    assert await until(lambda: s.host.programs.status(agent, name)["state"] == "finished", timeout=20)
    return [line["text"] for line in (await client.call_tool("program_logs", {"name": name})).structured_content["lines"]]


LONG_WAIT = 'r = wait(ticks=200)\nlog("then", r["status"])\n'


async def test_a_direct_action_goes_ahead_of_the_characters_own_program_and_the_program_sees_it_cancelled(tmp_path):
    async with serving(tmp_path) as s:
        token, me = await s.register("ann")
        async with s.mcp(token) as client:
            assert not (await client.call_tool("save_program", {"name": "sitter", "source": LONG_WAIT})).is_error
            assert not (await client.call_tool("start_program", {"name": "sitter"})).is_error
            agent = me["agent"]
            assert await until(lambda: s.host.world.chars[agent].op is not None, timeout=20)
            held = s.host.world.chars[agent].op
            said = await client.call_tool("say", {"text": "hello"})  # a moment's action beside a 200-tick wait
            assert not said.is_error, said.content[0].text
            assert s.host.operations.ops[held]["status"] == "cancelled"
            assert await finished_log(s, client, agent, "sitter") == ["then cancelled"]
        cancels = [i for i in s.host.match.store.inputs(0) if i.kind == "action" and i.name == "cancel"]
        assert [(c.agent, c.issuer) for c in cancels] == [(agent, "direct")], "the cancel is recorded, so replays hold"


async def test_an_operation_the_agent_started_itself_is_not_cancelled_by_its_next_action(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        waited = (await s.http.post("/api/actions/wait", json={"ticks": 200}, headers=auth(token))).json()
        said = await s.http.post("/api/actions/say", json={"text": "hello"}, headers=auth(token))
        assert said.status_code == 409 and said.json()["code"] == "busy"
        assert s.host.operations.ops[waited["op"]]["status"] == "running"


async def test_the_checker_says_which_annotation_lets_a_list_item_be_a_direction(tmp_path):
    source = 'WANDER = ["w", "n"]\ni = 0\nmove(direction=WANDER[i])\n'
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        async with s.mcp(token) as client:
            refused = await client.call_tool("save_program", {"name": "wander", "source": source})
            assert refused.is_error and refused.structured_content["code"] == "program_invalid"
            fix = 'WAYS: list[Literal["n", "ne", "e", "se", "s", "sw", "w", "nw"]]'
            assert fix in refused.structured_content["message"]
            fixed = "from typing import Literal\n" + source.replace("WANDER =", 'WANDER: list[Literal["w", "n"]] =')
            assert not (await client.call_tool("save_program", {"name": "wander", "source": fixed})).is_error


READS_ITS_ARGS = 'got = start_args()\nlog("going", got["way"], got.get("steps", 1))\n'


async def test_a_program_reads_the_arguments_it_was_started_with_and_the_start_records_them(tmp_path):
    async with serving(tmp_path) as s:
        token, me = await s.register("ann")
        async with s.mcp(token) as client:
            assert not (await client.call_tool("save_program", {"name": "walker", "source": READS_ITS_ARGS})).is_error
            too_big = await client.call_tool("start_program", {"name": "walker", "args": {"way": "n" * 5000}})
            assert too_big.is_error and "at most" in too_big.structured_content["message"]
            started = await client.call_tool("start_program", {"name": "walker", "args": {"way": "e", "steps": 3}})
            assert not started.is_error, started.content[0].text
            assert await finished_log(s, client, me["agent"], "walker") == ["going e 3"]
        starts = [i.args for i in s.host.match.store.inputs(0) if i.kind == "program" and i.name == "start"]
        assert starts == [{"name": "walker", "revision": 1, "run": 1, "args": {"way": "e", "steps": 3}}]
        assert s.host.match.store.program_start_args() == {1: {"way": "e", "steps": 3}}


async def test_an_mcp_client_is_handed_the_briefing_itself_not_a_pointer_to_it(tmp_path):
    async with serving(tmp_path, rate_per_s=5.0, rate_burst=10, wait_max_s=30.0) as s:
        token, _ = await s.register("ann")
        async with s.mcp(token) as client:
            told = client.instructions
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
    assert "/llms.txt" not in told
    for fact in ("whether or not you acted", "5 requests a second", "at most 30 s", "recorded as idle", "wildhold://rules"):
        assert fact in told, fact
    assert "wildhold://rules" in resources


async def test_a_match_with_names_preemption_and_start_arguments_replays_from_its_archive(tmp_path):
    """What the world does differently now (a name resolved, a program's operation cancelled by a direct action, a
    run's start arguments) is all in the recorded inputs: the archive re-simulates to the same events and state."""
    from pathlib import Path

    from wildhold.service.verify import verify_archive

    async with serving(tmp_path / "match") as s:
        token, me = await s.register("ann")
        bob, _ = await s.register("bob")
        await s.http.post("/api/actions/wait", json={"ticks": 240}, headers=auth(bob))  # the lockstep clock runs on
        agent = me["agent"]
        async with s.mcp(token) as client:
            source = 'way = start_args()["way"]\nr = wait(ticks=200)\nlog(way, r["status"])\n'
            assert not (await client.call_tool("save_program", {"name": "sitter", "source": source})).is_error
            assert not (await client.call_tool("start_program", {"name": "sitter", "args": {"way": "n"}})).is_error
            assert await until(lambda: s.host.world.chars[agent].op is not None, timeout=20)
            offered = await client.call_tool("offer_trade", {"to": "BOB", "give": {"wood": 1}, "ticks": 30})
            assert not offered.is_error, offered.content[0].text
            assert await finished_log(s, client, agent, "sitter") == ["n cancelled"]
        archive = Path(s.host.stop("the test is over")["archive"])
    verdict = verify_archive(archive, cache=tmp_path / "cache")
    assert verdict.status == "verified", verdict
