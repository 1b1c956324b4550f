"""Report cards from archives: golden reports recomputed byte for byte, exact ties, rubric versions
and their frozen tie rules, tampering refused, idle disclosure, the composite score, the metrics."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest

from eval_support import scripted_archive, ties_archive
from wildhold.eval.composite import composite_scores
from wildhold.eval.metrics import CATEGORIES, compute_metrics, load_match
from wildhold.eval.report import build_report, card_for, report_json, report_markdown, score_archive
from wildhold.eval.rubric import PUBLISHED_RUBRIC, RUBRICS, UnknownRubric, get_rubric
from wildhold.eval.season import season_rows
from wildhold.store.archive import Archive, ArchiveError
from wildhold.world.serialize import loads
from wildhold.world.wealth import wealth_cents
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
GOLDENS = sorted(p.name for p in FIXTURES.glob("*.report-*.json"))

# What each version published for two agents at exactly equal wealth. A new version must say.
TIE_RULES = {"1.0": "stable", "2.0": "stable", "2.1": "shared", "2.2": "shared", "2.3": "shared", "2.4": "shared",
             "2.5": "shared"}


def fixture(name: str) -> Path:
    return FIXTURES / f"{name}.wildhold.zip"


def report_of(path: Path, rubric: str | None = None) -> dict:
    record = load_match(path, unbound=True)  # the fixtures are format 1: read as their goldens were computed
    return build_report(record, compute_metrics(record), rubric)


def by_name(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["agents"]}


# ---- golden reports --------------------------------------------------------------------------


def test_every_fixture_archive_has_a_golden_report_under_the_published_rubric():
    archives = sorted(p.name.removesuffix(".wildhold.zip") for p in FIXTURES.glob("*.wildhold.zip"))
    assert archives == ["delve_seed11", "famine_seed2", "ties_seed5", "tiny_seed3"]
    for name in archives:
        assert f"{name}.report-{PUBLISHED_RUBRIC}.json" in GOLDENS


@pytest.mark.parametrize("golden", GOLDENS)
def test_golden_report_is_recomputed_byte_for_byte(golden):
    name, version = golden.removesuffix(".json").split(".report-")
    expected = (FIXTURES / golden).read_bytes()
    first = report_json(report_of(fixture(name), version))
    second = report_json(report_of(fixture(name), version))
    assert first == second
    assert first == expected, f"{golden} changed: if the scoring change is intended, rerun tests/fixtures/eval/_build.py"


def test_every_surface_of_one_report_is_stable(tmp_path):
    from wildhold.eval.html import render_html

    report = report_of(fixture("delve_seed11"))
    assert render_html(report) == render_html(report_of(fixture("delve_seed11")))
    assert report_markdown(report) == report_markdown(report_of(fixture("delve_seed11")))


# ---- ties and rubric versions ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ties(tmp_path_factory) -> Path:
    """Built here from setup commands (the committed copy is the golden one)."""
    return ties_archive(tmp_path_factory.mktemp("ties") / "ties.wildhold.zip")


def test_two_agents_at_exactly_equal_wealth_share_a_rank_and_the_third_is_rank_3(ties):
    cards = by_name(report_of(ties))
    assert cards["second"]["wealth_cents"] == cards["third"]["wealth_cents"] > cards["first"]["wealth_cents"]
    assert (cards["second"]["rank"], cards["third"]["rank"], cards["first"]["rank"]) == (1, 1, 3)
    assert cards["second"]["scores"]["competitiveness"] == cards["third"]["scores"]["competitiveness"]
    assert cards["second"]["components"]["competitiveness"] == cards["third"]["components"]["competitiveness"]
    assert any("shares rank 1" in line for line in cards["second"]["notable"])


def test_every_rubric_version_declares_its_tie_rule():
    assert set(TIE_RULES) == set(RUBRICS)
    assert {v: r.ties for v, r in RUBRICS.items()} == TIE_RULES


@pytest.mark.parametrize("version", list(TIE_RULES))
def test_each_rubric_version_keeps_its_published_tie_behaviour(ties, version):
    cards = by_name(report_of(ties, version))
    assert cards["first"]["rank"] == 3
    competitiveness = (cards["second"]["scores"]["competitiveness"], cards["third"]["scores"]["competitiveness"])
    if TIE_RULES[version] == "shared":
        assert (cards["second"]["rank"], cards["third"]["rank"]) == (1, 1)
        assert competitiveness[0] == competitiveness[1]
    else:
        # a stable sort by wealth: of the tied pair, the one that joined first takes the better rank
        assert (cards["second"]["rank"], cards["third"]["rank"]) == (1, 2)
        assert competitiveness[0] > competitiveness[1]


def test_a_shared_rank_moves_the_index_by_the_documented_step_under_old_versions(ties):
    """Seed 003: in a 3-agent field a rank step moved the index by about 3.75 points."""
    old = by_name(report_of(ties, "2.0"))
    step = old["second"]["scores"]["competitiveness"] - old["third"]["scores"]["competitiveness"]
    assert step == pytest.approx(25.0)
    assert 0.15 * step == pytest.approx(3.75)


def test_every_report_stamps_its_rubric_and_the_published_one_is_the_default():
    assert PUBLISHED_RUBRIC in RUBRICS and get_rubric() is RUBRICS[PUBLISHED_RUBRIC]
    assert report_of(fixture("ties_seed5"))["rubric_version"] == PUBLISHED_RUBRIC
    assert report_of(fixture("ties_seed5"), "1.0")["rubric_version"] == "1.0"


def test_an_unknown_rubric_names_the_versions():
    with pytest.raises(UnknownRubric, match=r"no rubric '2\.9'; versions: 1\.0, 2\.0, 2\.1, 2\.2, 2\.3, 2\.4, 2\.5\. Did you mean"):
        get_rubric("2.9")


def test_rubric_versions_differ_only_where_they_say():
    v20, v21, v22 = RUBRICS["2.0"], RUBRICS["2.1"], RUBRICS["2.2"]
    assert (v20.references, v20.weights, v20.archetypes) == (v21.references, v21.weights, v21.archetypes)
    assert v21.ties != v20.ties and v21.exploration == v20.exploration
    assert v22.exploration == "map" and v21.exploration == "moves" and v22.ties == v21.ties
    assert not RUBRICS["1.0"].rate_normalised and v20.rate_normalised
    assert all(not r.blocks for r in (RUBRICS["1.0"], v20, v21, v22)) and "programs" in RUBRICS["2.3"].blocks
    v24, v25 = RUBRICS["2.4"], RUBRICS["2.5"]
    changed = {(d.name, a.name, b.name, b.scale, b.reads) for d24, d in zip(v24.dimensions, v25.dimensions)
               for a, b in zip(d24.components, d.components) if a != b}
    assert changed == {("social", "exchanges", "exchanges", "daily", (("net_exchange_pair_days", 1),)),
                       ("social", "reputation", "reputation", "centred", (("reputation", 1), ("void_reputation", -1))),
                       ("economy", "wealth_gain", "wealth_change", "signed", (("wealth_change", 1),)),
                       ("competitiveness", "wealth_share", "wealth_share", "share", (("signed_wealth_share", 1),))}
    assert (v25.void_exchanges, v25.archetypes.trader_measure) == ("struck", "net_exchange_pair_days")
    assert all(r.void_exchanges == "counted" for r in RUBRICS.values() if r is not v25)
    assert (v25.weights, v25.blocks, v25.ties, v25.exploration) == (v24.weights, v24.blocks, v24.ties, v24.exploration)


def test_the_scorer_ignores_stored_ranks_and_derives_them_from_wealth(ties, tmp_path):
    """A manifest that claims another order changes nothing: ranks come from the log."""
    tampered = tmp_path / "claims.wildhold.zip"
    with zipfile.ZipFile(ties) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "manifest.json":
                m = orjson.loads(data)
                for i, a in enumerate(m["agents"]):
                    a["rank"] = i + 1
                data = orjson.dumps(m)
            dst.writestr(item, data)
    assert [c["rank"] for c in report_of(tampered)["agents"]] == [c["rank"] for c in report_of(ties)["agents"]]


# ---- tampering ---------------------------------------------------------------------------------


def _edit_event(src: Path, dst: Path, n: int, edit) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "events.jsonl":
                lines = data.splitlines()
                record = orjson.loads(lines[n - 1])
                edit(record["event"])
                lines[n - 1] = orjson.dumps(record)
                data = b"\n".join(lines) + b"\n"
            zout.writestr(item, data)


def test_an_archive_with_one_event_edited_is_refused(tmp_path):
    src = fixture("ties_seed5")
    events = load_match(src).events
    n = next(e["seq"] for e in events if e["kind"] == "item_gained" and e["data"]["item"] == "stone")
    bad = tmp_path / "tampered.wildhold.zip"
    _edit_event(src, bad, n, lambda e: e["data"].update(qty=e["data"]["qty"] + 90))
    with pytest.raises(ArchiveError, match=f"event {n} does not match its hash: the log was altered"):
        load_match(bad)
    with pytest.raises(ArchiveError, match=f"event {n} does not match"), Archive(bad) as a:
        a.verify()


def test_a_rewritten_but_unaltered_line_still_verifies(tmp_path):
    """Key order or spacing is not tampering: the chain covers the event's canonical form."""
    src = fixture("ties_seed5")
    same = tmp_path / "reformatted.wildhold.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(same, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "events.jsonl":
                lines = data.splitlines()
                record = orjson.loads(lines[0])
                lines[0] = b'{"hash": "%s", "event": %s}' % (record["hash"].encode(), orjson.dumps(record["event"]))
                data = b"\n".join(lines) + b"\n"
            zout.writestr(item, data)
    assert report_json(report_of(same)) == report_json(report_of(src))


