"""The built documentation site in a real browser (Playwright driving Debian's Chromium), opened from disk: the
getting-started and reproduce pages render their headings, code and tables, and not one request
leaves the machine. Screenshots go to $WILDHOLD_TEST_ARTIFACTS when it is set (else the test's temporary folder)."""

from __future__ import annotations

import asyncio

from browser_support import CHROMIUM, CHROMIUM_ARGS, artefacts, async_playwright, browser_marks

from wildhold.handbook.site import build

pytestmark = browser_marks(seconds=40)
PAGES = {"getting-started": "Getting started in five minutes", "reproduce": "Reproduce the source documents"}


def test_the_pages_render_from_disk_and_request_nothing_from_the_internet(tmp_path):
    site = tmp_path / "site"
    build(site)
    shots = artefacts(tmp_path)
    requested: list[str] = []

    async def run() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1300, "height": 900})
            page.on("request", lambda request: requested.append(request.url))
            for name, title in PAGES.items():
                await page.goto((site / f"{name}.html").as_uri(), wait_until="load")
                assert (await page.locator("h1").first.inner_text()).startswith(title)
                assert await page.locator("pre code").count() >= 4  # the commands and the snippets, highlighted
                await page.screenshot(path=str(shots / f"docs-{name}.png"), full_page=False)
            assert await page.locator("table").count() >= 2  # the reproduce page's map of results, its research questions
            await browser.close()

    asyncio.run(run())
    assert requested and not [url for url in requested if not url.startswith(("file://", "data:", "blob:"))]
