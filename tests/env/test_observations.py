"""The symbolic observation over random crowded states: each array says what the character's served observation
says, record by record (the view's channels, the scalars), whatever way the encoder builds them."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wildhold.env.observations import STATUS_FIELDS, TIME_FIELDS
from wildhold.env.parallel import WildholdParallelEnv


@settings(max_examples=6, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**16), ticks=st.integers(0, 12), agents=st.sampled_from([3, 40]))
def test_the_arrays_say_what_the_served_observation_says(seed: int, ticks: int, agents: int):
    env = WildholdParallelEnv("famine", agents=agents, action_mask=False, max_ticks=ticks + 2)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(ticks):
        obs, *_ = env.step({a: int(rng.integers(len(env.table))) for a in env.agents})
    enc = env.encoder
    for agent in env.agents:
        raw, got = env.seats[agent].last, obs[agent]
        me, view, t = raw["self"], raw["view"], raw["time"]
        bx, by = me["x"] - enc.radius, me["y"] - enc.radius
        cell = lambda rec: (rec["y"] - by, rec["x"] - bx)  # noqa: E731
        for tile in view["tiles"]:
            assert got["view"][1][cell(tile)] == (enc.code["structures"][tile["structure"]["kind"]] if "structure" in tile else 0)
            assert got["view"][2][cell(tile)] == (enc.code["nodes"][tile["node"]["kind"]] if "node" in tile else 0)
        crowd = Counter(cell(ch) for ch in view["characters"])
        assert {xy: int(got["view"][4][xy]) for xy in zip(*np.nonzero(got["view"][4]))} == {xy: min(n, 255) for xy, n in crowd.items()}
        assert got["inventory"].sum() == sum(me["inventory"].values())
        assert got["needs"].tolist() == [me["health"], me["energy"], me["satiety"]]
        time = dict(zip(TIME_FIELDS, got["time"].tolist()))
        assert (time["hour"], time["minute"], time["day"], time["night"]) == (t["hour"], t["minute"], t["day"], int(t["night"]))
        assert enc.seasons[time["season"]] == t["season"] and enc.weathers[time["weather"]] == t["weather"]
        status = dict(zip(STATUS_FIELDS, got["status"].tolist()))
        assert (status["x"], status["y"], status["busy"]) == (me["x"], me["y"], int(me["operation"] is not None))
        assert all(obs[agent][k] in env.observation_space(agent)[k] for k in obs[agent])
    env.close()
