"""`wildhold bench env` runs end to end, judges rows that step legal entries from the mask on CPU time and states
beside each figure how much of it the world accepted; no timing is asserted."""

from __future__ import annotations

import json

from wildhold.bench.env import bench_env


def test_quick_env_bench_prints_every_figure_with_its_acceptance(capsys):
    returned = bench_env(as_json=True, quick=True)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures == json.loads(json.dumps(returned))
    for key in ("gym_steps_per_s", "gym_legal_steps_per_s", "gym_legal_apart_steps_per_s", "gym_image_steps_per_s",
                "batched_steps_per_s", "pettingzoo_agent_steps_per_s", "pettingzoo_legal_agent_steps_per_s"):
        assert figures[key] > 0, key
    # Uniform random entries are mostly refused (crafter's random player); legal ones from the mask are accepted.
    assert figures["gym_accepted_share"] < 0.5 and figures["pettingzoo_accepted_share"] < 0.5
    for key in ("gym_legal_accepted_share", "gym_legal_apart_accepted_share", "pettingzoo_legal_accepted_share"):
        assert figures[key] >= 0.8, key
    assert figures["pettingzoo_observe_us"] > 0 and figures["pettingzoo_encode_us"] > 0 and figures["pettingzoo_parts_us"] > 0
    assert set(figures["pass"]) == set(figures["targets"]) == {
        "ratio_gym_vs_crafter", "ratio_gym_image_vs_crafter_render", "pettingzoo_legal_agent_steps_per_s",
        "honest_arrays_agent_ticks_per_s"}
    assert figures["clock"] == "cpu" and figures["process"]["cpu_s"] > 0
    assert figures["ratio_gym_vs_crafter"] == figures["gym_legal_steps_per_s"] / figures["crafter_steps_per_s"]
    assert figures["gym_image_accepted_share"] >= 0.8  # the image row steps legal entries too
