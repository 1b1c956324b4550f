"""The RL faces' data (`content/data/env.yaml`): how the action table fills arguments and the achievements a
scenario env rewards; checked against the content at load, with an error naming the file and key."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from wildhold.content import Content, default_content
from wildhold.content.loader import ContentError, read_side_file

ENV_FILE = Path(__file__).parents[1] / "content" / "data" / "env.yaml"
FILE = "env.yaml"


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Entries(BaseModel):
    """The names of a content table's entries, those with `having` set and those whose fields equal `where`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    content: str
    having: str | None = None
    where: dict[str, Any] = {}


Source = str | Entries | dict[str, list[Any]]  # a source name, a filtered table, {values: [...]} / {goods_coin: [...]}


class ActionsSpec(Frozen):
    tile_radius: int = Field(ge=0, le=8)
    carried_slots: int = Field(ge=1)
    listed_slots: int = Field(ge=1)
    at_tile_slots: int = Field(ge=1)
    sold_slots: int = Field(ge=1)
    arguments: dict[str, Source]
    per_action: dict[str, dict[str, Source]] = {}
    text_actions_example: str


class AchievementKind(Frozen):
    event: str
    who: str  # the event field naming the character it happened to
    key: str  # the event field whose value names the achievement
    label: str


class AchievementsSpec(Frozen):
    health_weight: float
    kinds: tuple[AchievementKind, ...]


class EnvSpec(Frozen):
    actions: ActionsSpec
    achievements: AchievementsSpec


def check_env_spec(spec: EnvSpec, content: Content) -> None:
    """Every argument source is one the action table knows, every content table it names has entries."""
    for where, sources in [("actions.arguments", spec.actions.arguments),
                           *((f"actions.per_action.{a}", s) for a, s in spec.actions.per_action.items())]:
        for field, source in sources.items():
            _check_source(f"{where}.{field}", source, content)


SIMPLE_SOURCES = ("tile", "enum", "carried", "at_tile", "sold", "listed", "goods_carried")


def _check_source(where: str, source: Source, content: Content) -> None:
    if isinstance(source, Entries):
        if not content_table(content, source.content, source.having, source.where):
            raise ContentError(FILE, where, f"no entries of content table {source.content!r} match")
        return
    if isinstance(source, dict):
        if len(source) != 1 or next(iter(source)) not in ("values", "goods_coin") or not next(iter(source.values())):
            raise ContentError(FILE, where, "a literal source is {values: [...]} or {goods_coin: [...]}, not empty")
        return
    if source.startswith("content:"):
        if not content_table(content, source[len("content:"):]):
            raise ContentError(FILE, where, f"no content table {source[len('content:'):]!r} with entries")
    elif source not in SIMPLE_SOURCES:
        raise ContentError(FILE, where, f"unknown source {source!r}: one of {', '.join(SIMPLE_SOURCES)}, content:<table>, "
                                        "{values: [...]}, {goods_coin: [...]}")


def content_table(content: Content, table: str, having: str | None = None, where: dict[str, Any] | None = None) -> list[str]:
    """The sorted names of a content table (`dungeon_tiers`: the dungeon's tiers, in level order), less those
    without `having` set or whose fields differ from `where`."""
    if table == "dungeon_tiers":
        return [name for name, _ in sorted(content.dungeon.tiers.items(), key=lambda kv: kv[1].level)]
    entries = getattr(content, table, None)
    if not isinstance(entries, dict):
        return []
    return sorted(name for name, e in entries.items()
                  if (having is None or getattr(e, having, None) is not None)
                  and all(getattr(e, k, None) == v for k, v in (where or {}).items()))


def load_env_spec(path: Path = ENV_FILE, content: Content | None = None) -> EnvSpec:
    spec = read_side_file(path, FILE, EnvSpec)
    check_env_spec(spec, content or default_content())
    return spec


@lru_cache(maxsize=1)
def default_env_spec() -> EnvSpec:
    return load_env_spec()
