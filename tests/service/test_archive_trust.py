"""A score stands on its archive: `report`, `leaderboard` and `export` re-simulate an archive before they
score it and refuse, in one sentence with a stable code, one that a forger edited (events with their chain
recomputed, the roster, the bound header) or that was played under other content; `--trust` scores without
checking and says so; archives of format 1 still read; resuming a finished match changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from archive_support import forge, members, write
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.eval.export import export_match
from wildhold.eval.leaderboard import leaderboard
from wildhold.eval.report import score_archive
from wildhold.service.verify import Unverified, verify_archive
from wildhold.store.archive import HEADER, Archive
from paths_support import FIXTURES as FIXTURE_ROOT

runner = CliRunner()
FIXTURES = FIXTURE_ROOT / "eval"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = runner.invoke(app, ["demo", "--scenario", "tiny", "--seed", "3", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out / "match.wildhold.zip"


def report_of(path: Path, *extra: str, cache: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["report", str(path), "--json", "--cache", str(cache), *extra])
    return result.exit_code, result.output


# ---- forged archives are refused ------------------------------------------------------------------


def test_fifty_times_the_starting_berries_with_the_chain_recomputed_is_refused(demo, tmp_path):
    honest = score_archive(demo, cache=tmp_path / "cache")
    second = next(c for c in honest["agents"] if c["rank"] == 2)

    def richer(e):
        d = e["data"]
        if e["kind"] == "item_gained" and d["holder"] == second["agent"] and d["item"] == "berries" and d["source"] == "start":
            e = {**e, "data": {**d, "qty": d["qty"] * 50}}
        return e

    forged = forge(demo, tmp_path / "forged.wildhold.zip", event=richer)
    trusted = score_archive(forged, trust=True)
    assert next(c for c in trusted["agents"] if c["agent"] == second["agent"])["rank"] == 1  # the forgery pays...
    code, out = report_of(forged, cache=tmp_path / "cache")
    assert code == 1 and "resimulation_differs" in out and "re-simulat" in out  # ...unless it is checked
    with pytest.raises(Unverified) as refused:
        export_match(forged, tmp_path / "x")
    assert refused.value.code == "resimulation_differs" and not (tmp_path / "x").exists()
    board = leaderboard([demo, forged])  # the forgery is named with its reason; the honest archive still ranks
    assert [(r["archive"], r["code"]) for r in board["refused"]] == [(forged.name, "resimulation_differs")]
    assert len(board["matches"]) == 1 and board["matches"][0]["chain_head"] == Archive(demo).manifest["chain_head"]


def test_swapping_two_agents_labels_is_refused_by_report_and_replay(demo, tmp_path):
    def swapped(agents):
        a, b, *rest = agents
        return [{**a, "policy": b["policy"]}, {**b, "policy": a["policy"]}, *rest]

    forged = forge(demo, tmp_path / "swapped.wildhold.zip", agents=swapped)
    code, out = report_of(forged, cache=tmp_path / "cache")
    assert code == 1 and "roster_differs" in out
    replayed = runner.invoke(app, ["replay", str(forged)])
    assert replayed.exit_code == 1 and "roster" in replayed.output


def test_a_manifest_edited_outside_its_bound_header_is_refused(demo, tmp_path):
    files = members(demo)
    manifest = orjson.loads(files["manifest.json"])
    manifest["final_tick"] += 1440  # rates are per tick: a longer match is a different score
    files["manifest.json"] = orjson.dumps(manifest)
    code, out = report_of(write(tmp_path / "longer.wildhold.zip", files), cache=tmp_path / "cache")
    assert code == 1 and "header_mismatch" in out and "final_tick" in out


def test_replay_checks_the_final_state_file(demo, tmp_path):
    files = members(demo)
    state = orjson.loads(files["final_state.json"])
    state["tick"] += 1
    files["final_state.json"] = orjson.dumps(state, option=orjson.OPT_SORT_KEYS)
    forged = write(tmp_path / "state.wildhold.zip", files)
    replayed = runner.invoke(app, ["replay", str(forged)])
    assert replayed.exit_code == 1 and "final state" in replayed.output
    with pytest.raises(Unverified) as refused:
        verify_archive(forged)
    assert refused.value.code == "final_state_differs"


def test_trust_skips_the_check_and_is_stamped_in_every_output(demo, tmp_path):
    forged = forge(demo, tmp_path / "swapped.wildhold.zip", agents=lambda a: [{**a[0], "policy": "oracle"}, *a[1:]])
    code, out = report_of(forged, "--trust", cache=tmp_path / "cache")
    assert code == 0 and json.loads(out)["verification"]["status"] == "trusted"
    md = runner.invoke(app, ["report", str(forged), "--trust"]).output
    assert "not verified" in md
    board = runner.invoke(app, ["leaderboard", str(forged), "--trust", "--json"])
    assert board.exit_code == 0 and json.loads(board.output)["verification"] == "trusted"
    assert "not verified" in runner.invoke(app, ["leaderboard", str(forged), "--trust"]).output
    paths = export_match(forged, tmp_path / "x", trust=True)
    assert {json.loads(line)["verification"] for line in paths["agents.jsonl"].read_text().splitlines()} == {"trusted"}


def test_a_verified_report_says_so_and_a_second_scoring_reads_the_cache(demo, tmp_path):
    cache = tmp_path / "cache"
    first = score_archive(demo, cache=cache)
    assert first["verification"]["status"] == "verified" and first["verification"]["bound"] is True
    assert first["verification"]["archive_head"] == Archive(demo).manifest["archive_head"]
    assert len(list(cache.iterdir())) == 1
    assert verify_archive(demo, cache=cache).cached is True
    assert score_archive(demo, cache=cache) == first


# ---- content drift ----------------------------------------------------------------------------


def test_an_archive_played_under_other_content_is_refused_naming_both_digests(tmp_path):
    from wildhold.content import default_content

    archive = FIXTURES / "ties_seed5.wildhold.zip"
    played = Archive(archive).manifest["content_digest"]
    code, out = report_of(archive, cache=tmp_path / "cache")
    assert code == 1 and "content_drift" in out
    assert played[:12] in out and default_content().digest[:12] in out
    replayed = runner.invoke(app, ["replay", str(archive)])
    assert replayed.exit_code == 1 and played[:12] in replayed.output


# ---- archives of format 1 ---------------------------------------------------------------------


def test_format_1_archives_still_read_and_verify_by_resimulation_as_unbound(demo, tmp_path):
    for fixture in FIXTURES.glob("*.wildhold.zip"):  # the committed archives, written before the header
        with Archive(fixture) as old:
            assert old.manifest["format"] == 1 and not old.bound and old.verify() == old.manifest["chain_head"]
    files = members(demo)
    files.pop(HEADER)
    manifest = {**orjson.loads(files["manifest.json"]), "format": 1}
    del manifest["archive_head"]
    files["manifest.json"] = orjson.dumps(manifest)
    old = write(tmp_path / "old.wildhold.zip", files)
    verdict = verify_archive(old)
    assert verdict.status == "verified" and verdict.bound is False and verdict.archive_head is None
    assert score_archive(old, cache=tmp_path / "cache")["verification"]["bound"] is False


# ---- resuming a finished match ----------------------------------------------------------------


def test_resuming_a_finished_match_changes_nothing(tmp_path):
    out = tmp_path / "demo"
    assert runner.invoke(app, ["demo", "--scenario", "tiny", "--seed", "3", "--out", str(out), "--quiet"]).exit_code == 0
    archive = out / "match.wildhold.zip"
    before = archive.read_bytes()
    heads = []
    for _ in range(2):
        result = runner.invoke(app, ["resume", str(out / "match.sqlite"), "--quiet"])
        assert result.exit_code == 0, result.output
        heads.append(result.output.split("chain head: ")[1].split()[0])
        assert archive.read_bytes() == before
    assert heads[0] == heads[1] == Archive(archive).manifest["chain_head"]
    assert [e["kind"] for e in Archive(archive).events()].count("match_ended") == 1


def test_an_input_log_no_match_could_have_recorded_is_refused_not_a_crash(demo, tmp_path):
    files = members(demo)
    lines = files["inputs.jsonl"].splitlines()
    last = orjson.loads(lines[-1])
    lines.append(orjson.dumps({**last, "seq": last["seq"] + 1, "tick": 0}))  # an input before the world's tick
    files["inputs.jsonl"] = b"\n".join(lines) + b"\n"
    code, out = report_of(write(tmp_path / "inputs.wildhold.zip", files), cache=tmp_path / "cache")
    assert code == 1 and "resimulation_differs" in out and "cannot be re-simulated" in out
