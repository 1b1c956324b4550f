"""One attempt at a task: a short match with its own archive. Set up, then the policy plays until the task
is done or a limit (ticks, turns) is reached; the result is read back from the archive alone.

Where the task begins is a `begin_task` set-up command in the log, naming the task, repeat and player (and why
the set-up failed, if it did): its event is chained with every other, so the result is read from the log, and
the manifest's copies of those fields must agree with it. Verifying an attempt (`check_attempt`) also plays
the task's set-up again on the re-simulated world and holds it to the set-up the log records."""

from __future__ import annotations

import os
from dataclasses import dataclass
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from wildhold.agents.base import Policy
from wildhold.agents.client import LocalClient
from wildhold.content import Content
from wildhold.service.match import SPEND, Match, replay
from wildhold.service.verify import Unverified
from wildhold.store.archive import Archive
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import SetupStep, Task
from wildhold.world.parts.farming import farm
from wildhold.world.serialize import dumps, loads
from wildhold.world.setup import SETUP
from wildhold.world.world import SETUP_EVENT, World

AGENT_NAME = "tasker"


class SetupFailed(Exception):
    """A set-up step the world refused: the task's fault, never the agent's."""


NEAR = ("place_structure", "place_resource", "plant_crop")  # the set-up commands `near: true` may put beside the character


_RING = sorted(((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)),
               key=lambda d: (abs(d[0]) + abs(d[1]), d[1], d[0]))  # the tiles within reach, nearest first


def _beside(match: Match, agent: str, steps: list[SetupStep]) -> tuple[tuple[int, int] | None, list[tuple[int, int]]]:
    """A tile within the character's reach for each of `steps` (`near` set-up steps: a crop needs soil), all
    around one standing tile: where the character stands when they fit (None), else the nearest tile it could
    walk to where they do, to move it to. Any map with enough free soil and ground beside a tile holds them."""
    w = match.world
    here = w.chars[agent].pos
    soil = set(w.content.farming.soil)
    plots = farm(w).plots

    def free(p: int | None) -> bool:
        return (p is not None and w.is_walkable(p) and p not in w.structures and p not in w.nodes
                and p not in w.occupants and p not in plots)

    def fit(stand: int) -> list[int] | None:
        x, y = w.xy(stand)
        taken: list[int] = []
        for step in steps:
            spot = next((q for dx, dy in _RING if (q := w.pos(x + dx, y + dy)) is not None and free(q) and q not in taken
                         and (step.command != "plant_crop" or w.terrain_names[w.terrain[q]] in soil)), None)
            if spot is None:
                return None
            taken.append(spot)
        return taken

    for stand in _walkable_from(w, here):
        spots = fit(stand)
        if spots is not None:
            return (None if stand == here else w.xy(stand)), [w.xy(q) for q in spots]
    raise SetupFailed(f"no tile the character can walk to has room beside it for {', '.join(s.command for s in steps)}")


def _walkable_from(w: World, here: int) -> Iterator[int]:
    """The tiles the character could walk to from `here` (`here` first), nearest first."""
    seen, frontier = {here}, [here]
    while frontier:
        yield from frontier
        nxt = []
        for p in frontier:
            x, y = w.xy(p)
            for dx, dy in _RING:
                q = w.pos(x + dx, y + dy)
                if q is not None and q not in seen and w.is_walkable(q) and q not in w.occupants:
                    seen.add(q)
                    nxt.append(q)
        frontier = nxt


def _away(match: Match, agent: str, step: SetupStep) -> tuple[int, int]:
    """The nearest tile at least `step.away` tiles from the character, of a terrain its node grows on, free, and
    beside a tile the character could walk to."""
    w = match.world
    here = w.chars[agent].pos
    hx, hy = w.xy(here)
    grows = set(w.content.nodes[step.args["node"]].terrain)
    for stand in _walkable_from(w, here):
        x, y = w.xy(stand)
        for dx, dy in _RING:
            p = w.pos(x + dx, y + dy)
            if (p is not None and max(abs(x + dx - hx), abs(y + dy - hy)) >= step.away and w.terrain_names[w.terrain[p]] in grows
                    and p not in w.structures and p not in w.nodes and p not in w.occupants and p not in farm(w).plots):
                return x + dx, y + dy
    raise SetupFailed(f"no tile {step.away} or more from the character for a {step.args['node']}")


