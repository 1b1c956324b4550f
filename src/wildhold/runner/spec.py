"""A sweep file: arms, protocols, seeds and repeats, the total budget, retries and per-provider limits; and the
cells it expands to, each with a stable key and folder name.

An arm is an experiment arm (a model behind a provider adapter or a recorded cassette, or a scripted policy).
A protocol is a scenario (each cell one `wildhold run` of a one-arm experiment; a scripted arm plays it as
`wildhold demo` does, for the protocol's ticks), a list of tasks (each task one attempt of the task suite,
scripted arms only), or fork points (each parent archive forked at a tick with the arm in one seat; a cell's seed
is its parent's). Every cell of a model arm is an experiment built from the sweep's `experiment` defaults (a fork
point's seats its arm and plays the parent's scenario and seed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from wildhold.agents.scaffold.experiment import ArmSpec, Experiment, arm_identity
from wildhold.readable import UnreadableFile, describe_validation, read_model

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# A sweep's own settings and its protocols', and why none is part of an arm's identity: a model arm's cell is an
# experiment built from the sweep's `experiment` defaults, every setting of which is (`arm_identity`); a scripted arm's
# cell is its policy played directly, which none of these reach. A new field of `Sweep` or `Protocol` is classified
# here (a test enumerates them), or it belongs among the experiment's settings.
NOT_ARM_SETTINGS: dict[str, str] = {
    "Sweep.name": "the sweep's display name",
    "Sweep.budget_usd": "the whole sweep's spend limit; each model cell's per-arm budget is its experiment's",
    "Sweep.retries": "further tries of a failed cell, each from scratch",
    "Sweep.limits": "model calls in flight across workers: when a call is made, not what it sees (the lockstep clock "
                    "waits for it; under the realtime clock the cell's clock and tick are in its identity)",
    "Sweep.rates": "model calls started per minute across workers, as `limits`",
    "Sweep.experiment": "the experiment defaults: each is in the identity as an experiment setting",
    "Sweep.arms": "the arms: each has its own identity",
    "Sweep.protocols": "what the arms are played on: summaries and compare keep a row per protocol",
    "Sweep.seeds": "the worlds a configuration's results are pooled over",
    "Sweep.repeats": "repeats of each cell, pooled as seeds are",
    "Protocol.name": "the protocol's display name",
    "Protocol.scenario": "the protocol itself (a row of its own)",
    "Protocol.ticks": "the protocol itself: how long its matches are played",
    "Protocol.tasks": "the protocol itself",
    "Protocol.fork": "the protocol itself",
    "Protocol.arms": "which arms the protocol takes",
}


class SweepError(ValueError):
    """A sweep file that cannot run; `code` is stable."""

    def __init__(self, message: str, code: str = "sweep_invalid"):
        super().__init__(message)
        self.code = code


class ForkPoint(BaseModel):
    """Fork points: each parent archive forked at the same tick, the arm taking over one seat (an agent's name)."""

    model_config = ConfigDict(extra="forbid")
    parents: list[str] = Field(min_length=1)  # archives, relative to the sweep file; one cell per parent
    at: int = Field(gt=0)
    seat: str


class Protocol(BaseModel):
    """A scenario (with the ticks a scripted arm plays it for), task ids / a suite name, or fork points."""

    model_config = ConfigDict(extra="forbid")
    name: str
    scenario: str | None = None
    ticks: int | None = Field(default=None, gt=0)  # scripted arms: ticks played (default: to the end / the parent's)
    tasks: list[str] | None = None  # task ids, or the names `lite` / `full`
    fork: ForkPoint | None = None
    arms: list[str] | None = None  # the arms this protocol takes (default: every arm)

    @model_validator(mode="after")
    def _one_kind(self) -> Protocol:
        if sum(x is not None for x in (self.scenario, self.tasks, self.fork)) != 1:
            raise ValueError(f"protocol {self.name!r}: give one of a scenario, tasks or a fork")
        return self

    @property
    def kind(self) -> str:
        return "scenario" if self.scenario is not None else "tasks" if self.tasks is not None else "fork"


class Sweep(BaseModel):
    """A sweep file (see examples/sweep-smoke.yaml)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    budget_usd: float = Field(gt=0)  # the whole sweep's: no cell is launched once the finished cells spent it
    retries: int = Field(default=2, ge=0, le=10)  # further tries of a failed cell, each error recorded
    limits: dict[str, int] = Field(default_factory=dict)  # provider -> model calls in flight across all workers
    rates: dict[str, float] = Field(default_factory=dict)  # provider -> model calls started per minute, all workers
    experiment: dict[str, Any] = Field(default_factory=dict)  # defaults of each cell's experiment file
    arms: list[ArmSpec] = Field(min_length=1)
    protocols: list[Protocol] = Field(min_length=1)
    seeds: list[int] = Field(min_length=1)
    repeats: int = Field(default=1, ge=1)
    _base: Path = PrivateAttr(default_factory=Path.cwd)  # the sweep file's folder: paths in it are relative to it

    @model_validator(mode="after")
    def _consistent(self) -> Sweep:
        for kind, names in (("arm", [a.name for a in self.arms]), ("protocol", [p.name for p in self.protocols])):
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise ValueError(f"{kind} names must be distinct; repeated: {', '.join(dup)}")
            bad = [n for n in names if not NAME.match(n)]
            if bad:
                raise ValueError(f"{kind} names are letters, digits, '_', '.' and '-': {', '.join(bad)}")
        seated = [a.name for a in self.arms if a.seat]
        if seated:
            raise ValueError(f"arms {', '.join(seated)}: a sweep's arm has no seat; a fork protocol names the one its "
                             "arms take (fork: {parents: [...], at: TICK, seat: NAME})")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds must be distinct")
        arms = {a.name: a for a in self.arms}
        for p in self.protocols:
            strangers = sorted(set(p.arms or ()) - set(arms))
            if strangers:
                raise ValueError(f"protocol {p.name!r} names arms the sweep does not have: {', '.join(strangers)}")
            if p.kind == "tasks":
                models = [n for n in (p.arms or arms) if arms[n].provider != "scripted"]
                if models:
                    raise ValueError(f"protocol {p.name!r}: tasks are attempted by scripted arms; list the arms it takes "
                                     f"(arms: [...]) without the model arms {', '.join(models)}")
        for key in ("arms", "scenario", "seed", "name", "cohort"):
            if key in self.experiment:
                raise ValueError(f"experiment defaults may not set {key!r}: the sweep sets it for each cell")
        bad_limits = {k: v for k, v in self.limits.items() if v < 1}
        if bad_limits:
            raise ValueError(f"limits must be at least 1: {bad_limits}")
        bad_rates = {k: v for k, v in self.rates.items() if not v > 0}
        if bad_rates:
            raise ValueError(f"rates must be above 0 calls a minute: {bad_rates}")
        return self

    @classmethod
    def load(cls, path: Path) -> Sweep:
        path = Path(path)
        if not path.exists():
            raise SweepError(f"{path} does not exist", "sweep_missing")
        try:
            sweep = read_model(path, cls)
        except UnreadableFile as exc:
            raise SweepError(str(exc)) from None
        sweep._base = path.resolve().parent
        sweep.check(sweep._base)
        return sweep

    def check(self, base: Path) -> None:
        """What the file's shape cannot say: every scenario, policy, cassette and task it names exists, and each
        model arm makes a valid experiment with the sweep's defaults."""
        from wildhold.agents.scripted import make_policy
        from wildhold.content import ContentError, default_content

        content = default_content()
        for p in self.protocols:
            if p.scenario is not None:
                try:
                    content.scenario(p.scenario)
                except ContentError as exc:
                    raise SweepError(f"protocol {p.name!r}: {exc}", "sweep_unknown_scenario") from None
            elif p.tasks is not None:
                task_ids(p)
            else:
                fork_parents(p, base)
        on_scenarios = {a.name for a in self.arms
                        if any(p.scenario is not None and (p.arms is None or a.name in p.arms) for p in self.protocols)}
        for arm in self.arms:
            if arm.provider == "scripted" and arm.policy == "oracle" and arm.name in on_scenarios:
                raise SweepError(f"arm {arm.name!r}: the oracle is told a task's goal, so it plays task protocols only",
                                 "sweep_unknown_policy")
            if arm.provider == "scripted" and arm.policy != "oracle":
                try:
                    make_policy(arm.policy or "producer", content)
                except ValueError as exc:
                    raise SweepError(f"arm {arm.name!r}: {exc}", "sweep_unknown_policy") from None
            elif arm.cassette and not (base / arm.cassette).is_file():
                raise SweepError(f"arm {arm.name!r}: no cassette at {base / arm.cassette}", "sweep_cassette_missing")
            identity(self, arm, base)


@dataclass(frozen=True)
class Cell:
    """One run of the product: an arm on a protocol (a scenario, or one task) at a seed and repeat."""

    arm: str
    protocol: str
    seed: int
    repeat: int
    task: str | None = None

    @property
    def key(self) -> str:
        task = f"__{self.task.replace('/', '.')}" if self.task else ""
        return f"{self.arm}__{self.protocol}{task}__s{self.seed}__r{self.repeat}"

    def as_dict(self) -> dict[str, Any]:
        return {"arm": self.arm, "protocol": self.protocol, "task": self.task, "seed": self.seed, "repeat": self.repeat}


def task_ids(protocol: Protocol) -> list[str]:
    """The protocol's task ids, a suite name expanded (`lite`, `full`); an unknown id is refused."""
    from wildhold.tasks.catalog import default_suite

    try:
        return [t.id for t in default_suite().select(protocol.tasks or [])]
    except KeyError as exc:
        raise SweepError(f"protocol {protocol.name!r}: {exc.args[0]}", "sweep_unknown_task") from None


def fork_parents(protocol: Protocol, base: Path) -> dict[int, Path]:
    """A fork protocol's parent archives by their world seed (a cell's seed is its parent's): each must be an
    archive, of its own seed, forkable at the tick, with the seat among its agents."""
    from wildhold.store.archive import Archive, ArchiveError

    point = protocol.fork
    assert point is not None
    parents: dict[int, Path] = {}
    for rel in point.parents:
        path = (base / rel).resolve()
        try:
            with Archive(path) as a:
                m = a.manifest
        except (ArchiveError, OSError) as exc:
            raise SweepError(f"protocol {protocol.name!r}: {rel} is not a readable archive ({exc})",
                             "sweep_fork_parent") from None
        if m["seed"] in parents:
            raise SweepError(f"protocol {protocol.name!r}: two parents of seed {m['seed']}; each parent is a seed",
                             "sweep_fork_parent")
        if not m["start_tick"] < point.at < m["final_tick"]:
            raise SweepError(f"protocol {protocol.name!r}: tick {point.at} is outside {rel} ({m['start_tick']} to "
                             f"{m['final_tick']}, exclusive)", "sweep_fork_parent")
        if point.seat not in {agent["name"] for agent in m["agents"]}:
            raise SweepError(f"protocol {protocol.name!r}: {rel} has no agent named {point.seat!r}", "sweep_fork_parent")
        parents[m["seed"]] = path
    return parents


def cells(sweep: Sweep) -> list[Cell]:
    """Every cell in a fixed order: arm, protocol, task, seed, repeat (a fork protocol's seeds are its parents')."""
    out = []
    for arm in sweep.arms:
        for p in sweep.protocols:
            if p.arms is not None and arm.name not in p.arms:
                continue
            seeds = sorted(fork_parents(p, sweep._base)) if p.kind == "fork" else sweep.seeds
            for task in task_ids(p) if p.kind == "tasks" else [None]:
                for seed in seeds:
                    for r in range(sweep.repeats):
                        out.append(Cell(arm.name, p.name, seed, r, task))
    return out


def cell_experiment(sweep: Sweep, cell: Cell) -> Experiment:
    """The one-arm experiment a model arm's cell runs (cassettes are copied beside it, under cassettes/); a fork
    point's arm takes the point's seat, in the parent's scenario and seed."""
    arm = next(a for a in sweep.arms if a.name == cell.arm)
    protocol = next(p for p in sweep.protocols if p.name == cell.protocol)
    if arm.cassette:
        arm = arm.model_copy(update={"cassette": f"cassettes/{Path(arm.cassette).name}"})
    if protocol.fork is not None:
        arm = arm.model_copy(update={"seat": protocol.fork.seat})
    world = {} if protocol.fork is not None else {"scenario": protocol.scenario, "seed": cell.seed}
    data = {"budget_usd": sweep.budget_usd, "ceiling_s": 600, **sweep.experiment,
            "name": f"{sweep.name}/{cell.key}", **world, "arms": [arm.model_dump(mode="json", exclude_none=True)]}
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        raise SweepError(f"cell {cell.key}: {describe_validation(exc, 'the experiment')}") from None


def identity(sweep: Sweep, arm: ArmSpec, base: Path) -> dict[str, Any]:
    """The arm's full identity, as its archives carry it (scripted arms played directly name that harness)."""
    if arm.provider == "scripted":
        return {"provider": "scripted", "policy": arm.policy or "producer", "harness": "direct"}
    try:
        exp = Experiment.model_validate({"budget_usd": sweep.budget_usd, "ceiling_s": 600, **sweep.experiment,
                                         "name": sweep.name, "arms": [arm.model_dump(mode="json", exclude_none=True)]})
    except ValidationError as exc:
        raise SweepError(f"arm {arm.name!r}: {describe_validation(exc, 'the experiment')}") from None
    try:
        return arm_identity(exp, exp.arms[0], base)
    except OSError as exc:
        raise SweepError(f"arm {arm.name!r}: cannot read its cassette: {exc}", "sweep_cassette_missing") from None
