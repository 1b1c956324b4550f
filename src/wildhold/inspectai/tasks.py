"""Inspect AI tasks over a served Wildhold world: each sample is a match (a scenario at a seed, or a Lite task's
set-up); the solver serves the world on 127.0.0.1, registers one agent and hands Inspect's model its MCP tools,
exactly as an outside client would get them; when the model stops (or a limit ends the sample) the match is
ended and archived. The scorer scores the verified archive: the report card's fitness index and dimensions, the
composite score, trial stages and quests (or, for a Lite task, success and progress), each with Inspect's mean
and standard error; the score's metadata names the archive, the manifest and the chain head.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_http

from wildhold.agents.scaffold.experiment import DEFAULT_OBJECTIVE
from wildhold.agents.scaffold.loopback import Loopback

AGENT = "inspect"
HARNESS = "inspect_ai"
CARD_MEASURES = ("fitness_index", "survival", "economy", "social", "adaptation", "competitiveness", "composite",
                 "trial", "quests")
TASK_MEASURES = ("success", "progress")


def _samples(scenario: str, seeds: list[int], objective: str) -> list[Sample]:
    return [Sample(id=f"{scenario}-seed{seed}", input=objective,
                   metadata={"scenario": scenario, "seed": seed, "objective": objective}) for seed in seeds]


def _lite_samples() -> list[Sample]:
    from wildhold.tasks.catalog import default_suite

    suite = default_suite()
    return [Sample(id=task_id, input=suite.tasks[task_id].description, metadata={"task": task_id, "repeat": 0})
            for task_id in suite.lite]


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
        setup = _task_setup(meta)
        config = HostConfig(signup_token=secrets.token_urlsafe(24), admin_token=secrets.token_urlsafe(24), clock="lockstep",
                            lobby=False, turn_deadline_s=turn_deadline_s, rate_per_s=0.0, wait_max_s=30.0)
        identity = {"provider": "inspect", "model": str(state.model), "harness": HARNESS}
        host = Host.open(folder / "world", config, setup["scenario"], setup["seed"], horizon="hidden",
                         manifest_extra={"tools_hash": tools_hash(horizon="hidden"), "arm_identities": {AGENT: identity},
                                         **setup["extra"]})
        try:
            token, record = host.register(AGENT, {"model": str(state.model), "harness": HARNESS})
            if "task" in meta:
                _set_up_task(host, record.agent, meta, setup)
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


def _task_setup(meta: dict[str, Any]) -> dict[str, Any]:
    """The world a sample plays: its scenario and seed, or a Lite task's (with the fields its result is read by)."""
    if "task" not in meta:
        return {"scenario": meta["scenario"], "seed": meta["seed"], "extra": {}}
    from wildhold.tasks.catalog import default_suite

    t = default_suite().get(meta["task"])
    return {"scenario": t.scenario, "seed": t.seeds.seed(meta.get("repeat", 0)), "task": t,
            "extra": {"task": t.id, "policy": HARNESS, "repeat": meta.get("repeat", 0)}}


def _set_up_task(host: Any, agent: str, meta: dict[str, Any], setup: dict[str, Any]) -> None:
    """The Lite task's set-up commands, then where its evaluator starts counting (kept in the archive's manifest)."""
    from wildhold.tasks.attempt import begin_task

    extra = setup["extra"]
    host.archives.manifest_extra.update(begin_task(host.match, agent, setup["task"], extra["repeat"], extra["policy"]).start)


@scorer(metrics={"*": [mean(), stderr()]})
def wildhold_score():
    """The verified archive's scores for the agent (or the Lite task's success and progress)."""

    async def score(state: TaskState, target: Target) -> Score:
        archive = Path(state.store.get("wildhold_archive"))
        links = {"archive": str(archive), "manifest": state.store.get("wildhold_manifest"),
                 "chain_head": state.store.get("wildhold_chain_head")}
        if "task" in state.metadata:
            from wildhold.content import default_content
            from wildhold.tasks.attempt import score_archive as score_attempt

            result = score_attempt(archive, default_content())
            value = {"success": float(result["status"] == "success"), "progress": float(result.get("progress") or 0.0)}
            return Score(value=value, answer=result["status"], metadata={**links, "result": result})
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


def _task(scenario: str, seeds: str, objective: str, out: str | None, message_limit: int, turn_deadline_s: float) -> Task:
    return Task(dataset=_samples(scenario, [int(s) for s in str(seeds).split(",")], objective),
                solver=play(out, turn_deadline_s), scorer=wildhold_score(), message_limit=message_limit)


@task
def season(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
           turn_deadline_s: float = 5.0) -> Task:
    """Seed 000's protocol: the season scenario (outfit and Shadow King, the trial); one sample per seed."""
    return _task("season", seeds, objective, out, message_limit, turn_deadline_s)


@task
def famine(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
           turn_deadline_s: float = 5.0) -> Task:
    """Seed 003's protocol: the scarce famine scenario, scored by the report card; one sample per seed."""
    return _task("famine", seeds, objective, out, message_limit, turn_deadline_s)


@task
def frontier(seeds: str = "1", objective: str = DEFAULT_OBJECTIVE, out: str | None = None, message_limit: int = 200,
             turn_deadline_s: float = 5.0) -> Task:
    """Seed 001's protocol: the frontier scenario (open-ended quests); one sample per seed."""
    return _task("frontier", seeds, objective, out, message_limit, turn_deadline_s)


@task
def lite(out: str | None = None, message_limit: int = 60, turn_deadline_s: float = 5.0) -> Task:
    """The task suite's Lite list: one sample per task, each a short match after its set-up, scored by its evaluator."""
    return Task(dataset=_lite_samples(), solver=play(out, turn_deadline_s), scorer=wildhold_score(),
                message_limit=message_limit)
