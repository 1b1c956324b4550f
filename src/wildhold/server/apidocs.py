"""The interactive API documentation, `/docs` and `/redoc`, served with every asset from the package itself.

The app is built with its default documentation pages off; these routes give the same pages with
their scripts, stylesheet and icon under `/static/docs`, so they render with no network at all.
The assets and their licences are in `static/docs/` (`SOURCES.md` says where each comes from).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(__file__).parent / "static" / "docs"
ASSETS_URL = "/static/docs"
DOCS_URL, REDOC_URL = "/docs", "/redoc"


def add_docs(app: FastAPI) -> None:
    """Mount the documentation assets and add the two pages; call on an app made with docs_url=redoc_url=None."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")

    def base(request: Request) -> str:
        return request.scope.get("root_path", "").rstrip("/")

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_page(request: Request) -> HTMLResponse:
        root = base(request)
        # The only security scheme is a bearer token, so no OAuth2 redirect page; no online validator either.
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.svg",
            swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": True},
        )

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc_page(request: Request) -> HTMLResponse:
        root = base(request)
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API reference",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.svg", with_google_fonts=False,
        )
