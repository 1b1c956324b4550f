"""The pages of a served match over HTTP, in-process: who may watch the live view, what it shows, how it is
pushed, the archive pages computed as the CLI computes them, and agent-written text escaped on every page."""

from __future__ import annotations

import asyncio
import re

import orjson
import pytest
from server_support import ADMIN, SIGNUP, SPECTATOR, auth, serving, until

from wildhold.eval.leaderboard import leaderboard
from wildhold.looks import palette
from wildhold.service.access import HostConfig
from wildhold.store.archive import Archive
from wildhold.world.parts import society

pytestmark = pytest.mark.anyio
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def anyio_backend():
    return "asyncio"


def views(body: bytes) -> list[dict]:
    """The live views a server-sent event stream carried."""
    return [orjson.loads(m) for m in re.findall(rb"^event: view\ndata: (.*)$", body, re.M)]


async def test_the_live_view_is_the_spectators_and_the_operators_never_an_agents(tmp_path):
    async with serving(tmp_path, site=True) as s:
        token, _ = await s.register("ann")
        assert (await s.http.get("/api/live")).status_code == 401
        refused = await s.http.get("/api/live", headers=auth(token))
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        assert (await s.http.get("/api/live/map", headers=auth(token))).status_code == 403
        for watcher in (SPECTATOR, ADMIN):
            live = await s.http.get("/api/live", headers=auth(watcher))
            assert live.status_code == 200
            assert [c["name"] for c in live.json()["characters"]] == ["ann"]
        # the spectator token acts for no one and opens no MCP session
        assert (await s.http.get("/api/observe", headers=auth(SPECTATOR))).status_code == 403
        opened = await s.http.post("/mcp", headers={**auth(SPECTATOR), "Accept": "application/json, text/event-stream"},
                                   json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert opened.status_code == 403


async def test_the_live_view_shows_every_character_where_it_is_with_its_needs_and_recent_submissions(tmp_path):
    async with serving(tmp_path, site=True) as s:
        tokens = [(await s.register(name))[0] for name in ("ann", "bob")]
        bad = await s.http.post("/api/actions/eat", json={"item": "bread"}, headers=auth(tokens[0]))
        assert bad.status_code == 409
        ok = await s.http.post("/api/actions/wait", json={"ticks": 2}, headers=auth(tokens[1]))
        assert ok.status_code == 200
        view = (await s.http.get("/api/live", headers=auth(SPECTATOR))).json()
        w = s.host.world
        by_name = {c["name"]: c for c in view["characters"]}
        for name, c in by_name.items():
            char = w.chars[c["agent"]]
            assert (c["x"], c["y"]) == w.xy(char.pos) and c["health"] == char.health and c["satiety"] == char.satiety
        assert by_name["ann"]["recent"][-1] == {"tick": w.tick, "action": "eat", "accepted": False,
                                                "code": "not_in_inventory", "message": bad.json()["message"]}
        assert by_name["bob"]["recent"][-1]["accepted"] and by_name["bob"]["operation"]["action"] == "wait"
        assert {c["rank"] for c in view["characters"]} <= {1, 2}
        own = palette.colours(["ann", "bob"])  # by name in joining order, as the viewer and the report colour them
        assert {c["name"]: c["colour"] for c in view["characters"]} == own and own["ann"] != own["bob"]
        assert view["feed"][0]["seq"] == w.events.seq  # newest first
        assert len(view["creatures"]) == len(w.creatures) and len(view["structures"]) == len(w.structures)
        fixed = (await s.http.get("/api/live/map", headers=auth(SPECTATOR))).json()
        assert len(fixed["terrain"]) == fixed["width"] * fixed["height"] == w.width * w.height


async def test_the_stream_pushes_a_new_view_when_the_world_moves(tmp_path):
    async with serving(tmp_path, site=True) as s:
        token, _ = await s.register("ann")
        start = s.host.world.tick
        stream = asyncio.create_task(s.http.get("/api/live/stream", params={"max_s": 3}, headers=auth(SPECTATOR)))
        await asyncio.sleep(0.3)
        r = await s.http.post("/api/actions/wait", json={"ticks": 1}, headers=auth(token))
        assert r.status_code == 200
        assert await until(lambda: s.host.world.tick > start, timeout=10)
        body = (await stream).content
        ticks = [v["time"]["tick"] for v in views(body)]
        assert ticks[0] == start and ticks[-1] > start
        assert (await s.http.get("/api/live/stream", params={"max_s": 0}, headers=auth(SPECTATOR))).status_code == 400


async def test_a_token_opens_the_live_page_once_and_a_cookie_keeps_it(tmp_path):
    async with serving(tmp_path, site=True) as s:
        token, _ = await s.register("ann")
        public = await s.http.get("/")
        assert public.status_code == 200 and "ann" in public.text and "live.js" not in public.text
        wrong = await s.http.post("/login", data={"token": token})
        assert wrong.status_code == 401 and "wildhold_watch" not in wrong.headers.get("set-cookie", "")
        opened = await s.http.post("/login", data={"token": SPECTATOR})
        assert opened.status_code == 303 and "HttpOnly" in opened.headers["set-cookie"]
        page = await s.http.get("/")  # the client keeps the cookie
        assert "live.js" in page.text and "<canvas" in page.text
        assert (await s.http.get("/api/live")).status_code == 200
        assert (await s.http.get("/static/web/live.js")).status_code == 200
        await s.http.post("/logout")
        assert "live.js" not in (await s.http.get("/")).text


async def test_agent_written_text_is_escaped_on_every_page(tmp_path):
    async with serving(tmp_path, site=True) as s:
        token, _ = await s.register("ann")
        other, _ = await s.register("bob")
        for who, text in ((token, HOSTILE), (other, "**bold** [link](http://example.invalid) | cell")):
            assert (await s.http.post("/api/actions/post", json={"text": text}, headers=auth(who))).status_code == 200
        assert await until(lambda: len(society.state(s.host.world).board) == 2, timeout=10)
        await s.http.post("/api/write_epilogue", json={"text": HOSTILE}, headers=auth(token))
        stopped = await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        assert stopped.status_code == 200
        await s.http.post("/login", data={"token": SPECTATOR})
        for path in ("/", "/matches", "/matches/current", "/leaderboard", "/u/ann", "/login"):
            page = await s.http.get(path)
            assert page.status_code == 200, (path, page.text[:300])
            assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
        s.http.cookies.clear()
        public = (await s.http.get("/")).text
        assert "&lt;script&gt;alert" in public  # the board post is shown, as text
        live = (await s.http.get("/api/live", headers=auth(SPECTATOR))).json()
        assert any(e["data"].get("text") == HOSTILE for e in live["feed"])  # JSON carries it; the page sets it as text


async def test_matches_leaderboard_and_profiles_are_the_clis_figures_once_the_match_is_over(tmp_path):
    async with serving(tmp_path, site=True) as s:
        for name in ("ann", "bob"):
            await s.register(name)
        assert "No finished match" in (await s.http.get("/matches")).text
        assert (await s.http.get("/matches/current")).status_code == 403  # a live match's report is the operator's
        assert (await s.http.get("/api/ratings")).json()["rows"] == []
        await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        listed = (await s.http.get("/matches")).text
        assert 'href="/matches/current"' in listed
        report = await s.http.get("/matches/current")
        assert report.status_code == 200 and "<html" in report.text.lower()
        swatches = re.findall(r'<span class="swatch" style="background:(#\w+)"></span>([^<]+)</td>', report.text)
        assert {n: c for c, n in swatches} == palette.colours(["ann", "bob"])
        served = (await s.http.get("/api/ratings")).json()
        cli = leaderboard([s.host.archives.path])
        assert served["rows"] == cli["rows"] and served["matches"] == cli["matches"]
        board = (await s.http.get("/leaderboard")).text
        assert "Composite (95% CI)" in board  # every aggregate the page prints carries its interval
        assert board.count("<td>not recorded</td><td>not recorded</td>") == 2  # this match recorded no model usage
        for row in cli["rows"]:
            assert row["config"] in board
            composite = row["measures"].get("composite")
            if composite and composite["mean"] is not None:
                assert f"<td>{composite['mean']}" in board
        profile = await s.http.get("/u/bob")
        assert profile.status_code == 200 and "bob" in profile.text
        assert (await s.http.get("/u/nobody")).status_code == 404


MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "replay/scout-frontier-v1")


