"""The public wealth formula (seed 003) in exact integer cents, and the one ranking rule.

`formula_terms` is the formula: the live world's standings (`wealth_terms` over the state) and
reports (holdings rebuilt from an archive's events) both value what a character holds with it.
Exact ties share a rank (standard competition ranking: 1, 1, 3); `rank_standard` is the only
function that turns wealth into ranks, so every board, report and rating agrees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from wildhold.content import Content
from wildhold.world import kept
from wildhold.world.actions.needs import per_content
from wildhold.world.kept import KeptMismatch
from wildhold.world.parts import society
from wildhold.world.parts.dealings import dealings, dealt_stamp, escrows_of
from wildhold.world.parts.construction import CONSTRUCTION, DEPOSIT, deposit_holders, deposits_of

if TYPE_CHECKING:
    from wildhold.content.models import WealthSpec
    from wildhold.world.world import World

def formula_summary(c: Content) -> str:
    """The formula in one line, with its weights: shown to every character on every observation."""
    w = c.wealth
    return (
        "wealth (cents) = carried items x value + escrowed items x value + owned intact structures x value x hp/max_hp"
        f" + net storehouse deposits x value + reputation x {w.reputation_cents} + attribute levels x {w.attribute_level_cents}"
    )


def items_cents(c: Content, items: Mapping[str, int]) -> int:
    """Items at the content's values; one the content does not know (an archive of other content) is worth nothing."""
    return _at_values(item_values(c), items)


def item_values(c: Content) -> dict[str, int]:
    """Each item's value in cents: content, so read once per content into one table (the formula is revalued on
    many observations, and `items_cents` and the kept wealth read the same table)."""
    return per_content(c, "item_values", lambda: {name: item.value_cents for name, item in c.items.items()})


def structure_cents(c: Content, kind: str, hp: int) -> int:
    """An owned structure's share of its value, value x hp / max_hp; nothing once its hp is gone."""
    spec = c.structures.get(kind)
    return spec.value_cents * hp // spec.hp if spec is not None and hp > 0 else 0


def formula_terms(c: Content, *, carried: Mapping[str, int], escrowed: Iterable[Mapping[str, int]],
                  structures: Iterable[tuple[str, int]], deposits: Mapping[str, int], reputation: int,
                  attribute_levels: int) -> dict[str, int]:
    """Each term of the formula in cents, from what one character holds: carried items, the contents
    of its escrows, its structures as (kind, hp), its net deposits, its reputation and attribute levels."""
    w = c.wealth
    return {
        "carried": items_cents(c, carried),
        "escrowed": sum(items_cents(c, held) for held in escrowed),
        "structures": sum(structure_cents(c, kind, hp) for kind, hp in structures),
        "deposits": items_cents(c, deposits),
        "reputation": reputation * w.reputation_cents,
        "attributes": attribute_levels * w.attribute_level_cents,
    }


def wealth_terms(w: World, agent: str) -> dict[str, int]:
    """Each term of the formula for one character, valued now; `wealth_cents` is their sum."""
    return formula_terms(
        w.content,
        carried=w.chars[agent].inventory,
        escrowed=[w.containers.get(holder, {}) for holder in escrows_of(w, agent)],
        structures=[(s.kind, s.hp) for s in w.structures_of(agent)],
        deposits=deposits_of(w, agent),
        reputation=society.reputation_of(w, agent),
        attribute_levels=society.attribute_levels(w, agent),
    )


def wealth_cents(w: World, agent: str) -> int:
    """The character's wealth in cents under the public formula, valued now; every observation shows it. Kept per
    character term by term (`_Valued`), each revalued only when what it reads may have changed: an escrow filled or
    a structure placed anywhere costs the one term it may change, not the whole formula. Checking what is kept
    (`world.kept`), the kept sum is compared with `wealth_terms` valued afresh."""
    cents = valued(w, agent).cents(w)
    if kept.CHECKING and cents != sum(wealth_terms(w, agent).values()):
        raise KeptMismatch(f"{agent} at tick {w.tick}: wealth {cents} kept against {wealth_terms(w, agent)} afresh")
    return cents


def valued(w: World, agent: str) -> _Valued:
    """The character's kept wealth (`_Valued`): its sections keep it to ask `cents` without looking it up."""
    held_all = w.kept.wealth
    if held_all is None:
        held_all = w.kept.wealth = {}
    held = held_all.get(agent)
    if held is None:
        held = held_all[agent] = _Valued(agent, item_values(w.content), w.content.wealth)
    return held


_UNVALUED = object()  # the stamp of a term not valued yet: equal to no stamp


