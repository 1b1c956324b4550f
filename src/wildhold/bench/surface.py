"""`wildhold bench surface`: what an LLM pays to use the served surface, in characters.

- The tool catalogue of each profile (`serve --tools full|compact`): tools, and characters of their names,
  descriptions and input and output schemas as MCP lists them (what `rules --tools-hash` counts).
- `observe` over a scripted day: a served match stepped by hand through the frontier scenario's first day, four
  characters played by scripted policies through the host (as an agent acts over the faces); before each decision
  of the first, it observes in the default form (what changed since its last look) and the full one, and the size
  of each answer's JSON (what HTTP sends, the structured content MCP sends) is kept. Medians and 90th percentiles.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

import orjson

from wildhold.agents.client import LocalClient
from wildhold.agents.scripted import make_policy
from wildhold.bench import PASS, figures_table, fmt, publish
from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from wildhold.service.queries import QUERIES

SCENARIO, SEED = "frontier", 1
POLICIES = ("producer", "trader", "survivor", "expedition")  # the first is the one whose observations are measured
DAY, QUICK_TICKS = 1440, 240
TARGET_OBSERVE_BYTES = 3000  # the default form's median
FORMS = {"default": {}, "full": {"memory": "full"}}


def observe_sizes(ticks: int = DAY, scenario: str = SCENARIO, seed: int = SEED) -> dict[str, list[int]]:
    """The JSON bytes of each form of the first character's observation, asked before each of its decisions."""
    config = HostConfig(signup_token="bench-signup", admin_token="bench-admin", clock="fast", rate_per_s=0,
                        idle_after_ticks=ticks + 1)
    with tempfile.TemporaryDirectory() as tmp:
        host = Host.open(Path(tmp) / "world", config, scenario, seed, manifest_extra={"tools_hash": "bench"})
        try:
            agents = [host.register(f"{name}{i}")[1].agent for i, name in enumerate(POLICIES)]
            policies = {a: make_policy(name, host.content) for a, name in zip(agents, POLICIES)}
            client = LocalClient(host.world, host.submit)
            sizes: dict[str, list[int]] = {form: [] for form in FORMS}
            observe = QUERIES["observe"]
            for _ in range(ticks):
                for agent in agents:
                    if not client.idle(agent):
                        continue
                    if agent == agents[0]:
                        for form, args in FORMS.items():
                            sizes[form].append(len(orjson.dumps(observe.run_now(host, agent, args))))
                    client.decide(agent, policies[agent])
                host.clock.step()
            return sizes
        finally:
            host.close()


def _summary(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    return {"looks": len(values), "median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))],
            "max": ordered[-1]}


def bench_surface(as_json: bool = False, quick: bool = False) -> dict[str, Any]:
    """Print the catalogue of each tool profile and the observe sizes over a scripted day."""
    from wildhold.server.mcp import CATALOGUE_BUDGET, COMPACT_MOST_TOOLS, catalogue_size, tool_surface

    result: dict[str, Any] = {"catalogue": {}, "observe": {}}
    for profile in ("full", "compact"):
        surface = tool_surface(profile=profile)
        result["catalogue"][profile] = {"tools": len(surface), "characters": catalogue_size(surface)}
    ticks = QUICK_TICKS if quick else DAY
    sizes = observe_sizes(ticks)
    result["observe"] = {form: _summary(values) for form, values in sizes.items()}
    result["observe"]["default"]["pass"] = result["observe"]["default"]["median"] <= TARGET_OBSERVE_BYTES
    result["observe_ticks"], result["scenario"] = ticks, SCENARIO
    table = figures_table("wildhold bench surface",
                          f"observe: {SCENARIO} seed {SEED}, {ticks} ticks, the {POLICIES[0]}'s looks before each decision")
    for profile, c in result["catalogue"].items():
        most = COMPACT_MOST_TOOLS if profile == "compact" else None
        c["pass"] = c["characters"] <= CATALOGUE_BUDGET[profile] and (most is None or c["tools"] <= most)
        table.add_row(f"{profile} profile: tools", fmt(c["tools"]), "" if most is None else f"<= {most}",
                      "" if most is None else PASS[c["tools"] <= most])
        table.add_row(f"{profile} profile: catalogue characters", fmt(c["characters"]),
                      f"<= {CATALOGUE_BUDGET[profile]:,}", PASS[c["characters"] <= CATALOGUE_BUDGET[profile]])
    for form, s in result["observe"].items():
        median_ok = s["median"] <= TARGET_OBSERVE_BYTES if form == "default" else None
        table.add_row(f"observe {form}: median bytes ({s['looks']} looks)", fmt(s["median"]),
                      f"<= {TARGET_OBSERVE_BYTES:,}" if median_ok is not None else "",
                      PASS[median_ok] if median_ok is not None else "")
        table.add_row(f"observe {form}: 90th percentile / max bytes", f"{fmt(s['p90'])} / {fmt(s['max'])}", "", "")
    return publish(result, table, as_json)
