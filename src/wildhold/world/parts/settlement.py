"""The settlement's villagers: where they stand each hour, their shops, friendship with each
character (talk, gifts, unlocked recipes and discounts), and the daily quest board.

All of it lives on `village(w)`. Villagers are not characters: they carry nothing, need nothing
and block no one; coins and goods enter and leave the world through their shops, by rule, and
every such move names its source (`shop:<npc>`, `gift:<npc>`, `quest:<id>`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Container

from pydantic import Field

from wildhold.world.actions.registry import ActionArgs, Plan, cost, did_you_mean, require_item, tiles_in_reach_of
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import settings, table
from wildhold.world.parts.base import Part, Saved, Section, saved
from wildhold.world.readonly import freeze

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.content.models import NpcSpec, ShopSpec
    from wildhold.world.state import Character, Operation
    from wildhold.world.world import World

MINUTES_PER_HOUR = 60  # a tick is one in-game minute


# ---- state -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Quest:
    """A request drawn from a template: on the board until accepted or expired, then in one character's log."""

    id: str
    template: str
    kind: str
    issuer: str
    item: str
    qty: int
    reward_coins: int
    friendship: int
    days: int
    posted_day: int
    agent: str | None = None
    accepted_tick: int | None = None
    deadline_tick: int | None = None
    gathered: int = 0
    ended_tick: int | None = None


@dataclass(slots=True)
class QuestLog(Saved):
    """One character's quests: those it holds (in the order they were posted), completed and failed."""

    active: dict[str, Quest] = saved("made", dict, of=Quest)
    completed: list[Quest] = saved("record_list", list, of=Quest)
    failed: list[Quest] = saved("record_list", list, of=Quest)


NO_QUESTS = QuestLog()  # the log of a character that has taken no quest: read, never written


@dataclass(slots=True)
class Village(Saved):
    """The settlement part's state. Pairs are keyed (character, villager)."""

    day: int = saved("value", default=0)
    hour: tuple[int, int] = saved("tuple", default=(0, -1))
    villagers: dict[str, tuple[str, int]] = saved("keyed", dict, of=1)
    friendship: dict[tuple[str, str], int] = saved("keyed", dict, of=2)
    talked: dict[tuple[str, str], int] = saved("keyed", dict, of=2)
    gifts: dict[tuple[str, str], tuple[int, int]] = saved("keyed", dict, of=2)
    board: dict[str, Quest] = saved("made", dict, of=Quest)
    logs: dict[str, QuestLog] = saved("states", dict, of=QuestLog)
    next_quest: int = saved("value", default=0)
    next_deadline: int | None = None  # derived from the logs, never saved

    def load(self, data: dict[str, Any]) -> None:
        Saved.load(self, data)
        _update_next_deadline(self)


def village(w: World) -> Village:
    return SETTLEMENT.state(w)


# ---- events ----------------------------------------------------------------------------------


class NpcMoved(Ev):
    """A villager went to the place its schedule names for this hour (or to the nearest free tile)."""

    npc: str
    place: str
    x: int
    y: int


class Talked(Ev):
    """A character talked with a villager; delta is the friendship it gained (0 after the first talk of the day)."""

    agent: str
    npc: str
    line: str
    delta: int
    points: int


class GiftGiven(Ev):
    """A character gave a villager one item; opinion is the villager's view of it, delta the friendship change."""

    agent: str
    npc: str
    item: str
    opinion: str
    delta: int
    points: int
    line: str


class FriendshipLevel(Ev):
    """A character's friendship level with a villager changed."""

    agent: str
    npc: str
    level: int
    previous: int
    points: int


class Bought(Ev):
    """A character bought items from a villager's shop; total coins left its inventory."""

    agent: str
    npc: str
    item: str
    qty: int
    unit_price: int
    total: int
    discount_pct: int


class Sold(Ev):
    """A character sold items to a villager's shop; total coins entered its inventory."""

    agent: str
    npc: str
    item: str
    qty: int
    unit_price: int
    total: int


class QuestPosted(Ev):
    """A villager posted a quest on the board; it expires at midnight unless accepted."""

    quest: str
    template: str
    kind: str
    issuer: str
    item: str
    qty: int
    reward_coins: int
    friendship: int
    days: int


class QuestAccepted(Ev):
    """A character took a quest from the board; it must be turned in by deadline_tick."""

    agent: str
    quest: str
    deadline_tick: int


class QuestProgress(Ev):
    """A gather quest counted items its holder gathered since accepting it."""

    agent: str
    quest: str
    gathered: int
    qty: int


class QuestCompleted(Ev):
    """A character turned a quest in; completed is how many quests it has completed in all."""

    agent: str
    quest: str
    kind: str
    issuer: str
    item: str
    qty: int
    reward_coins: int
    friendship: int
    completed: int


class QuestFailed(Ev):
    """An accepted quest's deadline passed before it was turned in."""

    agent: str
    quest: str
    issuer: str
    reason: str


class QuestExpired(Ev):
    """A posted quest nobody accepted left the board at midnight."""

    quest: str
    issuer: str
    posted_day: int


# ---- rules -----------------------------------------------------------------------------------


def hour_of_day(w: World) -> int:
    return w.tick % w.calendar.ticks_per_day // MINUTES_PER_HOUR


