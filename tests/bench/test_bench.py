"""The engine benchmark runs end to end and reports every figure; no timing is asserted."""

from __future__ import annotations

import json
import random
from collections import deque

from wildhold.bench.engine import bench_engine
from wildhold.content import default_content
from wildhold.world.actions import DIRECTIONS, find_path, known_walkable
from wildhold.world.world import World


def test_quick_bench_prints_one_json_object_last_with_every_figure(capsys):
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
        assert all(honest[k] > 0 for k in ("agent_ticks_per_s", "observe_us", "decide_us", "submit_us", "step_us_per_agent_tick"))
    assert figures["guessed_accepted_share"] < 0.5  # the old load's guesses: mostly refused, as its row says
    keys = [
        "worldgen_ms", "mb_per_world", "crafter_steps_per_s", "crafter_reset_ms",
        "ratio_1_agent_vs_crafter", "ratio_100_agents_vs_crafter", "ratio_crafter_reset_vs_worldgen",
    ]
    for key in keys:
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert set(figures["pass"]) == set(figures["targets"])
    memory = figures["observe_by_memory"]  # one observation timed at 0, 2k and 9k remembered tiles
    assert set(memory) == {"0", "2000", "9000"} and memory["9000"]["remembered"] >= 9000
    assert all(row["changes_us"] > 0 and row["whole_us"] > 0 for row in memory.values())


def test_bench_without_json_prints_only_the_table(capsys, monkeypatch):
    import wildhold.bench.engine as engine

    # The measurements are the test above's; this one is about what is printed, so it measures nothing.
    monkeypatch.setattr(engine, "warm_up", lambda content: None)
    monkeypatch.setattr(engine, "agent_ticks_per_s", lambda content, n, ticks: 1000.0 * n)
    honest = {"agent_ticks_per_s": 900.0, "accepted_share": 1.0, "candidates_passed_share": 0.2, "observe_us": 50.0,
              "decide_us": 40.0, "submit_us": 10.0, "step_us_per_agent_tick": 5.0, "decisions_per_agent_tick": 0.5}
    monkeypatch.setattr(engine, "honest_figures", lambda content, n, ticks: honest)
    monkeypatch.setattr(engine, "guessed_acceptance", lambda content: 0.1)
    monkeypatch.setattr(engine, "observe_by_memory", lambda content, calls: {
        str(n): {"remembered": n, "changes_us": 30.0, "whole_us": 30.0 + n / 10} for n in engine.MEMORY_SIZES})
    monkeypatch.setattr(engine, "worldgen_ms", lambda content, repeats: 12.5)
    monkeypatch.setattr(engine, "mb_per_world", lambda content, ticks: (3.0, 4.0))
    monkeypatch.setattr(engine, "crafter_figures", lambda steps: (3500.0, 9.0))
    bench_engine(as_json=False, quick=True)
    out = capsys.readouterr().out
    assert "agent-ticks/s" in out and "crafter" in out
    honest_row = next(line for line in out.splitlines() if "honest load, 100 agents" in line)
    assert ">= 25,000" in honest_row and "miss" in honest_row  # 900 agent-ticks/s misses the target
    assert not out.strip().splitlines()[-1].startswith("{")


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
            c.memory = {p: w.tile_snapshot(p) for p in rng.sample(tiles, rng.choice([0, 300, 3000]))}
            c.pos = rng.choice(walkable)
            for goal in (rng.choice(tiles), min(max(c.pos + rng.randint(-6, 6) * (w.width + 1), 0), len(tiles) - 1)):
                assert find_path(w, c, goal) == _plain_bfs(w, c, goal)
