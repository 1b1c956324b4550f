"""A rubric's history never changes: each released version's golden report is held by its digest, so
regenerating one fails here, and an old version's report carries only the blocks it published with
(the programs block, the composite's stated cohort, belong to 2.3 on)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.html import render_html
from wildhold.eval.report import build_report, report_json, report_markdown
from wildhold.eval.rubric import RUBRICS
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"

# sha256 of each golden as its version first published it. 1.0 to 2.2 are the bytes of commit 8436440
# (the first evaluation), before the programs block was wrongly written into them; 2.3, 2.4 and 2.5 from their release.
RELEASED = {
    "delve_seed11.report-2.2.json": "e674295a1c0cc7806127bbdd0bef467449ae5342842bfa593763e74f8e8c9801",
    "famine_seed2.report-2.2.json": "308d5638a782c0acd84488fab293206c909b229bb0704d7735c1ba387ae2a284",
    "ties_seed5.report-1.0.json": "3fc89ab0fb9968c83dea207a708f071c531e6198f37e8ef01e21a154b36c71d0",
    "ties_seed5.report-2.0.json": "3c6cfb7d1170377badf52aae2d02cf6201e4648e24361ec398c47f43762ec4ed",
    "ties_seed5.report-2.1.json": "d6266e87b8b5757620fd207ef98734dae718f9ec3f42bc7b8877bd1c6bfb247f",
    "ties_seed5.report-2.2.json": "1069ec46d62134191bc55040167fdc22a235eb67033b244d8b03248733a8583f",
    "tiny_seed3.report-2.2.json": "11488ff505054666d533ae126bbe0445e4a78d924c5f19a6424ba213e32ac186",
    "delve_seed11.report-2.3.json": "a6a8e7e96d7433e6887aef55403482d68c0638e3b8d9a42b946af3930fac8128",
    "famine_seed2.report-2.3.json": "065b91b4508c1b9eb6cf558762b96acf139af37a9e93c62b273d8d1abe6f21d5",
    "ties_seed5.report-2.3.json": "ff86a483c2809aa675c77703b137b1dd9bc46bb579f1c47e22ae87f6e89a5bbd",
    "tiny_seed3.report-2.3.json": "0f3e6bc36873bfcc8b3d65f92f90dd0cf100a7f70c6813461a2e0bae371c2f0e",
    "delve_seed11.report-2.4.json": "01717fece90804f46f1daacbe1deb9604598361e1ea7a52419d2109cddb25330",
    "famine_seed2.report-2.4.json": "1e4b1d07c364ddb3ada7b8a6fc79c28aba6d38b2c0f8edd3462ebfd131c4d1eb",
    "ties_seed5.report-2.4.json": "cd2dcc4c2d3e8d43499ca8068c00658df82b9eb5491ae2f3d526ad3a37bb2bff",
    "tiny_seed3.report-2.4.json": "3dbdfaae71dee4eb510e1a828d279b9f317e9818eaf6f4badb409f833b33831c",
    "delve_seed11.report-2.5.json": "2de219787ea7a64f7f99d6d05d780ed6a477917471d7b80a422a70679fa08640",
    "famine_seed2.report-2.5.json": "42413734f1e0da420f2ba9453c9db78710744d0816ce1a7ebc9742aba2501135",
    "ties_seed5.report-2.5.json": "3331ffd665a681366576f8039e0de0df651cd393320b7a63ef855b35109bede1",
    "tiny_seed3.report-2.5.json": "320512e4f9acb1750cf43bc39f6438fbea40736a81df8828f0370f7d50a37340",
}


def test_every_golden_report_is_of_a_released_version_and_held_by_its_digest():
    goldens = sorted(p.name for p in FIXTURES.glob("*.report-*.json"))
    assert goldens == sorted(RELEASED), "a new golden is pinned here when its version is released"
    changed = [name for name, digest in RELEASED.items() if hashlib.sha256((FIXTURES / name).read_bytes()).hexdigest() != digest]
    assert changed == [], f"released goldens rewritten: {', '.join(changed)}; a change of output is a new rubric version"


def test_every_released_version_has_a_golden():
    assert {name.removesuffix(".json").split(".report-")[1] for name in RELEASED} == set(RUBRICS)


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.1", "2.2"])
def test_versions_before_programs_print_no_programs_block(version):
    record = load_match(FIXTURES / "ties_seed5.wildhold.zip")
    report = build_report(record, compute_metrics(record), version)
    text = report_json(report)
    assert b"program" not in text
    assert "programs" not in report and all("programs" not in card for card in report["agents"])
    assert "Programs:" not in report_markdown(report) and "by programs" not in render_html(report)


def test_the_programs_block_is_printed_from_2_3():
    record = load_match(FIXTURES / "ties_seed5.wildhold.zip")
    report = build_report(record, compute_metrics(record), "2.3")
    assert report["programs"] == {"actions": 0, "share": 0.0, "revisions": 0, "failures": {}}
    assert all(card["programs"]["actions"] == 0 for card in report["agents"])
    assert all(m["program_share"] == 0.0 for m in report["metrics"].values())
