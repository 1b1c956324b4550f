from __future__ import annotations

import pytest


@pytest.fixture
def entry_point(tmp_path, monkeypatch):
    """What `pip install wildhold[inspect]` gives Inspect: the `inspect_ai` entry point naming the registry module."""
    pytest.importorskip("inspect_ai")
    from inspect_ai._util.entrypoints import clear_entry_points_state

    dist = tmp_path / "site" / "wildhold_inspect_entry-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: wildhold-inspect-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\nwildhold = wildhold.inspectai._registry\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    clear_entry_points_state()
    yield
    clear_entry_points_state()
