"""Task evaluators: folds over one character's events that say how far its task has come (0..1) and whether it is done.

Each evaluator is a `Fold` (the evaluation layer's API: `@on` handlers over the typed event views),
registered by name with the model of its parameters. `refs` names the parameters that point into a
content table, so a task that names nothing real is refused at load. An evaluator counts only what it
is fed: the tracker (`tasks.evaluate`) feeds it the events after the task's set-up, live or offline.
Progress counts what the character did, never time passing: a character that does nothing stays at 0.
A task that asks for several acts is scored by `all`, whose terms are the evaluators of each act.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from wildhold.eval.events import (Built, Cleared, Dealt, Defeated, Entered, Gift, Harvested, Husbanded, ItemMoved,
                                  Knockdown, Moved, NodeAt, Placed, QuestDone, Repaired, Talked, Tended, Tilled)
from wildhold.eval.fold import Fold, MatchInfo, on

EVALUATORS: dict[str, type[Evaluator]] = {}


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    qty: int = Field(default=1, ge=1)


class Evaluator(Fold):
    """Counts toward `target`; progress is the count's share of it, done when it is reached."""

    params_model: ClassVar[type[Params]] = Params
    refs: ClassVar[dict[str, str]] = {}  # parameter -> content table its value must name

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match)
        self.agent, self.params = agent, params
        self.count = 0

    @property
    def target(self) -> int:
        return self.params.qty

    def handlers(self) -> dict[str, Callable[[int, Any], None]]:
        """The handler of each event kind it reads, called as (tick, view)."""
        return {kind: getattr(self, attr) for kind, attr in self.reads.items()}

    def setup_handlers(self) -> dict[str, Callable[[int, Any], None]]:
        """The handlers of the set-up's own events it reads: what the set-up put on the map, never progress."""
        return {}

    def tick(self, tick: int) -> None:
        """Time reached `tick` with nothing else to read: evaluators that measure time override it."""

    @property
    def progress(self) -> float:
        return min(1.0, self.count / self.target)

    @property
    def done(self) -> bool:
        return self.count >= self.target


def _handler(kind: str, method: str):
    """A fresh `@on(kind)` handler that calls `method`: each subclass marks its own function."""

    @on(kind)
    def handle(self: Evaluator, tick: int, ev: Any) -> None:
        getattr(self, method)(tick, ev)

    return handle


def evaluator(name: str):
    def register(cls: type[Evaluator]) -> type[Evaluator]:
        if name in EVALUATORS:
            raise ValueError(f"an evaluator named {name!r} is already registered")
        cls.name = name
        EVALUATORS[name] = cls
        return cls

    return register


# ---- items -------------------------------------------------------------------------------------

OWN = ("gather", "craft", "cook")  # the ways `via: own` counts: what the character gathers or makes itself


class ObtainParams(Params):
    item: str
    via: str = Field(default="any", pattern="^(any|own|gather|craft|cook|harvest|collect|shop|dungeon|quest)$")


@evaluator("obtain")
class Obtain(Evaluator):
    """Items of one kind come into the character's hands by one way (gathered, made, bought, ...; `own`:
    gathered or made by the character)."""

    params_model = ObtainParams
    refs = {"item": "items"}

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        p = self.params
        if ev.holder != self.agent or ev.item != p.item or ev.source == "setup":
            return
        way = ev.source.split(":", 1)[0]
        if way == p.via or (p.via == "own" and way in OWN) or (p.via == "any" and way not in ("start", "pick_up")):
            self.count += ev.qty


class GatherAllParams(Params):
    items: dict[str, int] = Field(min_length=2)  # item -> how many


@evaluator("gather_all")
class GatherAll(Evaluator):
    """Several kinds of item gathered from the land, each up to its count; progress is their share of the whole."""

    params_model = GatherAllParams
    refs = {"items": "items"}

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        self.got: dict[str, int] = {}

    @property
    def target(self) -> int:
        return sum(self.params.items.values())

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        want = self.params.items.get(ev.item)
        if ev.holder != self.agent or want is None or ev.source.split(":", 1)[0] != "gather":
            return
        before = min(want, self.got.get(ev.item, 0))
        self.got[ev.item] = self.got.get(ev.item, 0) + ev.qty
        self.count += min(want, self.got[ev.item]) - before


class StructureParams(Params):
    structure: str


@evaluator("place")
class Place(Evaluator):
    """Structures of one kind put on the map by the character: placed from its pack or built."""

    params_model = StructureParams
    refs = {"structure": "structures"}

    @on("structure_placed")
    def placed(self, tick: int, ev: Placed) -> None:
        if ev.owner == self.agent and ev.structure == self.params.structure:
            self.count += 1

    @on("structure_built")
    def built(self, tick: int, ev: Built) -> None:
        if ev.agent == self.agent and ev.structure == self.params.structure:
            self.count += 1


