"""The symbolic observation over random crowded states: each array says what the character's served observation
says, record by record (the view's channels, the scalars), whatever way the encoder builds them, and equals
one encoded from scratch."""

from __future__ import annotations

from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wildhold.env  # noqa: F401  (registers the ids)
from wildhold.env.observations import STATUS_FIELDS, TIME_FIELDS, Seat
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


def test_without_text_the_parts_sections_are_built_only_when_needed_and_play_as_an_eager_observation_does():
    """The arrays alone leave the parts' sections (quests, market, structures, villagers) out until an entry's slot
    needs them: entries resolve, refusals and chain heads come out as with the whole observation built every step
    (the `text` key asks for it), and the sections built late, some parts' before others, are the ones an eager
    observation holds, in its order."""
    lazy = WildholdParallelEnv("famine", agents=6, action_mask=False, max_ticks=40)
    eager = WildholdParallelEnv("famine", agents=6, observation=("symbolic", "text"), action_mask=True, max_ticks=40)
    lazy.reset(seed=11)
    _, infos = eager.reset(seed=11)
    rng = np.random.default_rng(11)
    for step in range(36):
        actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) if rng.random() < 0.6
                   else int(rng.integers(len(eager.table))) for a in eager.agents}
        got, _, _, _, lazy_infos = lazy.step(actions)
        want, _, _, _, infos = eager.step(actions)
        assert [i["refused"] for i in lazy_infos.values()] == [i["refused"] for i in infos.values()]
        for a in eager.agents:
            assert all(np.array_equal(got[a][k], want[a][k]) for k in got[a])
            seat = lazy.seats[a]
            if step % 3 == 1:  # some sections first, out of the parts' order: only their parts observe
                assert "economy" in seat.whole(("economy", "view")) and "messages" not in seat.last
                assert "villagers" in seat.whole(("villagers",)) and "structures" not in seat.last
            if step % 3 != 2:  # otherwise the late sections are built only for the entries that need them
                whole = seat.whole()
                assert whole == eager.seats[a].last and list(whole) == list(eager.seats[a].last)
    assert lazy.match.world.events.head == eager.match.world.events.head
    assert sum(i["refused"] == "" for i in infos.values()) > 0
    lazy.close(), eager.close()


def test_the_parts_sections_are_refused_once_the_world_has_moved_on():
    env = WildholdParallelEnv("famine", agents=2, action_mask=False)
    env.reset(seed=3)
    seat = env.seats["agent_1"]
    assert "quest_board" not in seat.last
    env.match.step()
    with pytest.raises(RuntimeError, match="the world moved"):
        seat.whole()
    env.close()


@pytest.mark.parametrize("seed", [5, 23])
def test_every_observation_handed_out_stays_as_it_was_and_equals_one_encoded_from_scratch(seed: int):
    """The seat keeps what it encoded last (the view's ground, the carried items, the memory map) and lays only
    the changes over it: each observation equals one encoded afresh from the whole memory, and none changes later."""
    env = gym.make("Wildhold/Default-v1", observation=("symbolic",)).unwrapped
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    handed, kept = [], []
    for step in range(160):
        handed.append(obs)
        kept.append({k: v.copy() for k, v in obs.items()})
        fresh = Seat(env.encoder, env.agent)  # no memory of its own: asks the world for all of it
        want = fresh.encode(fresh.observe(env.match.world), env.match.world)
        assert all(np.array_equal(obs[k], want[k]) and obs[k].dtype == want[k].dtype for k in want), step
        legal = np.flatnonzero(info["action_mask"])
        action = int(rng.choice(legal)) if rng.random() < 0.7 else int(rng.integers(len(env.table)))
        if step % 8 == 7:  # something new in view while the character stands still: the view and the memory show it
            _place_node_near(env, rng)
            action = 0
        obs, _, term, trunc, info = env.step(action)
        assert not term and not trunc
    assert all(all(np.array_equal(o[k], k_[k]) for k in o) for o, k_ in zip(handed, kept))
    assert len({(o["status"][0], o["status"][1]) for o in handed}) > 5  # it walked: views and memory changed
    env.close()


def _place_node_near(env: Any, rng: np.random.Generator) -> None:
    w = env.match.world
    x, y = w.xy(w.chars[env.agent].pos)
    node = sorted(env.content.nodes)[int(rng.integers(len(env.content.nodes)))]
    for dx, dy in rng.permutation([(dx, dy) for dx in range(-3, 4) for dy in range(-3, 4) if dx or dy]).tolist():
        if env.match.setup("place_resource", {"x": x + dx, "y": y + dy, "node": node}) is None:
            return
