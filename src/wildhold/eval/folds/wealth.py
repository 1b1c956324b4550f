"""Wealth under the public formula, from the events alone: each character's holdings rebuilt from
item, structure, escrow, reputation and attribute events, valued by `world.wealth.formula_terms`
(the function the live standings value the world's state with), and sampled over time."""

from __future__ import annotations

from wildhold.eval.events import AnimalLeft, ContractOffered, Damaged, ItemMoved, OrderPosted, Placed, Removed, Repaired, Reputation, Spawned, Trained, TradeOffered
from wildhold.eval.fold import NEVER, Fold, MatchInfo, fold, on
from wildhold.world.wealth import formula_terms, items_cents

CURVE_POINTS = 120  # wealth samples per match (at most)
ESCROW = "escrow@"  # escrow@<offer, contract or order>: items still its owner's
DEPOSIT = "deposit@"  # deposit@<tile>:<agent>: what that agent deposited in a storehouse


@fold
class Wealth(Fold):
    """Wealth in cents at the end, its six terms, what the starting items were worth, and the
    curve: the value at up to CURVE_POINTS evenly spaced ticks and the end, keeping only the corners.
    A curve sample at tick t holds the value before t's events; a probe (`MatchInfo.probes`) holds the
    value once every event of its tick is in, as a live world read at that tick shows it."""

    writes = ("wealth_start_cents", "wealth_cents", "wealth_terms", "wealth_curve", "wealth_at", "attribute_levels")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.content = match.content
        self.carried: dict[str, dict[str, int]] = {}  # agent -> items
        self.escrows: dict[str, dict[str, int]] = {}  # open escrow holder -> items
        self.escrow_owner: dict[str, str] = {}
        self.deposits: dict[str, dict[str, int]] = {}  # agent -> items, over every storehouse
        self.structures: dict[tuple[int, int], tuple[str, str | None, int]] = {}  # (x, y) -> (kind, owner, hp)
        self.reputation: dict[str, int] = {}
        self.levels: dict[str, dict[str, int]] = {}  # agent -> attribute -> level
        self.start: dict[str, dict[str, int]] = {}  # agent -> starting items
        self.cents: dict[str, int] = {}  # each agent's wealth when last valued
        self.changed: set[str] = set()  # agents whose holdings changed since
        span = max(match.final_tick - match.start_tick, 1)
        self.step = max(1, -(-span // CURVE_POINTS))
        self.next_sample = match.start_tick + self.step
        self.probes = list(match.probes)  # still to record, in order
        self.wake = self._next_cut()

    def terms(self, agent: str) -> dict[str, int]:
        """The formula's terms for one character over its holdings now."""
        return formula_terms(
            self.content,
            carried=self.carried[agent],
            escrowed=[items for holder, items in self.escrows.items() if self.escrow_owner.get(holder) == agent],
            structures=[(kind, hp) for kind, owner, hp in self.structures.values() if owner == agent],
            deposits=self.deposits.get(agent, {}),
            reputation=self.reputation.get(agent, 0),
            attribute_levels=sum(self.levels[agent].values()),
        )

    # ---- time ------------------------------------------------------------------------------

    def _revalue(self) -> None:
        for agent in self.changed:
            if agent in self.agents:
                self.cents[agent] = sum(self.terms(agent).values())
        self.changed.clear()

    def _next_cut(self) -> int:
        """The next tick before whose events something is due: a curve sample, or the tick after a probe."""
        sample = self.next_sample if self.next_sample < self.match.final_tick else NEVER
        return min(sample, self.probes[0] + 1 if self.probes else NEVER)

    def advance(self, tick: int) -> None:
        while (cut := self._next_cut()) <= tick:
            self._revalue()
            if cut == self.next_sample < self.match.final_tick:
                for agent, am in self.agents.items():
                    am.wealth_curve.append([cut, self.cents[agent]])
                self.next_sample += self.step
            while self.probes and self.probes[0] + 1 == cut:
                self._probe(self.probes.pop(0))
        self.wake = self._next_cut()

    def _probe(self, tick: int) -> None:
        for agent, am in self.agents.items():
            am.wealth_at[tick] = self.cents[agent]

    # ---- holdings --------------------------------------------------------------------------

    @on("agent_spawned")
    def spawned(self, tick: int, ev: Spawned) -> None:
        a = ev.agent
        self.carried[a], self.levels[a], self.start[a] = {}, {}, {}
        self.changed.add(a)

    def _move(self, holder: str, item: str, qty: int) -> None:
        held = self.carried.get(holder)
        owner: str | None = holder
        if held is None:
            if holder.startswith(ESCROW):
                held = self.escrows.setdefault(holder, {})
                owner = self.escrow_owner.get(holder)
            elif holder.startswith(DEPOSIT):
                owner = holder.rsplit(":", 1)[1]
                if owner not in self.agents:
                    return
                held = self.deposits.setdefault(owner, {})
            else:
                return  # chests, the ground, villagers: nobody's wealth
        left = held.get(item, 0) + qty
        if left:
            held[item] = left
        else:
            held.pop(item, None)
            if not held and holder in self.escrows:
                del self.escrows[holder]  # closed: keeps the escrows to look through short
        if owner is not None:
            self.changed.add(owner)

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        self._move(ev.holder, ev.item, ev.qty)
        start = self.start.get(ev.holder)
        if start is not None and ev.source.split(":", 1)[0] == "start":
            start[ev.item] = start.get(ev.item, 0) + ev.qty

    @on("item_lost")
    def lost(self, tick: int, ev: ItemMoved) -> None:
        self._move(ev.holder, ev.item, -ev.qty)

    def _own(self, holder: str, agent: str) -> None:
        self.escrow_owner[holder] = agent
        self.changed.add(agent)

    @on("trade_offered")
    def offered(self, tick: int, ev: TradeOffered) -> None:
        self._own(ESCROW + ev.offer, ev.agent)

    @on("contract_offered")
    def contracted(self, tick: int, ev: ContractOffered) -> None:
        self._own(ESCROW + ev.contract, ev.payer)

    @on("order_posted")
    def posted(self, tick: int, ev: OrderPosted) -> None:
        self._own(ESCROW + ev.order, ev.agent)

    def _set(self, key: tuple[int, int], kind: str | None, owner: str | None, hp: int) -> None:
        """Set (kind given) or remove (kind None) the structure on a tile."""
        old = self.structures.pop(key, None)
        if old is not None and old[1] is not None:
            self.changed.add(old[1])
        if kind is not None:
            self.structures[key] = (kind, owner, hp)
            if owner is not None:
                self.changed.add(owner)

    @on("structure_placed")
    def placed(self, tick: int, ev: Placed) -> None:
        self._set((ev.x, ev.y), ev.structure, ev.owner, ev.hp)

    @on("structure_damaged", "structure_repaired")
    def hp(self, tick: int, ev: Damaged | Repaired) -> None:
        old = self.structures.get((ev.x, ev.y))
        if old is not None:
            self._set((ev.x, ev.y), old[0], old[1], ev.hp)

    @on("structure_destroyed", "structure_demolished")
    def removed(self, tick: int, ev: Removed) -> None:
        self._set((ev.x, ev.y), None, None, 0)

    @on("animal_left")
    def animal_left(self, tick: int, ev: AnimalLeft) -> None:
        if ev.structure_removed:
            self._set((ev.x, ev.y), None, None, 0)

    @on("reputation_changed")
    def reputation_changed(self, tick: int, ev: Reputation) -> None:
        self.reputation[ev.agent] = ev.value
        self.changed.add(ev.agent)

    @on("attribute_trained")
    def trained(self, tick: int, ev: Trained) -> None:
        levels = self.levels.get(ev.agent)
        if levels is not None:
            levels[ev.attribute] = ev.level
            self.changed.add(ev.agent)

    def finish(self) -> None:
        self.advance(NEVER - 1)  # every event is in: what is still due holds the final values
        for a, am in self.agents.items():
            am.attribute_levels = sum(self.levels[a].values())
            am.wealth_terms = self.terms(a)
            am.wealth_cents = sum(am.wealth_terms.values())
            am.wealth_curve = corners([*am.wealth_curve, [self.match.final_tick, am.wealth_cents]])
            am.wealth_start_cents = items_cents(self.content, self.start[a])


def corners(points: list[list[int]]) -> list[list[int]]:
    """Drop samples inside a run of equal values: the first and last of each run keep the shape."""
    return [p for i, p in enumerate(points)
            if i == 0 or i == len(points) - 1 or p[1] != points[i - 1][1] or p[1] != points[i + 1][1]]
