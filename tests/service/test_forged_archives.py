"""Forged archives, class by class, against every command and route that scores. Each forgery is made twice
where it can be: as a hasty forger makes it (the manifest edited, nothing else) and as a careful one does
(every hash the archive carries recomputed). Each is refused with one sentence naming what failed; copies
of one log count once; a verdict planted beside an archive, or forged in the user's cache, verifies nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import orjson
import pytest
from archive_support import edit_manifest, forge, members, replayed, write
from server_support import serving
from typer.testing import CliRunner

from wildhold.agents.runner import ScriptedRun
from wildhold.cli import app
from wildhold.content import default_content
from wildhold.eval.leaderboard import leaderboard
from wildhold.service.verify import default_cache, verify_archive
from wildhold.store.archive import HEADER, Archive, bound_fields
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.suite import run_suite

runner = CliRunner()
TASKS = ["crafting/craft-plank-v1", "exploration/gather-wood-v1"]


def played(path: Path, seed: int) -> Path:
    """A short tiny match of two scripted arms, archived with their identities and one epilogue."""
    run = ScriptedRun.start("tiny", seed, path.with_suffix(".sqlite"), agents=2, policies=["producer", "survivor"])
    run.run(until=run.world.tick + 240)
    names = {agent: args["name"] for agent, args in run.match.joins().items()}
    identities = {name: {"provider": "scripted", "policy": name.split("-")[0], "harness": "direct"}
                  for name in names.values()}
    archive = run.match.export(path, {"arm_identities": identities,
                                      "epilogues": {"a1": {"name": names["a1"], "text": "I kept busy.", "tick": 1}}})
    run.match.close()
    return archive


@pytest.fixture(scope="module")
def matches(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("matches")
    return {"one": played(folder / "one.wildhold.zip", 1), "two": played(folder / "two.wildhold.zip", 2)}


@pytest.fixture(scope="module")
def attempts(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("attempts")
    run_suite([default_suite().get(t) for t in TASKS], "oracle", 1, 1, out)
    return out


def swap_identities(m: dict) -> None:
    a, b = sorted(m["arm_identities"])
    m["arm_identities"] = {a: m["arm_identities"][b], b: m["arm_identities"][a]}


def one_line(text: str) -> str:
    """The refusal a command printed: one line, no traceback."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert "Traceback" not in text and len(lines) == 1, text
    return lines[0]


def refused_everywhere(path: Path, code: str, naming: str, tmp_path: Path) -> None:
    """`report`, `export` and `replay` refuse the archive in one sentence with the code; `leaderboard` lists it
    as refused with the same sentence and exits 1, ranking nothing of it."""
    for args in (["report", str(path)], ["export", str(path), "--out", str(tmp_path / "x")]):
        result = runner.invoke(app, args)
        line = one_line(result.output)
        assert result.exit_code == 1 and f"(refused: {code})" in line and naming in line, (args, line)
    assert not (tmp_path / "x").exists()
    replayed = runner.invoke(app, ["replay", str(path)])
    assert replayed.exit_code == 1 and "Traceback" not in replayed.output
    board = runner.invoke(app, ["leaderboard", str(path), "--json"])
    doc = json.loads(board.output)
    assert board.exit_code == 1 and doc["rows"] == [] and doc["refused"][0]["code"] == code
    assert naming in doc["refused"][0]["reason"]


# ---- match archives -----------------------------------------------------------------------------


def test_every_field_a_score_may_read_is_bound_by_the_archive_head(matches, attempts):
    for path in [*matches.values(), *sorted(attempts.glob("*.wha"))]:
        with Archive(path) as a:
            assert a.manifest["format"] == 3 and a.unbound == ()
            assert set(bound_fields(a.manifest)) == set(a.manifest) - {"format", "archive_head"}


def test_relabelled_arm_identities_are_refused(matches, tmp_path):
    hasty = edit_manifest(matches["one"], tmp_path / "hasty.wildhold.zip", swap_identities)
    refused_everywhere(hasty, "header_mismatch", "arm_identities", tmp_path / "h")
    careful = forge(matches["one"], tmp_path / "careful.wildhold.zip", manifest_edit=swap_identities)
    refused_everywhere(careful, "identity_differs", "joined as", tmp_path / "c")


def test_injected_epilogues_are_refused(matches, tmp_path):
    def inject(m: dict) -> None:
        m["epilogues"]["a2"] = {"name": "survivor-2", "text": "I won, by a mile.", "tick": 1}

    hasty = edit_manifest(matches["one"], tmp_path / "hasty.wildhold.zip", inject)
    refused_everywhere(hasty, "header_mismatch", "epilogues", tmp_path / "h")
    files = members(matches["one"])
    files["epilogues.json"] = orjson.dumps({"a2": {"name": "survivor-2", "text": "I won.", "tick": 1}})
    beside = write(tmp_path / "member.wildhold.zip", files)
    refused_everywhere(beside, "archive_altered", "epilogues.json", tmp_path / "m")