def test_a_truncated_log_is_refused(tmp_path):
    src = fixture("ties_seed5")
    short = tmp_path / "short.wildhold.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(short, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "events.jsonl":
                data = b"\n".join(data.splitlines()[:-1]) + b"\n"
            zout.writestr(item, data)
    with pytest.raises(ArchiveError, match="but the manifest says"):
        load_match(short)


# ---- the card ------------------------------------------------------------------------------------


def test_a_card_has_five_scores_the_weighted_index_a_grade_and_an_archetype():
    report = report_of(fixture("famine_seed2"))
    rubric = get_rubric()
    for card in report["agents"]:
        scores = card["scores"]
        assert all(0 <= v <= 100 for v in scores.values())
        expected = round(0.25 * scores["survival"] + 0.25 * scores["economy"] + 0.20 * scores["social"]
                         + 0.15 * scores["adaptation"] + 0.15 * scores["competitiveness"], 1)
        assert card["fitness_index"] == expected
        assert card["grade"] == rubric.grade(expected)
        assert card["archetype"] in ("Trader", "Producer", "Explorer", "Raider", "Survivor", "Drifter", "Casualty")
    kinds = {c["name"]: c["archetype"] for c in report["agents"]}
    assert kinds["raider-2"] == "Raider" and kinds["trader-1"] == "Trader" and kinds["producer-6"] == "Producer"


