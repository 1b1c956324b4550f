"""One attempt at a task: a short match with its own archive. Set up, then the policy plays until the task
is done or a limit (ticks, turns) is reached; the result is read back from the archive alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wildhold.agents.base import Policy
from wildhold.agents.client import LocalClient
from wildhold.content import Content
from wildhold.service.match import Match
from wildhold.store.archive import Archive
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task
from wildhold.world.parts.farming import farm
from wildhold.world.setup import SETUP

AGENT_NAME = "tasker"


class SetupFailed(Exception):
    """A set-up step the world refused: the task's fault, never the agent's."""


NEAR = ("place_structure", "place_resource", "plant_crop")  # the set-up commands `near: true` may put beside the character


def _beside(match: Match, agent: str, command: str) -> tuple[int, int]:
    """The nearest free tile to the character for what the set-up puts there (a crop needs soil); when it
    is not next to the character, the character is moved next to it, so that it stands within reach."""
    w = match.world
    x, y = w.xy(w.chars[agent].pos)
    soil = set(w.content.farming.soil)

    def free(p: int | None) -> bool:
        return (p is not None and w.is_walkable(p) and p not in w.structures and p not in w.nodes
                and p not in w.occupants and p not in farm(w).plots)

    for r in range(1, 7):
        ring = sorted(((dx, dy) for dx in range(-r, r + 1) for dy in range(-r, r + 1) if max(abs(dx), abs(dy)) == r),
                      key=lambda d: (abs(d[0]) + abs(d[1]), d[1], d[0]))
        for dx, dy in ring:
            p = w.pos(x + dx, y + dy)
            if not free(p) or (command == "plant_crop" and w.terrain_names[w.terrain[p]] not in soil):
                continue
            if r > 1:
                stand = next((q for q in (w.pos(x + dx + ex, y + dy + ey) for ex in (-1, 0, 1) for ey in (-1, 0, 1))
                              if q != p and free(q)), None)
                if stand is None:
                    continue
                code = match.setup("move_character", {"agent": agent, "x": w.xy(stand)[0], "y": w.xy(stand)[1]})
                if code is not None:
                    raise SetupFailed(f"could not move the character beside ({x + dx}, {y + dy}): {code}")
            return x + dx, y + dy
    raise SetupFailed(f"no free tile near the character for {command}")


def set_up(match: Match, agent: str, task: Task) -> None:
    for i, step in enumerate(task.setup):
        args = dict(step.args)
        if "agent" in SETUP[step.command].args.model_fields:
            args.setdefault("agent", agent)
        if step.near:
            args["x"], args["y"] = _beside(match, agent, step.command)
        code = match.setup(step.command, args)
        if code is not None:
            raise SetupFailed(f"set-up step {i} ({step.command}) was refused: {code}")


def attempt_name(task: Task, repeat: int) -> str:
    return f"{task.id.replace('/', '__')}__r{repeat}"


def run_attempt(task: Task, policy: Policy, policy_name: str, repeat: int, out: Path, content: Content) -> dict[str, Any]:
    """Play one attempt and write its archive under `out`; the live result (which `score_archive` reproduces)."""
    seed = task.seeds.seed(repeat)
    name = attempt_name(task, repeat)
    out.mkdir(parents=True, exist_ok=True)
    db = out / f"{name}.db"
    db.unlink(missing_ok=True)
    match = Match.create(task.scenario, seed, db, content, clock=task.clock)
    agent = match.join(AGENT_NAME, policy=policy_name)
    extra: dict[str, Any] = {"task": task.id, "policy": policy_name, "repeat": repeat}
    try:
        set_up(match, agent, task)
    except SetupFailed as exc:
        extra["task_error"] = str(exc)
    match.flush()
    w = match.world
    extra.update(task_start_seq=w.events.seq, task_start_tick=w.tick)
    tracker = Tracker(task, content, seed, agent, w.events.seq, w.tick)
    if "task_error" not in extra:
        match.on_events = tracker.records
        client = LocalClient(w, match.submit)
        turns, stop = 0, w.tick + task.limits.ticks
        while w.tick < stop and not tracker.done:
            if turns < task.limits.turns and client.idle(agent) and client.decide(agent, policy):
                turns += 1
            match.step()
            if turns >= task.limits.turns and client.idle(agent):
                break
    match.end("task over")
    path = match.export(out / f"{name}.wha", extra)
    match.close()
    db.unlink(missing_ok=True)
    return score_archive(path, content, live=tracker)


def score_archive(path: Path, content: Content, live: Tracker | None = None) -> dict[str, Any]:
    """The attempt's result from its archive alone (with `live`, from the tracker that followed the match instead)."""
    from wildhold.tasks.catalog import default_suite

    with Archive(path) as a:
        m = a.manifest
        task = default_suite().get(m["task"])
        agent = m["agents"][0]["id"]
        turns = sum(1 for inp in a.inputs() if inp.kind == "action" and inp.agent == agent)
        tracker = live
        if tracker is None:
            tracker = Tracker(task, content, m["seed"], agent, m["task_start_seq"], m["task_start_tick"])
            for event in a.events():
                tracker.feed(event)
    result: dict[str, Any] = {
        "task": task.id, "category": task.category, "difficulty": task.difficulty, "policy": m["policy"],
        "repeat": m["repeat"], "seed": m["seed"], "clock": task.clock,
    }
    if "task_error" in m:
        return {**result, "status": "error", "error": m["task_error"]}
    return {**result, "status": "success" if tracker.done else "failure", "progress": tracker.trace[-1][1],
            "turns": turns, "ticks": (tracker.done_tick or m["final_tick"]) - m["task_start_tick"],
            "trace": [list(p) for p in tracker.trace]}
