"""Metrics as registered folds over typed events: each fold alone computes what it computes among the
others, reads only typed views that match the world's event schemas, and is scored only where a
rubric gives it a place; a rubric's numbers are frozen data."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, asdict, fields, replace
from pathlib import Path

import pytest

import wildhold.eval.folds  # noqa: F401  (registers the metrics)
import wildhold.world.world  # noqa: F401  (registers every part's event schemas)
from wildhold.eval.events import VIEWS, Moved, Started, decode
from wildhold.eval.fold import FOLDS, Fold, on, writers
from wildhold.eval.metrics import AgentMetrics, compute_metrics, load_match
from wildhold.eval.report import build_report, report_json
from wildhold.eval.rubric import RUBRICS, SCALES, Component, Dimension, get_rubric
from wildhold.eval.scoring import SCALED
from wildhold.eval.summary import summarize
from wildhold.world.events import EVENT_TYPES
from paths_support import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "eval"
ARCHIVES = sorted(FIXTURES.glob("*.wildhold.zip"))
ROSTER = {"agent", "name", "config", "join_index", "spawn_tick", "ticks_alive", "measures"}  # set by the driver


@pytest.fixture(scope="module")
def tiny():
    return load_match(FIXTURES / "tiny_seed3.wildhold.zip")


class Pace(Fold):
    """Tiles moved per executed action: a metric no published rubric knows."""

    writes = ("pace",)

    def __init__(self, match):
        super().__init__(match)
        self.moves: dict[str, int] = {}
        self.actions: dict[str, int] = {}

    @on("moved")
    def moved(self, tick: int, ev: Moved) -> None:
        self.moves[ev.agent] = self.moves.get(ev.agent, 0) + 1

    @on("operation_started")
    def started(self, tick: int, ev: Started) -> None:
        self.actions[ev.agent] = self.actions.get(ev.agent, 0) + 1

    def finish(self) -> None:
        for a, am in self.agents.items():
            am.measures["pace"] = self.moves.get(a, 0) / max(self.actions.get(a, 0), 1)


# ---- folds -------------------------------------------------------------------------------------------


def test_every_metric_has_exactly_one_fold_that_writes_it(tiny):
    owners: dict[str, list[str]] = {}
    for name, cls in FOLDS.items():
        for written in cls.writes:
            owners.setdefault(written, []).append(name)
    assert {w: o for w, o in owners.items() if len(o) > 1} == {}
    metrics = {f.name for f in fields(AgentMetrics)} - ROSTER
    assert metrics <= set(owners)
    own = set(owners) - metrics  # the others are the folds' own measures, written for every character
    assert all(own <= set(am.measures) for am in compute_metrics(tiny).agents.values())


@pytest.mark.parametrize("path", ARCHIVES, ids=lambda p: p.name.split(".")[0])
def test_each_fold_alone_computes_what_it_computes_among_the_others(path):
    record = load_match(path)
    together = compute_metrics(record)
    for cls in FOLDS.values():
        alone = compute_metrics(record, folds=[cls])
        for agent, am in together.agents.items():
            one = alone.agents[agent]
            assert {w: one.value(w) for w in cls.writes} == {w: am.value(w) for w in cls.writes}, cls.name


def test_every_typed_view_is_a_part_of_its_kinds_schema_in_the_world():
    for kind, view in VIEWS.items():
        assert kind in EVENT_TYPES, f"{kind} is no event the world emits"
        schema = EVENT_TYPES[kind].model_fields
        names = {f.alias or n for n, f in schema.items()}
        assert set(view._fields) <= names, f"{view.__name__} reads {set(view._fields) - names} that {kind} does not carry"


def test_an_event_is_decoded_once_into_its_typed_view_and_reaches_only_the_folds_that_read_it(tiny):
    seen: list[object] = []

    class Movement(Fold):
        @on("moved")
        def moved(self, tick: int, ev: Moved) -> None:
            seen.append(ev)

    metrics = compute_metrics(tiny, folds=[Movement])
    moves = [e["data"] for e in tiny.events if e["kind"] == "moved"]
    assert len(seen) == len(moves) == metrics.kinds["moved"]
    assert all(type(ev) is Moved for ev in seen)
    assert [(ev.agent, list(ev.to)) for ev in seen] == [(d["agent"], d["to"]) for d in moves]
    assert decode("moved", moves[0]) == seen[0]


def test_a_fold_that_follows_every_event_sees_each_once_in_order_beside_the_trial(tiny):
    seqs: list[int] = []

    class Ledger(Fold):
        def __init__(self, match):
            super().__init__(match)
            self.follow = lambda seq, tick, kind, data: seqs.append(seq)

    metrics = compute_metrics(tiny, folds=[Ledger, FOLDS["trial"]])
    assert seqs == [e["seq"] for e in tiny.events]
    assert metrics.agents["a1"].trial_stages == compute_metrics(tiny).agents["a1"].trial_stages


def test_a_fold_can_only_read_event_kinds_that_have_a_typed_view():
    with pytest.raises(TypeError, match="reads 'moved_far', which has no typed view"):
        class Wrong(Fold):
            @on("moved_far")
            def moved(self, tick, ev) -> None:
                pass


# ---- tables over the folds ----------------------------------------------------------------------------


def test_a_table_runs_only_the_folds_that_write_its_columns_and_a_column_no_fold_writes_is_named():
    assert [f.name for f in writers("crafts", "knockdowns", "attacks")] == ["actions", "conflict", "survival"]
    with pytest.raises(LookupError, match="no registered fold writes hearts"):
        writers("crafts", "hearts")


def test_the_demo_summary_counts_builds_and_attacks_on_characters_as_the_events_show():
    record = load_match(FIXTURES / "famine_seed2.wildhold.zip")
    rows = summarize(record)
    events = record.events
    for agent, row in rows.items():
        built = sum(e["kind"] == "operation_completed" and e["data"]["agent"] == agent and e["data"]["action"] in ("place", "build")
                    for e in events)
        attacks = sum(e["kind"] == "character_attacked" and e["data"]["agent"] == agent for e in events)
        assert (row.cells["built"], row.cells["raids"]) == (built, attacks), agent
    assert any(row.cells["built"] for row in rows.values())
    assert list(rows) == list(compute_metrics(record).agents)


# ---- folds and rubrics --------------------------------------------------------------------------------


def test_a_fold_registered_without_a_place_in_a_rubric_is_not_scored(monkeypatch):
    monkeypatch.setitem(FOLDS, "pace", Pace)
    for golden in sorted(FIXTURES.glob("*.report-*.json")):
        name, version = golden.name.removesuffix(".json").split(".report-")
        record = load_match(FIXTURES / f"{name}.wildhold.zip", unbound=True)
        metrics = compute_metrics(record)
        assert all("pace" in am.measures for am in metrics.agents.values())  # it ran
        assert report_json(build_report(record, metrics, version)) == golden.read_bytes()


def _with_pace(weight: float, reference: float):
    """Rubric 2.2 with one more adaptation component, reading the pace measure, the others rescaled."""
    base = get_rubric("2.2")
    dimensions = tuple(
        replace(d, components=tuple(replace(c, weight=c.weight * (1 - weight)) for c in d.components)
                + (Component("pace", weight, "count", reference),)) if d.name == "adaptation" else d
        for d in base.dimensions)
    return replace(base, version="2.2+pace", dimensions=dimensions)


def test_a_fold_with_a_place_in_a_rubric_is_scored_there(monkeypatch, tiny):
    monkeypatch.setitem(FOLDS, "pace", Pace)
    metrics = compute_metrics(tiny)
    rubric = _with_pace(0.2, 4)
    plain, paced = build_report(tiny, metrics, "2.2"), build_report(tiny, metrics, rubric)
    for before, after in zip(plain["agents"], paced["agents"]):
        pace = metrics.agents[before["agent"]].measures["pace"]
        adaptation = after["components"]["adaptation"]
        assert adaptation["pace"] == round(min(pace / 4, 1), 3)
        assert {k: v for k, v in adaptation.items() if k != "pace"} == before["components"]["adaptation"]
        expected = 100 * (0.8 * sum(c.weight * before["components"]["adaptation"][c.name]
                                    for c in get_rubric("2.2").dimensions[3].components) + 0.2 * min(pace / 4, 1))
        assert after["scores"]["adaptation"] == pytest.approx(expected, abs=0.15)
        assert paced["metrics"][before["agent"]]["measures"] == {"pace": pace}
        assert "measures" not in plain["metrics"][before["agent"]]


def test_a_rubric_that_reads_a_measure_no_fold_wrote_names_it(tiny):
    with pytest.raises(LookupError, match="no metric or measure 'pace'"):
        build_report(tiny, compute_metrics(tiny), _with_pace(0.2, 4))


def _saying(rubric, says: str):
    """The rubric with this sentence on its pace component."""
    return replace(rubric, dimensions=tuple(
        replace(d, components=tuple(replace(c, says=says) if c.name == "pace" else c for c in d.components))
        if d.name == "adaptation" else d for d in rubric.dimensions))


def test_a_component_says_its_own_sentence_from_the_rubrics_data_where_its_dimension_stands_out(monkeypatch, tiny):
    monkeypatch.setitem(FOLDS, "pace", Pace)
    metrics = compute_metrics(tiny)
    silent = _with_pace(0.2, 4)
    plain, said = build_report(tiny, metrics, silent), build_report(tiny, metrics, _saying(silent, "Pace {score}: moved {value:.2f} tiles an action."))
    named = 0
    for before, after in zip(plain["agents"], said["agents"]):
        pace = metrics.agents[before["agent"]].measures["pace"]
        sentence = f"Pace {round(100 * min(pace / 4, 1), 1)}: moved {pace:.2f} tiles an action."
        adaptation = after["scores"]["adaptation"]
        assert (sentence in after["strengths"], sentence in after["weaknesses"]) == (adaptation >= 70, adaptation < 35)
        for key in ("strengths", "weaknesses"):
            assert [line for line in after[key] if line != sentence] == before[key]
        named += sentence in after["strengths"] + after["weaknesses"]
    assert named


def test_a_components_sentence_that_names_what_no_card_gives_is_refused():
    with pytest.raises(ValueError, match="its sentence names 'pace'; it may use {value}, {rate}, {score}"):
        Component("pace", 1.0, "count", 4, says="{pace} tiles")
    with pytest.raises(ValueError, match="it may use {score}"):
        Component("exploration", 1.0, parts=(Component("tiles", 1.0),), says="saw {value} tiles")


# ---- frozen rubrics -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", list(RUBRICS))
def test_a_published_rubrics_numbers_cannot_be_edited_in_place(version):
    rubric = RUBRICS[version]
    survival, economy = rubric.dimensions[0], rubric.dimensions[1]
    edits = [
        lambda: setattr(rubric, "idle_threshold_ticks", 60),
        lambda: setattr(survival, "weight", 0.5),
        lambda: setattr(economy.components[1], "reference", 1),
        lambda: setattr(survival.gate, "weight", 0.5),
        lambda: setattr(rubric.archetypes, "raider_raids", 9),
    ]
    for edit in edits:
        with pytest.raises(FrozenInstanceError):
            edit()
    with pytest.raises(TypeError):
        rubric.dimensions[0] = economy  # type: ignore[index]
    with pytest.raises(TypeError):
        rubric.references["economy.goods"] = 1  # type: ignore[index]
    assert rubric == RUBRICS[version] and rubric.references["economy.goods"] in (8, 300)


def test_each_published_version_carries_its_own_numbers():
    assert {v: r.references["economy.goods"] for v, r in RUBRICS.items()} == {"1.0": 300, "2.0": 8, "2.1": 8, "2.2": 8, "2.3": 8, "2.4": 8,
                                                                                 "2.5": 8}
    assert "adaptation.exploration" in RUBRICS["2.1"].references and "adaptation.exploration.tiles" in RUBRICS["2.2"].references
    assert all(dataclasses.is_dataclass(d) and d.weight for r in RUBRICS.values() for d in r.dimensions)


def test_every_scale_a_rubric_may_name_is_scored():
    assert set(SCALED) == set(SCALES)


def test_a_dimension_whose_weights_do_not_sum_to_one_is_refused():
    with pytest.raises(ValueError, match="sum to 1.1, not 1"):
        Dimension("economy", 0.25, components=(Component("goods", 0.6, "rate", 8), Component("wealth_gain", 0.5, "rate", 400)))
    with pytest.raises(ValueError, match="no scale 'log'"):
        Component("goods", 1.0, "log", 8)  # type: ignore[arg-type]


def test_the_measures_of_the_folds_stay_out_of_the_metrics_record(monkeypatch, tiny):
    monkeypatch.setitem(FOLDS, "pace", Pace)
    am = compute_metrics(tiny).agents["a1"]
    assert "pace" in am.measures and "measures" not in am.to_dict()
    assert set(am.to_dict()) == set(asdict(am)) - {"needs_steps", "measures", "wealth_at"} | {"program_share"}
