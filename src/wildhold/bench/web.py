"""`wildhold bench web`: what the web pages cost the server, and how fast the replay viewer answers.

Live: a served frontier match (128x128) with 64 agents joined, each acting every tick; each update of the
live page is the view built once for every watcher plus its JSON for the stream. The figure is the server's
CPU time per update (process time, so another process on the machine does not count) and the share of one
core that two updates a second take. Viewer: the famine archive `bench report` keeps (about 50,000 events)
opened as `wildhold view` opens it (verified by re-simulation, then re-simulated once keeping states), then
frames at random ticks.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from wildhold.bench import PASS, figures_table, publish
from wildhold.bench.report import SCENARIO as ARCHIVE_SCENARIO
from wildhold.bench.report import SEED as ARCHIVE_SEED
from wildhold.bench.report import bench_archive

AGENTS, QUICK_AGENTS = 64, 16
UPDATES, QUICK_UPDATES = 60, 10
UPDATES_PER_S = 2.0
CORE_SHARE_TARGET = 0.20
OPEN_TARGET_S, SCRUB_TARGET_S = 3.0, 0.3
SCRUBS, QUICK_SCRUBS = 40, 8


def bench_web(as_json: bool = False, quick: bool = False) -> dict[str, Any]:
    result = {"quick": quick, "live": _live(QUICK_AGENTS if quick else AGENTS, QUICK_UPDATES if quick else UPDATES),
              "viewer": _viewer("tiny" if quick else ARCHIVE_SCENARIO, QUICK_SCRUBS if quick else SCRUBS)}
    return publish(result, _table(result), as_json)


def _live(agents: int, updates: int) -> dict[str, Any]:
    from wildhold.service.access import HostConfig
    from wildhold.service.host import Host

    with tempfile.TemporaryDirectory() as tmp:
        config = HostConfig(signup_token="bench-signup-token", admin_token="bench-admin-token",
                            spectator_token="bench-spectator-token", clock="lockstep", rate_per_s=0, max_agents=agents)
        host = Host.open(Path(tmp) / "world", config, "frontier", 1, manifest_extra={"tools_hash": "bench"})
        try:
            names = [host.register(f"agent{i}")[1].agent for i in range(agents)]
            cpu, sizes = [], []
            for _ in range(updates):
                for i, agent in enumerate(names):
                    host.submit(agent, "move", {"direction": "nesw"[(i + host.world.tick) % 4]})
                host.match.step()
                host.match.flush()
                began = time.process_time()
                body = orjson.dumps(host.spectate.view())
                cpu.append(time.process_time() - began)
                sizes.append(len(body))
            world = host.world
            size = f"{world.width}x{world.height}"
        finally:
            host.close()
    per_update = statistics.mean(cpu)
    share = per_update * UPDATES_PER_S
    return {"agents": agents, "map": size, "updates": updates, "cpu_ms_per_update": round(per_update * 1000, 2),
            "view_bytes": int(statistics.mean(sizes)), "core_share_at_2_per_s": round(share, 4),
            "target_core_share": CORE_SHARE_TARGET, "pass": share < CORE_SHARE_TARGET}


def _viewer(scenario: str, scrubs: int) -> dict[str, Any]:
    from wildhold.web.viewer import Timeline

    path = bench_archive(scenario, ARCHIVE_SEED)
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        timeline = Timeline(path, cache=Path(tmp))  # an empty cache: the verification is part of opening
        opened = time.perf_counter() - began
    rng = random.Random(7)
    ticks = [rng.randint(timeline.start_tick, timeline.final_tick) for _ in range(scrubs)]
    times = []
    for tick in ticks:
        began = time.perf_counter()
        timeline.frame(tick)
        times.append(time.perf_counter() - began)
    times.sort()
    worst = times[-1]
    return {"archive": str(path), "events": len(timeline.events), "ticks": timeline.final_tick - timeline.start_tick,
            "kept_states": len(timeline.keyframes), "open_s": round(opened, 3), "scrubs": scrubs,
            "scrub_median_s": round(statistics.median(times), 4), "scrub_max_s": round(worst, 4),
            "open_target_s": OPEN_TARGET_S, "scrub_target_s": SCRUB_TARGET_S,
            "pass": opened < OPEN_TARGET_S and worst < SCRUB_TARGET_S}


def _table(r: dict[str, Any]) -> Any:
    live, view = r["live"], r["viewer"]
    table = figures_table("wildhold web benchmark" + (" (quick: rough figures)" if r["quick"] else ""),
                          f"live: {live['agents']} agents acting every tick on a {live['map']} map, {live['updates']} updates; "
                          f"viewer: {view['events']:,} events over {view['ticks']:,} ticks, {view['scrubs']} frames at random ticks.")
    table.add_row("live: server CPU ms per update (view + JSON, shared by every watcher)", f"{live['cpu_ms_per_update']:.2f}", "", "")
    table.add_row("live: share of one core at 2 updates/s", f"{live['core_share_at_2_per_s']:.1%}",
                  f"< {live['target_core_share']:.0%}", PASS[live["pass"]])
    table.add_row("live: bytes per update", f"{live['view_bytes']:,}", "", "")
    table.add_row("viewer: open (verify + re-simulate + keep states), s", f"{view['open_s']:.2f}", f"< {view['open_target_s']:g}",
                  PASS[view["open_s"] < view["open_target_s"]])
    table.add_row("viewer: frame at a tick, median s", f"{view['scrub_median_s']:.3f}", "", "")
    table.add_row("viewer: frame at a tick, worst s", f"{view['scrub_max_s']:.3f}", f"< {view['scrub_target_s']:g}",
                  PASS[view["scrub_max_s"] < view["scrub_target_s"]])
    return table
