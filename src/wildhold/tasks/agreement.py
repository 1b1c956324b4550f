"""Whether a task's description and its evaluator agree: every act the text asks for is a term of the evaluator
and every term is asked for, the things and numbers it names are the terms', and what it says the set-up gives,
the set-up gives (what it must gather itself is not in the pack). Words mean what `tasks/lexicon.yaml` says."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

import yaml
from pydantic import BaseModel, ConfigDict, Field

from wildhold.content import Content
from wildhold.content.loader import validated
from wildhold.tasks.evaluators import Params, leaves
from wildhold.tasks.spec import Task

NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "both": 2}


class Meaning(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    acts: tuple[str, ...] = ()
    condition: str | None = Field(default=None, pattern="^(gathered|today|ordered)$")
    fact: str | None = Field(default=None, pattern="^(carry|start_without|only_tools|no_armor|beside|tier)$")


class Lexicon(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    phrases: dict[str, Meaning]


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    from wildhold.tasks.catalog import TASKS_DIR

    return validated("tasks/lexicon.yaml", "", Lexicon, yaml.safe_load((TASKS_DIR / "lexicon.yaml").read_text()))


@dataclass(frozen=True)
class Word:
    """One piece of a description: a name the task holds (`name`), a number, or a lexicon phrase."""

    text: str
    name: str | None = None
    number: int | None = None
    meaning: Meaning | None = None
    clause: int = 0  # which clause (between punctuation marks) it stands in


# ---- what a task holds -----------------------------------------------------------------------------------


def _recipes_of(c: Content, item: str, kinds: tuple[str, ...]) -> list[Any]:
    return [r for r in c.recipes.values() if item in r.outputs and r.kind in kinds]


def _crop(c: Content, crop: str) -> set[str]:
    spec = c.crops[crop]
    return {crop, spec.seed, spec.product}


def _structure(c: Content, structure: str) -> set[str]:
    return {structure} | {k for k, i in c.items.items() if i.places == structure}


def _tier_name(c: Content, level: int) -> str:
    return next(k for k, t in c.dungeon.tiers.items() if t.level == level)


def _enemy_tier(c: Content, enemy: str) -> int:
    return next(t.level for t in c.dungeon.tiers.values() if enemy in (*t.enemies, t.boss))


def act(name: str, p: Params) -> str:
    """The act a term asks for: the evaluator's name, or for `obtain` the way it counts."""
    return p.via if name == "obtain" else ("gather" if name == "gather_all" else name)  # type: ignore[attr-defined]


def objects(c: Content, name: str, p: Any) -> tuple[list[set[str]], set[str]]:
    """What a term's text must name (each set: one of its names) and what else it may name."""
    if name == "obtain":
        ways = ("craft", "cook") if p.via in ("craft", "cook", "own", "any") else ()
        made = _recipes_of(c, p.item, ways)
        return [{p.item}], {i for r in made for i in r.inputs} | {r.station for r in made if r.station}
    if name == "gather_all":
        return [{i} for i in p.items], set()
    if name == "place":
        s = c.structures[p.structure]
        return [_structure(c, p.structure)], set(s.build.materials) if s.build else set()
    if name in ("plant", "water", "fertilise", "harvest"):
        return [_crop(c, p.crop)], {c.farming.fertilizer, c.farming.water_tool, c.farming.till_tool}
    if name in ("settle", "feed"):
        a = c.animals[p.animal]
        return [{p.animal, a.item}], {a.feed} | {k for k, s in c.structures.items() if s.part == "coop"}
    if name in ("talk", "befriend"):
        return [{p.npc}], set()
    if name in ("gift", "buy", "sell"):
        return [{p.item}] + ([{p.npc}] if getattr(p, "npc", None) else []), set()
    if name == "earn":
        return [{c.economy.coin}], set()
    if name == "repair":
        return [{p.structure}], set(c.structures[p.structure].repair.materials)
    if name == "reach":
        return [{p.terrain}], set()
    if name == "find":
        return [{p.node}], {c.nodes[p.node].item}
    if name in ("enter_dungeon", "clear_tier"):
        return [{_tier_name(c, p.tier)}], {c.dungeon.tiers[_tier_name(c, p.tier)].boss}
    if name == "defeat":
        return [{p.enemy}], {_tier_name(c, _enemy_tier(c, p.enemy))}
    return [], set()


