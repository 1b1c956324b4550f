"""/docs and /redoc work with no network: every asset their pages reference is served by the app itself."""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import os
import re
import shutil
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from server_support import BASE, serving

from wildhold.agents.scaffold.loopback import Loopback
from wildhold.server.apidocs import ASSETS_DIR
from wildhold.server.http import create_app
from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from paths_support import ROOT

ROOT = ROOT
ASSET_TYPES = {"script": ("text/javascript", "application/javascript"), "stylesheet": ("text/css",),
               "icon": ("image/svg+xml", "image/png", "image/x-icon", "image/vnd.microsoft.icon")}


class References(HTMLParser):
    """Every URL a page loads: script src, link href, img src, and the spec URL of the reference page."""

    def __init__(self) -> None:
        super().__init__()
        self.assets: list[tuple[str, str]] = []  # (kind, url)
        self.spec_urls: list[str] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "script":
            self._in_script = True
            if a.get("src"):
                self.assets.append(("script", a["src"]))
        elif tag == "link" and a.get("href"):
            rel = a.get("rel", "")
            self.assets.append(("stylesheet" if "stylesheet" in rel else "icon" if "icon" in rel else rel, a["href"]))
        elif tag == "img" and a.get("src"):
            self.assets.append(("icon", a["src"]))
        if a.get("spec-url"):
            self.spec_urls.append(a["spec-url"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data)


def parse(html: str) -> References:
    refs = References()
    refs.feed(html)
    refs.close()
    return refs


def local(url: str, page: str) -> str:
    """The path of a URL the page loads, asserting it is this app's own (no other scheme or host)."""
    absolute = urljoin(f"{BASE}{page}", url)
    parts, app = urlsplit(absolute), urlsplit(BASE)
    assert (parts.scheme, parts.netloc) == (app.scheme, app.netloc), f"{page} loads {url} from elsewhere"
    return parts.path


pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def check_assets(http: httpx.AsyncClient, page: str, refs: References) -> dict[str, bytes]:
    fetched: dict[str, bytes] = {}
    for kind, url in refs.assets:
        assert kind in ASSET_TYPES, f"{page} loads an unexpected kind of asset: {kind} {url}"
        r = await http.get(local(url, page))
        assert r.status_code == 200, f"{page}: {url} -> {r.status_code}"
        assert r.headers["content-type"].split(";")[0] in ASSET_TYPES[kind], (url, r.headers["content-type"])
        assert len(r.content) > (10_000 if kind != "icon" else 100), f"{url} is only {len(r.content)} bytes"
        fetched[kind] = fetched.get(kind, b"") + r.content
    return fetched


async def check_spec(http: httpx.AsyncClient, page: str, url: str) -> None:
    r = await http.get(local(url, page))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    paths = r.json()["paths"]
    assert {"/api/agents", "/api/observation", "/api/actions/move", "/api/wait"} <= set(paths)
    assert paths["/api/actions/move"]["post"]["operationId"] == "act_move"


async def test_swagger_page_loads_only_assets_the_app_serves_and_its_spec(tmp_path):
    async with serving(tmp_path) as s:
        r = await s.http.get("/docs")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "://" not in r.text  # no absolute URL anywhere: not in a tag, not in the inline script
        refs = parse(r.text)
        assert sorted(k for k, _ in refs.assets) == ["icon", "script", "stylesheet"]
        fetched = await check_assets(s.http, "/docs", refs)
        # The inline script builds the UI from what the served bundle defines, from the spec at `url:`.
        (boot,) = refs.inline
        assert "SwaggerUIBundle(" in boot and b"exports.SwaggerUIBundle" in fetched["script"]
        assert b".swagger-ui" in fetched["stylesheet"]
        (spec,) = re.findall(r"""\burl:\s*['"]([^'"]+)['"]""", boot)
        await check_spec(s.http, "/docs", spec)
        assert "oauth2RedirectUrl" not in boot  # bearer tokens only: no OAuth2 flow, no redirect page to serve


async def test_redoc_page_loads_only_assets_the_app_serves_and_its_spec(tmp_path):
    async with serving(tmp_path) as s:
        r = await s.http.get("/redoc")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "://" not in r.text  # no fonts or scripts from elsewhere
        refs = parse(r.text)
        assert sorted(k for k, _ in refs.assets) == ["icon", "script"]
        fetched = await check_assets(s.http, "/redoc", refs)
        assert b"spec-url" in fetched["script"]  # the standalone bundle reads the <redoc spec-url> element
        (spec,) = refs.spec_urls
        await check_spec(s.http, "/redoc", spec)


async def test_pages_follow_a_root_path_prefix(tmp_path):
    async with serving(tmp_path) as s:
        prefixed = httpx.AsyncClient(transport=httpx.ASGITransport(app=s.app, root_path="/wh"), base_url=BASE)
        async with prefixed:
            r = await prefixed.get("/docs")
            refs = parse(r.text)
            assert refs.assets and all(urlsplit(u).path.startswith("/wh/static/docs/") for _, u in refs.assets)
            assert "url: '/wh/openapi.json'" in r.text
            r = await prefixed.get("/redoc")
            assert parse(r.text).spec_urls == ["/wh/openapi.json"]


async def test_an_unknown_asset_is_a_json_404(tmp_path):
    async with serving(tmp_path) as s:
        r = await s.http.get("/static/docs/nothing-here.js")
        assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_vendored_assets_are_unchanged_licensed_and_in_the_wheel():
    sums = (ASSETS_DIR / "SHA256SUMS").read_text().split("\n")
    listed = dict(reversed(line.split()) for line in sums if line.strip())
    assert set(listed) == {"swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"}
    for name, digest in listed.items():
        assert hashlib.sha256((ASSETS_DIR / name).read_bytes()).hexdigest() == digest, f"{name} differs from SHA256SUMS"
    for licence in ("swagger-ui.LICENSE", "swagger-ui.NOTICE", "redoc.LICENSE",
                    "swagger-ui-bundle.js.LICENSE.txt", "redoc.standalone.js.LICENSE.txt"):
        assert (ASSETS_DIR / licence).stat().st_size > 0
    # Every file of the folder ships as package data, or the pages of an installed wheel lose their assets.
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["wildhold"]
    package = ROOT / "src" / "wildhold"
    for f in ASSETS_DIR.iterdir():
        rel = f.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), f"{rel} is not in [tool.setuptools.package-data]"


