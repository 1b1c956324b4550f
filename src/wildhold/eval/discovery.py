"""Discovery (seed 001's RQ2): what each arm wrote down in its workspace, and how it matches the rules.

Read from each model session's record (its workspace writes with their text, its deletes, and the sections
of the design document it read). The facts are the content's own data, the same the rules document is
rendered from: each recipe (its output and inputs, with the quantities), each price a villager buys or sells
at, each villager (and the places of its day), each dungeon enemy (and the moves of its pattern), each
creature of the night, and the wealth formula. A fact is written down when one line of a note names it;
it is `right` when that line also holds its detail (a quantity or price it has, a place or move of it),
`wrong` when a line naming it holds numbers but none of its own, `unverified` when it is only named, and
`never` found otherwise. A fact written down whose section of the design document the arm never read
was found by playing (or guessed); `rules` without a section lists the sections and reads none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from wildhold.content import Content

MONEY = ("coin", "price", "cost", "sell", "buy", "pay")
NUMBER = re.compile(r"(?<![A-Za-z0-9_])\d+")  # a number standing alone or as a count ("3", "3x", "3c"), not in a name ("trade1")


@dataclass(frozen=True)
class Fact:
    id: str
    topic: str  # the rules document's section that states it
    names: tuple[str, ...]  # all named on one line
    numbers: tuple[int, ...] = ()  # its quantities or prices: one on that line makes it right
    words: tuple[str, ...] = ()  # its places or moves: one on that line makes it right
    context: tuple[str, ...] = ()  # a line names it only with one of these on it too (a price speaks of money)


def _norm(text: str) -> str:
    return text.lower().replace("_", " ")


def rules_facts(content: Content) -> list[Fact]:
    """The facts the arms' notes are checked against, from the content (never a second copy of the rules)."""
    facts = []
    for name, r in sorted(content.recipes.items()):
        facts.append(Fact(f"recipe:{name}", "recipes", tuple(_norm(n) for n in (*r.outputs, *r.inputs)),
                          numbers=tuple(sorted(set(r.inputs.values())))))
    prices: dict[str, set[int]] = {}
    for npc in content.npcs.values():
        if npc.shop is not None:
            for item, price in (*npc.shop.sells.items(), *npc.shop.buys.items()):
                prices.setdefault(item, set()).add(price)
    facts += [Fact(f"price:{item}", "villagers", (_norm(item),), numbers=tuple(sorted(p)), context=MONEY)
              for item, p in sorted(prices.items())]
    for name, npc in sorted(content.npcs.items()):
        facts.append(Fact(f"villager:{name}", "villagers", (_norm(name),), words=tuple(sorted({_norm(e.place) for e in npc.schedule}))))
    for name, enemy in sorted(content.enemies.items()):
        facts.append(Fact(f"enemy:{name}", "dungeon", (_norm(name),), words=tuple(sorted({_norm(m.move) for m in enemy.pattern}))))
    for name in sorted(content.creatures):
        facts.append(Fact(f"creature:{name}", "creatures", (_norm(name),), words=("night", "dark", "shelter")))
    facts.append(Fact("wealth:formula", "wealth", ("wealth",), words=("value", "formula", "hp", "reputation")))
    return facts


def _status(fact: Fact, lines: list[str]) -> str:
    named = [line for line in lines if all(n in line for n in fact.names)
             and (not fact.context or any(w in line for w in fact.context))]
    if not named:
        return "never"
    if not fact.numbers and not fact.words:
        return "unverified"
    wrong = False
    for line in named:
        numbers = {int(n) for n in NUMBER.findall(line)}
        if (fact.numbers and numbers & set(fact.numbers)) or (fact.words and any(w in line for w in fact.words)):
            return "right"
        wrong = wrong or bool(fact.numbers and numbers)
    return "wrong" if wrong else "unverified"


def discovery(sessions: list[dict[str, Any]], content: Content) -> dict[str, Any]:
    """One arm's workspace over its sessions, the design document's sections it read, and its coverage of the facts."""
    files: dict[str, str] = {}
    over_time, written, reads = [], [], []
    first: dict[str, tuple[int, int | None]] = {}  # fact -> (session, tick) of the first write naming it
    facts = rules_facts(content)
    for s in sessions:
        log = s.get("log") or {}
        for t, path, _, text in log.get("writes", ()):
            files[path] = text
            written.append(text)
            lines = [_norm(line) for line in text.splitlines()]
            for fact in facts:
                if fact.id not in first and _status(fact, lines) != "never":
                    first[fact.id] = (s["session"], log.get("end_tick"))
        for _, path in log.get("deletes", ()):
            files.pop(path, None)
        for t, tick, tool, args in log.get("design_reads", ()):
            reads.append({"session": s["session"], "tick": tick, "tool": tool, "section": args.get("section"), "key": args.get("key")})
        over_time.append({"session": s["session"], "files": len(files), "bytes": sum(len(v.encode()) for v in files.values()),
                          "folders": len({p.split("/")[0] for p in files if "/" in p})})
    lines = [_norm(line) for text in written for line in text.splitlines()]
    read = {r["section"] for r in reads if r["section"] is not None}
    rows, counts = [], {"right": 0, "wrong": 0, "unverified": 0, "never": 0, "by_playing": 0}
    for fact in facts:
        status = _status(fact, lines)
        counts[status] += 1
        by_playing = status != "never" and fact.topic not in read
        counts["by_playing"] += by_playing
        rows.append({"fact": fact.id, "topic": fact.topic, "status": status, "by_playing": by_playing,
                     "first_session": first[fact.id][0] if fact.id in first else None})
    return {"workspace": over_time, "files": [{"path": p, "bytes": len(v.encode())} for p, v in sorted(files.items())],
            "design_reads": reads, "sections_read": sorted(read), "facts": rows, "counts": counts, "of": len(facts)}