# ---- farming -----------------------------------------------------------------------------------

@evaluator("till")
class Till(Evaluator):
    """Plots tilled by the character."""

    @on("plot_tilled")
    def tilled(self, tick: int, ev: Tilled) -> None:
        if ev.agent == self.agent:
            self.count += 1


class CropParams(Params):
    crop: str


class _Tend(Evaluator):
    params_model = CropParams
    refs = {"crop": "crops"}

    def tended(self, tick: int, ev: Tended) -> None:
        if ev.agent == self.agent and ev.crop == self.params.crop:
            self.count += 1


@evaluator("plant")
class Plant(_Tend):
    """Seeds of one crop planted by the character."""

    planted = _handler("crop_planted", "tended")


@evaluator("water")
class Water(_Tend):
    """Plants of one crop watered by the character."""

    watered = _handler("crop_watered", "tended")


@evaluator("fertilise")
class Fertilise(_Tend):
    """Plants of one crop fertilised by the character."""

    fertilised = _handler("crop_fertilised", "tended")


@evaluator("harvest")
class Harvest(Evaluator):
    """Produce of one crop harvested by the character."""

    params_model = CropParams
    refs = {"crop": "crops"}

    @on("crop_harvested")
    def harvested(self, tick: int, ev: Harvested) -> None:
        if ev.agent == self.agent and ev.crop == self.params.crop:
            self.count += ev.qty


class AnimalParams(Params):
    animal: str


class _Husband(Evaluator):
    params_model = AnimalParams
    refs = {"animal": "animals"}

    def tended(self, tick: int, ev: Husbanded) -> None:
        if ev.agent == self.agent and ev.animal == self.params.animal:
            self.count += 1


@evaluator("settle")
class Settle(_Husband):
    """Animals of one kind settled on the map by the character."""

    settled = _handler("animal_settled", "tended")


@evaluator("feed")
class Feed(_Husband):
    """Animals of one kind fed by the character."""

    fed = _handler("animal_fed", "tended")


# ---- villagers and trade -----------------------------------------------------------------------

class NpcParams(Params):
    npc: str
    today: bool = False  # only what happens before the day the task began ends counts


