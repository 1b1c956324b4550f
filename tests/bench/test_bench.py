"""The engine benchmark runs end to end and reports every figure; no timing is asserted."""

from __future__ import annotations

import gc
import json
import random
from collections import deque

from wildhold.bench import engine
from wildhold.bench.engine import bench_engine
from wildhold.content import default_content
from wildhold.world.actions import DIRECTIONS, find_path, known_walkable
from wildhold.world.memory import BARE
from wildhold.world.parts import PARTS
from wildhold.world.world import World


def test_quick_bench_prints_one_json_object_last_with_every_figure(capsys):
    callbacks = list(gc.callbacks)
    returned = bench_engine(as_json=True, quick=True)
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures == json.loads(json.dumps(returned))
    assert set(figures["agent_ticks_per_s"]) == {"1", "100", "1000"}
    for rate in figures["agent_ticks_per_s"].values():
        assert isinstance(rate, float) and rate > 0
    assert set(figures["honest"]) == {"1", "100"}
    for honest in figures["honest"].values():  # the honest load submits what the world accepts, and observes
        assert honest["accepted_share"] >= 0.8 and 0 < honest["candidates_passed_share"] < 1
        assert all(honest[k] > 0 for k in ("cpu_agent_ticks_per_s", "agent_ticks_per_s", "observe_us", "decide_us", "submit_us", "step_us_per_agent_tick"))
    assert figures["guessed_accepted_share"] < 0.5  # the old load's guesses: mostly refused, as its row says
    keys = [
        "worldgen_ms", "worldgen_384_ms", "mb_full_maps", "mb_per_world", "crafter_steps_per_s", "crafter_cpu_steps_per_s", "crafter_reset_ms",
        "ratio_1_agent_vs_crafter", "ratio_100_agents_vs_crafter", "ratio_crafter_reset_vs_worldgen",
    ]
    for key in keys:
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert set(figures["pass"]) == set(figures["targets"])
    assert figures["full_map_tiles"] == 96 * 96  # every character walked the whole map
    crowd = figures["crowd"]  # quick: a thousand characters, shown but not judged
    assert crowd["agents"] == engine.QUICK_CROWD and 0 < crowd["observe_cpu_s"] <= crowd["tick_cpu_s"]
    assert 0 < crowd["gc_cpu_s"] < crowd["tick_cpu_s"] and gc.callbacks == callbacks  # the collector timed, its timer taken off
    # their memories hold the rows around where they walked, not a 384x384 map each (1.2 MB, a gigabyte in all)
    assert 0 < crowd["memory_mb"] < 0.1 * engine.QUICK_CROWD
    assert figures["pass"]["crowd_tick_s"] is False
    memory = figures["observe_by_memory"]  # one observation timed at 0, 2k and 9k remembered tiles
    assert set(memory) == {"0", "2000", "9000"} and memory["9000"]["remembered"] >= 9000
    assert all(row["changes_us"] > 0 and row["whole_us"] > 0 for row in memory.values())
    by_part = figures["observe_by_part"]
    assert set(by_part["us"]) == {part.name for part in PARTS} and by_part["total_us"] > 0
    assert by_part["observations"] == 100 * figures["honest_ticks"]["100"]
    assert figures["process"]["cpu_s"] > 0 and figures["process"]["wall_s"] > 0
    assert any(line.startswith("process: ") and "CPU" in line and "wall" in line for line in lines)


def test_observations_digest_is_the_same_for_the_same_play_and_moves_when_one_differs(monkeypatch):
    """The digest and chain head printed beside the parts' timings say whether two trees build the same
    observations: the same play gives the same, and an observation one key longer gives another."""
    content = default_content()
    first, again = engine.observe_by_part(content, 6, 8), engine.observe_by_part(content, 6, 8)
    assert (first["observations_sha256"], first["chain_head"]) == (again["observations_sha256"], again["chain_head"])
    assert first["observations"] == 48
    farming = next(part for part in PARTS if part.name == "farming")
    plain = type(farming).observe
    monkeypatch.setattr(type(farming), "observe", lambda self, w, c, obs: (plain(self, w, c, obs), obs.setdefault("extra", 1))[0])
    other = engine.observe_by_part(content, 6, 8)
    assert other["observations_sha256"] != first["observations_sha256"]
    assert all(not hasattr(part, "__dict__") or "observe" not in vars(part) for part in PARTS)  # the timers are taken off


