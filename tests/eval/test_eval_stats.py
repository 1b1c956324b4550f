"""Statistics on pooled runs: n, mean, std and a seeded 95% bootstrap interval over seeds; the paired sign-flip test."""

from __future__ import annotations

import pytest

from wildhold.eval.identity import agent_identity, identity_key, labels
from wildhold.eval.stats import describe, difference, paired, per_seed, show


def test_one_value_has_no_spread_and_none_has_no_mean():
    assert describe([]) == {"n": 0, "mean": None, "std": None, "ci95": None}
    assert describe([70.0]) == {"n": 1, "mean": 70.0, "std": None, "ci95": None}


def test_the_interval_holds_the_mean_and_the_same_values_give_the_same_interval():
    got = describe([60.0, 70.0, 80.0, 75.0])
    assert got["n"] == 4 and got["mean"] == 71.25 and got["std"] == pytest.approx(8.5391, abs=1e-4)
    lo, hi = got["ci95"]
    assert 60.0 <= lo < got["mean"] < hi <= 80.0
    assert describe([60.0, 70.0, 80.0, 75.0]) == got  # seeded: the table is reproducible
    assert describe([5.0, 5.0, 5.0])["ci95"] == [5.0, 5.0]


def test_repeats_of_a_seed_are_averaged_before_seeds_are_resampled():
    assert per_seed([(2, 10.0), (1, 4.0), (2, 20.0)]) == {1: 4.0, 2: 15.0}


def test_a_consistent_paired_difference_is_significant_and_noise_is_not():
    a = {s: 50.0 + s for s in range(8)}
    better = {s: v + 5.0 for s, v in a.items()}
    test = paired(a, better)
    assert test["n"] == 8 and test["mean_diff"] == 5.0 and test["exact"] is True
    assert test["p"] == pytest.approx(2 / 256, abs=1e-6)  # only the all-plus and all-minus flips are as extreme
    noisy = {s: v + (1.0 if s % 2 else -1.0) for s, v in a.items()}
    assert paired(a, noisy)["p"] == 1.0
    assert paired(a, {100: 1.0})["n"] == 0 and paired(a, {100: 1.0})["p"] is None


def test_the_difference_has_its_interval_and_only_shared_seeds_are_paired():
    a = {1: 10.0, 2: 12.0, 3: 11.0}
    b = {2: 20.0, 3: 21.0, 4: 22.0}
    d = difference(a, b)
    assert d["diff"] == 10.0 and d["ci95"][0] <= 10.0 <= d["ci95"][1]
    assert d["paired"]["seeds"] == [2, 3] and d["paired"]["mean_diff"] == 9.0


def test_a_cell_shows_mean_std_interval_and_n():
    assert show(describe([1.0, 2.0, 3.0])).startswith("2.00 ± 1.00 [") and show(describe([1.0, 2.0, 3.0])).endswith("n=3")
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