def scheduled_place(npc: NpcSpec, hour: int) -> str:
    """The place of the latest schedule entry started by `hour`; before the first, yesterday's last."""
    entries = sorted(npc.schedule, key=lambda e: e.start_hour)
    place = entries[-1].place
    for e in entries:
        if e.start_hour <= hour:
            place = e.place
    return place


def place_tile(w: World, place: str) -> int:
    """The settlement tile of a named place: centre + offset, or the nearest free settlement tile.

    A tile is free when it can be walked on (no wall or station). Nearest means fewest steps, then
    the smallest Manhattan distance, then the northmost and westmost tile: the choice depends on
    the map alone.
    """
    held = w.kept.place_tiles
    if held is None or held[0] != w.builds:  # walkability changes only when a structure is placed or removed
        held = w.kept.place_tiles = (w.builds, {})
    p = held[1].get(place)
    if p is None:
        p = held[1][place] = _place_tile(w, place)
    return p


def _place_tile(w: World, place: str) -> int:
    dx, dy = w.content.social.places[place]
    cx, cy = w.xy(w.settlement)
    tx, ty = cx + dx, cy + dy
    r = w.scenario.settlement.radius
    best: tuple[tuple[int, int, int, int], int] | None = None
    for y in range(cy - r, cy + r + 1):
        for x in range(cx - r, cx + r + 1):
            p = w.pos(x, y)
            if p is None or not w.is_walkable(p):
                continue
            key = (max(abs(x - tx), abs(y - ty)), abs(x - tx) + abs(y - ty), y, x)
            if best is None or key < best[0]:
                best = (key, p)
    return w.settlement if best is None else best[1]


