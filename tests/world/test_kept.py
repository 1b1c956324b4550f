"""What the world keeps between uses has one owner each, declared in `world.kept`, and never changes play: a season
played while every observation is checked against one built from nothing, and a season played forgetting everything
kept before every tick, give the recorded chain head; the check catches a kept value that went stale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.world import kept
from wildhold.world.kept import DECLARED, Kept, KeptMismatch
from wildhold.world.observe import observe
from wildhold.world.readonly import ReadOnlyDict
from wildhold.world.world import World

WORLD = Path(kept.__file__).parent
PLAYED = [("season", 1, 1440, "b0f8376287e3c72cf35cd448e4b21bb0"),  # as tests/agents/test_chain_heads.py records them
          ("famine", 2, 1000, "69d071aeff94cb3ef3549a0d374275b5")]


def _owner_file(owner: str) -> Path:
    """The module of an owner named as module[.Class][.function], under wildhold/world."""
    parts = owner.split(".")
    for n in range(len(parts), 0, -1):
        path = WORLD.joinpath(*parts[:n]).with_suffix(".py")
        if path.exists():
            return path
    raise AssertionError(f"no module for owner {owner!r}")


def test_each_kept_value_is_declared_once_and_used_by_its_owner_alone():
    sources = {p: p.read_text() for p in WORLD.rglob("*.py") if p.name != "kept.py"}
    for name, (owner, what) in DECLARED.items():
        used = {p for p, text in sources.items() if re.search(rf'kept\.{name}\b|in_reach_of_kept\([^)]*"{name}"', text)}
        assert used == {_owner_file(owner)}, (name, sorted(str(p.relative_to(WORLD)) for p in used))
        assert what, name
    everywhere = "\n".join(sources.values()) + "".join(p.read_text() for p in WORLD.parent.rglob("*.py")
                                                        if WORLD not in p.parents)
    assert ".caches" not in everywhere  # no dictionary of values under string keys beside `Kept`
    outside = [p for p in WORLD.parent.rglob("*.py") if WORLD not in p.parents and ".kept." in p.read_text()]
    assert outside == []  # nothing outside the world reads or writes what it keeps


def _play(scenario: str, seed: int, ticks: int, tmp_path: Path) -> str:
    run = ScriptedRun.start(scenario, seed, tmp_path / "m.sqlite")
    try:
        run.run(until=run.world.tick + ticks)
        return run.world.events.head
    finally:
        run.match.close()


@pytest.mark.slow(seconds=20)
@pytest.mark.parametrize(("scenario", "seed", "ticks", "head"), PLAYED, ids=[p[0] for p in PLAYED])
def test_a_season_checked_observation_by_observation_plays_the_recorded_events(monkeypatch, tmp_path, scenario, seed,
                                                                                ticks, head):
    from wildhold.world import observe as module

    monkeypatch.setattr(kept, "CHECKING", True)
    checked, check = [], module._check_kept

    def counted(*args):
        checked.append(args[1])
        return check(*args)

    monkeypatch.setattr(module, "_check_kept", counted)
    assert _play(scenario, seed, ticks, tmp_path) == head
    assert len(checked) > 300 and len(set(checked)) >= 3  # every character's observations, each built twice


@pytest.mark.slow(seconds=10)
@pytest.mark.parametrize(("scenario", "seed", "ticks", "head"), PLAYED, ids=[p[0] for p in PLAYED])
def test_a_season_that_forgets_everything_kept_before_every_tick_plays_the_recorded_events(monkeypatch, tmp_path, scenario,
                                                                                           seed, ticks, head):
    step, forgotten = World.step, []

    def forgetful_step(self, *args, **kwargs):
        self.forget()
        forgotten.append(self.tick)
        return step(self, *args, **kwargs)

    monkeypatch.setattr(World, "step", forgetful_step)
    assert _play(scenario, seed, ticks, tmp_path) == head
    assert len(forgotten) == ticks


def test_the_check_names_the_section_a_stale_kept_value_gets_wrong(monkeypatch, content):
    w = World(content, "default", 1)
    agent = w.join("ada")
    observe(w, agent)
    key, clock = w.kept.clock
    w.kept.clock = key, ReadOnlyDict({**clock, "weather": "snow" if clock["weather"] != "snow" else "clear"})
    observe(w, agent)  # unchecked, the stale value is shown
    monkeypatch.setattr(kept, "CHECKING", True)
    with pytest.raises(KeptMismatch, match=f"^{agent} at tick {w.tick}: ") as raised:
        observe(w, agent)
    assert "time.weather" in str(raised.value)
    w.forget()
    assert isinstance(w.kept, Kept) and w.kept.clock is None
    observe(w, agent)  # rebuilt from the state: agrees with itself