def set_up(match: Match, agent: str, task: Task) -> None:
    near = [step for step in task.setup if step.near]
    stand, spots = _beside(match, agent, near) if near else (None, [])
    place = iter(spots)
    for i, step in enumerate(task.setup):
        args = dict(step.args)
        if "agent" in SETUP[step.command].args.model_fields:
            args.setdefault("agent", agent)
        if step.near and stand is not None:  # the character goes where what it needs fits beside it, once
            code = match.setup("move_character", {"agent": agent, "x": stand[0], "y": stand[1]})
            if code is not None:
                raise SetupFailed(f"could not move the character to {stand}: {code}")
            stand = None
        if step.near:
            args["x"], args["y"] = next(place)
        if step.away is not None:
            args["x"], args["y"] = _away(match, agent, step)
        code = match.setup(step.command, args)
        if code is not None:
            raise SetupFailed(f"set-up step {i} ({step.command}) was refused: {code}")


BEGIN = "begin_task"


@dataclass(frozen=True)
class Begun:
    """A task set up and marked in the log: the manifest's fields of its start (with `task_error` when the set-up
    was refused, the task's fault), and the set-up's own events (an evaluator reads in them what the set-up put
    on the map, as it does from an archive)."""

    start: dict[str, Any]
    events: list[tuple[int, int, str, bytes, str]]

    def tracker(self, task: Task, content: Content, seed: int, agent: str) -> Tracker | None:
        """The task's tracker from its start, fed the set-up's events; None when the set-up failed."""
        if "task_error" in self.start:
            return None
        tracker = Tracker(task, content, seed, agent, self.start["task_start_seq"], self.start["task_start_tick"])
        tracker.records(self.events)
        return tracker


def _setting_up(match: Match, agent: str, task: Task, mark: dict[str, Any] | None) -> tuple[str | None, list]:
    """Set the task up (then, given `mark`, mark it), keeping the events flushed meanwhile beside whoever else
    follows the match's events; the set-up's refusal, if any."""
    events: list[tuple[int, int, str, bytes, str]] = []
    restore = match.also_follow(events.extend)
    error = None
    try:
        try:
            set_up(match, agent, task)
        except SetupFailed as exc:
            error = str(exc)
        if mark is not None:
            code = match.setup(BEGIN, mark | ({"error": error} if error else {}))
            if code is not None:
                raise SetupFailed(f"the task's mark was refused: {code}")
    finally:
        match.flush()
        restore()
    return error, events


def begin_task(match: Match, agent: str, task: Task, repeat: int, player: str) -> Begun:
    """The task's set-up, then its mark in the log (the task, repeat and player: scores read them there); the
    events it counts come after the mark's."""
    error, events = _setting_up(match, agent, task, {"agent": agent, "task": task.id, "repeat": repeat, "player": player})
    w = match.world
    start = {"task_start_seq": w.events.seq, "task_start_tick": w.tick} | ({"task_error": error} if error else {})
    return Begun(start, events)


def begin(match: Match, agent: str, task: Task, content: Content, seed: int) -> Tracker:
    """Set the task up, unmarked (no archive is scored from it: the Gymnasium face, play in memory), and start
    following it: its tracker, fed the set-up's own events. A set-up the world refuses raises SetupFailed."""
    error, events = _setting_up(match, agent, task, None)
    if error is not None:
        raise SetupFailed(error)
    w = match.world
    tracker = Tracker(task, content, seed, agent, w.events.seq, w.tick)
    tracker.records(events)
    return tracker


def task_mark(events: Any) -> tuple[dict[str, Any], int, int] | None:
    """The `begin_task` mark among an attempt's events: its arguments, and the seq and tick of its event; None
    when the log has none. A second mark is refused: one attempt is one task."""
    found = None
    for event in events:
        if event["kind"] == SETUP_EVENT and event["data"].get("command") == BEGIN:
            if found is not None:
                raise Unverified(f"its log marks a task's beginning twice (events {found[1]} and {event['seq']})",
                                 "task_mark_differs")
            found = (event["data"]["args"], event["seq"], event["tick"])
    return found


def attempt_name(task: Task, repeat: int) -> str:
    return f"{task.id.replace('/', '__')}__r{repeat}"


_GENERATED: dict[tuple[str, str, int], tuple[bytes, list[tuple[int, int, str, bytes, str]]]] = {}