def test_grades_follow_the_published_bands():
    rubric = get_rubric()
    assert [rubric.grade(x) for x in (85, 84.9, 75, 65, 50, 35, 34.9, 0)] == ["S", "A", "A", "B", "C", "D", "F", "F"]


def test_an_agent_that_went_dark_gets_no_survival_credit_for_it_and_a_weakness_with_the_span():
    report = report_of(fixture("delve_seed11"))
    sleeper = card_for(report, "sleeper")
    assert sleeper["idle"]["went_dark"] and sleeper["idle"]["dark_spans"] == [[360, 563]]
    assert sleeper["components"]["survival"]["credit"] == pytest.approx(1 - 203 / 900, abs=1e-3)
    assert any(line.startswith("Went dark for 203 ticks (day 1 06:00 to day 1 09:23)") for line in sleeper["weaknesses"])
    assert not any("Flawless" in line for line in sleeper["notable"])
    assert not any(line.startswith("Survival") for line in sleeper["strengths"])
    producer = card_for(report, "producer")
    assert not producer["idle"]["went_dark"] and producer["components"]["survival"]["credit"] == 1.0
    assert any("Flawless energy management" in line for line in producer["notable"])


def test_a_silence_under_the_threshold_is_not_going_dark(ties):
    """Nobody acts in the ties match for 60 ticks: recorded as idle, under the 120-tick threshold."""
    record = load_match(ties)
    metrics = compute_metrics(record)
    assert all(am.idle_spans for am in metrics.agents.values())
    assert not any(c["idle"]["went_dark"] for c in build_report(record, metrics)["agents"])