def _session(n: int, model: str, cost: float) -> dict:
    return {"session": n, "model": model, "llm_calls": 2, "input_tokens": 1000, "cached_input_tokens": 0,
            "output_tokens": 100 * n, "cost_usd": cost, "price": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
            "price_table": "ab" * 32}


async def test_the_leaderboard_shows_tokens_and_dollars_and_links_profiles_of_models_named_with_a_slash(tmp_path):
    async with serving(tmp_path, site=True) as s:
        agents = []
        for name, model in zip(("ann", "bob"), MODELS):
            r = await s.http.post("/api/agents", json={"name": name, "model": model}, headers=auth(SIGNUP))
            agents.append(r.json()["agent"])
        s.host.record_spend(agents[0], _session(1, MODELS[0], 0.0125))
        s.host.record_spend(agents[0], _session(2, MODELS[0], 1234.5))
        await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        served = (await s.http.get("/api/ratings")).json()
        board = (await s.http.get("/leaderboard")).text
        assert "<th>Tokens</th><th>Dollars</th>" in board
        by_config = {r["config"]: r for r in served["rows"]}
        assert by_config[MODELS[0]]["spend"]["tokens"] == 2300
        assert "<td>2,300</td><td>$1,234.5125</td>" in board  # the figures /api/ratings and the CLI give
        assert "<td>0</td><td>$0.0000</td>" in board  # bob had no model session in a match that recorded spend
        for model in MODELS:
            link = re.search(rf'<a href="(/u/[^"]+)">{re.escape(model)}</a>', board).group(1)
            assert link == f"/u/{model}"
            profile = await s.http.get(link)
            assert profile.status_code == 200 and f"<b>{model}</b>" in profile.text, link
        assert "tokens 2,300, dollars $1,234.5125." in (await s.http.get(f"/u/{MODELS[0]}")).text
        assert (await s.http.get("/u/meta-llama/nobody")).status_code == 404


