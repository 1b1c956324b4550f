"""The composite's cohort, played for real: a producer baseline crafts far more than the evaluated
character, so as the cohort's most it caps the evaluated one. From 2.3 the report states the cohort, and
an experiment may name its evaluated arms as the cohort (the archive's manifest carries it, bound into
the archive head); up to 2.2 the cohort is every character, as published."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest

from eval_support import cohort_archive
from wildhold.eval.html import render_html
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report, report_json, report_markdown
from wildhold.store.archive import Archive, ArchiveError


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cohort")
    return {"every": cohort_archive(folder / "every.wildhold.zip"),
            "named": cohort_archive(folder / "named.wildhold.zip", ["ann"]),
            "unknown": cohort_archive(folder / "unknown.wildhold.zip", ["ann", "ghost"])}


def report(path: Path, version: str) -> dict:
    record = load_match(path)
    return build_report(record, compute_metrics(record), version)


def rows(report: dict) -> dict[str, dict]:
    return {r["name"]: r for r in report["composite"]["rows"]}


def test_without_a_named_cohort_the_baseline_sets_the_crafts_maximum_and_the_report_says_so(archives):
    r = report(archives["every"], "2.3")
    cohort = r["composite"]["cohort"]
    assert (cohort["characters"], cohort["named"], cohort["most_crafts"]) == (["ann", "producer"], False, 11)
    assert rows(r)["ann"]["components"]["crafts"] == round(2 / 11, 4)
    assert cohort["statement"] == ("Cohort (bosses and crafts are scored against its most): every character "
                                   "(ann, producer); the match named none.")
    assert cohort["statement"] in report_markdown(r) and cohort["statement"] in render_html(r)


def test_an_experiment_names_its_evaluated_arms_as_the_cohort(archives):
    r = report(archives["named"], "2.3")
    cohort = r["composite"]["cohort"]
    assert (cohort["characters"], cohort["named"], cohort["most_crafts"]) == (["ann"], True, 2)
    ann, producer = rows(r)["ann"], rows(r)["producer"]
    assert (ann["components"]["crafts"], ann["in_cohort"]) == (1.0, True)
    assert (producer["components"]["crafts"], producer["in_cohort"]) == (1.0, False)  # outside it: at most full marks
    assert ann["score_unrounded"] == 25.0
    assert cohort["statement"] == "Cohort (bosses and crafts are scored against its most): ann, as the match named it."
    assert cohort["statement"] in report_markdown(r)


def test_a_named_character_that_never_joined_is_said_so(archives):
    cohort = report(archives["unknown"], "2.3")["composite"]["cohort"]
    assert (cohort["characters"], cohort["not_joined"]) == (["ann"], ["ghost"])
    assert cohort["statement"].endswith("ann, as the match named it; named but never joined: ghost.")


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.1", "2.2"])
def test_old_versions_keep_every_character_as_the_cohort_and_never_state_it(archives, version):
    named, every = report(archives["named"], version), report(archives["every"], version)
    assert named["composite"] == every["composite"]
    assert set(named["composite"]["cohort"]) == {"most_bosses", "most_crafts", "tiers", "stages"}
    assert "in_cohort" not in named["composite"]["rows"][0]
    assert "Cohort" not in report_markdown(named)


def test_the_cohort_is_bound_into_the_archive_head(archives, tmp_path):
    with Archive(archives["named"]) as a:
        assert a.verify() and orjson.loads(a.zip.read("header.json"))["cohort"] == ["ann"]
    with Archive(archives["every"]) as a:
        assert "cohort" not in orjson.loads(a.zip.read("header.json"))  # as archives were bound before cohorts
    for claim in (["producer"], None):
        forged = tmp_path / "forged.wildhold.zip"
        with zipfile.ZipFile(archives["named"]) as src, zipfile.ZipFile(forged, "w") as dst:
            for item in src.infolist():
                data = src.read(item.filename)
                if item.filename == "manifest.json":
                    manifest = orjson.loads(data)
                    manifest["cohort"] = claim
                    data = orjson.dumps(manifest)
                dst.writestr(item, data)
        with Archive(forged) as a, pytest.raises(ArchiveError, match="cohort differ from the header") as refused:
            a.verify()
        assert refused.value.code == "header_mismatch"


def test_a_format_1_archive_names_no_cohort(archives):
    """Unbound, its manifest could name any cohort: it is not read."""
    record = load_match(archives["named"])
    record.manifest["format"] = 1
    r = build_report(record, compute_metrics(record), "2.3")
    assert (r["composite"]["cohort"]["characters"], r["composite"]["cohort"]["named"]) == (["ann", "producer"], False)


def test_the_named_cohort_changes_only_the_composite(archives):
    named, every = report(archives["named"], "2.3"), report(archives["every"], "2.3")
    for r in (named, every):
        del r["composite"], r["manifest"]
    assert report_json(named) == report_json(every)