def test_a_defaulted_contract_is_named_a_weakness():
    record = load_match(fixture("ties_seed5"))
    metrics = compute_metrics(record)
    am = metrics.agents["a1"]
    am.contracts_defaulted = 2
    card = card_for(build_report(record, metrics), "first")
    assert "Defaulted on 2 delivery contracts: it committed to deliveries it did not make." in card["weaknesses"]


# ---- the composite score (seed 000 Appendix B) ----------------------------------------------------


def test_the_composite_score_uses_appendix_b_weights_and_cohort_maxima():
    metrics = compute_metrics(load_match(fixture("delve_seed11")))
    rows = {r["name"]: r for r in composite_scores(metrics)["rows"]}
    # delver: Shadow King 30 + depth 3/3 x 15 + bosses 4/4 x 15; no craft, no outfit, no trial stage
    assert rows["delver"]["score_unrounded"] == 60.0 and rows["delver"]["rank"] == 1
    # producer: the cohort's most crafts; brawler: depth 1/3 x 15 + 1 boss of 4 x 15
    assert rows["producer"]["score_unrounded"] == 25.0
    assert rows["brawler"]["score_unrounded"] == 8.75 and rows["brawler"]["score"] == 8.8
    assert rows["sleeper"]["score_unrounded"] == 0.0


def test_equal_composite_scores_share_a_rank():
    rows = composite_scores(compute_metrics(load_match(fixture("famine_seed2"))))["rows"]
    assert [r["rank"] for r in rows] == [1, 2, 2, 4, 5, 6]
    assert rows[1]["score_unrounded"] == rows[2]["score_unrounded"]


# ---- metrics ---------------------------------------------------------------------------------------


def test_the_reports_table_3_is_the_season_table_the_demo_prints():
    record = load_match(fixture("delve_seed11"))
    report = build_report(record, compute_metrics(record))
    rows = season_rows(record)
    assert [r["agent"] for r in report["season_table"]["rows"]] == list(rows) == ["a1", "a2", "a3", "a4"]
    for shown, row in zip(report["season_table"]["rows"], rows.values()):
        assert [shown[k] for k in ("outfit", "depth", "hero", "kills", "bosses", "crafts", "coins", "trial", "downs")] == [
            row.outfit, row.depth, row.hero, row.kills, row.bosses, row.crafts, row.coins, row.trial, row.downs]
    assert rows["a1"].cells(8) == ["N", "3", "Y", "17", "4", "0", "71", "0/8", "0"]


def test_dungeon_levels_count_attempts_clears_and_damage_per_clear():
    metrics = compute_metrics(load_match(fixture("delve_seed11")))
    delver, brawler = metrics.agents["a1"], metrics.agents["a2"]
    assert {lv: (s.attempts, s.clears) for lv, s in delver.dungeon.items()} == {
        "outer_court": (1, 1), "inner_temple": (1, 1), "royal_tomb": (1, 1), "shadow_king": (1, 1)}
    assert all(s.damage == [0] for s in delver.dungeon.values())
    assert brawler.dungeon["outer_court"].clears == 1 and brawler.dungeon["outer_court"].damage[0] > 0
    assert (brawler.dungeon["inner_temple"].attempts, brawler.dungeon["inner_temple"].clears) == (1, 0)
    assert brawler.knockdowns == 1


def test_activity_composition_counts_executed_actions_by_category():
    record = load_match(fixture("tiny_seed3"))
    metrics = compute_metrics(record)
    started = [e["data"] for e in record.events if e["kind"] == "operation_started"]
    for agent, am in metrics.agents.items():
        assert sum(am.by_category.values()) == am.actions == sum(1 for d in started if d["agent"] == agent)
        assert set(CATEGORIES) <= set(am.by_category)
        assert am.by_issuer == {"direct": am.actions}
    assert metrics.agents["a1"].by_category["production"] > 0


def test_map_coverage_is_the_view_square_around_every_position(ties):
    """Nobody moves in the ties match: each saw exactly the view square around its spawn tile."""
    record = load_match(ties)
    metrics = compute_metrics(record)
    r, w, h = 4, metrics.width, metrics.height
    for e in record.events:
        if e["kind"] == "agent_spawned":
            x, y = e["data"]["x"], e["data"]["y"]
            square = (min(w - 1, x + r) - max(0, x - r) + 1) * (min(h - 1, y + r) - max(0, y - r) + 1)
            am = metrics.agents[e["data"]["agent"]]
            assert am.tiles_seen == square and am.moves == 0 and 1 <= len(am.regions_seen) <= len(metrics.map_regions)