def test_bench_without_json_prints_only_the_table_judged_on_cpu_time(capsys, monkeypatch):

    # The measurements are the test above's; this one is about what is printed, so it measures nothing.
    monkeypatch.setattr(engine, "warm_up", lambda content: None)
    monkeypatch.setattr(engine, "agent_ticks_per_s", lambda content, n, ticks: 1000.0 * n)
    # CPU time says the code is fast enough, wall time (a busy machine) says not: the verdict reads CPU time.
    honest = {"cpu_agent_ticks_per_s": 60_000.0, "agent_ticks_per_s": 900.0, "accepted_share": 1.0, "candidates_passed_share": 0.2, "observe_us": 50.0,
              "decide_us": 40.0, "submit_us": 10.0, "step_us_per_agent_tick": 5.0, "decisions_per_agent_tick": 0.5}
    monkeypatch.setattr(engine, "honest_figures", lambda content, n, ticks: honest)
    monkeypatch.setattr(engine, "guessed_acceptance", lambda content: 0.1)
    monkeypatch.setattr(engine, "observe_by_memory", lambda content, calls: {
        str(n): {"remembered": n, "changes_us": 30.0, "whole_us": 30.0 + n / 10} for n in engine.MEMORY_SIZES})
    monkeypatch.setattr(engine, "worldgen_ms", lambda content, repeats, scenario="default": (12.5, 14.0))
    monkeypatch.setattr(engine, "mb_full_maps", lambda content: (7.5, 9216))
    monkeypatch.setattr(engine, "crowd_tick", lambda content, agents: {"agents": agents, "tick_cpu_s": 0.5,
                                                                       "observe_cpu_s": 0.25, "gc_cpu_s": 0.05, "memory_mb": 6.0})
    monkeypatch.setattr(engine, "mb_per_world", lambda content, ticks: (3.0, 4.0))
    monkeypatch.setattr(engine, "crafter_figures", lambda steps: (3500.0, 9.0, 4000.0))
    monkeypatch.setattr(engine, "observe_by_part", lambda content, n, ticks: {
        "us": {"market": 6.0, "society": 4.0}, "total_us": 10.0, "observations": n * ticks,
        "observations_sha256": "ab" * 32, "chain_head": "cd" * 16})
    bench_engine(as_json=False, quick=True)
    out = capsys.readouterr().out
    assert "agent-ticks/s" in out and "crafter" in out
    honest_row = next(line for line in out.splitlines() if ">= 50,000" in line)  # the honest load at 100 agents
    assert "60,000 / 900" in honest_row and "pass" in honest_row
    assert "pass" in next(line for line in out.splitlines() if "7.50" in line and "<= 10" in line)  # 100 full maps
    assert "judged)" in out  # "(quick: not judged)": the quick run's crowd is a tenth of the target's
    assert "market" in out and "abababababababab" in out and "cdcdcdcdcdcdcdcd" in out
    assert out.strip().splitlines()[-1].startswith("process: ")


def _plain_bfs(w: World, c, goal: int) -> list[int] | None:
    """The textbook search `find_path` was tuned from: a FIFO queue, every neighbour judged each time."""
    limit, start = w.needs.max_path_length, c.pos
    if start == goal:
        return []
    parent, depth, queue = {start: start}, {start: 0}, deque([start])
    while queue:
        p = queue.popleft()
        if depth[p] >= limit:
            continue
        x, y = w.xy(p)
        for dx, dy in DIRECTIONS.values():
            q = w.pos(x + dx, y + dy)
            if q is not None and q not in parent and known_walkable(w, c, q):
                parent[q], depth[q] = p, depth[p] + 1
                if q == goal:
                    path = [q]
                    while parent[path[-1]] != start:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(q)
    return None


def test_tuned_path_search_returns_exactly_the_plain_search_path():
    content = default_content()
    rng = random.Random(5)
    for seed in range(3):
        w = World(content, "default", seed)
        c = w.chars[w.join("walker")]
        tiles = range(w.width * w.height)
        walkable = [p for p in tiles if w.is_walkable(p)]
        for _ in range(30):
            c.memory = w.new_memory()
            for p in rng.sample(tiles, rng.choice([0, 300, 3000])):
                record = w.tile_snapshot(p)[1:]
                c.memory.remember(p, w.tick, 0 if record == BARE else w.contents.add(record))
            c.pos = rng.choice(walkable)
            nearby = [q for q in tiles if w.distance(c.pos, q) == 1]  # one step away: answered without a search
            for goal in (rng.choice(tiles), min(max(c.pos + rng.randint(-6, 6) * (w.width + 1), 0), len(tiles) - 1), *nearby):
                assert find_path(w, c, goal) == _plain_bfs(w, c, goal)
