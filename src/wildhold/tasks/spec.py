"""The task model: what a task file says, checked at load (frozen, extra keys refused)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CATEGORIES = ("farming", "crafting", "exploration", "combat", "social", "construction", "survival", "economy")
DIFFICULTIES = ("easy", "medium", "hard")


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(Frozen):
    ticks: int = Field(ge=1)
    turns: int = Field(ge=1)


class SetupStep(Frozen):
    """One set-up command of the world's (`world.setup`); `agent` is filled in with the attempt's
    character. `near: true` puts what a `place_structure`, `place_resource` or `plant_crop` puts beside the
    character instead of at `x, y`; `away: n` puts a `place_resource` node at least n tiles from it, on the
    nearest tile of a terrain the node grows on that the character could walk beside."""

    command: str
    args: dict[str, Any] = Field(default_factory=dict)
    near: bool = False
    away: int | None = Field(default=None, ge=1)


class Seeds(Frozen):
    """Which world seed an attempt plays: `base + repeat` (per_repeat) or always `base` (fixed)."""

    rule: Literal["per_repeat", "fixed"] = "per_repeat"
    base: int = Field(default=0, ge=0)

    def seed(self, repeat: int) -> int:
        return self.base + repeat if self.rule == "per_repeat" else self.base


class Task(Frozen):
    id: str = Field(pattern=r"^[a-z]+/[a-z0-9_-]+-v[0-9]+$")
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    difficulty: Literal[DIFFICULTIES]  # type: ignore[valid-type]
    description: str = Field(min_length=8)
    scenario: str = "tiny"
    seeds: Seeds = Seeds()
    setup: tuple[SetupStep, ...] = ()
    evaluator: str
    params: dict[str, Any] = Field(default_factory=dict)
    limits: Limits
    clock: Literal["lockstep", "realtime"] = "lockstep"
    source: str = ""  # the template or file it came from


class Level(Frozen):
    """One difficulty of a template: its text and parameters as format strings over the entry's fields."""

    difficulty: Literal[DIFFICULTIES]  # type: ignore[valid-type]
    id: str
    description: str
    params: dict[str, Any] = Field(default_factory=dict)
    setup: tuple[SetupStep | str, ...] = ()  # a string names an entry field holding set-up steps
    limits: Limits | None = None  # the difficulty's limits unless the level needs others (it says why)


class Template(Frozen):
    over: str  # which content entries it runs over (`tasks.catalog.ENTRIES`)
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    evaluator: str
    levels: tuple[Level, ...]
    only: dict[str, Any] = Field(default_factory=dict)  # entry fields that must equal these values
    unless: dict[str, Any] = Field(default_factory=dict)  # entry fields that must not equal these values


class Linear(Frozen):
    """A limit from a measured effort: `per_effort` times it, plus `plus`, rounded up."""

    per_effort: float = Field(gt=0)
    plus: int = Field(ge=0)

    def of(self, effort: float) -> int:
        return max(1, math.ceil(self.per_effort * effort + self.plus - 1e-9))


class LevelLimits(Frozen):
    """A level's limits from a task's measured effort: the turn limit from the oracle's turns, the minutes from its."""

    turns: Linear
    ticks: Linear


class Calibration(Frozen):
    """How a task's level and limits follow from what `tasks calibrate` measured (tasks/calibration.yaml): its
    effort is the oracle's median turns and minutes over repeats 0 to `repeats` - 1; its level is the third of its
    category's efforts it falls in; its limits are its level's, from its effort (less room for mistakes the harder
    the level), and never below what the oracle needed at its worst measured repeat, so that the oracle's proof
    holds at every repeat a run draws. The calibration table reads the graded `players` from repeat `held_out_from`
    on: the repeats before it were those the levels' numbers were chosen on."""

    players: tuple[str, ...] = Field(min_length=1)
    repeats: int = Field(ge=1)
    held_out_from: int = Field(ge=0)
    levels: dict[Literal[DIFFICULTIES], LevelLimits]  # type: ignore[valid-type]


class TemplateFile(Frozen):
    limits: dict[Literal[DIFFICULTIES], Limits]  # type: ignore[valid-type]  # before measurement (tasks calibrate)
    calibration: Calibration
    max_quantity_share: float = Field(ge=0, le=1)  # of tasks that differ from another only in a quantity
    templates: dict[str, Template]


class HandWritten(Frozen):
    """A hand-written task as its file holds it: limits default to its difficulty's."""

    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    difficulty: Literal[DIFFICULTIES]  # type: ignore[valid-type]
    description: str
    scenario: str = "tiny"
    seeds: Seeds = Seeds()
    setup: tuple[SetupStep, ...] = ()
    evaluator: str
    params: dict[str, Any] = Field(default_factory=dict)
    limits: Limits | None = None
    clock: Literal["lockstep", "realtime"] = "lockstep"
