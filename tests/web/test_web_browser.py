"""The live page in a real browser: Playwright driving Debian's Chromium against `wildhold serve`'s app on
loopback. Screenshots go to $WILDHOLD_TEST_ARTIFACTS when it is set (else the test's temporary folder).
Where CI runs (CI set), a missing Chromium fails the test instead of skipping it: .ci/run installs it."""

from __future__ import annotations

import asyncio

from browser_support import CHROMIUM, CHROMIUM_ARGS, artefacts, async_playwright, browser_marks
from server_support import ADMIN, SIGNUP, SPECTATOR, auth, config

from wildhold.agents.scaffold.loopback import Loopback
from wildhold.eval.html import render_html
from wildhold.eval.report import score_archive
from wildhold.server.http import create_app
from wildhold.service.host import Host
from wildhold.web.site import add_site

pytestmark = browser_marks(seconds=40)
WAIT_MS = 30_000  # generous: a loaded machine is slow, and the test proves arrival, not speed


async def _registered(http, names):
    tokens = {}
    for name in names:
        r = await http.post("/api/agents", json={"name": name}, headers=auth(SIGNUP))
        assert r.status_code == 201, r.text
        tokens[name] = r.json()["token"]
    return tokens


def test_the_live_page_draws_every_character_and_shows_a_new_event(tmp_path):
    host = Host.open(tmp_path / "world", config(clock="lockstep", turn_deadline_s=0.5), "tiny", 3,
                     manifest_extra={"tools_hash": "test"})
    app = create_app(host, scorer=score_archive, render_html=render_html)
    add_site(app)
    shots = artefacts(tmp_path)

    async def run() -> None:
        import httpx
        async with Loopback(app) as server, httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            tokens = await _registered(http, ["ann", "bob", "cy"])
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                # an agent's token does not open the live page
                await page.goto(f"{server.url}/login")
                await page.fill("input[name=token]", tokens["ann"])
                await page.click("button[type=submit]")
                assert "does not open the live page" in await page.content()
                await page.fill("input[name=token]", SPECTATOR)
                await page.click("button[type=submit]")
                await page.wait_for_function("document.querySelectorAll('#cards .card').length === 3", timeout=WAIT_MS)
                names = await page.eval_on_selector_all("#cards .card .name", "els => els.map(e => e.textContent)")
                assert sorted(names) == ["ann", "bob", "cy"]
                painted = await page.evaluate("""() => { const c = document.getElementById('map');
                    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                    let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++; return n; }""")
                assert painted > 0
                r = await http.post("/api/actions/say", json={"text": "hello from ann"}, headers=auth(tokens["ann"]))
                assert r.status_code == 200, r.text
                await page.wait_for_function(
                    "() => [...document.querySelectorAll('#feed li')].some(li => li.textContent.includes('hello from ann'))",
                    timeout=WAIT_MS)
                await page.screenshot(path=str(shots / "live.png"), full_page=True)
                await http.post("/api/admin/stop", headers=auth(ADMIN))
                await page.goto(f"{server.url}/leaderboard")
                assert "ann" in await page.content()
                await page.screenshot(path=str(shots / "leaderboard.png"), full_page=True)
                await browser.close()

    try:
        asyncio.run(run())
    finally:
        host.close()
    assert (shots / "live.png").stat().st_size > 0


