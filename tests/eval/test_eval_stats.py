"""Statistics on pooled runs, checked against scipy.stats computed here: sample std, Student-t intervals at the
sizes people run, a BCa bootstrap only from BOOTSTRAP_FROM values on, and B - A whose interval and p agree."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from wildhold.eval.identity import agent_identity, identity_key, labels
from wildhold.eval.stats import BOOTSTRAP_FROM, RESAMPLES, SEED, describe, difference, paired, per_seed, show


def test_one_value_has_no_spread_and_none_has_no_mean():
    assert describe([]) == {"n": 0, "mean": None, "std": None, "ci95": None, "method": None}
    assert describe([70.0]) == {"n": 1, "mean": 70.0, "std": None, "ci95": None, "method": None}


def test_three_seeds_get_the_student_t_interval_not_their_min_and_max():
    values = [50.1, 50.1, 49.7]  # explorer's famine index over three seeds
    got = describe(values)
    ref = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    assert got["method"] == "t" and got["ci95"] == pytest.approx([ref.low, ref.high], abs=1e-4)
    assert got["ci95"] == pytest.approx([49.39, 50.54], abs=0.01)  # the figure, not [49.7, 50.1]
    assert got["std"] == pytest.approx(np.std(values, ddof=1), abs=1e-4)


def test_the_std_is_the_sample_std_as_seed_002_prints_it():
    got = describe([100 / 3, 0.0, 0.0])  # per-repeat success rates 33.3 / 0 / 0
    assert got["std"] == pytest.approx(stats.tstd([100 / 3, 0.0, 0.0]), abs=1e-4)
    assert f"{got['mean']:.1f} ± {got['std']:.1f}" == "11.1 ± 19.2"  # pstdev would print 15.7


def test_a_rate_interval_is_clipped_to_what_a_rate_can_be():
    ref = stats.ttest_1samp([100 / 3, 0.0, 0.0], 0.0).confidence_interval(0.95)
    assert ref.low < 0
    assert describe([100 / 3, 0.0, 0.0], bounds=(0.0, 100.0))["ci95"] == pytest.approx([0.0, ref.high], abs=1e-4)


def test_values_with_no_spread_give_a_zero_width_interval_not_nan():
    assert describe([5.0, 5.0, 5.0]) == {"n": 3, "mean": 5.0, "std": 0.0, "ci95": [5.0, 5.0], "method": "t"}
    assert describe([0.1 + 0.2, 0.3, 0.3])["ci95"] == [0.3, 0.3]  # equal but for float noise


def test_the_bootstrap_takes_over_only_from_enough_values_and_says_so():
    rng = np.random.default_rng(7)
    few = rng.exponential(10.0, BOOTSTRAP_FROM - 1)
    assert describe(few)["method"] == "t"
    many = rng.exponential(10.0, BOOTSTRAP_FROM)
    got = describe(many)
    ref = stats.bootstrap((np.round(many, 9),), np.mean, n_resamples=RESAMPLES, method="BCa",
                          rng=np.random.default_rng(SEED)).confidence_interval
    assert got["method"] == "BCa bootstrap" and got["ci95"] == pytest.approx([ref.low, ref.high], abs=1e-4)
    assert describe(many) == got  # seeded: the table is reproducible
    assert show(got).endswith(" BCa n=30")


def test_repeats_of_a_seed_are_averaged_before_the_interval_over_seeds():
    assert per_seed([(2, 10.0), (1, 4.0), (2, 20.0)]) == {1: 4.0, 2: 15.0}


def test_the_paired_interval_is_the_t_interval_of_the_differences_and_agrees_with_its_test():
    a = {0: 10.0, 1: 14.0, 2: 9.0, 3: 12.0}
    b = {0: 11.5, 1: 14.9, 2: 10.8, 3: 12.6}
    got = difference(a, b)
    ref = stats.ttest_rel(list(b.values()), list(a.values()))
    ci = ref.confidence_interval(0.95)
    assert got["method"] == "paired t" and got["n"] == 4 and got["seeds"] == [0, 1, 2, 3]
    assert got["ci95"] == pytest.approx([ci.low, ci.high], abs=1e-4) and got["p"] == pytest.approx(ref.pvalue, rel=1e-3)
    assert got["p"] < 0.05 and got["ci95"][0] > 0  # significant, and the interval says so too
    noisy = {s: v + (1.0 if s % 2 else -1.0) for s, v in a.items()}
    assert difference(a, noisy)["p"] > 0.05 and difference(a, noisy)["ci95"][0] < 0 < difference(a, noisy)["ci95"][1]


def test_equal_differences_give_a_zero_width_interval_at_that_difference():
    a = {s: 50.0 + 1.7 * s for s in range(3)}
    got = difference(a, {s: v + 5.0 for s, v in a.items()})
    assert got["diff"] == 5.0 and got["ci95"] == [5.0, 5.0] and got["p"] == 0.0


def test_a_sweep_against_an_identical_copy_differs_by_exactly_zero():
    a = {0: 50.1, 1: 50.1, 2: 49.7}
    got = difference(a, dict(a))
    assert got["diff"] == 0.0 and got["ci95"] == [0.0, 0.0] and got["p"] == 1.0
    assert str(got["diff"]) == "0.0" and [str(v) for v in got["ci95"]] == ["0.0", "0.0"]  # not -0.0


def test_sides_with_no_shared_seed_get_welchs_interval():
    a = {1: 10.0, 2: 12.0, 3: 11.0}
    b = {4: 20.0, 5: 23.0, 6: 21.0, 7: 25.0}
    got = difference(a, b)
    ref = stats.ttest_ind(list(b.values()), list(a.values()), equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert got["method"] == "Welch t" and got["seeds"] == []
    assert got["diff"] == pytest.approx(np.mean(list(b.values())) - 11.0, abs=1e-4)
    assert got["ci95"] == pytest.approx([ci.low, ci.high], abs=1e-4) and got["p"] == pytest.approx(ref.pvalue, rel=1e-3)


def test_only_shared_seeds_are_paired_and_the_rest_are_counted():
    a = {1: 10.0, 2: 12.0, 3: 11.0}
    b = {2: 20.0, 3: 21.5, 4: 22.0}
    got = difference(a, b)
    assert got["method"] == "paired t" and got["seeds"] == [2, 3] and got["diff"] == 9.25 and got["unshared"] == 2
    assert paired(a, {100: 1.0})["n"] == 0 and paired(a, {100: 1.0})["p"] is None


def test_a_cell_shows_mean_std_interval_and_n():
    assert show(describe([1.0, 2.0, 3.0])).startswith("2.00 ± 1.00 [") and show(describe([1.0, 2.0, 3.0])).endswith("] n=3")
    assert show({}) == "-"


def test_two_recorded_arms_are_two_configurations_whatever_their_labels():
    manifest = {"agents": [{"id": "a1", "name": "x", "model": "replay"}, {"id": "a2", "name": "y", "model": "replay"}],
                "arm_identities": {"x": {"provider": "replay", "model": "m", "cassette_sha256": "1" * 64},
                                   "y": {"provider": "replay", "model": "m", "cassette_sha256": "2" * 64}}}
    ids = {identity_key(agent_identity(manifest, a)): agent_identity(manifest, a) for a in manifest["agents"]}
    assert len(ids) == 2
    assert sorted(labels(ids).values()) == sorted(f"m #{k[:8]}" for k in ids)  # a shared label shows each key
    scripted = agent_identity({"agents": []}, {"id": "a1", "name": "p-1", "policy": "producer"})
    assert scripted == {"harness": "direct", "provider": "scripted", "policy": "producer"}