CHROMIUM = next((p for p in (os.environ.get("WILDHOLD_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser"), shutil.which("google-chrome")) if p), None)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (install chromium to run the render check)")
@pytest.mark.parametrize("page, rendered", [
    ("/docs", [r'class="opblock opblock-post', r"/api/actions/move", r"/api/observation"]),
    ("/redoc", [r"/api/actions/move", r"/api/observation", r'data-section-id="tag/actions"']),
])
def test_a_headless_browser_renders_the_operations_with_no_network(tmp_path, page, rendered):
    """A real browser over TCP, every address but loopback sent to a dead proxy: the page still renders."""
    config = HostConfig(signup_token="signup-token-for-docs", admin_token="admin-token-for-docs", clock="lockstep",
                        rate_per_s=0.0)
    host = Host.open(tmp_path / "world", config, "tiny", 2, manifest_extra={"tools_hash": "test"})
    app = create_app(host)

    async def browse() -> str:
        async with Loopback(app) as server:
            proc = await asyncio.create_subprocess_exec(
                CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                f"--user-data-dir={tmp_path / 'profile'}", "--proxy-server=http://127.0.0.1:9",
                "--virtual-time-budget=10000", "--dump-dom", f"{server.url}{page}",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
            return out.decode()

    try:
        dom = asyncio.run(browse())
    finally:
        host.close()
    for needle in rendered:
        assert needle in dom, f"{page}: {needle!r} not in the rendered page"