def generated_world(content: Content, scenario: str, seed: int) -> World:
    """The world of `scenario` and `seed` as generated, with its first events still pending: generated once
    a process, then restored from its snapshot (a fraction of the cost; attempts share scenarios and seeds)."""
    key = (content.digest, scenario, seed)
    if key not in _GENERATED:
        world = World(content, scenario, seed)
        _GENERATED[key] = (dumps(world), list(world.events.pending))
        return world
    blob, pending = _GENERATED[key]
    world = loads(content, blob)
    world.events.carry(pending)
    return world


def scratch_folder(out: Path) -> Path:
    """Where an attempt's working database lives while it plays: memory-backed space where the system has
    it (nothing there needs to outlive the attempt: its archive is what is kept, and an attempt cut short
    is played again), else `out`. On a disk each store costs tens of milliseconds of syncing."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else out


class Turns:
    """When an attempt's player decides and when the attempt is over: the one rule every driver of an attempt
    follows (`play` here, Inspect's solver over a served world). The player decides whenever its character is
    free and it has turns left; every turn (or pass) is followed by a tick, and the world then runs on until the
    character is free again; the attempt is over when the task is done, its minutes are spent, or the player is
    out of turns with its character free. `step` advances the world one tick; `free` says whether the
    character is free."""

    def __init__(self, world: World, task: Task, tracker: Tracker, step: Callable[[], None], free: Callable[[], bool],
                 clock: str, tick_seconds: float = 1.0):
        self.world, self.tracker, self.step, self.free = world, tracker, step, free
        self.limit, self.stop = task.limits.turns, world.tick + task.limits.ticks
        self.realtime, self.tick_seconds = clock == "realtime", tick_seconds
        self.turns = 0

    def going(self) -> bool:
        return self.world.tick < self.stop and not self.tracker.done

    def due(self) -> bool:
        """Whether the player decides now."""
        return self.turns < self.limit and self.free()

    def thought(self, seconds: float) -> bool:
        """The player took `seconds` to decide: under the realtime clock the world did not wait, and the minutes
        it took pass first. Whether its decision still lands (the attempt is not over)."""
        if self.realtime:
            for _ in range(int(seconds / self.tick_seconds)):
                if not self.going():
                    break
                self.step()
        return self.going()

    def took(self) -> None:
        """One turn spent: a scripted policy's submitted action, a model's call."""
        self.turns += 1

    def advance(self) -> bool:
        """The tick after a turn or a pass; False when the player is out of turns and its character free."""
        self.step()
        return not (self.turns >= self.limit and self.free())


def play(match: Match, agent: str, task: Task, tracker: Tracker, policy: Policy | None, clock: str,
         tick_seconds: float = 1.0) -> str | None:
    """Play a task set up in `match` until it is done or a limit (ticks, turns) is reached (`Turns`), the events
    fed to `tracker`; what broke, when the policy did. With no policy the character does nothing."""
    w = match.world
    match.on_events = tracker.records
    client = LocalClient(w, match.submit)
    turns = Turns(w, task, tracker, match.step, lambda: client.idle(agent), clock, tick_seconds)
    while turns.going():
        if policy is not None and turns.due():
            started = time.perf_counter()
            try:
                decision = policy.decide(client.view(agent, policy))
            except Exception as exc:  # a player that breaks fails its own attempt, never the run
                return f"{type(exc).__name__}: {exc}"[:500]
            if turns.thought(time.perf_counter() - started) and decision is not None:
                client.submit(agent, *decision)
                turns.took()
        if not turns.advance():
            break
    return None


def play_in_memory(task: Task, content: Content, policy: Policy | None = None, repeat: int = 0) -> Tracker:
    """An attempt played in memory (no store, no archive), its tracker returned: the do-nothing check (no
    policy) and the checks of what a policy earns. A set-up the world refuses raises SetupFailed."""
    seed = task.seeds.seed(repeat)
    match = Match.create(task.scenario, seed, None, content, clock=task.clock,
                         world=generated_world(content, task.scenario, seed))
    agent = match.join(AGENT_NAME, policy=policy.name if policy else "idle")
    tracker = begin(match, agent, task, content, seed)
    play(match, agent, task, tracker, policy, task.clock)
    match.close(snapshot=False)
    return tracker


def run_attempt(task: Task, policy: Policy, policy_name: str, repeat: int, out: Path, content: Content,
                clock: str | None = None, tick_seconds: float = 1.0, name: str | None = None,
                timings: dict[str, float] | None = None, scratch: Path | None = None) -> dict[str, Any]:
    """Play one attempt and write its archive under `out`; the live result (which `score_archive` reproduces).

    `clock` (the task's own when None): lockstep pauses the world while the policy decides; realtime lets
    it run on, `tick_seconds` of the policy's thinking to a world minute, before the decision lands.
    `name` is the archive's (`attempt_name` when None). `timings`, when given, gets the seconds of each
    phase: setup (the match, the join, the set-up), play, archive (written, the store removed), scoring.
    `scratch` is the working database's folder (`scratch_folder(out)` when None)."""
    clocked = time.perf_counter()

    def phase(label: str) -> None:
        nonlocal clocked
        now = time.perf_counter()
        if timings is not None:
            timings[label] = timings.get(label, 0.0) + now - clocked
        clocked = now

    seed = task.seeds.seed(repeat)
    name = name or attempt_name(task, repeat)
    clock = clock or task.clock
    out.mkdir(parents=True, exist_ok=True)
    db = (scratch or scratch_folder(out)) / f"wildhold-attempt-{os.getpid()}-{name}.db"
    _remove_store(db)
    match = Match.create(task.scenario, seed, db, content, clock=clock,
                         world=generated_world(content, task.scenario, seed))
    agent = match.join(AGENT_NAME, policy=policy_name)
    begun = begin_task(match, agent, task, repeat, policy_name)
    extra: dict[str, Any] = {"task": task.id, "policy": policy_name, "repeat": repeat, **begun.start}
    tracker = begun.tracker(task, content, seed, agent)
    phase("setup")
    if tracker is not None:
        broke = play(match, agent, task, tracker, policy, clock, tick_seconds)
        if broke is not None:
            extra["agent_error"] = broke
    phase("play")
    match.end("task over")
    part = out / f"{name}.wha.part"  # written whole, then renamed: an archive in `out` is a finished attempt
    match.export(part, extra)
    match.close(snapshot=False)  # the working store goes: the archive is the attempt's record
    path = part.replace(out / f"{name}.wha")
    _remove_store(db)
    phase("archive")
    result = score_archive(path, content, live=tracker)
    phase("scoring")
    return result


def sweep_scratch(out: Path) -> int:
    """Remove the working stores that attempts of processes no longer alive left behind (a worker killed
    mid-attempt); how many files went."""
    removed = 0
    for path in scratch_folder(out).glob("wildhold-attempt-*.db*"):
        try:
            pid = int(path.name.split("-")[2])
            os.kill(pid, 0)
        except ValueError:
            continue
        except ProcessLookupError:
            path.unlink(missing_ok=True)
            removed += 1
        except PermissionError:  # alive, another user's
            continue
    return removed


def _remove_store(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def _refuse(path: Path, message: str) -> Unverified:
    return Unverified(f"{path.name}: {message}", "task_mark_differs")


def _read_mark(path: Path, m: dict[str, Any], events: list[dict[str, Any]]) -> tuple[dict[str, Any], int, int]:
    """The attempt's task mark from its log, held to what its manifest says of the task, player, repeat, seed,
    start and set-up error: a manifest field the log does not bear out is refused, naming it."""
    found = task_mark(events)
    if found is None:
        raise _refuse(path, "its log marks no task's beginning (a begin_task set-up): it is not a task attempt this "
                            "Wildhold can score")
    mark, seq, tick = found
    said = {"task": m.get("task"), "policy": m.get("policy"), "repeat": m.get("repeat"),
            "task_error": m.get("task_error"), "task_start_seq": m.get("task_start_seq"),
            "task_start_tick": m.get("task_start_tick")}
    logged = {"task": mark["task"], "policy": mark["player"], "repeat": mark["repeat"], "task_error": mark.get("error"),
              "task_start_seq": seq, "task_start_tick": tick}
    differ = [k for k in said if said[k] != logged[k]]
    if differ:
        k = differ[0]
        raise _refuse(path, f"its manifest's {', '.join(differ)} differ from its log ({k} {logged[k]!r} in the log, "
                            f"{said[k]!r} in the manifest)")
    return mark, seq, tick


def check_attempt(path: Path, content: Content) -> None:
    """What verifying an attempt adds to re-simulating its archive: the log's task mark agrees with the manifest
    (see `score_archive`), the seed is the one its task draws for its repeat, the roster's player is the one the
    mark names, and the task's set-up, played again on the re-simulated world where the log's set-up began, records
    the same commands (and fails the same way). Raises Unverified naming the first disagreement."""
    from wildhold.tasks.catalog import default_suite

    with Archive(path) as a:
        m = a.manifest
        inputs = list(a.inputs())
        mark, _, _ = _read_mark(path, m, list(a.events()))
    try:
        task = default_suite().get(mark["task"])
    except KeyError:
        raise _refuse(path, f"its log names the task {mark['task']!r}, which this suite does not have") from None
    if m["seed"] != task.seeds.seed(mark["repeat"]):
        raise _refuse(path, f"it was played at seed {m['seed']}, but {task.id} repeat {mark['repeat']} plays at seed "
                            f"{task.seeds.seed(mark['repeat'])}")
    agent = next((a for a in m["agents"] if a["id"] == mark["agent"]), None)
    if agent is None or agent.get("policy", mark["player"]) != mark["player"]:
        raise _refuse(path, f"its log's player {mark['player']!r} is not the policy its character {mark['agent']} "
                            "joined with")
    at = next(i for i, inp in enumerate(inputs) if inp.kind == "setup" and inp.name == BEGIN)
    first = at
    while first > 0 and inputs[first - 1].kind == "setup":
        first -= 1
    logged = [(inp.name, inp.args) for inp in inputs[first:at]]
    world = replay(content, m["scenario"], m["seed"], inputs[:first], inputs[first].tick)  # where the set-up began
    match = Match(world, None)
    made: list[tuple[str, dict[str, Any]]] = []
    match.on_ack = lambda inp: made.append((inp.name, inp.args))
    error = None
    try:
        set_up(match, mark["agent"], task)
    except SetupFailed as exc:
        error = str(exc)
    if made != logged or error != mark.get("error"):
        step = next((i for i, (x, y) in enumerate(zip(made, logged)) if x != y), min(len(made), len(logged)))
        raise _refuse(path, f"its set-up is not the one {task.id} makes at its seed (they part at step {step}"
                            f"{'; the set-up fails: ' + error if error and error != mark.get('error') else ''})")


def score_archive(path: Path, content: Content, live: Tracker | None = None) -> dict[str, Any]:
    """The attempt's result from its archive alone (with `live`, from the tracker that followed the match instead).

    The task, player, repeat, start and any set-up error are read from the task's mark in the log, and the
    manifest must say the same (`_read_mark`). Turns are the agent's decisions: the actions it submitted itself
    (a scripted policy's, an outside agent's: its programs' actions are not its turns), or a model arm's model
    calls. An archive with a price table (a model arm's, an outside agent's metered by the proxy) also gets its
    tokens and dollars, from the spend records."""
    from wildhold.tasks.catalog import default_suite

    with Archive(path) as a:
        m = a.manifest
        events = list(a.events())
        mark, start_seq, start_tick = _read_mark(path, m, events)
        try:
            task = default_suite().get(mark["task"])
        except KeyError:
            raise _refuse(path, f"its log names the task {mark['task']!r}, which this suite does not have") from None
        agent = mark["agent"]
        spend = [inp.args for inp in a.inputs() if inp.kind == SPEND and inp.agent == agent]
        model_arm = m.get("price_table") is not None
        llm_calls = sum(s["llm_calls"] for s in spend)
        if m.get("turns_counted", "model_calls" if model_arm else "actions") == "model_calls":
            turns = llm_calls
        else:
            turns = sum(1 for inp in a.inputs() if inp.kind == "action" and inp.agent == agent and inp.issuer == "direct")
        tracker = live
        if tracker is None:
            tracker = Tracker(task, content, m["seed"], agent, start_seq, start_tick)
            for event in events:
                tracker.feed(event)
    result: dict[str, Any] = {
        "task": task.id, "category": task.category, "difficulty": task.difficulty, "policy": mark["player"],
        "repeat": mark["repeat"], "seed": m["seed"], "clock": m["clock"], "chain_head": m["chain_head"],
    }
    if model_arm:
        result.update(llm_calls=llm_calls, tokens=sum(s["input_tokens"] + s["output_tokens"] for s in spend),
                      cached_input_tokens=sum(s["cached_input_tokens"] for s in spend),
                      dollars=round(sum(s["cost_usd"] for s in spend), 6))
    if "error" in mark:
        return {**result, "status": "error", "error": mark["error"]}
    return {**result, "status": "success" if tracker.done else "failure", "progress": tracker.trace[-1][1],
            "turns": turns, "ticks": (tracker.done_tick or m["final_tick"]) - start_tick,
            "trace": [list(p) for p in tracker.trace], **({"agent_error": m["agent_error"]} if "agent_error" in m else {})}
