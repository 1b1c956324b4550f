"""Archives for the evaluation tests, played for real: scripted policies, setup commands, and small
scripted fighters that read the world the way the dungeon tests do. Each builder records every input
through a `Match`, so its archive verifies and replays like any other.

`tests/fixtures/eval/_build.py` writes the committed fixtures with these builders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

from wildhold.agents.client import LocalClient
from wildhold.agents.scripted import make_policy
from wildhold.content import Content, default_content
from wildhold.service.match import Match
from wildhold.world.parts.dungeon import room_view
from wildhold.world.world import World

Step = tuple[str, dict[str, Any]] | None  # an action, or None: do nothing this tick
Script = Callable[[World, str], Iterator[Step]]


def play(match: Match, policies: dict[str, str], scripts: dict[str, Script], until: int, content: Content) -> None:
    """Every idle agent decides once a tick, in joining order: a scripted policy by name, or a
    script (a generator of actions that reads the world; when it ends, the agent does nothing)."""
    w, client = match.world, LocalClient(match.world, match.submit)
    deciders = {a: make_policy(p, content) for a, p in policies.items()}
    running = {a: s(w, a) for a, s in scripts.items()}
    while w.tick < until:
        for agent in list(w.chars):
            c = w.chars[agent]
            if c.op is not None:
                continue
            if agent in running:
                step = next(running[agent], "done")
                if step == "done":
                    del running[agent]
                elif step is not None:
                    match.submit(agent, step[0], step[1])
            elif agent in deciders:
                client.decide(agent, deciders[agent])
        match.step()


def fighter(tiers: tuple[int, ...], king: bool = False, careful: bool = True, heal_below: int = 45) -> Script:
    """Clear the given tiers in order (and the Shadow King after the last, when asked). A careful
    fighter dodges every announced strike; a careless one only strikes and drinks potions when low."""

    def script(w: World, a: str) -> Iterator[Step]:
        for tier in tiers:
            yield ("enter_dungeon", {"tier": tier})
            while (view := room_view(w, a)) is not None:
                c = w.chars[a]
                if view["enemies"]:
                    if careful and any(e["intent"] for e in view["enemies"]):
                        yield ("dodge", {})
                    elif not careful and c.health < heal_below and c.inventory.get("healing_potion"):
                        yield ("use_consumable", {"item": "healing_potion"})
                    elif c.energy < 8 and c.inventory.get("energy_tonic"):
                        yield ("use_consumable", {"item": "energy_tonic"})
                    else:
                        enemies = view["enemies"]
                        target = min([e for e in enemies if e["next"]["vulnerable"]] or enemies, key=lambda e: e["hp"])
                        yield ("strike", {"enemy": target["id"]})
                elif view["room"] < view["rooms"]:
                    yield ("advance", {})
                elif king and tier == tiers[-1] and view["altar"] == "ready":
                    yield ("activate_altar", {})
                else:
                    yield ("leave_dungeon", {})
                    break
            else:
                return  # carried out: stop here

    return script


def sleeper(dark_ticks: int, then: Script | None = None) -> Script:
    """Issue nothing for `dark_ticks` ticks, then (optionally) follow another script."""

    def script(w: World, a: str) -> Iterator[Step]:
        for _ in range(dark_ticks):
            yield None
        if then is not None:
            yield from then(w, a)

    return script


def gatherer(w: World, a: str) -> Iterator[Step]:
    """Eat when hungry, otherwise rest a little: enough to stay alive and active."""
    while True:
        c = w.chars[a]
        if c.satiety < 50 and c.inventory.get("berries"):
            yield ("eat", {"item": "berries"})
        else:
            yield ("rest", {"ticks": 10})


def chain(*scripts: Script) -> Script:
    """Follow each script in turn."""

    def script(w: World, a: str) -> Iterator[Step]:
        for s in scripts:
            yield from s(w, a)

    return script


def _equip_at_entrance(match: Match, agent: str, items: dict[str, int], wear: tuple[str, ...]) -> None:
    w = match.world
    x, y = w.xy(w.dungeon)
    match.setup("move_character", {"agent": agent, "x": x, "y": y})
    for item, qty in items.items():
        match.setup("give_items", {"agent": agent, "item": item, "qty": qty})
    for item in wear:
        match.submit(agent, "equip", {"item": item})
        while w.chars[agent].op is not None:
            match.step()


def delve_archive(path: Path, seed: int = 11, content: Content | None = None) -> Path:
    """A tiny-world match with the dungeon in it: a careful delver that clears every tier and the
    Shadow King, a careless brawler with a club, a producer policy, and a sleeper that goes dark
    for 200 ticks before it starts looking after itself; two of them leave epilogues."""
    content = content or default_content()
    match = Match.create("tiny", seed, path.with_suffix(".sqlite"), content)
    delver = match.join("delver", policy="script:careful-fighter")
    brawler = match.join("brawler", policy="script:careless-fighter")
    producer = match.join("producer", policy="producer")
    late = match.join("sleeper", policy="script:sleeper")
    _equip_at_entrance(match, delver, {"iron_sword": 1, "iron_armor": 1, "energy_tonic": 4}, ("iron_sword", "iron_armor"))
    _equip_at_entrance(match, brawler, {"wooden_club": 1, "healing_potion": 4, "energy_tonic": 2}, ("wooden_club",))
    w = match.world
    play(match, {producer: "producer"},
         {delver: chain(fighter((1, 2, 3), king=True), gatherer), brawler: chain(fighter((1, 2), careful=False), gatherer),
          late: sleeper(200, gatherer)},
         until=w.start_tick + 900, content=content)
    match.end("fixture")
    epilogues = {
        delver: {"name": "delver", "text": "I waited for each telegraphed strike and dodged it, struck on the charging turns, "
                                           "and went down the tiers in order before lighting the altar.", "tick": w.tick},
        late: {"name": "sleeper", "text": "I was busy elsewhere for the first hours, then kept myself fed.", "tick": w.tick},
    }
    out = match.export(path, extra={"epilogues": epilogues})
    match.close()
    path.with_suffix(".sqlite").unlink(missing_ok=True)
    for extra in ("-wal", "-shm"):
        Path(str(path.with_suffix(".sqlite")) + extra).unlink(missing_ok=True)
    return out


def ties_archive(path: Path, seed: int = 5, content: Content | None = None) -> Path:
    """Three agents on the tiny map; the second and third are given exactly the same goods, so they
    finish at exactly equal wealth, richer than the first. Nobody acts for an hour."""
    content = content or default_content()
    db = path.with_suffix(".sqlite")
    match = Match.create("tiny", seed, db, content)
    first = match.join("first")
    second = match.join("second")
    third = match.join("third")
    for agent in (second, third):
        match.setup("give_items", {"agent": agent, "item": "stone", "qty": 10})
    assert first
    for _ in range(60):
        match.step()
    return _archived(match, path)


def scripted_archive(path: Path, scenario: str, seed: int, ticks: int | None = None) -> Path:
    """The scenario's own scripted policies (as `wildhold demo` plays them), for `ticks` ticks or to the end."""
    from wildhold.agents.runner import ScriptedRun

    db = path.with_suffix(".sqlite")
    run = ScriptedRun.start(scenario, seed, db)
    w = run.world
    run.run(until=None if ticks is None else w.start_tick + ticks)
    if not run.match.ended:
        run.match.end("fixture")
    out = run.match.export(path)
    run.match.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return out