def amounts(c: Content, name: str, p: Any) -> list[int]:
    """The numbers a term's text states: how many (of plots, for a harvest), how far, how many hours."""
    if name == "gather_all":
        return list(p.items.values())
    if name in ("reach", "find"):
        return [p.away, p.qty]
    if name == "harvest":
        return [math.ceil(p.qty / c.crops[p.crop].yield_qty)]
    if name == "survive":
        return [p.ticks // 60 if p.ticks % 60 == 0 else p.ticks]
    return [p.qty]


def _setup_names(c: Content, task: Task) -> set[str]:
    """The names a task's set-up holds."""
    names: set[str] = set()
    for step in task.setup:
        a = step.args
        for key in ("item", "structure", "npc", "weather", "season"):
            if key in a:
                names.add(a[key])
        if "crop" in a:
            names |= _crop(c, a["crop"])
        if "node" in a:
            names |= {a["node"], c.nodes[a["node"]].item}
        if "enemy" in a:
            names.add(a["enemy"])
        if "tier" in a:
            names.add(_tier_name(c, a["tier"]))
    return names


def pack(c: Content, task: Task) -> dict[str, int]:
    """What the character carries once the set-up is done: the scenario's start items, give, take, empty."""
    held = dict(c.scenario(task.scenario).start_items)
    for step in task.setup:
        item, qty = step.args.get("item"), step.args.get("qty", 1)
        if step.command == "give_items":
            held[item] = held.get(item, 0) + qty
        elif step.command == "take_items":
            held[item] = held.get(item, 0) - qty
        elif step.command == "empty_pack":
            held.clear()
    return {k: v for k, v in held.items() if v > 0}


def beside(task: Task, c: Content) -> set[str]:
    """What the set-up puts beside the character: structures (and the items that place them), crops (and their seeds and produce)."""
    out: set[str] = set()
    for step in task.setup:
        if step.near and step.command == "place_structure":
            out |= _structure(c, step.args["structure"])
        elif step.near and step.command == "plant_crop":
            out |= _crop(c, step.args["crop"])
    return out


# ---- reading a description -------------------------------------------------------------------------------


def _variants(c: Content, name: str) -> set[str]:
    """The ways a text may write a name: as it is, with spaces for underscores, in the plural, and a
    node's or terrain's description."""
    forms = {name, name.replace("_", " ")}
    for table in (c.nodes, c.terrain):
        if name in table:
            forms.add(re.sub(r"^(a|an) ", "", table[name].description.rstrip(".").lower()))
    plural = {f + "s" for f in forms} | {f + "es" for f in forms} | {f[:-1] + "ies" for f in forms if f.endswith("y")}
    return {_normal(f) for f in forms | plural}


def _normal(text: str) -> str:
    return re.sub(r"'s\b", "", text.lower().replace("armour", "armor"))


def read(text: str, names: dict[str, str]) -> tuple[list[Word], list[str]]:
    """The description as words: names (`names`: written form -> name), numbers and lexicon phrases, longest
    first; and the words it holds that are none of these."""
    phrases = lexicon().phrases
    forms = {**{p: ("phrase", p) for p in phrases}, **{f: ("name", n) for f, n in names.items()}}
    pattern = re.compile(r"(?<![a-z0-9_])(" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                         + r"|\d+|[a-z_]+)(?![a-z0-9_])|([,;.:()])")
    words: list[Word] = []
    unknown: list[str] = []
    clause = 0
    for m in pattern.finditer(_normal(text)):
        if m.group(2):
            clause += m.group(2) in ",;.:"
            continue
        token = m.group(1)
        kind, what = forms.get(token, (None, None))
        if kind == "name":
            words.append(Word(token, name=what, clause=clause))
        elif kind == "phrase":
            words.append(Word(token, meaning=phrases[what], clause=clause))
        elif token.isdigit() or token in NUMBERS:
            words.append(Word(token, number=int(token) if token.isdigit() else NUMBERS[token], clause=clause))
        else:
            unknown.append(token)
    return words, unknown


# ---- the check -------------------------------------------------------------------------------------------


def disagreements(task: Task, c: Content) -> list[str]:
    """What in the task's description its evaluator or set-up does not hold (empty when they agree)."""
    terms = leaves(task.evaluator, task.params)
    held, allowed = _setup_names(c, task), set()
    required: list[set[str]] = []
    for name, p in terms:
        need, may = objects(c, name, p)
        required += need
        allowed |= may | set().union(*need)
    names = {form: n for n in held | allowed for form in _variants(c, n)}
    words, unknown = read(task.description, names)
    problems = [_unknown(c, w) for w in unknown]
    problems += _acts(words, terms)
    mentioned = {w.name for w in words if w.name} | {  # "tier 2" names the tier
        _tier_name(c, v.number) for w, v in zip(words, words[1:]) if w.meaning and w.meaning.fact == "tier" and v.number
        in {t.level for t in c.dungeon.tiers.values()}}
    problems += [f"names none of {', '.join(sorted(need))}, which its evaluator asks for" for need in required if not need & mentioned]
    problems += _numbers(c, words, terms)
    problems += _conditions(c, task, words, terms)
    problems += _facts(c, task, words, terms)
    return problems


def _unknown(c: Content, word: str) -> str:
    tables = (c.items, c.structures, c.crops, c.npcs, c.nodes, c.terrain, c.animals, c.dungeon.tiers)
    if any(word in t for t in tables) or word in c.calendar.weathers:
        return f"names {word!r}, which neither its evaluator nor its set-up holds"
    return f"says {word!r}, a word tasks/lexicon.yaml does not give a meaning"


def _acts(words: list[Word], terms: list[tuple[str, Params]]) -> Iterator[str]:
    held = {act(n, p) for n, p in terms}
    asked: set[str] = set()
    for w in words:
        if w.meaning and w.meaning.acts:
            asked |= set(w.meaning.acts)
            if not held & set(w.meaning.acts):
                yield f"asks to {w.text!r}, but no term of its evaluator is a {' or '.join(w.meaning.acts)}"
    for a in sorted(held - asked):
        yield f"its evaluator asks for {a!r}, which the description does not ask for"


def _numbers(c: Content, words: list[Word], terms: list[tuple[str, Params]]) -> Iterator[str]:
    """The numbers stated (but those of a fact: a tier, what is carried) are the terms' amounts, ones unsaid; a
    number before a name is the amount of a term that names it ('2 wood and 3 stone')."""
    stated: set[int] = set()
    for i, w in enumerate(words):
        before = words[i - 1] if i else None
        if w.number is None or (before and before.meaning and before.meaning.fact in ("tier", "carry")):
            continue
        stated.add(w.number)
        after = words[i + 1] if i + 1 < len(words) else None
        own = [n for name, p in terms if after and after.name and any(after.name in need for need in objects(c, name, p)[0])
               for n in amounts(c, name, p)]
        if own and w.number not in own:
            yield f"states {w.number} {after.name}, where its evaluator asks for {' or '.join(map(str, sorted(set(own))))}"  # type: ignore[union-attr]
    wanted = {n for name, p in terms for n in amounts(c, name, p)}
    if stated - {1} != wanted - {1}:
        yield (f"states the numbers {sorted(stated - {1}) or 'none'} where its evaluator asks for "
               f"{sorted(wanted - {1}) or 'none'} (ones go unsaid)")


def _conditions(c: Content, task: Task, words: list[Word], terms: list[tuple[str, Params]]) -> Iterator[str]:
    said = {w.meaning.condition for w in words if w.meaning and w.meaning.condition}
    if "gathered" in said:
        got = [item for name, p in terms for item in
               (p.items if name == "gather_all" else [p.item] if name == "obtain" else [])]  # type: ignore[attr-defined]
        if not got:
            yield "says the character comes by things itself, but no term of its evaluator gathers or makes them"
        carried = pack(c, task)
        for item in sorted(set(got) & set(carried)):
            yield f"asks for {item} the character comes by itself, but the set-up leaves it {carried[item]} in its pack"
    villagers = [p for name, p in terms if name in ("talk", "befriend")]
    if ("today" in said) != (bool(villagers) and all(p.today for p in villagers)):  # type: ignore[attr-defined]
        yield ("says 'today', but its villager terms count any day" if "today" in said
               else "its villager terms count only today, which the description does not say")
    ordered = task.evaluator == "all" and bool(task.params.get("ordered"))
    if ("ordered" in said) != ordered:
        yield ("says 'then' (or 'first'), but its evaluator's terms count in any order" if "ordered" in said
               else "its evaluator's terms count in order, which the description does not say ('then')")
    if ordered:  # the acts come in the text in the order the terms count them
        steps = [act(name, p) for name, p in leaves(task.evaluator, task.params)]
        firsts = [next(k for k, a in enumerate(steps) if a in w.meaning.acts) for w in words
                  if w.meaning and w.meaning.acts and set(w.meaning.acts) & set(steps)]
        if firsts != sorted(firsts):
            yield f"asks for its acts in another order than its evaluator counts them ({', '.join(steps)})"


def _facts(c: Content, task: Task, words: list[Word], terms: list[tuple[str, Params]]) -> Iterator[str]:
    carried, near = pack(c, task), beside(task, c)
    for i, w in enumerate(words):
        fact = w.meaning.fact if w.meaning else None
        if fact in ("carry", "start_without"):
            for item, qty in _named(words, i, after=fact == "start_without" or _after(words, i)):
                have = carried.get(item, 0)
                if fact == "carry" and have < qty:
                    yield f"says the character carries {qty} {item}, but the set-up leaves it {have}"
                if fact == "start_without" and have:
                    yield f"says the character starts with no {item}, but the set-up leaves it {have}"
        elif fact == "only_tools":
            for item in sorted(k for k in carried if c.items[k].category != "tool" and c.items[k].tool is None):
                yield f"says the character carries nothing but tools, but the set-up leaves it {item}"
        elif fact == "no_armor":
            for item in sorted(k for k in carried if c.items[k].tool is not None and c.items[k].tool.slot == "body"):
                yield f"says the character carries no armour, but the set-up leaves it {item}"
        elif fact == "beside":
            name = next((v.name for v in reversed(words[:i]) if v.name and v.clause == w.clause), None)
            if name and (name in c.structures or name in c.crops or any(name in _crop(c, k) for k in c.crops)) and name not in near:
                yield f"says {name} is beside the character, but the set-up puts none beside it"
        elif fact == "tier":
            n = words[i + 1].number if i + 1 < len(words) else None
            for name, p in terms:
                level = p.tier if name in ("enter_dungeon", "clear_tier") else (  # type: ignore[attr-defined]
                    _enemy_tier(c, p.enemy) if name == "defeat" else None)  # type: ignore[attr-defined]
                if level is not None and level != n:
                    yield f"says tier {n}, but its evaluator's {name} term is in tier {level}"


def _after(words: list[Word], i: int) -> bool:
    """Whether 'you carry' lists what it carries after it ('; you carry a tent') rather than after a name ('the tent you carry')."""
    nxt = words[i + 1] if i + 1 < len(words) and words[i + 1].clause == words[i].clause else None
    return nxt is not None and (nxt.name is not None or nxt.number is not None or nxt.text in ("a", "an"))


def _named(words: list[Word], i: int, after: bool) -> Iterator[tuple[str, int]]:
    """The names a fact at `i` speaks of, each with the number written before it (1 without): all those after it
    in its clause, or the one just before it."""
    if not after:
        if i and words[i - 1].name:
            n = words[i - 2].number if i > 1 and words[i - 2].number is not None else 1
            yield words[i - 1].name, n  # type: ignore[misc]
        return
    count = 1
    for w in words[i + 1:]:
        if w.clause != words[i].clause:
            return
        if w.number is not None:
            count = w.number
        elif w.name:
            yield w.name, count
            count = 1