def test_exploration_reads_the_map_from_2_2_and_moves_before():
    report_22 = by_name(report_of(fixture("tiny_seed3"), "2.2"))
    report_21 = by_name(report_of(fixture("tiny_seed3"), "2.1"))
    producer = report_22["producer-1"]["components"]["adaptation"]["exploration"]
    assert producer != report_21["producer-1"]["components"]["adaptation"]["exploration"]
    metrics = compute_metrics(load_match(fixture("tiny_seed3")))
    am = metrics.agents["a1"]
    expected = 0.5 * min(1, am.rate(am.tiles_seen) / 150) + 0.5 * len(am.regions_seen) / len(metrics.map_regions)
    assert producer == round(expected, 3)


@pytest.mark.parametrize("scenario, seed, ticks", [("tiny", 4, None), ("famine", 7, 300)])
def test_wealth_rebuilt_from_events_equals_the_formula_on_the_final_state(tmp_path, content, scenario, seed, ticks):
    """The report's wealth (folded from the log) and `wealth_cents` on the final snapshot agree,
    for a match played now with the current engine."""
    path = scripted_archive(tmp_path / "m.wildhold.zip", scenario, seed, ticks)
    metrics = compute_metrics(load_match(path), content)
    with Archive(path) as a:
        final = loads(content, a.final_state())
    assert {a: am.wealth_cents for a, am in metrics.agents.items()} == {a: wealth_cents(final, a) for a in final.chars}
    for am in metrics.agents.values():
        assert am.wealth_curve[-1] == [metrics.final_tick, am.wealth_cents]


def test_the_json_report_carries_the_rubric_and_each_agents_headline():
    report = orjson.loads(report_json(score_archive(fixture("famine_seed2"), trust=True)))  # played under earlier content
    assert report["rubric_version"] == PUBLISHED_RUBRIC
    for card in report["agents"]:
        assert {"fitness_index", "grade", "archetype", "rank"} <= set(card)
    assert [c["rank"] for c in report["agents"]] == sorted(c["rank"] for c in report["agents"])


def test_epilogues_are_carried_and_never_scored():
    report = report_of(fixture("delve_seed11"))
    assert set(report["epilogues"]) == {"a1", "a4"}
    record = load_match(fixture("delve_seed11"))
    record.epilogues = {}
    bare = build_report(record, compute_metrics(record))
    assert bare["agents"] == report["agents"]


def test_markdown_lists_every_card():
    text = report_markdown(report_of(fixture("famine_seed2")))
    assert text.startswith("# Wildhold report: famine, seed 2")
    for name in ("trader-1", "raider-2", "producer-3", "survivor-4", "trader-5", "producer-6"):
        assert f"## {name} (" in text
    assert "| rank | agent | Outfit | Depth | Hero |" in text


def test_the_markdown_report_writes_agent_supplied_text_as_text():
    """A model string, a name or an epilogue cannot inject a heading, a link, a table cell or raw HTML."""
    import json
    from pathlib import Path

    from wildhold.eval.report import md_text, report_markdown

    report = json.loads((FIXTURE_ROOT / "eval" / "tiny_seed3.report-2.3.json").read_text())
    hostile = "gpt\n# Winner <script>alert(1)</script> | [x](http://e) *"
    first = report["agents"][0]
    first["config"] = hostile
    report["epilogues"][first["agent"]] = {"text": "fine\n## also a heading <img src=x>"}
    md = report_markdown(report)
    assert "<script>" not in md and "<img" not in md and "\n# Winner" not in md and "\n## also" not in md
    assert md_text(hostile) in md and "&lt;script&gt;" in md
    row = next(line for line in md.splitlines() if md_text(hostile) in line)
    header = next(line for line in md.splitlines() if line.startswith("| rank | agent | config"))
    assert row.count(" | ") == header.count(" | ")  # the cell did not split the table row
    assert md_text("producer-1 a_b.c") == "producer-1 a_b.c"  # names as the server allows them are unchanged