def colluders(first: str, second: str, handings: int) -> dict[str, Script]:
    """Two characters handing one berry to each other `handings` times (an offer that gives it and
    wants nothing, accepted by the other), then keeping themselves fed like `gatherer`."""
    from wildhold.world.parts.market import state

    left = {"handings": handings, "turn": first}

    def script(w: World, a: str) -> Iterator[Step]:
        other = second if a == first else first
        while True:
            offers = [t for t in state(w).trades.values() if t["to"] == a]
            if offers:
                left["turn"] = a
                yield ("accept_trade", {"offer": offers[0]["id"]})
            elif left["turn"] == a and left["handings"] > 0:
                left["turn"], left["handings"] = None, left["handings"] - 1
                yield ("offer_trade", {"to": other, "give": {"berries": 1}, "want": {}, "ticks": 10})
            elif left["handings"] == 0 and left["turn"] is not None:
                break
            else:
                yield None
        yield from gatherer(w, a)

    return {first: script, second: script}


def collusion_archive(path: Path, handings: int, seed: int = 3, content: Content | None = None) -> Path:
    """The tiny world's day for two characters that hand one berry back and forth `handings` times
    in its first hours and then only keep themselves fed (0: the same play without a trade)."""
    content = content or default_content()
    match = Match.create("tiny", seed, path.with_suffix(".sqlite"), content)
    ann, bob = match.join("ann"), match.join("bob")
    play(match, {}, colluders(ann, bob, handings), until=match.world.end_tick, content=content)
    return _archived(match, path)


def wash_field_archive(path: Path, handings: int, seed: int = 3, content: Content | None = None) -> Path:
    """The tiny world's day for four characters: ann and bob hand one berry back and forth `handings` times, then
    only keep themselves fed; cat and dan, the identical pair, never trade and only keep themselves fed."""
    content = content or default_content()
    match = Match.create("tiny", seed, path.with_suffix(".sqlite"), content)
    ann, bob, cat, dan = (match.join(name) for name in ("ann", "bob", "cat", "dan"))
    play(match, {}, {**colluders(ann, bob, handings), **colluders(cat, dan, 0)}, until=match.world.end_tick, content=content)
    return _archived(match, path)


def crafter(recipe: str, times: int) -> Script:
    """Craft the recipe `times` times (its inputs carried), then stop."""

    def script(w: World, a: str) -> Iterator[Step]:
        for _ in range(times):
            yield ("craft", {"recipe": recipe})

    return script


def cohort_archive(path: Path, cohort: list[str] | None = None, seed: int = 3, content: Content | None = None) -> Path:
    """The tiny world's day for ann, an evaluated character that crafts two workbenches, beside the
    producer baseline, which crafts far more; `cohort` is what an experiment names as its cohort
    (into the manifest), none when absent."""
    content = content or default_content()
    match = Match.create("tiny", seed, path.with_suffix(".sqlite"), content)
    ann = match.join("ann")
    producer = match.join("producer", policy="producer")
    match.setup("give_items", {"agent": ann, "item": "wood", "qty": 4})
    play(match, {producer: "producer"}, {ann: chain(crafter("workbench", 2), gatherer)}, until=match.world.end_tick,
         content=content)
    return _archived(match, path, {"cohort": cohort} if cohort is not None else None)


def _archived(match: Match, path: Path, extra: dict[str, Any] | None = None) -> Path:
    """End the match, write its archive to `path` (`extra` into its manifest) and remove its database."""
    match.end("fixture")
    out = match.export(path, extra=extra)
    match.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path.with_suffix(".sqlite")) + suffix).unlink(missing_ok=True)
    return out