def level_of(w: World, points: int) -> int:
    s = w.content.social
    return min(points // s.points_per_level, s.max_level)


def _unlocked_by(w: World) -> dict[str, list[tuple[str, int]]]:
    """Recipe -> (villager, friendship level) for each unlock that opens it, in content order: read once per world
    (a check asks it of every craft and cook)."""
    held = w.kept.recipe_unlocks
    if held is None:
        held = w.kept.recipe_unlocks = {}
        for name, npc in w.content.npcs.items():
            for u in npc.unlocks:
                for recipe in dict.fromkeys(u.recipes):  # an unlock names its villager once per recipe
                    held.setdefault(recipe, []).append((name, u.level))
    return held


def friendship(w: World, agent: str, npc: str) -> tuple[int, int]:
    """(points, level) of a character with a villager."""
    points = village(w).friendship.get((agent, npc), 0)
    return points, level_of(w, points)


def _points_after(w: World, agent: str, npc: str, delta: int) -> int:
    """Points after a change: never below 0, never above what the top level needs."""
    s = w.content.social
    points = village(w).friendship.get((agent, npc), 0)
    return min(max(points + delta, 0), s.max_level * s.points_per_level)


def _set_points(w: World, agent: str, npc: str, points: int) -> None:
    before, previous = friendship(w, agent, npc)
    if points == before:
        return
    village(w).friendship[(agent, npc)] = points
    level = level_of(w, points)
    if level != previous:
        w.emit("friendship_level", agent=agent, npc=npc, level=level, previous=previous, points=points)


def discount_pct(w: World, agent: str, npc: str) -> int:
    """The best discount this character has earned with this villager."""
    return _discount_at(w.content.npcs[npc], friendship(w, agent, npc)[1])


def buy_price(w: World, agent: str, npc: str, item: str) -> int:
    """A shop's price for this character: the listed price less its discount, rounded up (the seller's favour)."""
    base = w.content.npcs[npc].shop.sells[item]
    return -(-base * (100 - discount_pct(w, agent, npc)) // 100)


def shop_open(shop: ShopSpec, hour: int) -> bool:
    opens, closes = shop.open_hours
    if opens < closes:
        return opens <= hour < closes
    return hour >= opens or hour < closes


def opinion(npc: NpcSpec, item: str) -> str:
    if item in npc.loves:
        return "loved"
    if item in npc.likes:
        return "liked"
    if item in npc.dislikes:
        return "disliked"
    return "neutral"


def _line(w: World, npc: str, situation: str) -> str:
    lines = w.content.npcs[npc].lines[situation]
    return lines[w.rng("settlement").randrange(len(lines))]


# ---- checks shared by the actions --------------------------------------------------------------


def _villager(w: World, c: Character, npc: str) -> Rejected | None:
    """None when the villager exists and stands within the character's reach, else why not."""
    if not w.scenario.npcs:
        return Rejected("unknown_npc", "This scenario has no villagers.")
    if npc not in w.content.npcs:
        return Rejected("unknown_npc", f"There is no villager {npc!r}.{did_you_mean(npc, w.content.npcs)}")
    place, p = village(w).villagers[npc]
    d = w.distance(c.pos, p)
    if d > w.needs.reach:
        x, y = w.xy(p)
        cx, cy = w.xy(c.pos)
        return Rejected(
            "out_of_range",
            f"{npc} is at the {place} ({x}, {y}) at this hour, {d} tiles from you at ({cx}, {cy}); "
            f"stand within {w.needs.reach} tile of them.",
        )
    return None


def _villager_ready(w: World, c: Character) -> str | None:
    """`_villager`'s refusal of every villager while none stands within the character's reach."""
    if not w.scenario.npcs:
        return "unknown_npc"
    return None if c.pos in _near_villagers(w) else "out_of_range"


def _near_villagers(w: World) -> frozenset[int]:
    """The tiles within reach of a villager, kept while the village emits no event (a villager moves only with
    `npc_moved`, and a set-up command counts as an event of every part): four villager actions ask of every draw."""
    stamp = w.part_changes[SETTLEMENT.name]
    held = w.kept.near_villagers
    if held is None or held[0] != stamp:
        held = w.kept.near_villagers = (stamp, tiles_in_reach_of(w, (p for _, p in village(w).villagers.values())))
    return held[1]


def _open_shop(w: World, c: Character, npc: str) -> ShopSpec | Rejected:
    bad = _villager(w, c, npc)
    if bad:
        return bad
    shop = w.content.npcs[npc].shop
    if shop is None:
        return Rejected("no_shop", f"{npc} ({w.content.npcs[npc].role}) keeps no shop.")
    if not shop_open(shop, hour_of_day(w)):
        opens, closes = shop.open_hours
        said = w.content.npcs[npc].lines["closed"][0]
        return Rejected("shop_closed", f'{npc}: "{said}" The shop is open from {opens}:00 to {closes}:00; it is {hour_of_day(w)}:00 now.')
    return shop


def _open_shops_in_reach(w: World, c: Character) -> dict[str, Container[Any]]:
    """The villagers `_open_shop` lets through now: within the character's reach, a shop kept and open at this hour."""
    hour, npcs, reach = hour_of_day(w), w.content.npcs, w.needs.reach
    return {"npc": frozenset(npc for npc, (_, p) in village(w).villagers.items()
                             if w.distance(c.pos, p) <= reach and (shop := npcs[npc].shop) is not None and shop_open(shop, hour))}


def _known_item(w: World, item: str) -> Rejected | None:
    if item not in w.content.items:
        return Rejected("unknown_item", f"There is no item {item!r}.{did_you_mean(item, w.content.items)}")
    return None


def _buy_plan(w: World, c: Character, npc: str, item: str, qty: int) -> tuple[int, int] | Rejected:
    """(unit price, total) of a purchase the character can make now."""
    shop = _open_shop(w, c, npc)
    if isinstance(shop, Rejected):
        return shop
    bad = _known_item(w, item)
    if bad:
        return bad
    if item not in shop.sells:
        return Rejected("not_sold", f"{npc} does not sell {item}; they sell {', '.join(sorted(shop.sells))}.")
    unit = buy_price(w, c.id, npc, item)
    total = unit * qty
    coin = w.content.economy.coin
    have = c.inventory.get(coin, 0)
    if have < total:
        return Rejected("not_enough_coins", f"{qty} {item} cost {total} {coin} ({unit} each) and you carry {have}.")
    return unit, total


def _sell_plan(w: World, c: Character, npc: str, item: str, qty: int) -> int | Rejected:
    """The price per unit the shop pays for an item the character can sell now."""
    shop = _open_shop(w, c, npc)
    if isinstance(shop, Rejected):
        return shop
    bad = _known_item(w, item)
    if bad:
        return bad
    if item not in shop.buys:
        return Rejected("not_bought", f"{npc} does not buy {item}; they buy {', '.join(sorted(shop.buys))}.")
    bad = require_item(w, c, item, qty)
    if bad:
        return bad
    return shop.buys[item]


def _gift_plan(w: World, c: Character, npc: str, item: str) -> Rejected | None:
    bad = _villager(w, c, npc) or require_item(w, c, item)
    if bad:
        return bad
    day, given = village(w).gifts.get((c.id, npc), (0, 0))
    limit = w.content.social.gifts_per_day
    if day == w.day and given >= limit:
        return Rejected("gift_limit", f"{npc} has taken {given} gift(s) from you today, the most they take; try again tomorrow.")
    return None


def _accept_plan(w: World, c: Character, quest: str) -> Quest | Rejected:
    if not w.scenario.npcs:
        return Rejected("unknown_quest", "This scenario has no villagers and no quest board.")
    q = village(w).board.get(quest)
    if q is None:
        posted = ", ".join(village(w).board) or "none"
        return Rejected("unknown_quest", f"No quest {quest!r} is on the board (taken or expired?); posted now: {posted}.")
    log = village(w).logs[c.id]
    limit = w.content.questboard.max_active_per_character
    if len(log.active) >= limit:
        return Rejected("too_many_quests", f"You already have {len(log.active)} active quests ({', '.join(log.active)}); finish one first.")
    return q


def _turn_in_plan(w: World, c: Character, quest: str, done_at: int) -> Quest | Rejected:
    """The quest the character can hand in now, to complete at tick `done_at`, or why not."""
    q = village(w).logs[c.id].active.get(quest) if c.id in village(w).logs else None
    if q is None:
        active = ", ".join(village(w).logs[c.id].active) if c.id in village(w).logs else ""
        return Rejected("unknown_quest", f"{quest!r} is not one of your active quests ({active or 'you have none'}).")
    if done_at > q.deadline_tick:
        return Rejected("quest_overdue", f"{quest} had to be turned in by tick {q.deadline_tick}; a turn-in now would complete at tick {done_at}.")
    bad = _villager(w, c, q.issuer)
    if bad:
        return Rejected(bad.code, f"Turn {quest} in to {q.issuer}. {bad.message}")
    if q.kind == "gather" and q.gathered < q.qty:
        return Rejected("quest_incomplete", f"{quest} asks you to gather {q.qty} {q.item} yourself; you have gathered {q.gathered} since accepting it.")
    have = c.inventory.get(q.item, 0)
    if have < q.qty:
        return Rejected("quest_incomplete", f"{quest} needs {q.qty} {q.item} handed over; you carry {have}.")
    return q


# ---- actions ---------------------------------------------------------------------------------


class NpcArgs(ActionArgs):
    npc: str = Field(description="Villager name, as listed under villagers in your observation.")


class TradeArgs(NpcArgs):
    item: str = Field(description="Item name.")
    qty: int = Field(default=1, ge=1, description="How many.")


class QuestArgs(ActionArgs):
    quest: str = Field(description="Quest id, as on the quest board or in your quest log (q1, q2, ...).")


class Talk:
    """Talk with a villager within reach. The first talk each day with each villager raises your friendship with them; they always answer with a line."""

    name, category = "talk", "social"
    ready = staticmethod(_villager_ready)
    Args = NpcArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return _villager(w, c, a["npc"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        npc, v = op.args["npc"], village(w)
        first = v.talked.get((c.id, npc)) != w.day
        before, level = friendship(w, c.id, npc)
        points = _points_after(w, c.id, npc, w.content.social.talk_points) if first else before
        line = _line(w, npc, "friend" if level >= w.content.social.friend_line_level else "greeting")
        if first:
            v.talked[(c.id, npc)] = w.day
        w.emit("talked", agent=c.id, npc=npc, line=line, delta=points - before, points=points)
        _set_points(w, c.id, npc, points)
        return {"npc": npc, "line": line, "friendship_gained": points - before, "points": points, "level": level_of(w, points)}


class Gift:
    """Give a villager within reach one item you carry. Their opinion of it (loved, liked, neutral, disliked) moves your friendship; each villager takes a limited number of gifts from you a day."""

    name, category = "gift", "social"
    ready = staticmethod(_villager_ready)

    class Args(NpcArgs):
        item: str = Field(description="An item you carry; one unit is given.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return _gift_plan(w, c, a["npc"], a["item"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        npc, item, v = op.args["npc"], op.args["item"], village(w)
        day, given = v.gifts.get((c.id, npc), (0, 0))
        v.gifts[(c.id, npc)] = (w.day, given + 1 if day == w.day else 1)
        w.take(c.id, item, 1, f"gift:{npc}")
        felt = opinion(w.content.npcs[npc], item)
        before, _ = friendship(w, c.id, npc)
        points = _points_after(w, c.id, npc, w.content.social.gift_points[felt])
        line = _line(w, npc, f"gift_{felt}")
        w.emit("gift_given", agent=c.id, npc=npc, item=item, opinion=felt, delta=points - before, points=points, line=line)
        _set_points(w, c.id, npc, points)
        return {"npc": npc, "item": item, "opinion": felt, "line": line, "friendship_gained": points - before, "points": points, "level": level_of(w, points)}


class Buy:
    """Buy items from a villager's shop within reach, during its open hours, paying coins. Friendship discounts lower the price (rounded up)."""

    name, category = "buy", "social"
    ready = staticmethod(_villager_ready)
    sift = staticmethod(_open_shops_in_reach)
    Args = TradeArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, int] | Rejected:
        return _buy_plan(w, c, a["npc"], a["item"], a["qty"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, price: tuple[int, int]) -> dict:
        npc, item, qty = op.args["npc"], op.args["item"], op.args["qty"]
        unit, total = price
        w.take(c.id, w.content.economy.coin, total, f"shop:{npc}")
        w.give(c.id, item, qty, f"shop:{npc}")
        pct = discount_pct(w, c.id, npc)
        w.emit("bought", agent=c.id, npc=npc, item=item, qty=qty, unit_price=unit, total=total, discount_pct=pct)
        return {"npc": npc, "item": item, "qty": qty, "paid": total, "unit_price": unit, "discount_pct": pct}


class Sell:
    """Sell items you carry to a villager's shop within reach, during its open hours, for coins at its listed price."""

    name, category = "sell", "social"
    ready = staticmethod(_villager_ready)
    sift = staticmethod(_open_shops_in_reach)
    Args = TradeArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> int | Rejected:
        return _sell_plan(w, c, a["npc"], a["item"], a["qty"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, unit: int) -> dict:
        npc, item, qty = op.args["npc"], op.args["item"], op.args["qty"]
        w.take(c.id, item, qty, f"shop:{npc}")
        w.give(c.id, w.content.economy.coin, unit * qty, f"shop:{npc}")
        w.emit("sold", agent=c.id, npc=npc, item=item, qty=qty, unit_price=unit, total=unit * qty)
        return {"npc": npc, "item": item, "qty": qty, "received": unit * qty, "unit_price": unit}


class AcceptQuest:
    """Take a quest posted on the board (from anywhere). It leaves the board; turn it in to its issuer before its deadline."""

    name, category = "accept_quest", "social"
    Args = QuestArgs

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if w.scenario.npcs and village(w).board else "unknown_quest"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Quest | Rejected:
        return _accept_plan(w, c, a["quest"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, q: Quest) -> dict:
        v = village(w)
        del v.board[q.id]
        q.agent, q.accepted_tick = c.id, w.tick
        q.deadline_tick = w.tick + q.days * w.calendar.ticks_per_day
        v.logs[c.id].active[q.id] = q
        _update_next_deadline(v)
        w.emit("quest_accepted", agent=c.id, quest=q.id, deadline_tick=q.deadline_tick)
        return {"quest": q.id, "deadline_tick": q.deadline_tick}


class TurnIn:
    """Complete an active quest with its issuer within reach: hand over the items it asks for (a gather quest also needs them gathered by you since accepting). Pays coins and friendship."""

    name, category = "turn_in", "social"
    Args = QuestArgs

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        log = village(w).logs.get(c.id)
        return None if log is not None and log.active else "unknown_quest"

    @staticmethod
    def check(w: World, c: Character, a: dict[str, Any]) -> Plan | Rejected:
        plan = cost(w, "turn_in")
        q = _turn_in_plan(w, c, a["quest"], w.tick + plan.duration)
        return q if isinstance(q, Rejected) else plan

    @staticmethod
    def finish(w: World, c: Character, op: Operation) -> dict | Rejected:
        q = _turn_in_plan(w, c, op.args["quest"], w.tick)
        if isinstance(q, Rejected):
            return q
        v = village(w)
        log = v.logs[c.id]
        source = f"quest:{q.id}"
        w.take(c.id, q.item, q.qty, source)
        w.give(c.id, w.content.economy.coin, q.reward_coins, source)
        del log.active[q.id]
        q.ended_tick = w.tick
        log.completed.append(q)
        _update_next_deadline(v)
        before, _ = friendship(w, c.id, q.issuer)
        points = _points_after(w, c.id, q.issuer, q.friendship)
        w.emit(
            "quest_completed", agent=c.id, quest=q.id, kind=q.kind, issuer=q.issuer, item=q.item, qty=q.qty,
            reward_coins=q.reward_coins, friendship=points - before, completed=len(log.completed),
        )
        _set_points(w, c.id, q.issuer, points)
        return {"quest": q.id, "reward_coins": q.reward_coins, "friendship_gained": points - before, "quests_completed": len(log.completed)}


# ---- the board and the clock -------------------------------------------------------------------


def _update_next_deadline(v: Village) -> None:
    v.next_deadline = min((q.deadline_tick for log in v.logs.values() for q in log.active.values()), default=None)


def _draw_quest(w: World) -> Quest:
    rng = w.rng("settlement")
    kinds = w.content.questboard.kinds
    templates = [name for name, t in w.content.quests.items() if t.kind in kinds]
    name = templates[rng.randrange(len(templates))]
    t = w.content.quests[name]
    v = village(w)
    v.next_quest += 1
    return Quest(
        id=f"q{v.next_quest}",
        template=name,
        kind=t.kind,
        issuer=t.issuers[rng.randrange(len(t.issuers))],
        item=t.items[rng.randrange(len(t.items))],
        qty=rng.randint(*t.qty),
        reward_coins=rng.randint(*t.reward_coins),
        friendship=t.friendship,
        days=t.days,
        posted_day=w.day,
    )


def _new_day(w: World) -> None:
    """Yesterday's untaken quests expire; today's are posted."""
    v = village(w)
    v.day = w.day
    for qid in [qid for qid, q in v.board.items() if q.posted_day < w.day]:
        q = v.board.pop(qid)
        w.emit("quest_expired", quest=qid, issuer=q.issuer, posted_day=q.posted_day)
    if not any(t.kind in w.content.questboard.kinds for t in w.content.quests.values()):
        return
    for _ in range(w.content.questboard.posts_per_day):
        q = _draw_quest(w)
        v.board[q.id] = q
        w.emit(
            "quest_posted", quest=q.id, template=q.template, kind=q.kind, issuer=q.issuer, item=q.item, qty=q.qty,
            reward_coins=q.reward_coins, friendship=q.friendship, days=q.days,
        )


def _place_villagers(w: World) -> None:
    """Each villager goes to the place its schedule names for this hour."""
    v = village(w)
    v.hour = (w.day, hour_of_day(w))
    for name, npc in w.content.npcs.items():
        place = scheduled_place(npc, v.hour[1])
        p = place_tile(w, place)
        if v.villagers.get(name) != (place, p):
            v.villagers[name] = (place, p)
            x, y = w.xy(p)
            w.emit("npc_moved", npc=name, place=place, x=x, y=y)


def _catch_up(w: World) -> None:
    """Roll the board on a new day and move villagers on a new hour (also after a setup jump in time)."""
    v = village(w)
    if v.day != w.day:
        _new_day(w)
    if v.hour != (w.day, hour_of_day(w)):
        _place_villagers(w)


def _fail_overdue(w: World) -> None:
    v = village(w)
    for agent, log in v.logs.items():
        for qid in [qid for qid, q in log.active.items() if q.deadline_tick < w.tick]:
            q = log.active.pop(qid)
            q.ended_tick = w.tick
            log.failed.append(q)
            w.emit("quest_failed", agent=agent, quest=qid, issuer=q.issuer, reason=f"the deadline (tick {q.deadline_tick}) passed")
    _update_next_deadline(v)


def _public(w: World, q: Quest) -> dict[str, Any]:
    """What anyone may read of a quest (read-only: these fields never change, so it is built once per quest)."""
    kept = w.kept.quests
    held = kept.get(q.id)
    if held is None or held[0] is not q:
        held = kept[q.id] = (q, _public_record(w, q))
    return held[1]


def _public_record(w: World, q: Quest) -> dict[str, Any]:
    return {
        "id": q.id, "kind": q.kind, "issuer": q.issuer, "item": q.item, "qty": q.qty, "reward_coins": q.reward_coins,
        "friendship": q.friendship, "days": q.days, "description": w.content.quests[q.template].description,
    }


# ---- the part --------------------------------------------------------------------------------


def _rules(c: Content) -> dict[str, Any]:
    social = c.social
    return {
        "villagers": {
            "friendship": {
                "talk_points": social.talk_points,
                "gift_points": dict(social.gift_points),
                "points_per_level": social.points_per_level,
                "max_level": social.max_level,
                "gifts_per_day": social.gifts_per_day,
                "rule": "Talking adds talk_points once a day per villager; a gift adds the points of the villager's opinion of"
                " the item (loved, liked, neutral or disliked). Each villager's opinions are learned by giving, not listed here.",
            },
            "places": {k: list(v) for k, v in social.places.items()},
            "people": {
                name: {
                    "role": n.role,
                    "description": n.description,
                    "schedule": [e.model_dump(mode="json") for e in n.schedule],
                    "shop": n.shop.model_dump(mode="json") if n.shop else None,
                    "unlocks": [u.model_dump(mode="json") for u in n.unlocks],
                }
                for name, n in c.npcs.items()
            },
        },
        "quests": {"board": c.questboard.model_dump(mode="json"), "templates": {k: v.model_dump(mode="json") for k, v in c.quests.items()}},
    }


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    villagers = doc["villagers"]
    return [
        "## Villagers",
        "",
        villagers["friendship"]["rule"],
        "",
        *settings({k: v for k, v in villagers["friendship"].items() if k != "rule"}),
        *table(
            ["villager", "role", "schedule (from hour: place)", "sells (coins)", "buys (coins)", "open hours", "unlocks"],
            [
                [
                    f"`{k}`", v["role"], ", ".join(f"{e['start_hour']}: {e['place']}" for e in v["schedule"]),
                    v["shop"]["sells"] if v["shop"] else "", v["shop"]["buys"] if v["shop"] else "",
                    v["shop"]["open_hours"] if v["shop"] else "", v["unlocks"],
                ]
                for k, v in villagers["people"].items()
            ],
        ),
        *table(["place", "offset from the settlement centre"], [[f"`{k}`", v] for k, v in villagers["places"].items()]),
        "## Quests",
        "",
        *settings(doc["quests"]["board"]),
        *table(
            ["template", "kind", "issuers", "items or targets", "quantity", "reward (coins)", "friendship", "days"],
            [
                [f"`{k}`", v["kind"], v["issuers"], v["items"] or v["targets"], v["qty"], v["reward_coins"], v["friendship"], v["days"]]
                for k, v in doc["quests"]["templates"].items()
            ],
        ),
    ]


class Settlement(Part[Village]):
    """Villagers, shops, friendship and quests (only where the scenario has villagers)."""

    name = "settlement"
    tables = ("npcs", "social", "quests", "questboard", "economy")
    codes_place = 2
    codes = {
        "unknown_npc": "No villager has that name (or this scenario has no villagers).",
        "gift_limit": "That villager has had all the gifts it takes from you today.",
        "no_shop": "That villager keeps no shop.",
        "shop_closed": "The villager's shop is closed at this hour.",
        "not_sold": "The shop does not sell that item.",
        "not_bought": "The shop does not buy that item.",
        "not_enough_coins": "The character does not carry enough coins.",
        "unknown_quest": "No such quest is on the board or in the character's active quests.",
        "too_many_quests": "The character already has as many active quests as it may.",
        "quest_incomplete": "The quest's requirement is not met yet.",
        "quest_overdue": "The quest's deadline would pass before the turn-in completes.",
    }
    events = {
        "npc_moved": NpcMoved,
        "talked": Talked,
        "gift_given": GiftGiven,
        "friendship_level": FriendshipLevel,
        "bought": Bought,
        "sold": Sold,
        "quest_posted": QuestPosted,
        "quest_accepted": QuestAccepted,
        "quest_progress": QuestProgress,
        "quest_completed": QuestCompleted,
        "quest_failed": QuestFailed,
        "quest_expired": QuestExpired,
    }
    actions = (Talk, Gift, Buy, Sell, AcceptQuest, TurnIn)
    rules = (Section(30, _rules, _rules_markdown),)

    observation_fields = {
        "villagers": {
            "description": "Villagers in view (they keep to their schedule and cannot be blocked or harmed).",
            "fields": {
                "npc": "Villager name: use it in talk, gift, buy, sell.",
                "role": "What they do.",
                "x": "Column.",
                "y": "Row.",
                "place": "The named settlement place they stand at this hour.",
                "shop": "null, or {open, hours [opens, closes], sells: item -> your price in coins, buys: item -> coins paid}.",
            },
        },
        "quest_board": {
            "description": "Quests posted today and not yet taken: {id, kind, issuer, item, qty, reward_coins, friendship, days, description}. Untaken quests expire at midnight.",
            "fields": {},
        },
        "quest_log": {
            "description": "The character's quests.",
            "fields": {
                "active": "Accepted quests: the board fields plus accepted_tick, deadline_tick (turn in by this tick) and gathered (gather quests).",
                "completed": "Ids of completed quests.",
                "failed": "Ids of quests whose deadline passed.",
                "quests_completed": "How many quests the character has completed.",
            },
        },
        "friendship": {
            "description": "Villager -> {points, level, discount_pct, talked_today, gifts_today} for this character.",
            "fields": {},
        },
    }

    def new_state(self, w: World) -> Village:
        return Village()

    def joined(self, w: World, c: Character) -> None:
        village(w).logs[c.id] = QuestLog()

    def day_started(self, w: World) -> None:
        if w.scenario.npcs:
            _catch_up(w)

    def tick(self, w: World) -> None:
        if not w.scenario.npcs:
            return
        _catch_up(w)
        v = village(w)
        if v.next_deadline is not None and v.next_deadline < w.tick:
            _fail_overdue(w)

    def gathered(self, w: World, c: Character, item: str, qty: int) -> None:
        log = village(w).logs.get(c.id)
        if log is None:
            return
        for q in log.active.values():
            if q.kind == "gather" and q.item == item and q.gathered < q.qty:
                q.gathered = min(q.qty, q.gathered + qty)
                w.emit("quest_progress", agent=c.id, quest=q.id, gathered=q.gathered, qty=q.qty)

    def recipe_locked(self, w: World, c: Character, recipe: str) -> str | None:
        if not w.scenario.npcs:
            return None
        needs = _unlocked_by(w).get(recipe)
        if not needs or any(friendship(w, c.id, name)[1] >= level for name, level in needs):
            return None
        said = " or ".join(f"level {level} with {name} (yours: {friendship(w, c.id, name)[1]})" for name, level in needs)
        return f"{recipe} opens at friendship {said}. Talk with villagers daily, bring gifts and finish their quests."

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        # A character's sections hold while no event of the village names it or no one, the hour and the day stay
        # (until the tick `until`) and it stands where it did: most observations find them so (see `_kept_village`
        # for what is rebuilt otherwise). The board, shared, holds while no event of the village at all is emitted.
        changes = w.part_changes
        kept = w.kept.village_views
        if kept is None:
            kept = w.kept.village_views = {}
        held = kept.get(c.id)
        if (held is None or held.mine != changes.get(held.key) or held.anyone != changes.get(_NO_ONE)
                or held.pos != c.pos or w.tick >= held.until):
            held = _kept_village(w, c, kept, held)
        stamp = changes[_NAME]
        if held.board_at != stamp:
            board = w.kept.quest_board  # the board shared by every character (see `_board_view`)
            held.board, held.board_at = board[1] if board is not None and board[0] == stamp else _board_view(w, stamp), stamp
        obs["villagers"] = held.villagers
        obs["quest_board"] = held.board
        obs["quest_log"], obs["friendship"] = held.quest_log, held.friendship


def _kept_village(w: World, c: Character, kept: dict[str, _KeptVillage], held: _KeptVillage | None) -> _KeptVillage:
    """A character's village sections but the board brought up to date (`held`: as kept, or None). Every change of
    the village emits one of its events, naming the character when it changes its friendships or quests, naming none
    when it moves villagers or the board (see `World.part_changes`). The villagers in view hold while the hour and
    the view square stay; its quest log and friendships, while the day stays (a character walking or an hour passing
    rebuilds only the villagers)."""
    changes, tick, per_day = w.part_changes, w.tick, w.calendar.ticks_per_day
    anyone, day = changes.get(_NO_ONE), tick // per_day
    if held is None or held.mine != changes.get(held.key) or held.anyone != anyone or held.day != day:
        held = kept[c.id] = _KeptVillage(w, c, anyone, day)
    hour, pos = tick // MINUTES_PER_HOUR, c.pos  # hours since the first
    if held.hour != hour or held.pos != pos:  # its view square is looked up only once it moved
        bounds = w.view_bounds(pos)
        if held.hour != hour or held.bounds != bounds:
            held.villagers = freeze(_villagers_in_view(w, _villagers_now(w, anyone, hour), bounds, held.discounts))
            held.hour, held.bounds = hour, bounds
        held.pos = pos
    held.until = min((hour + 1) * MINUTES_PER_HOUR, (day + 1) * per_day)
    return held


_NAME = Settlement.name
_NO_ONE = (_NAME, None)  # the key in `World.part_changes` of the village's events naming no character


class _KeptVillage:
    """A character's village sections: its quest log and friendships (and its discount with each villager), kept
    while no event of the village names it (`key`) or no one and the day stays; the villagers in view, also while the
    hour and its view square stay (the square looked up only once it left `pos`); the board (shared), while no event
    of the village is emitted (`board_at`). `until` is the tick of the next hour or day, when they are looked at again."""

    __slots__ = ("key", "mine", "anyone", "day", "quest_log", "friendship", "discounts", "hour", "pos", "bounds",
                 "villagers", "board_at", "board", "until")

    def __init__(self, w: World, c: Character, anyone: int | None, day: int):
        self.key = (_NAME, c.id)
        self.mine, self.anyone, self.day = w.part_changes.get(self.key), anyone, day
        quest_log, friendship, self.discounts = _own_sections(w, c)
        self.quest_log, self.friendship = freeze(quest_log), freeze(friendship)  # shared by its observations
        self.hour: int | None = None
        self.pos: int | None = None
        self.bounds: tuple[int, int, int, int] | None = None
        self.villagers: list[dict[str, Any]] = []
        self.board_at: int | None = None
        self.board: list[dict[str, Any]] = []
        self.until = 0


def _levels(w: World, me: str, npcs: dict[str, NpcSpec]) -> tuple[dict[str, int], dict[str, int], dict[tuple[str, int], int]]:
    """A character's friendship points and levels with each villager, and `discount_pct` by villager and level."""
    v = village(w)
    social = w.content.social
    per_level, top = social.points_per_level, social.max_level
    points = {name: v.friendship.get((me, name), 0) for name in npcs}
    levels = {name: min(pts // per_level, top) for name, pts in points.items()}  # level_of, for each villager
    return points, levels, _discounts(w)


def _discounts(w: World) -> dict[tuple[str, int], int]:
    """`discount_pct` by villager and level: content, so made once per world."""
    discounts = w.kept.discounts
    if discounts is None:
        top = w.content.social.max_level
        discounts = w.kept.discounts = {(name, level): _discount_at(npc, level)
                                             for name, npc in w.content.npcs.items() for level in range(top + 1)}
    return discounts


class _Villager:
    """A villager where it stands at an hour, and its record as observations show it at each discount with it (None
    for one who keeps no shop): the same for every character at that discount, so made when first seen and shared
    by their observations (read-only)."""

    __slots__ = ("name", "npc", "place", "x", "y", "open", "records")

    def __init__(self, name: str, npc: NpcSpec, place: str, x: int, y: int, open_now: bool | None):
        self.name, self.npc, self.place, self.x, self.y, self.open = name, npc, place, x, y, open_now
        self.records: dict[int | None, dict[str, Any]] = {}

    def record(self, w: World, discount: int | None) -> dict[str, Any]:
        shop = self.npc.shop
        shown = None if shop is None else {"open": self.open, "hours": list(shop.open_hours),
                                           "sells": dict(_price_list(w, self.name, discount)), "buys": dict(shop.buys)}
        record = self.records[discount] = freeze({"npc": self.name, "role": self.npc.role, "x": self.x, "y": self.y,
                                                  "place": self.place, "shop": shown})
        return record


def _villagers_now(w: World, anyone: int | None, hour: int) -> list[_Villager]:
    """Every villager where it stands, kept while no event of the village names no one (every move of a villager
    emits one) and the hour (counted from the first: its shop open or closed) stays."""
    held = w.kept.villagers_now
    if held is None or held[0] != anyone or held[1] != hour:
        npcs = w.content.npcs if w.scenario.npcs else {}
        width, villagers, hour_now = w.width, village(w).villagers, hour_of_day(w)
        now = []
        for name, npc in npcs.items():
            place, p = villagers[name]
            y, x = divmod(p, width)
            now.append(_Villager(name, npc, place, x, y, None if npc.shop is None else shop_open(npc.shop, hour_now)))
        held = w.kept.villagers_now = (anyone, hour, now)
    return held[2]


def _villagers_in_view(w: World, villagers: list[_Villager], bounds: tuple[int, int, int, int],
                       discounts: tuple[int | None, ...]) -> list[dict[str, Any]]:
    """The villagers in a view square, with their shops at a character's discounts (one for each villager, in the
    same order), as observations show them."""
    x0, x1, y0, y1 = bounds
    return [v.records.get(discount) or v.record(w, discount)
            for v, discount in zip(villagers, discounts) if x0 <= v.x <= x1 and y0 <= v.y <= y1]


def _own_sections(w: World, c: Character) -> tuple[dict[str, Any], dict[str, Any], tuple[int | None, ...]]:
    """A character's quest log and friendships, as observations show them, and its discount with each villager
    (None for one who keeps no shop)."""
    v = village(w)
    npcs = w.content.npcs if w.scenario.npcs else {}
    day, me = w.day, c.id
    points, levels, discounts = _levels(w, me, npcs)
    log = v.logs.get(me) or NO_QUESTS
    quest_log = {
        "active": [
            {**_public(w, q), "accepted_tick": q.accepted_tick, "deadline_tick": q.deadline_tick, "gathered": q.gathered}
            for q in log.active.values()
        ],
        "completed": [q.id for q in log.completed],
        "failed": [q.id for q in log.failed],
        "quests_completed": len(log.completed),
    }
    friends = {}
    for name, npc in npcs.items():
        gift_day, given = v.gifts.get((me, name), (0, 0))
        friends[name] = {
            "points": points[name],
            "level": levels[name],
            "discount_pct": discounts[name, levels[name]],
            "talked_today": v.talked.get((me, name)) == day,
            "gifts_today": given if gift_day == day else 0,
        }
    shops = tuple(None if npc.shop is None else friends[name]["discount_pct"] for name, npc in npcs.items())
    return quest_log, friends, shops


def _discount_at(npc: NpcSpec, level: int) -> int:
    """`discount_pct` for a friendship level."""
    return max((u.discount_pct for u in npc.unlocks if u.level <= level), default=0)


def _price_list(w: World, npc: str, discount: int) -> dict[str, int]:
    """A shop's prices at one discount (as `buy_price` gives them): content, so built once per world."""
    prices = w.kept.shop_prices
    got = prices.get((npc, discount))
    if got is None:
        sells = w.content.npcs[npc].shop.sells
        got = prices[npc, discount] = {item: -(-base * (100 - discount) // 100) for item, base in sells.items()}
    return got


def _board_view(w: World, stamp: int) -> list[dict[str, Any]]:
    """The quest board as observations show them (read-only: shared by observations), rebuilt only after an event
    of the village (`stamp`, their count): a quest is posted on it, taken off it or expires with one (a quest on the
    board never changes)."""
    held = w.kept.quest_board
    if held is None or held[0] != stamp:
        held = w.kept.quest_board = (stamp, freeze([_public(w, q) for q in village(w).board.values()]))
    return held[1]


SETTLEMENT = Settlement()