def test_a_copied_archive_counts_once_and_the_board_says_so(matches, tmp_path):
    copy = tmp_path / "zz-copy.wildhold.zip"
    shutil.copy(matches["one"], copy)
    relabelled = forge(matches["one"], tmp_path / "zz-relabelled.wildhold.zip",
                       manifest_edit=lambda m: m.update(objective="a copy under another header"))
    board = leaderboard([matches["one"], copy, relabelled, matches["two"]])
    assert len(board["matches"]) == 2 and board["refused"] == []
    assert sorted(d["archive"] for d in board["duplicates"]) == [copy.name, relabelled.name]
    assert {d["same_log_as"] for d in board["duplicates"]} == {matches["one"].name}
    shown = runner.invoke(app, ["leaderboard", str(matches["one"]), str(copy), str(matches["two"])])
    assert shown.exit_code == 0 and f"{copy.name} holds the same log as {matches['one'].name}" in shown.output


def test_a_planted_verdict_verifies_nothing(matches, tmp_path):
    forged = forge(matches["one"], tmp_path / "forged.wildhold.zip", manifest_edit=swap_identities)
    digest = verify_archive(matches["two"]).archive_sha256  # a real verdict to copy the shape of
    real = orjson.loads((default_cache() / f"{digest}.json").read_bytes())
    with Archive(forged) as a:
        head = a.manifest["archive_head"]
    forged_sha = hashlib.sha256(forged.read_bytes()).hexdigest()
    planted = {**real, "archive_sha256": forged_sha, "archive_head": head, "mac": "0" * 64}
    beside = tmp_path / "cache"  # where verdicts were kept before: beside the archive
    beside.mkdir()
    old_style = {"archive_sha256": forged_sha, "bound": True, "archive_head": head,
                 "content_digest": default_content().digest, "wildhold_version": "0.1.0"}
    (beside / f"{forged_sha}.json").write_bytes(orjson.dumps(old_style))
    (default_cache() / f"{forged_sha}.json").write_bytes(orjson.dumps(planted))
    refused_everywhere(forged, "identity_differs", "joined as", tmp_path / "p")
    given = runner.invoke(app, ["report", str(forged), "--cache", str(beside)])  # a folder named outright: no key there
    assert given.exit_code == 1 and "(refused: identity_differs)" in one_line(given.output)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_the_pages_rank_what_verifies_and_list_what_does_not(matches, tmp_path):
    async with serving(tmp_path / "serve", site=True) as s:
        data = s.host.archives.data_dir
        shutil.copy(matches["one"], data / "one.wildhold.zip")
        edit_manifest(matches["two"], data / "forged.wildhold.zip", swap_identities)
        ratings = await s.http.get("/api/ratings")
        assert ratings.status_code == 200
        doc = ratings.json()
        assert len(doc["matches"]) == 1 and doc["refused"][0]["archive"] == "forged.wildhold.zip"
        assert "arm_identities" in doc["refused"][0]["reason"] and doc["refused"][0]["code"] == "header_mismatch"
        page = await s.http.get("/leaderboard")
        assert page.status_code == 200 and "Refused archives" in page.text and "forged.wildhold.zip" in page.text
        name = doc["rows"][0]["config"]
        profile = await s.http.get(f"/u/{name}")
        assert profile.status_code == 200 and "forged.wildhold.zip" in profile.text
        report = await s.http.get("/matches/forged")
        assert report.status_code == 422 and "header_mismatch" in report.text


# ---- task attempts ------------------------------------------------------------------------------


def score(folder: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["tasks", "score", str(folder)])
    return result.exit_code, result.output


