"""Seeds 000, 001 and 003's protocols in Inspect AI: each sample is a match (a scenario at a seed); the solver
serves the world on 127.0.0.1, registers one agent and hands Inspect's model its MCP tools, exactly as an
outside client would get them; when the model stops (or a limit ends the sample) the match is ended and
archived. The scorer scores the verified archive: the report card's fitness index and dimensions, the composite
score, trial stages and quests, each with Inspect's mean and standard error; the score's metadata names the
archive, the manifest and the chain head.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_http

from wildhold.agents.scaffold.loopback import Loopback

AGENT = "inspect"
HARNESS = "inspect_ai"
CARD_MEASURES = ("fitness_index", "survival", "economy", "social", "adaptation", "competitiveness", "composite",
                 "trial", "quests")


def _samples(scenario: str, seeds: list[int], objective: str) -> list[Sample]:
    return [Sample(id=f"{scenario}-seed{seed}", input=objective,
                   metadata={"scenario": scenario, "seed": seed, "objective": objective}) for seed in seeds]


@solver
def play(out: str | None = None, turn_deadline_s: float = 5.0):
    """Serve the sample's world on loopback, give the model its agent's MCP tools, play until the model stops."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from wildhold.eval.html import render_html
        from wildhold.eval.report import score_archive
        from wildhold.server.http import create_app
        from wildhold.server.mcp import tools_hash
        from wildhold.service.access import HostConfig
        from wildhold.service.host import Host

        meta = state.metadata
        folder = Path(out) if out else Path(tempfile.mkdtemp(prefix="wildhold-inspect-"))
        folder = folder / str(state.sample_id).replace("/", "__") / f"epoch{state.epoch}"
        config = HostConfig(signup_token=secrets.token_urlsafe(24), admin_token=secrets.token_urlsafe(24), clock="lockstep",
                            lobby=False, turn_deadline_s=turn_deadline_s, rate_per_s=0.0, wait_max_s=30.0)
        identity = {"provider": "inspect", "model": str(state.model), "harness": HARNESS}
        host = Host.open(folder / "world", config, meta["scenario"], meta["seed"], horizon="hidden",
                         manifest_extra={"tools_hash": tools_hash(horizon="hidden"), "arm_identities": {AGENT: identity}})
        try:
            token, _ = host.register(AGENT, {"model": str(state.model), "harness": HARNESS})
            app = create_app(host, scorer=score_archive, render_html=render_html)
            async with Loopback(app) as server:
                world = mcp_server_http(name="wildhold", url=f"{server.url}/mcp",
                                        headers={"Authorization": f"Bearer {token}"})
                async with mcp_connection([world]):
                    state.tools = list(await world.tools())
                    try:
                        state = await generate(state, tool_calls="loop")
                    finally:
                        if host.state != "over":
                            host.stop("the model stopped")
        finally:
            archive = host.archives.path or host.archives.export()
            host.close()
            manifest = folder / "manifest.json"
            with _archive(archive) as a:
                manifest.write_text(json.dumps(a.manifest, indent=1, sort_keys=True) + "\n")
                state.store.set("wildhold_chain_head", a.manifest["chain_head"])
            state.store.set("wildhold_archive", str(archive))
            state.store.set("wildhold_manifest", str(manifest))
        return state

    return solve


def _archive(path: Path):
    from wildhold.store.archive import Archive

    return Archive(path)


@scorer(metrics={"*": [mean(), stderr()]})
def wildhold_score():
    """The verified archive's scores for the agent."""

    async def score(state: TaskState, target: Target) -> Score:
        archive = Path(state.store.get("wildhold_archive"))
        links = {"archive": str(archive), "manifest": state.store.get("wildhold_manifest"),
                 "chain_head": state.store.get("wildhold_chain_head")}
        from wildhold.eval.report import score_archive

        report = score_archive(archive)
        card = next(c for c in report["agents"] if c["name"] == AGENT)
        composite = next((r["score"] for r in (report.get("composite") or {}).get("rows", []) if r["agent"] == card["agent"]), 0.0)
        metrics = (report.get("metrics") or {}).get(card["agent"], {})
        value = {"fitness_index": card["fitness_index"], **card["scores"], "composite": composite,
                 "trial": metrics.get("trial_native", 0), "quests": metrics.get("quests_completed", 0)}
        return Score(value={k: float(v) for k, v in value.items()}, answer=card["grade"],
                     explanation="; ".join(card["strengths"] + card["weaknesses"]),
                     metadata={**links, "rubric_version": report["rubric_version"],
                               "verification": report["verification"]["status"]})

    return score


def match_task(scenario: str, seeds: str, objective: str, out: str | None, message_limit: int, turn_deadline_s: float) -> Task:
    return Task(dataset=_samples(scenario, [int(s) for s in str(seeds).split(",")], objective),
                solver=play(out, turn_deadline_s), scorer=wildhold_score(), message_limit=message_limit)
