"""The trial (seed 000, Table 1): eight stages of development, recorded per character as it attains
them, from the event record alone. One engine, `TrialTracker`, serves the live world (this part feeds
it every event) and offline reports (`wildhold.eval.trial` feeds it an archive's events).

Criteria, exactly (the numbers are in trial.yaml; the sentences trial_info shows say the same):

- A knockdown-free run starts at the character's `agent_spawned` or its latest `knockdown`; an event
  at tick t sees a run of t - start ticks. Damage is any fall in health (`needs` with a lower health,
  cause other than respawn) or a `character_hit` with damage > 0.
- Foothold: at one moment, a run of `survival_ticks`, a standing bed it owns (`structure_placed` of a
  bed kind owned by it, not since destroyed, demolished or removed), and a completed `craft` of its
  own whose outputs include an equippable item. Attained at the latest of: run start +
  survival_ticks, the tick its beds went from none to one, the craft.
- Self-sufficiency: at one moment, all of: a completed `cook` or `craft` whose recipe is made at a
  cooking station and outputs food; Foothold's bed and crafted equipment; a weapon (hand item with
  damage > 0) and armour (body item with defense > 0) equipped at the same moment at least once; a
  full night (`night_started` to `night_ended`) it was present for from the start, with no damage
  and no knockdown.
- Home: a complete home (construction's `find_home` over the structures and locks the events
  describe: enclosed, every door locked) with at least `home_min_area` floors.
- Outer Court / Inner Temple: a solo clear of that tier followed by leaving alive. A clear
  (`tier_cleared`) is solo and fresh when: the event says fresh, this character is the only one ever
  to enter the instance, no one was carried out of it (or knocked down inside it) before, and the
  character did not enter it resumed. It qualifies when the character then leaves that instance
  alive (`dungeon_left` alive) without being carried out first; the stage's tick is the leaving.
- Steadiness: a qualifying clear of a tier in `steadiness_tiers` with damage_taken = 0, or with
  damage_taken <= steadiness_max_damage and consumables_used <= steadiness_max_consumables.
- Royal Tomb: a qualifying clear of tier 3 and, at some moment at or after it, a knockdown-free run of
  `streak_days` days. Attained at the later of the two.
- Hero: a `shadow_king_defeated` of its own, fresh or not.
- Native progress (the cumulative rule): the number of stages, from Foothold on, that are all
  attained; stage k is credited at the latest attainment tick among stages 1..k. `first_unmet` is
  the first stage not attained (None when all eight are).
- Tasks: the outfit is a completed `craft` of `outfit_recipe` (starting it is not success); the
  Shadow King task is the Hero stage's event.
- Timing: a stage is recorded by the first event that shows it met, with the tick it was first met;
  one that time alone completes (a run reaching its length) is recorded by the first event at or
  after that tick (the world emits several an hour; a finished match ends with `match_ended`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

import orjson

from wildhold.content import Content
from wildhold.content.models import TRIAL_STAGES
from wildhold.world.actions.registry import NoArgs, Plan, cost
from wildhold.world.errors import Rejected
from wildhold.world.events import SORTED, Ev
from wildhold.world.parts.base import Part, Saved, saved
from wildhold.world.parts.construction import find_home
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    from wildhold.world.world import World

STAGES: tuple[str, ...] = tuple(TRIAL_STAGES)
_NOTHING: tuple = ()  # what most events complete
TASKS = ("outfit", "shadow_king")
MAKING = ("craft", "cook")  # the completed operations the trial reads (what was crafted or cooked)


class Built(NamedTuple):
    """An owned structure as the events describe it (what `find_home` reads)."""

    kind: str
    owner: str


def _new_char(tick: int, seq: int, health: int) -> dict[str, Any]:
    return {
        "health": health,
        "run": [tick, seq],  # the knockdown-free run: started at spawn or the latest knockdown
        "beds": [],  # tiles of the beds it owns that stand
        "bed_since": None,
        "crafted": None,
        "cooked": None,
        "hand": None,  # [item, seq]
        "body": None,
        "armed": None,
        "night": None,  # [tick, seq, clean]: the night in progress, watched since its start
        "clean_night": None,  # [night_ended tick, night_started seq, night_ended seq]
        "home": None,  # [tick, evidence]: the Home stage's evidence, kept once attained
        "home_now": False,  # whether it has a complete home now (lost with its only door, say)
        "inside": None,  # instance key
        "entered": None,  # seq of the dungeon_entered that took it inside
        "resumed": False,
        "pending": [],  # clears awaiting a live exit: [tier, tick, seq, damage, consumables]
        "clears": [],  # qualifying clears: [tier, left tick, entered seq, cleared seq, left seq, damage, consumables]
        "hero": None,
        "stages": {},  # stage -> {"tick", "evidence"}
        "tasks": {},  # task -> {"tick", "evidence"}
    }


@dataclass(init=False, eq=False)
class TrialTracker(Saved):
    """Follows a match's events one at a time and records each character's stages and tasks.

    `feed` returns the stages attained by that event, as (agent, stage, record). The fields below are
    its state, JSON-ready, which a live world saves in its snapshots; the rest it derives from content.
    """

    chars: dict[str, dict[str, Any]] = saved("items", dict)
    built: dict[int, Built] = saved("rows", dict, of=Built)
    locks: dict[int, bool] = saved("pairs", dict)
    instances: dict[str, dict[str, Any]] = saved("items", dict)
    due: int | None = saved("value")  # the earliest tick a run may complete a stage with no event of its own

    def __init__(self, content: Content, width: int, height: int):
        self.spec = content.trial
        self.width, self.height = width, height
        self.day = content.calendar.ticks_per_day
        self.max_health = content.needs.max_health
        items, recipes, structures = content.items, content.recipes, content.structures
        self.roles = {k: s.part for k, s in structures.items()}
        self.bed_kinds = {k for k, s in structures.items() if s.bed}
        self.equippable = {k for k, i in items.items() if i.tool is not None}
        self.weapons = {k for k, i in items.items() if i.tool and i.tool.slot == "hand" and i.tool.damage > 0}
        self.armour = {k for k, i in items.items() if i.tool and i.tool.slot == "body" and i.tool.defense > 0}
        food = {k for k, i in items.items() if i.category == "food"}
        stations = set(self.spec.cooking_stations)
        self.meals = {k for k, r in recipes.items() if r.station in stations and food & set(r.outputs)}
        self.equipment_recipes = {k for k, r in recipes.items() if r.kind == "craft" and self.equippable & set(r.outputs)}
        self.tiers = dict(self.spec.stage_tiers)
        self.chars, self.built, self.locks, self.instances, self.due = {}, {}, {}, {}, None
        self._handlers: dict[str, Callable[[int, int, dict[str, Any]], list[str]]] = {
            "agent_spawned": self._spawned,
            "knockdown": self._knockdown,
            "needs": self._needs,
            "character_hit": self._hit,
            "equipped": self._equipped,
            "operation_completed": self._completed,
            "structure_placed": self._placed,
            "structure_destroyed": self._removed,
            "structure_demolished": self._removed,
            "animal_left": self._animal_left,
            "door_locked": self._locked,
            "door_unlocked": self._unlocked,
            "night_started": self._night_started,
            "night_ended": self._night_ended,
            "dungeon_entered": self._entered,
            "tier_cleared": self._cleared,
            "carried_out": self._carried_out,
            "dungeon_left": self._left,
            "shadow_king_defeated": self._shadow_king,
            "match_ended": self._everyone,
        }

    # ---- feeding ---------------------------------------------------------------------------

    def follows(self, kind: str, tick: int, data: dict[str, Any]) -> bool:
        """Whether this event at this tick may change what the tracker records (one with a handler, but of the
        completed operations only a craft or a cook, of the needs only a change of health; any once time alone may
        have completed a stage): `feed` takes every other as nothing, so a world need not tell it of them
        (operations complete and needs change every tick, few of them crafts or blows)."""
        if self.due is not None and tick >= self.due:
            return True
        if kind == "operation_completed":
            return data["action"] in MAKING
        if kind == "needs":
            ch = self._char(data)
            return ch is not None and data["health"] != ch["health"]
        return kind in self._handlers

    def feed(self, seq: int, tick: int, kind: str, data: dict[str, Any]) -> Sequence[tuple[str, str, dict[str, Any]]]:
        """Take one event; return the stages it completes, in joining then stage order."""
        handler = self._handlers.get(kind)
        due = self.due is not None and tick >= self.due
        if handler is None and not due:
            return _NOTHING
        # Stages that time alone completes are settled before this event may end a run or take a bed.
        out = self._settle(list(self.chars), tick) if due else []
        if handler is not None:
            changed = handler(seq, tick, data)
            if changed:
                out += self._settle(changed, tick)
        return out

    def _settle(self, agents: list[str], now: int) -> list[tuple[str, str, dict[str, Any]]]:
        """Record every stage now met by these characters (given in joining order)."""
        out = []
        for agent in agents:
            ch = self.chars[agent]
            for stage in STAGES:
                if stage in ch["stages"]:
                    continue
                got = getattr(self, f"_{stage}")(ch, now)
                if got is not None:
                    record = {"tick": got[0], "evidence": sorted(set(got[1]))}
                    ch["stages"][stage] = record
                    out.append((agent, stage, record))
        self._reschedule()
        return out

    def _reschedule(self) -> None:
        dues = [d for d in (self._due(ch) for ch in self.chars.values()) if d is not None]
        self.due = min(dues) if dues else None

    def _due(self, ch: dict[str, Any]) -> int | None:
        """The tick at which time alone would complete one of this character's stages."""
        start = ch["run"][0]
        ticks = []
        if "foothold" not in ch["stages"] and ch["bed_since"] and ch["crafted"]:
            ticks.append(max(start + self.spec.survival_ticks, ch["bed_since"][0], ch["crafted"][0]))
        tomb = self._first_clear(ch, self.tiers["royal_tomb"])
        if "royal_tomb" not in ch["stages"] and tomb:
            ticks.append(max(tomb[1], start + self.spec.streak_days * self.day))
        return min(ticks) if ticks else None

    # ---- stage checks: (tick, evidence) once the stage holds at or before `now` ----------------

    def _foothold(self, ch: dict[str, Any], now: int):
        run, bed, crafted = ch["run"], ch["bed_since"], ch["crafted"]
        if bed is None or crafted is None:
            return None
        t = max(run[0] + self.spec.survival_ticks, bed[0], crafted[0])
        return (t, [run[1], bed[1], crafted[1]]) if t <= now else None

    def _self_sufficiency(self, ch: dict[str, Any], now: int):
        marks = [ch["cooked"], ch["bed_since"], ch["crafted"], ch["armed"]]
        night = ch["clean_night"]
        if night is None or any(m is None for m in marks):
            return None
        t = max([night[0], *(m[0] for m in marks)])
        return t, [night[1], night[2], *(m[1] for m in marks)]

    def _home(self, ch: dict[str, Any], now: int):
        return None if ch["home"] is None else tuple(ch["home"])

    def _first_clear(self, ch: dict[str, Any], tier: int | None, steady: bool = False) -> list | None:
        """The first qualifying clear of a tier, or (steady) the first within Steadiness' limits."""
        s = self.spec
        for clear in ch["clears"]:
            if steady:
                if clear[0] in s.steadiness_tiers and (clear[5] == 0 or (clear[5] <= s.steadiness_max_damage and clear[6] <= s.steadiness_max_consumables)):
                    return clear
            elif clear[0] == tier:
                return clear
        return None

    def _solo(self, ch: dict[str, Any], stage: str):
        clear = self._first_clear(ch, self.tiers[stage])
        return None if clear is None else (clear[1], clear[2:5])

    def _outer_court(self, ch: dict[str, Any], now: int):
        return self._solo(ch, "outer_court")

    def _inner_temple(self, ch: dict[str, Any], now: int):
        return self._solo(ch, "inner_temple")

    def _steadiness(self, ch: dict[str, Any], now: int):
        clear = self._first_clear(ch, None, steady=True)
        return None if clear is None else (clear[1], clear[2:5])

    def _royal_tomb(self, ch: dict[str, Any], now: int):
        clear = self._first_clear(ch, self.tiers["royal_tomb"])
        if clear is None:
            return None
        run = ch["run"]
        t = max(clear[1], run[0] + self.spec.streak_days * self.day)
        return (t, [*clear[2:5], run[1]]) if t <= now else None

    def _hero(self, ch: dict[str, Any], now: int):
        return None if ch["hero"] is None else tuple(ch["hero"])

    # ---- event handlers: each returns the characters whose stages may have changed -----------

    def _spawned(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        self.chars[d["agent"]] = _new_char(tick, seq, self.max_health)
        return [d["agent"]]

    def _char(self, d: dict[str, Any], key: str = "agent") -> dict[str, Any] | None:
        return self.chars.get(d.get(key))

    def _knockdown(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is None:
            return []
        ch["run"] = [tick, seq]
        if ch["night"]:
            ch["night"][2] = False
        if ch["inside"] is not None:
            self._downed(ch)
        return [d["agent"]]

    def _downed(self, ch: dict[str, Any]) -> None:
        self.instances[ch["inside"]]["downed"] = True
        ch["inside"], ch["pending"] = None, []

    def _damaged(self, ch: dict[str, Any]) -> None:
        if ch["night"]:
            ch["night"][2] = False

    def _needs(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is not None:
            if d["health"] < ch["health"] and d["cause"] != "respawn":
                self._damaged(ch)
            ch["health"] = d["health"]
        return []

    def _hit(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is not None and d.get("damage", 0) > 0:
            self._damaged(ch)
        return []

    def _equipped(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is None or d["slot"] not in ("hand", "body"):
            return []
        ch[d["slot"]] = None if d["item"] is None else [d["item"], seq]
        hand, body = ch["hand"], ch["body"]
        if ch["armed"] is None and hand and body and hand[0] in self.weapons and body[0] in self.armour:
            ch["armed"] = [tick, seq]
            return [d["agent"]]
        return []

    def _completed(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is None or d["action"] not in MAKING:
            return []
        recipe = d["result"].get("recipe")
        changed = False
        if recipe in self.meals and ch["cooked"] is None:
            ch["cooked"], changed = [tick, seq], True
        if d["action"] == "craft" and recipe in self.equipment_recipes and ch["crafted"] is None:
            ch["crafted"], changed = [tick, seq], True
        if d["action"] == "craft" and recipe == self.spec.outfit_recipe and "outfit" not in ch["tasks"]:
            ch["tasks"]["outfit"] = {"tick": tick, "evidence": [seq]}
        return [d["agent"]] if changed else []

    # -- structures and homes

    def _tile(self, d: dict[str, Any]) -> int:
        return d["y"] * self.width + d["x"]

    def _placed(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        p = self._tile(d)
        self.locks.pop(p, None)
        owner = d["owner"]
        if owner is None:
            return []
        self.built[p] = Built(d["structure"], owner)
        ch = self.chars.get(owner)
        if ch is None:
            return []
        if d["structure"] in self.bed_kinds:
            if not ch["beds"]:
                ch["bed_since"] = [tick, seq]
            ch["beds"] = sorted({*ch["beds"], p})
        self._home_changed(owner, tick, seq)
        return [owner]

    def _gone(self, p: int, tick: int, seq: int) -> list[str]:
        self.locks.pop(p, None)
        was = self.built.pop(p, None)
        if was is None or was.owner not in self.chars:
            return []
        ch = self.chars[was.owner]
        if p in ch["beds"]:
            ch["beds"] = [b for b in ch["beds"] if b != p]
            if not ch["beds"]:
                ch["bed_since"] = None
        self._home_changed(was.owner, tick, seq)
        return [was.owner]

    def _removed(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        return self._gone(self._tile(d), tick, seq)

    def _animal_left(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        return self._gone(self._tile(d), tick, seq) if d.get("structure_removed") else []

    def _locked(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        return self._set_lock(self._tile(d), True, tick, seq)

    def _unlocked(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        return self._set_lock(self._tile(d), False, tick, seq)

    def _set_lock(self, p: int, locked: bool, tick: int, seq: int) -> list[str]:
        self.locks[p] = locked
        was = self.built.get(p)
        return [] if was is None else self._home_changed(was.owner, tick, seq)

    def _home_changed(self, owner: str, tick: int, seq: int) -> list[str]:
        """Whether the owner has a home now (the requirement trial_info shows) and, the first time, the stage."""
        ch = self.chars.get(owner)
        if ch is None:
            return []
        home = find_home(self.width, self.height, self.built, self.roles, self.locks, owner)
        now = home is not None and home.complete and home.area >= self.spec.home_min_area
        had, ch["home_now"] = _has_home(ch), now
        if now and ch["home"] is None:
            ch["home"] = [tick, [seq]]
            return [owner]
        return [owner] if now != had else []

    # -- nights

    def _night_started(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        for ch in self.chars.values():
            ch["night"] = [tick, seq, True]
        return []

    def _night_ended(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        changed = []
        for agent, ch in self.chars.items():
            watch, ch["night"] = ch["night"], None
            if watch and watch[2] and ch["clean_night"] is None:
                ch["clean_night"] = [tick, watch[1], seq]
                changed.append(agent)
        return changed

    # -- the dungeon

    def _entered(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is None:
            return []
        key = str(d["instance"])
        inst = self.instances.setdefault(key, {"entrants": [], "downed": False})
        if d["agent"] not in inst["entrants"]:
            inst["entrants"].append(d["agent"])
        ch["inside"], ch["entered"], ch["pending"] = key, seq, []
        ch["resumed"] = bool(d.get("resumed")) or not d.get("fresh", True)
        return []

    def _cleared(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        key = str(d["instance"])
        if ch is None or ch["inside"] != key:
            return []
        inst = self.instances[key]
        if d["fresh"] and not inst["downed"] and inst["entrants"] == [d["agent"]] and not ch["resumed"]:
            ch["pending"].append([d["tier"], tick, seq, d["damage_taken"], d["consumables_used"]])
        return []

    def _carried_out(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        key = str(d["instance"])
        self.instances.setdefault(key, {"entrants": [], "downed": False})["downed"] = True
        ch = self._char(d)
        if ch is not None and ch["inside"] == key:
            ch["inside"], ch["pending"] = None, []
        return []

    def _left(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        key = str(d["instance"])
        if ch is None or ch["inside"] != key:
            return []
        if not d["alive"]:
            self._downed(ch)
            return []
        for tier, _, cleared_seq, damage, consumables in ch["pending"]:
            ch["clears"].append([tier, tick, ch["entered"], cleared_seq, seq, damage, consumables])
        had = bool(ch["pending"])
        ch["inside"], ch["pending"] = None, []
        return [d["agent"]] if had else []

    def _shadow_king(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        ch = self._char(d)
        if ch is None or ch["hero"] is not None:
            return []
        ch["hero"] = [tick, [seq]]
        ch["tasks"].setdefault("shadow_king", {"tick": tick, "evidence": [seq]})
        return [d["agent"]]

    def _everyone(self, seq: int, tick: int, d: dict[str, Any]) -> list[str]:
        return list(self.chars)

    # ---- results ---------------------------------------------------------------------------

    def progress(self, agent: str) -> dict[str, Any]:
        """Independent attainment, the native cumulative progress and the first unmet stage."""
        ch = self.chars[agent]
        independent = {s: dict(ch["stages"][s]) for s in STAGES if s in ch["stages"]}
        native, credited, latest = 0, {}, None
        for stage in STAGES:
            record = ch["stages"].get(stage)
            if record is None:
                break
            latest = record["tick"] if latest is None else max(latest, record["tick"])
            credited[stage] = latest
            native += 1
        return {
            "independent": independent,
            "native": native,
            "native_ticks": credited,
            "first_unmet": STAGES[native] if native < len(STAGES) else None,
            "tasks": {t: dict(ch["tasks"][t]) for t in TASKS if t in ch["tasks"]},
        }

    def report_key(self, agent: str, now: int) -> tuple:
        """What `progress` and `requirements` read for this character at tick `now`, in brief: equal keys, equal
        answers. Stages, tasks and qualifying clears are only ever added (never changed), so their counts stand for
        them; the rest is whether each mark is set and whether the run has reached each length."""
        ch = self.chars[agent]
        run = now - ch["run"][0]
        return (len(ch["stages"]), len(ch["tasks"]), len(ch["clears"]), run >= self.spec.survival_ticks,
                run >= self.spec.streak_days * self.day, ch["bed_since"] is None, ch["crafted"] is None,
                ch["cooked"] is None, ch["armed"] is None, ch["clean_night"] is None, ch["home"] is None,
                _has_home(ch), ch["hero"] is None)

    def requirements(self, agent: str, now: int) -> dict[str, dict[str, bool]]:
        """Which requirement of each stage holds for the character at tick `now`."""
        ch = self.chars[agent]
        run = now - ch["run"][0]
        solo = {stage: self._first_clear(ch, tier) is not None for stage, tier in self.tiers.items()}
        held = {
            "survival_day": run >= self.spec.survival_ticks,
            "bed": ch["bed_since"] is not None,
            "crafted_equipment": ch["crafted"] is not None,
            "cooking": ch["cooked"] is not None,
            "weapon_and_armour": ch["armed"] is not None,
            "night_without_damage": ch["clean_night"] is not None,
            "locked_home": _has_home(ch),
            "steady_clear": self._first_clear(ch, 0, steady=True) is not None,
            "streak": run >= self.spec.streak_days * self.day,
            "shadow_king": ch["hero"] is not None,
        }
        return {
            stage: {key: solo[stage] if key == "solo_clear" else held[key] for key in keys}
            for stage, keys in TRIAL_STAGES.items()
        }


def _has_home(ch: dict[str, Any]) -> bool:
    """Whether the character has a complete home now (a record saved before this was kept: once it ever had one)."""
    return ch.get("home_now", ch["home"] is not None)


# ---- the live part -------------------------------------------------------------------------------


class TrialStageAttained(Ev):
    """A character attained a stage of the trial (trial_info says what each stage asks). `at` is the
    tick its requirements first held together, which may be before this event; `evidence` lists the
    seqs of the events that show it."""

    agent: str
    stage: str
    number: int
    at: int
    evidence: list[int]


def trial_report(w: World, agent: str) -> dict[str, Any]:
    """What trial_info answers: each stage with its criteria, what holds now, and the progress. Kept per
    character until `TrialTracker.report_key` changes (trial_info is asked often and its answer rarely
    changes); the answer is shared, so it is read only (it goes into an event). Characters that have attained
    nothing share the report of their key (kept under it): all of them, early in a match."""
    return _kept_report(w, agent)[0]


def trial_report_json(w: World, agent: str) -> orjson.Fragment:
    """`trial_report` as the canonical JSON an event holds (keys sorted at every depth), made once per kept report:
    trial_info's completion event carries it as it is, sparing the serialisation of a few kilobytes per answer."""
    kept = _kept_report(w, agent)
    if kept[1] is None:
        kept[1] = orjson.Fragment(orjson.dumps(kept[0], option=SORTED))
    return kept[1]


def _kept_report(w: World, agent: str) -> list:
    """[the report, its JSON or None until asked] as `trial_report` keeps it for this character now."""
    tracker = TRIAL.state(w)
    ch, key = tracker.chars[agent], tracker.report_key(agent, w.tick)
    kept = w.kept.trial_reports
    if kept is None:
        kept = w.kept.trial_reports = {}
    held = kept.get(agent)
    if held is not None and held[0] is ch and held[1] == key:  # the same tracker's record, nothing read changed
        return held[2]
    if any(key[:3]):
        report = [_report(w, tracker, agent), None]
    else:  # nothing attained, no task, no clear: the key alone decides the report, so such characters share one
        report = kept.get(key)
        if report is None:
            report = kept[key] = [_report(w, tracker, agent), None]
    kept[agent] = (ch, key, report)
    return report


def _report(w: World, tracker: TrialTracker, agent: str) -> dict[str, Any]:
    spec = w.content.trial
    progress = tracker.progress(agent)
    held = tracker.requirements(agent, w.tick)
    stages = []
    for number, stage in enumerate(STAGES, start=1):
        record = progress["independent"].get(stage)
        stages.append({
            "number": number,
            "stage": stage,
            "name": spec.stages[stage].name,
            "attained_tick": None if record is None else record["tick"],
            "requirements": [{"requirement": spec.requirement(stage, key), "met": held[stage][key]} for key in TRIAL_STAGES[stage]],
        })
    first = progress["first_unmet"]
    return {
        "stages": stages,
        "progress": progress["native"],
        "of": len(STAGES),
        "first_unmet": None if first is None else spec.stages[first].name,
        "progress_rule": spec.progress_rule,
        "tasks": {task: (progress["tasks"][task]["tick"] if task in progress["tasks"] else None) for task in TASKS},
    }


class TrialInfo:
    """Your trial: its eight stages, what each asks, whether and when you attained each, which of its
    requirements hold now, and your trial progress. Answers at once, even while you are busy."""

    name, category, while_busy = "trial_info", "maintenance", True
    Args = NoArgs

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        return cost(w, "trial_info")

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> orjson.Fragment:
        return trial_report_json(w, c.id)


class TrialPart(Part[TrialTracker]):
    """Feeds the world's `TrialTracker` every event it follows and logs each stage as it is attained."""

    name = "trial"
    tables = ("trial",)
    events = {"trial_stage_attained": TrialStageAttained}
    actions = (TrialInfo,)

    def new_state(self, w: World) -> TrialTracker:
        return TrialTracker(w.content, w.width, w.height)

    def hears(self, w: World, kind: str, data: dict[str, Any]) -> bool:
        return w.states[self.name].follows(kind, w.tick, data)

    def listening(self, w: World) -> tuple[frozenset[str], int | None]:
        """The kinds it has handlers for, and every kind from the tick time alone may complete a stage (`follows`)."""
        tracker = w.states[self.name]
        return frozenset(tracker._handlers), tracker.due

    def on_event(self, w: World, seq: int, kind: str, data: dict[str, Any]) -> None:
        for agent, stage, record in w.states[self.name].feed(seq, w.tick, kind, data):  # (`state`, inline: every event)
            w.emit("trial_stage_attained", agent=agent, stage=stage, number=STAGES.index(stage) + 1,
                   at=record["tick"], evidence=list(record["evidence"]))


TRIAL = TrialPart()