def attempt_copy(attempts: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the attempts folder, and its craft-plank attempt's archive."""
    folder = tmp_path / "attempts"
    shutil.copytree(attempts, folder, ignore=shutil.ignore_patterns("results.*"))
    return folder, next(folder.glob("crafting__craft-plank*.wha"))


@pytest.mark.parametrize("field,value", [("policy", "gpt-9"), ("task", "exploration/gather-wood-v1"),
                                         ("task_start_tick", 0), ("task_error", "set-up step 0 was refused"),
                                         ("repeat", 1)])
def test_a_relabelled_attempt_is_refused_by_tasks_score(attempts, tmp_path, field, value):
    for careful in (False, True):
        folder, target = attempt_copy(attempts, tmp_path / f"{field}-{careful}")
        edit = lambda m: m.update({field: value})  # noqa: E731
        forged = forge(target, target.with_suffix(".x"), manifest_edit=edit) if careful else \
            edit_manifest(target, target.with_suffix(".x"), edit)
        forged.replace(target)
        code, out = score(folder)
        line = one_line(out)
        want = "task_mark_differs" if careful else "header_mismatch"
        assert code == 1 and f"(refused: {want})" in line and field in line and target.name in line, line


def test_an_attempt_whose_log_claims_another_task_is_refused(attempts, tmp_path):
    """The careful forger also rewrites the task's mark in the inputs and the events: re-simulation agrees, but
    the claimed task's set-up is not the one the log records."""
    folder, target = attempt_copy(attempts, tmp_path)
    claim = "exploration/gather-wood-v1"

    def mark_input(inp: dict) -> dict:
        return {**inp, "args": {**inp["args"], "task": claim}} if inp["name"] == "begin_task" else inp

    forged = replayed(target, target.with_suffix(".x"), mark_input, manifest_edit=lambda m: m.update(task=claim))
    assert verify_archive(forged).status == "verified"  # it follows from its inputs...
    forged.replace(target)
    code, out = score(folder)
    line = one_line(out)
    assert code == 1 and "task_mark_differs" in line and f"is not the one {claim} makes" in line


def test_a_copied_attempt_counts_once_and_the_table_says_so(attempts, tmp_path):
    folder, target = attempt_copy(attempts, tmp_path)
    shutil.copy(target, folder / "zz-copy.wha")
    code, out = score(folder)
    assert code == 0 and "zz-copy.wha holds the same log as" in out
    results = json.loads((folder / "results.json").read_text())
    assert len(results["results"]) == len(TASKS) and results["duplicates_counted_once"] == [[target.name, "zz-copy.wha"]]


def test_a_planted_verdict_does_not_make_a_forged_attempt_score(attempts, tmp_path):
    folder, target = attempt_copy(attempts, tmp_path)
    # a longer attempt than was played: the archive no longer follows from its inputs
    forged = forge(target, target.with_suffix(".x"), manifest_edit=lambda m: m.update(final_tick=m["final_tick"] + 1))
    forged.replace(target)
    sha = hashlib.sha256(target.read_bytes()).hexdigest()
    (folder / "cache").mkdir()
    (folder / "cache" / f"{sha}.json").write_bytes(orjson.dumps({"archive_sha256": sha, "bound": True}))
    (default_cache() / f"{sha}.json").write_bytes(orjson.dumps({"archive_sha256": sha, "mac": "1" * 64}))
    code, out = score(folder)
    assert code == 1 and "(refused: resimulation_differs)" in one_line(out)


# ---- what scorers read ------------------------------------------------------------------------------


class Reads(dict):
    """A manifest that notes every field read from it (iterating reads them all)."""

    def __init__(self, data: dict, seen: set[str]):
        super().__init__(data)
        self.seen = seen

    def __getitem__(self, key):
        self.seen.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.seen.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.seen.add(key)
        return super().__contains__(key)

    def __iter__(self):
        self.seen.update(super().keys())
        return super().__iter__()

    def items(self):
        self.seen.update(super().keys())
        return super().items()

    def keys(self):
        self.seen.update(super().keys())
        return super().keys()

    def values(self):
        self.seen.update(super().keys())
        return super().values()


def unbound_reads(monkeypatch, score) -> dict[str, set[str]]:
    """Run `score()` with every archive's manifest noting its reads; per archive, the fields read that are in its
    manifest but not in the header its archive head covers (its format and the head itself are the reader's own).
    A field read but absent is bound too: the header covers the whole manifest, so adding it changes the head."""
    reads: dict[str, tuple[dict, set[str], set[str]]] = {}
    opened = Archive.__init__

    def noting(self, path, **kw):
        opened(self, path, **kw)
        header = set(orjson.loads(self.zip.read(HEADER))) if HEADER in self.zip.namelist() else set()
        seen = reads.setdefault(str(path), (self.manifest, set(), header))[1]
        self.manifest = Reads(self.manifest, seen)

    monkeypatch.setattr(Archive, "__init__", noting)
    score()
    monkeypatch.undo()
    return {path: (seen & set(m)) - header - {"format", "archive_head"} for path, (m, seen, header) in reads.items()}


def test_every_field_each_scorer_reads_is_bound(matches, attempts, tmp_path, monkeypatch):
    from wildhold.eval.export import export_match
    from wildhold.eval.report import score_archive
    from wildhold.runner.fork import fork
    from wildhold.tasks.suite import score_dir

    scorers = {
        "report": lambda: score_archive(matches["one"]),
        "leaderboard": lambda: leaderboard([matches["one"], matches["two"]]),
        "export": lambda: export_match(matches["one"], tmp_path / "export"),
        "tasks score": lambda: score_dir(attempts, verify=True),
        "fork": lambda: fork(matches["one"], Archive(matches["one"]).manifest["start_tick"] + 60, tmp_path / "fork", ticks=10),
    }
    for name, score in scorers.items():
        found = unbound_reads(monkeypatch, score)
        assert found and all(not fields for fields in found.values()), (name, found)
    # an older format's unbound fields are not there to be read
    old = tmp_path / "old.wildhold.zip"
    files = members(matches["one"])
    files["manifest.json"] = orjson.dumps({**orjson.loads(files["manifest.json"]), "format": 2})
    write(old, files)
    with Archive(old) as a:
        assert {"arm_identities", "epilogues"} <= set(a.unbound)
        assert "arm_identities" not in a.manifest and "epilogues" not in a.manifest
    assert "arm_identities" in score_archive(old)["verification"]["ignored_unbound"]


def test_only_the_archive_reader_sees_a_manifest_as_written():
    """Scores read `Archive.manifest` (what the format binds); the manifest as written is the verifier's alone."""
    root = Path(__import__("wildhold").__file__).parent
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "raw_manifest" in p.read_text())
    assert readers == ["store/archive.py"]