class _Valued:
    """One character's wealth as `wealth_cents` keeps it: each group of terms with the stamp it was valued at.

    - `carried`, what it carries: while `World.holdings` counts no change of it;
    - `structures`, its owned structures: while no structure is placed or removed (`World.builds`: who owns which)
      and no construction event is emitted (a structure's hit points change only with one: damaged or repaired);
    - `holders`, its escrows and deposits: while no market event names it or no one (`dealt`, its
      `dealt_stamp`: which escrows it has and what they hold change only with a market event naming it) and no
      deposit changed (`deposited`: `World.stored_in`'s count of deposits) or, when one did, while which escrows and
      deposits it has and the sum of their `World.holdings` counters stay (`contents`): those only grow, so for the
      same containers the sum changes whenever what one of them holds does, and which it has changes only with items
      moved into or out of one or with an empty one, which counts for nothing;
    - reputation and attribute levels are read afresh each time (two lookups), or passed by a caller that read them.
    The sum equals `sum(wealth_terms(w, agent).values())`: the same terms, valued by the same functions."""

    __slots__ = ("agent", "values", "reputation_cents", "level_cents", "carried_at", "carried", "built", "hit",
                 "structures", "dealt", "deposited", "deposits", "contents", "holders")

    def __init__(self, agent: str, values: dict[str, int], rates: WealthSpec) -> None:
        self.agent, self.values = agent, values  # `values`: its content's item values (`item_values`)
        self.reputation_cents, self.level_cents = rates.reputation_cents, rates.attribute_level_cents
        self.carried_at = self.built = self.hit = self.dealt = self.deposited = self.contents = _UNVALUED
        self.carried = self.structures = self.holders = 0
        self.deposits: list[str] = []  # its deposits' holders, read when `deposited` last moved

    def cents(self, w: World, dealt: tuple[int | None, int | None] | None = None, escrows: list[str] | None = None) -> int:
        """The wealth now; `dealt` and `escrows`, when the caller read them already, are the character's
        `dealt_stamp` and its dealings' escrows at that stamp."""
        agent = self.agent
        standing = w.states[society.SOCIETY.name]
        levels = standing.attributes.get(agent)
        return self.at(w, w.holdings.get(agent), w.builds, w.part_changes[CONSTRUCTION.name],
                       dealt_stamp(w, agent) if dealt is None else dealt, escrows,
                       standing.reputation.get(agent, 0), sum(levels.values()) if levels else 0)

    def at(self, w: World, carried_at: int | None, built: int, hit: int, dealt: tuple[int | None, int | None],
           escrows: list[str] | None, reputation: int, levels: int) -> int:
        """The wealth at the stamps `cents` reads (its `World.holdings` counter, `World.builds`, construction's event
        count and its `dealt_stamp`), its reputation and the sum of its attribute levels: a caller that read
        them already (its economy section) passes them; `escrows`, when known, are its dealings' at `dealt`."""
        if self.carried_at != carried_at:
            self.carried_at, self.carried = carried_at, _at_values(self.values, w.chars[self.agent].inventory)
        if self.built != built or self.hit != hit:
            self.built, self.hit = built, hit
            self.structures = sum(structure_cents(w.content, s.kind, s.hp) for s in w.structures_of(self.agent))
        deposited = w.stored_in.get(DEPOSIT)
        if self.dealt != dealt or self.deposited != deposited:
            self.dealt = dealt
            if self.deposited != deposited:
                self.deposited, self.deposits = deposited, deposit_holders(w, self.agent)
            self._contents(w, dealings(w, self.agent, dealt).escrows if escrows is None else escrows)
        return self.carried + self.structures + self.holders + reputation * self.reputation_cents + levels * self.level_cents

    def _contents(self, w: World, escrows: list[str]) -> None:
        """Revalue the escrowed and deposited terms if which containers it has (these escrows, then its deposits) or
        what they hold changed."""
        holders, holdings, changes = escrows + self.deposits, w.holdings, 0
        for holder in holders:  # a few: no list built
            changes += holdings.get(holder, 0)
        contents = holders, changes
        if self.contents != contents:
            self.contents, self.holders = contents, _holders_cents(self.values, w.containers, holders)


def _holders_cents(values: dict[str, int], containers: dict[str, dict[str, int]], holders: list[str]) -> int:
    """The escrowed and deposited terms of a wealth: what these containers hold, at the content's values (the sum of
    `wealth_terms`' two terms: a value is linear in the quantities, so per container or merged is the same)."""
    return sum([_at_values(values, containers[h]) for h in holders if h in containers])


def _at_values(values: dict[str, int], items: Mapping[str, int]) -> int:
    """Items at these values (`item_values`): the carried, escrowed and deposited terms, kept or afresh. An item the
    content does not know is worth nothing."""
    cents = 0
    for item, qty in items.items():  # a few: no list built
        if item in values:
            cents += values[item] * qty
    return cents


def rank_standard(values: dict[str, int]) -> dict[str, int]:
    """Standard competition ranking, highest value first: exact ties share a rank and the next
    rank skips (1, 1, 3). Never broken by id, order of joining or anything else that is not play."""
    ordered = sorted(values.values(), reverse=True)
    first: dict[int, int] = {}
    for i, v in enumerate(ordered):
        first.setdefault(v, i + 1)
    return {agent: first[v] for agent, v in values.items()}


def wealth_table(w: World) -> list[tuple[str, int, int]]:
    """(agent, cents, rank) for every character, richest first; ties listed by id for display only."""
    cents = {agent: wealth_cents(w, agent) for agent in w.chars}
    ranks = rank_standard(cents)
    return sorted(((a, v, ranks[a]) for a, v in cents.items()), key=lambda row: (-row[1], row[0]))
