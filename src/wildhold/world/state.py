"""The mutable records a world holds. Only `World` methods change them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wildhold.world.memory import Memory


@dataclass(slots=True)
class Character:
    id: str
    name: str
    pos: int
    health: int
    energy: int
    satiety: int
    inventory: dict[str, int] = field(default_factory=dict)
    equipment: dict[str, str] = field(default_factory=dict)
    bed: int | None = None
    op: str | None = None
    asleep: bool = False
    knockdowns: int = 0
    memory: Memory = None  # type: ignore[assignment]  # what it remembers of the map; its world gives it one


@dataclass(slots=True)
class Node:
    kind: str
    amount: int
    regrow_at: int | None = None


@dataclass(slots=True)
class Structure:
    kind: str
    owner: str | None
    hp: int


@dataclass(slots=True)
class Creature:
    id: int
    kind: str
    pos: int
    hp: int
    target: str | None = None


@dataclass(slots=True)
class Operation:
    id: str
    agent: str
    action: str
    args: dict[str, Any]
    started: int
    ends: int
    energy: int
    data: dict[str, Any] = field(default_factory=dict)
