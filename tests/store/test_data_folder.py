"""A match's data folder holds every agent's programs, logs and whispers: only its owner may enter it or read
what is in it (folders 0700, files 0600), whatever the umask, and a looser folder is tightened, saying so once."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from paths_support import ROOT
from programs_support import join, open_host, steps

from wildhold.service.verify import default_cache, verify_archive

PRIVATE = {"folder": 0o700, "file": 0o600}


@pytest.fixture
def permissive_umask():
    """The usual umask, under which a plain open() or mkdir() gives everyone read access."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def modes(root: Path) -> dict[str, str]:
    """Every path under `root` (itself included) that is not private: its mode."""
    out = {}
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        want = PRIVATE["folder"] if stat.S_ISDIR(st.st_mode) else PRIVATE["file"]
        if stat.S_IMODE(st.st_mode) != want:
            out[str(path.relative_to(root.parent))] = oct(stat.S_IMODE(st.st_mode))
    return out


def play(host) -> None:
    """A match with a program, a whisper, a snapshot and the operator's live report archive."""
    ann, bob = join(host, "ann"), join(host, "bob")
    host.programs.save(ann, "pace", "while True:\n    wait(ticks=1)\n")
    host.programs.start(ann, "pace")
    assert host.submit(bob, "whisper", {"text": "meet me at the river", "to": ann})["status"] != "rejected"
    steps(host, 3)
    host.archives.snapshot()
    host.archives.for_report("current", admin=True)


def test_every_path_of_a_served_match_is_its_owners_only_during_play_and_after_export(tmp_path, permissive_umask):
    data = tmp_path / "serve"
    host = open_host(data)
    try:
        play(host)
        names = {p.name for p in data.iterdir()}
        assert {"match.sqlite-wal", "match.sqlite-shm", "report-live.wildhold.zip"} <= names, names
        assert modes(data) == {}
        archive = Path(host.stop()["archive"])
        verdict = verify_archive(archive)  # scoring keeps its verdict in the user's cache, not the data folder
        assert not (data / "cache").exists() and modes(data) == {}
        kept = default_cache() / f"{verdict.archive_sha256}.json"
        assert kept.is_file() and stat.S_IMODE(kept.stat().st_mode) == PRIVATE["file"]
        assert stat.S_IMODE(kept.parent.stat().st_mode) == PRIVATE["folder"]
    finally:
        host.close()
    assert modes(data) == {}


def test_a_data_folder_open_to_others_is_tightened_and_the_operator_told_once(tmp_path, permissive_umask, capsys):
    data = tmp_path / "serve"
    host = open_host(data)
    play(host)
    host.close()
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    elsewhere = tmp_path / "shared.txt"
    elsewhere.write_text("not the match's")
    (data / "link").symlink_to(elsewhere)
    capsys.readouterr()
    host = open_host(data)  # resumes the match stored there
    try:
        assert modes(data) == {"serve/link": "0o777"}  # a link is left alone, and what it leads to
        assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o644
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(data) in err and "other users" in err, err
    finally:
        host.close()
    host = open_host(data)
    host.close()
    assert capsys.readouterr().err == ""


def test_a_run_folder_of_wildhold_run_is_its_owners_only(tmp_path, permissive_umask):
    from wildhold.agents.scaffold.experiment import Experiment, Run

    out = tmp_path / "runs" / "smoke"
    example = ROOT / "examples" / "offline-smoke.yaml"
    run = Run(Experiment.load(example), out, example.parent)
    asyncio.run(run.play())
    run.finish()
    assert {"world", "workspaces", "telemetry.jsonl", "manifest.json", "report.json"} <= {p.name for p in out.iterdir()}
    assert any(p.is_file() for p in (out / "workspaces").rglob("*"))
    assert modes(out) == {}
    assert stat.S_IMODE((tmp_path / "runs").stat().st_mode) == PRIVATE["folder"]