def test_a_person_joins_from_the_browser_moves_and_gathers_through_the_agents_tools(tmp_path):
    host = Host.open(tmp_path / "world", config(clock="lockstep", turn_deadline_s=0.5), "tiny", 3,
                     manifest_extra={"tools_hash": "test"})
    app = create_app(host, scorer=score_archive, render_html=render_html)
    add_site(app)
    shots = artefacts(tmp_path)

    async def run() -> None:
        async with Loopback(app) as server:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = await browser.new_page(viewport={"width": 1300, "height": 900})
                await page.goto(f"{server.url}/play")
                await page.fill("#join-form input[name=name]", "dana")
                await page.fill("#join-form input[name=signup]", SIGNUP)
                await page.click("#join-form button[type=submit]")
                await page.wait_for_function("document.getElementById('status').textContent.includes('dana')", timeout=WAIT_MS)
                rec = next(r for r in host.access.records.values() if r.name == "dana")
                assert rec.extra == {"harness": "human"}
                me = host.world.chars[rec.agent]
                before = host.world.xy(me.pos)
                # the view the page holds is this character's observation: no other tile or character
                seen = await page.evaluate("() => play.obs.self.id")
                assert seen == rec.agent
                for key in ("ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"):
                    await page.keyboard.press(key)
                    await page.wait_for_function("document.getElementById('outcome').textContent.startsWith('move')",
                                                 timeout=WAIT_MS)
                moved = [e for e in host.match.store.events(0) if e[2] == "moved"]
                assert moved, "no move reached the world"
                # beside a resource node (the operator's set-up command), G gathers from it
                w = host.world
                x, y = w.xy(me.pos)
                node = min((p for p, n in w.nodes.items() if n.amount > 0 and w.walkable_terrain[w.terrain[p - 1]]
                            and p - 1 not in w.structures), key=lambda p: abs(p % w.width - x) + abs(p // w.width - y))
                host.setup("move_character", {"agent": rec.agent, "x": node % w.width - 1, "y": node // w.width})
                await page.wait_for_function(f"play.obs && play.obs.self.x === {node % w.width - 1}", timeout=WAIT_MS)
                await page.keyboard.press("g")
                await page.wait_for_function("document.getElementById('outcome').textContent.startsWith('gather')",
                                             timeout=WAIT_MS)
                submitted = [r for r in host.spectate.recent[rec.agent] if r["action"] == "gather"]
                assert submitted and submitted[-1]["accepted"], await page.text_content("#outcome")
                # the form generated from an action's schema submits through the same tool
                await page.select_option("#act-name", "wait")
                await page.fill("#act-fields input[name=ticks]", "2")
                await page.click("#act-form button[type=submit]")
                await page.wait_for_function("document.getElementById('outcome').textContent.startsWith('wait')",
                                             timeout=WAIT_MS)
                await page.screenshot(path=str(shots / "play.png"), full_page=True)
                await browser.close()

    try:
        asyncio.run(run())
    finally:
        host.close()


def test_the_viewer_scrubs_to_a_tick_with_the_replayed_positions_and_opens_an_agents_track(tmp_path):
    from typer.testing import CliRunner

    from paths_support import ROOT
    from wildhold.cli import app as cli
    from wildhold.web.viewer import Timeline, Tracks, viewer_app

    out = tmp_path / "smoke"
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples" / "offline-smoke.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    timeline = Timeline(out / "world" / "match.wildhold.zip")
    tracks = Tracks(out, timeline)
    shots = artefacts(tmp_path)
    tick = (timeline.start_tick + timeline.final_tick) // 2
    world = timeline.world_at(tick)
    expected = sorted(f"{c.name} {world.xy(c.pos)[0]}, {world.xy(c.pos)[1]}" for c in world.chars.values())

    async def run() -> None:
        async with Loopback(viewer_app(timeline, tracks)) as server:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = await browser.new_page(viewport={"width": 1500, "height": 1000})
                await page.goto(f"{server.url}/#agent=a1")
                await page.wait_for_function("document.querySelectorAll('#track li').length > 0", timeout=WAIT_MS)
                await page.fill("#tick-box", str(tick))
                await page.press("#tick-box", "Enter")
                await page.wait_for_function(f"document.getElementById('clock').textContent.includes('tick {tick};')",
                                             timeout=WAIT_MS)
                shown = await page.eval_on_selector_all(
                    "#standings tbody tr", "rows => rows.map(r => r.cells[1].textContent.slice(2) + ' ' + r.cells[2].textContent)")
                assert sorted(shown) == expected
                assert f"tick={tick}" in page.url and "agent=a1" in page.url  # a deep link to this view
                linked = await page.query_selector("#track li:has-text('→ op')")
                assert linked is not None, "no action of a1 is linked to its operation"
                await linked.click()
                await page.wait_for_function("document.getElementById('detail').textContent.includes('caused events')",
                                             timeout=WAIT_MS)
                await page.wait_for_function("document.querySelectorAll('#feed li.linked').length > 0", timeout=WAIT_MS)
                await page.screenshot(path=str(shots / "viewer.png"), full_page=True)
                await browser.close()

    asyncio.run(run())