class _Villager(Evaluator):
    params_model = NpcParams
    refs = {"npc": "npcs"}

    def counts(self, tick: int, npc: str) -> bool:
        """Whether a dealing with `npc` at `tick` counts: with the task's villager and, with `today`, before the day ends."""
        if npc != self.params.npc:
            return False
        if not self.params.today:
            return True
        day = self.match.content.calendar.ticks_per_day
        return tick < (self.match.start_tick // day + 1) * day


@evaluator("talk")
class Talk(_Villager):
    """Conversations with one villager (today only, with `today`)."""

    @on("talked")
    def talked(self, tick: int, ev: Talked) -> None:
        if ev.agent == self.agent and self.counts(tick, ev.npc):
            self.count += 1


class GiftParams(Params):
    npc: str
    item: str


@evaluator("gift")
class GiveGift(Evaluator):
    """Gifts of one item to one villager."""

    params_model = GiftParams
    refs = {"npc": "npcs", "item": "items"}

    @on("gift_given")
    def given(self, tick: int, ev: Gift) -> None:
        if ev.agent == self.agent and ev.npc == self.params.npc and ev.item == self.params.item:
            self.count += 1


@evaluator("befriend")
class Befriend(_Villager):
    """Friendship points won with one villager (talk and gifts), `qty` of them (today only, with `today`)."""

    @on("talked")
    def talked(self, tick: int, ev: Talked) -> None:
        if ev.agent == self.agent and self.counts(tick, ev.npc):
            self.count += ev.delta

    @on("gift_given")
    def given(self, tick: int, ev: Gift) -> None:
        if ev.agent == self.agent and self.counts(tick, ev.npc):
            self.count += ev.delta

    @property
    def progress(self) -> float:
        return max(0.0, super().progress)


class DealParams(Params):
    item: str
    npc: str | None = None


class _Deal(Evaluator):
    params_model = DealParams
    refs = {"item": "items", "npc": "npcs"}

    def dealt(self, tick: int, ev: Dealt) -> None:
        p = self.params
        if ev.agent == self.agent and ev.item == p.item and p.npc in (None, ev.npc):
            self.count += ev.qty


@evaluator("buy")
class Buy(_Deal):
    """Items of one kind bought from villagers (one villager, when named)."""

    bought = _handler("bought", "dealt")


@evaluator("sell")
class Sell(_Deal):
    """Items of one kind sold to villagers (one villager, when named)."""

    sold = _handler("sold", "dealt")


@evaluator("earn")
class Earn(Evaluator):
    """Coins taken from sales to villagers, `qty` of them."""

    @on("sold")
    def sold(self, tick: int, ev: Dealt) -> None:
        if ev.agent == self.agent:
            self.count += ev.total


class QuestParams(Params):
    quest: str | None = None  # the quest kind (a quests.yaml key's kind); None: any


@evaluator("complete_quest")
class CompleteQuest(Evaluator):
    """Quests from the board completed (of one kind, when named)."""

    params_model = QuestParams

    @on("quest_completed")
    def completed(self, tick: int, ev: QuestDone) -> None:
        if ev.agent == self.agent and self.params.quest in (None, ev.kind):
            self.count += 1


# ---- the land and the dungeon ------------------------------------------------------------------

@evaluator("repair")
class Repair(Evaluator):
    """Repairs of structures of one kind by the character."""

    params_model = StructureParams
    refs = {"structure": "structures"}

    @on("structure_repaired")
    def repaired(self, tick: int, ev: Repaired) -> None:
        if ev.agent == self.agent and ev.structure == self.params.structure:
            self.count += 1


@evaluator("visit")
class Visit(Evaluator):
    """Regions of the map stood in, `qty` of them besides the one the character stood in when the task began."""

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        self.seen: set[int] = set()
        self.first: int | None = None

    @on("moved")
    def moved(self, tick: int, ev: Moved) -> None:
        if ev.agent != self.agent:
            return
        region, _ = self.match.regions
        here = region[ev.to[1] * self.match.width + ev.to[0]]
        if self.first is None:
            self.first = here
        if here != self.first and here not in self.seen:
            self.seen.add(here)
            self.count += 1


class _Away(Evaluator):
    """Done on a step that ends at least `away` tiles (the larger of the two axes) from where the
    character's first step took it, on a tile `arrived(x, y)` accepts (each evaluator built on this one
    defines it); the map is the seed's worldgen."""

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        self.origin: tuple[int, int] | None = None

    @property
    def map(self):
        from wildhold.world.worldgen import generate

        return generate(self.match.content, self.match.scenario, self.match.seed)

    @on("moved")
    def moved(self, tick: int, ev: Moved) -> None:
        if ev.agent != self.agent or self.count:
            return
        x, y = ev.to
        if self.origin is None:
            self.origin = (x, y)
        elif max(abs(x - self.origin[0]), abs(y - self.origin[1])) >= self.params.away and self.arrived(x, y):
            self.count = 1


class ReachParams(Params):
    terrain: str
    away: int = Field(ge=1)


@evaluator("reach")
class Reach(_Away):
    """Standing on a tile of one terrain, `away` tiles or more from where the character's first step took it."""

    params_model = ReachParams
    refs = {"terrain": "terrain"}

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        g = self.map
        self.kind = g.terrain_names.index(params.terrain)
        self.terrain, self.width = g.terrain, g.width

    def arrived(self, x: int, y: int) -> bool:
        return self.terrain[y * self.width + x] == self.kind


class FindParams(Params):
    node: str
    away: int = Field(ge=1)


@evaluator("find")
class Find(_Away):
    """Standing beside a resource node of one kind (one the land grew or the set-up put down), `away` tiles or
    more from where the character's first step took it."""

    params_model = FindParams
    refs = {"node": "nodes"}

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        g = self.map
        self.spots = {(p % g.width, p // g.width) for p, n in g.nodes.items() if n.kind == params.node}

    def setup_handlers(self) -> dict[str, Callable[[int, Any], None]]:
        return {"node_placed": self.placed}

    def placed(self, tick: int, ev: NodeAt) -> None:
        if ev.node == self.params.node:
            self.spots.add((ev.x, ev.y))

    def arrived(self, x: int, y: int) -> bool:
        return any((x + dx, y + dy) in self.spots for dx in (-1, 0, 1) for dy in (-1, 0, 1))


class TierParams(Params):
    tier: int = Field(ge=1)


@evaluator("enter_dungeon")
class EnterDungeon(Evaluator):
    """Entries into one tier of the dungeon."""

    params_model = TierParams

    @on("dungeon_entered")
    def entered(self, tick: int, ev: Entered) -> None:
        if ev.agent == self.agent and ev.tier == self.params.tier:
            self.count += 1


@evaluator("clear_tier")
class ClearTier(Evaluator):
    """Clears of one tier of the dungeon (its boss defeated)."""

    params_model = TierParams

    @on("tier_cleared")
    def cleared(self, tick: int, ev: Cleared) -> None:
        if ev.agent == self.agent and ev.tier == self.params.tier:
            self.count += 1


class EnemyParams(Params):
    enemy: str


@evaluator("defeat")
class Defeat(Evaluator):
    """Enemies of one kind defeated by the character."""

    params_model = EnemyParams
    refs = {"enemy": "enemies"}

    @on("enemy_defeated")
    def defeated(self, tick: int, ev: Defeated) -> None:
        if ev.agent == self.agent and ev.kind == self.params.enemy:
            self.count += 1


class SurviveParams(Params):
    ticks: int = Field(ge=1)


@evaluator("survive")
class Survive(Evaluator):
    """`ticks` of time lived through without being knocked down; a knockdown fails the task for good. Living
    through is all or nothing: time passing is no progress (a character that does nothing would earn it)."""

    params_model = SurviveParams

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        self.began: int | None = None
        self.fallen = False

    @property
    def target(self) -> int:
        return self.params.ticks

    def tick(self, tick: int) -> None:
        if self.began is None:
            self.began = tick
        if not self.fallen:
            self.count = tick - self.began

    @on("knockdown")
    def knocked(self, tick: int, ev: Knockdown) -> None:
        if ev.agent == self.agent:
            self.fallen = True

    @property
    def progress(self) -> float:
        return 1.0 if self.done else 0.0

    @property
    def done(self) -> bool:
        return not self.fallen and super().done


# ---- several acts -------------------------------------------------------------------------------

class TermParams(BaseModel):
    """One act of a task that asks for several: an evaluator and its parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    evaluator: str
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("evaluator")
    @classmethod
    def registered(cls, name: str) -> str:
        if name not in EVALUATORS:
            raise ValueError(f"unknown evaluator {name!r}")
        return name


class AllParams(Params):
    qty: Literal[1] = 1
    terms: tuple[TermParams, ...] = Field(min_length=2)
    ordered: bool = False  # each term counts only once the one before it is done ("..., then ...")


@evaluator("all")
class All(Evaluator):
    """Every term done (in order, when `ordered`: a term is fed only once the terms before it are done);
    progress is the terms' mean."""

    params_model = AllParams

    def __init__(self, match: MatchInfo, agent: str, params: Params) -> None:
        super().__init__(match, agent, params)
        self.terms = [EVALUATORS[t.evaluator](match, agent, EVALUATORS[t.evaluator].params_model.model_validate(t.params))
                      for t in params.terms]

    def _live(self) -> list[Evaluator]:
        """The terms that read what happens now: all of them, or in order the first not yet done."""
        if not self.params.ordered:
            return self.terms
        return next(([t] for t in self.terms if not t.done), [])

    def handlers(self) -> dict[str, Callable[[int, Any], None]]:
        routes: dict[str, list[tuple[Evaluator, Callable[[int, Any], None]]]] = {}
        for term in self.terms:
            for kind, handle in term.handlers().items():
                routes.setdefault(kind, []).append((term, handle))

        def route(pairs: list[tuple[Evaluator, Callable[[int, Any], None]]]) -> Callable[[int, Any], None]:
            def handle(tick: int, ev: Any) -> None:
                live = self._live()
                for term, one in pairs:
                    if any(term is t for t in live):
                        one(tick, ev)
            return handle

        return {kind: route(pairs) for kind, pairs in routes.items()}

    def setup_handlers(self) -> dict[str, Callable[[int, Any], None]]:
        routes: dict[str, list[Callable[[int, Any], None]]] = {}
        for term in self.terms:
            for kind, handle in term.setup_handlers().items():
                routes.setdefault(kind, []).append(handle)

        def route(handles: list[Callable[[int, Any], None]]) -> Callable[[int, Any], None]:
            def handle(tick: int, ev: Any) -> None:
                for one in handles:
                    one(tick, ev)
            return handle

        return {kind: route(handles) for kind, handles in routes.items()}

    def tick(self, tick: int) -> None:
        for term in self._live():
            term.tick(tick)

    @property
    def progress(self) -> float:
        return sum(t.progress for t in self.terms) / len(self.terms)

    @property
    def done(self) -> bool:
        return all(t.done for t in self.terms)


def leaves(name: str, params: dict[str, Any]) -> list[tuple[str, Params]]:
    """The acts an evaluator asks for, as (evaluator, parameters): its terms' acts for `all`, else itself."""
    model = check_params(name, params)
    if isinstance(model, AllParams):
        return [leaf for t in model.terms for leaf in leaves(t.evaluator, t.params)]
    return [(name, model)]


def check_params(name: str, params: dict[str, Any]) -> Params:
    """The evaluator's parameters as its model (raises KeyError for an unknown evaluator, ValidationError for bad ones)."""
    return EVALUATORS[name].params_model.model_validate(params)