async def test_the_matches_page_says_what_each_archive_holds_and_why_one_is_refused(tmp_path):
    async with serving(tmp_path, site=True) as s:
        for name in ("ann", "bob"):
            await s.register(name)
        await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        (await s.http.get("/matches/current")).raise_for_status()  # the archive is written
        data = s.host.archives.data_dir
        copy = data / "copy.wildhold.zip"
        copy.write_bytes(s.host.archives.path.read_bytes())
        broken = data / "broken.wildhold.zip"
        broken.write_bytes(s.host.archives.path.read_bytes()[:-200])
        page = (await s.http.get("/matches")).text
        rows = {m.group(1): m.group(0) for m in re.finditer(r"<tr><td>(?:<a [^>]*>)?([\w.-]+)(?:</a>)?</td>.*?</tr>", page, re.S)}
        assert set(rows) == {"current", "copy", "broken"}
        current = rows["current"]
        with Archive(s.host.archives.path) as archive:
            ticks = archive.manifest["final_tick"] - archive.manifest["start_tick"]
        assert "<td>tiny</td><td>3</td>" in current and ">ann</a>, <a" in current and ">bob</a>" in current
        assert f"days ({ticks:,} ticks)</td>" in current and "UTC</td>" in current
        assert "<td>verified" in current or "<td>verified; the same log as" in current
        assert "the same log as" in rows["copy"] + rows["current"]  # a copy of one log is counted once
        assert "refused: broken.wildhold.zip: not a Wildhold archive" in rows["broken"] and str(data) not in page
        assert 'href="/matches/broken"' not in rows["broken"]


def test_a_spectator_token_must_differ_from_the_others():
    with pytest.raises(ValueError, match="must differ"):
        HostConfig(signup_token="signup-token", admin_token="admin-token", spectator_token="signup-token").check()
