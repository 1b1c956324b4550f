"""The browser the browser tests drive: Debian's Chromium through Playwright, found once. Where CI runs (CI set), a
missing Chromium fails the module instead of skipping it (.ci/run installs it); screenshots go to
$WILDHOLD_TEST_ARTIFACTS when it is set, else the test's temporary folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (os.environ.get("WILDHOLD_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu"]
try:
    from playwright.async_api import async_playwright
except ImportError:  # the dev extra installs it
    async_playwright = None


def browser_marks(seconds: float) -> list[pytest.MarkDecorator]:
    """A browser test module's marks: slow (it starts Chromium), skipped where there is no browser, and a failure
    instead where CI runs."""
    if (CHROMIUM is None or async_playwright is None) and os.environ.get("CI"):
        pytest.fail("CI runs the browser tests: install chromium (.ci/run does) and the dev extra", pytrace=False)
    return [pytest.mark.slow(seconds=seconds),
            pytest.mark.skipif(CHROMIUM is None or async_playwright is None,
                               reason="no Chromium or Playwright here (apt-get install chromium; pip install playwright)")]


def artefacts(tmp_path: Path) -> Path:
    """Where a test's screenshots go."""
    out = Path(os.environ.get("WILDHOLD_TEST_ARTIFACTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out
