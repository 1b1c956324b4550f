"""The replay viewer: any tick rebuilt exactly as a re-simulation from the seed gives it, an archive that is not
what was played refused, each agent's track laid on the same timeline with its actions linked to their events."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from wildhold.agents.runner import ScriptedRun
from wildhold.content import default_content
from wildhold.eval.html import render_html
from wildhold.eval.report import score_archive
from wildhold.service.match import replay
from wildhold.store.archive import Archive, ArchiveError
from wildhold.web import viewer
from wildhold.web.viewer import Timeline, Tracks, viewer_app
from wildhold.world.serialize import state_hash

pytestmark = pytest.mark.slow(seconds=8)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("viewer")
    run = ScriptedRun.start("tiny", 3, folder / "m.sqlite")
    try:
        run.run(until=run.world.tick + 300)
        run.match.end("enough for the viewer")
        return run.match.export(folder / "m.wildhold.zip")
    finally:
        run.match.close()


def test_every_tick_is_the_state_a_re_simulation_reaches(archive, monkeypatch):
    monkeypatch.setattr(viewer, "KEYFRAME_TICKS", 7)  # many kept states: ticks on, before and after each
    timeline = Timeline(archive)
    assert len(timeline.keyframes) > 10
    with Archive(archive) as a:
        inputs, m = list(a.inputs()), a.manifest
    content = default_content()
    for tick in sorted({m["start_tick"], m["start_tick"] + 1, *range(m["start_tick"] + 5, m["final_tick"], 37),
                        timeline.keyframes[3][0], timeline.keyframes[3][0] - 1, m["final_tick"]}):
        expected = replay(content, m["scenario"], m["seed"], [i for i in inputs if i.tick <= tick], tick)
        assert state_hash(timeline.world_at(tick)) == state_hash(expected), tick
    frame = timeline.frame(m["start_tick"] + 100)
    assert all(e["tick"] <= m["start_tick"] + 100 for e in frame["feed"])
    assert frame["feed"][0]["seq"] == max(e["seq"] for e in frame["feed"])
    with pytest.raises(ValueError, match="tick must be between"):
        timeline.frame(m["final_tick"] + 1)


def test_an_archive_that_is_not_what_was_played_is_refused(archive, tmp_path):
    forged = tmp_path / "forged.wildhold.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(forged, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "manifest.json":
                manifest = orjson.loads(data)
                manifest["seed"] += 1
                data = orjson.dumps(manifest)
            dst.writestr(item, data)
    with pytest.raises(ArchiveError):
        Timeline(forged)


def test_the_viewer_serves_the_match_a_frame_and_refuses_a_tick_outside_it(archive):
    timeline = Timeline(archive)
    with TestClient(viewer_app(timeline)) as client:
        meta = client.get("/api/view/meta").json()
        assert meta["events"] == len(timeline.events) and meta["tracks"] == []
        tick = meta["start_tick"] + 50
        frame = client.get("/api/view/frame", params={"tick": tick}).json()
        world = timeline.world_at(tick)
        assert {c["agent"]: (c["x"], c["y"]) for c in frame["characters"]} == \
            {a: world.xy(c.pos) for a, c in world.chars.items()}
        assert client.get("/api/view/frame", params={"tick": meta["final_tick"] + 5}).status_code == 400
        assert client.get("/api/view/track/a1").status_code == 404
        page = client.get("/")
        assert page.status_code == 200 and "viewer.js" in page.text


def test_each_character_keeps_its_colour_as_ranks_change_and_the_report_draws_it_the_same(tmp_path):
    run = ScriptedRun.start("famine", 1, tmp_path / "m.sqlite")
    try:
        run.run(until=run.world.tick + 400)
        run.match.end("enough for ranks to change")
        path = run.match.export(tmp_path / "famine.wildhold.zip")
    finally:
        run.match.close()
    timeline = Timeline(path)
    with TestClient(viewer_app(timeline)) as client:
        meta = client.get("/api/view/meta").json()
        own = {a["name"]: a["colour"] for a in meta["agents"]}
        orders = set()
        for tick in range(meta["start_tick"], meta["final_tick"] + 1, 20):
            frame = client.get("/api/view/frame", params={"tick": tick}).json()
            orders.add(tuple(c["name"] for c in frame["characters"]))
            assert {c["name"]: c["colour"] for c in frame["characters"]} == own, tick
    assert len(orders) > 1 and len(set(own.values())) == len(own) == 6  # ranks moved; colours did not
    page = render_html(score_archive(path))
    assert dict((n, c) for c, n in re.findall(r'<span class="swatch" style="background:(#\w+)"></span>([^<]+)</td>', page)) == own


def test_a_run_folders_tracks_link_each_action_to_the_events_it_caused(tmp_path):
    from typer.testing import CliRunner

    from paths_support import ROOT
    from wildhold.cli import app

    out = tmp_path / "smoke"
    result = CliRunner().invoke(app, ["run", str(ROOT / "examples" / "offline-smoke.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    timeline = Timeline(out / "world" / "match.wildhold.zip")
    tracks = Tracks(out, timeline)
    names = {a["id"]: a["name"] for a in timeline.manifest["agents"]}
    models = {a for a, n in names.items() if n in ("explorer", "stumbler")}
    assert models <= set(tracks.tracks) <= set(names)
    starts, events = timeline.op_starts(), timeline.op_events()
    linked = [i for t in tracks.tracks.values() for i in t["items"] if i.get("op")]
    assert linked, "no action of the run was linked to its operation"
    for item in linked:
        assert item["tick"] == starts[item["op"]] and item["events"] == events[item["op"]]
    for agent, track in tracks.tracks.items():
        ticks = [i["tick"] for i in track["items"]]
        assert ticks == sorted(ticks) and ticks[0] >= timeline.start_tick and ticks[-1] <= timeline.final_tick
        turns = [i for i in track["items"] if i["kind"] == "llm_call"]
        if agent in models:
            assert turns and turns[-1]["dollars"] == track["dollars"] > 0 and track["sessions"]
    with pytest.raises(FileNotFoundError):
        Tracks(tmp_path, timeline)
