"""Build or serve the documentation site of a checkout, offline: MkDocs with the Material theme (the docs extra)."""

from __future__ import annotations

import os
from pathlib import Path

from wildhold.extras import require

CONFIG = Path(__file__).resolve().parents[3] / "mkdocs.yml"  # src/wildhold/handbook/site.py -> the checkout's root


class NoSite(ValueError):
    """The site cannot be built or served here: no sources (an installed package carries no docs/), a folder it
    cannot write, or a page whose link or reference does not resolve."""


def config_file() -> Path:
    if not CONFIG.is_file():
        raise NoSite("the documentation site is built from a checkout of Wildhold (mkdocs.yml and docs/ beside src/); "
                     "this install has none: read it in the repository's docs/ folder")
    return CONFIG


def _mkdocs(feature: str) -> None:
    require("docs", feature)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # the theme's banner about its successor, on every build


def build(out: Path, *, strict: bool = True) -> Path:
    """Build the site into `out` (strict: a broken link, anchor or nav entry fails the build); the index page."""
    out = Path(out)
    above = next((p for p in (out, *out.parents) if p.exists()), None)
    if above is not None and not above.is_dir():
        raise NoSite(f"{above} is not a folder: the site needs one to build into")
    _mkdocs("building the documentation site")
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    try:
        mkdocs_build(load_config(str(config_file()), site_dir=str(out.resolve()), strict=strict))
    except MkDocsException as exc:  # strict: a warning (a broken link, anchor or nav entry) ends the build
        raise NoSite(f"the documentation site did not build: {exc}") from None
    return out / "index.html"


def serve(port: int) -> None:
    """Serve the site on 127.0.0.1:`port`, rebuilt as its sources change, until interrupted."""
    _mkdocs("wildhold docs")
    from mkdocs.commands.serve import serve as mkdocs_serve

    mkdocs_serve(config_file=str(config_file()), dev_addr=f"127.0.0.1:{port}", open_in_browser=False)
