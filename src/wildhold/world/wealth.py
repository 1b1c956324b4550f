"""The public wealth formula (seed 003) in exact integer cents, and the one ranking rule.

`formula_terms` is the formula: the live world's standings (`wealth_terms` over the state) and
reports (holdings rebuilt from an archive's events) both value what a character holds with it.
Exact ties share a rank (standard competition ranking: 1, 1, 3); `rank_standard` is the only
function that turns wealth into ranks, so every board, report and rating agrees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from wildhold.content import Content
from wildhold.world.parts import market, society
from wildhold.world.parts.construction import CONSTRUCTION, deposit_holders, deposits_of

if TYPE_CHECKING:
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
    table = c.items
    return sum(table[item].value_cents * qty for item, qty in items.items() if item in table)


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
        escrowed=[w.containers.get(holder, {}) for holder in market.escrows_of(w, agent)],
        structures=[(s.kind, s.hp) for s in w.structures_of(agent)],
        deposits=deposits_of(w, agent),
        reputation=society.reputation_of(w, agent),
        attribute_levels=society.attribute_levels(w, agent),
    )


def wealth_cents(w: World, agent: str) -> int:
    """The character's wealth in cents under the public formula, valued now; every observation shows it. Kept per
    character in two shares: what it carries, while `World.holdings` counts no change of it, and the other terms,
    while `standing_counters` stay and, when a container changed since (`World.stored`), while its escrows and
    deposits and what they hold stay (`_contents`)."""
    kept = w.caches.get("wealth")
    if kept is None:
        kept = w.caches["wealth"] = {}
    counters = standing_counters(w, agent)
    held = kept.get(agent)
    if held is None or held.counters != counters:
        held = kept[agent] = _Valued(w, agent, counters)
    elif held.stored != w.stored:
        held.stored = w.stored
        if _contents(w, agent) != held.contents:
            held = kept[agent] = _Valued(w, agent, counters)
    carried_at = w.holdings.get(agent)
    if held.carried_at != carried_at:
        held.carried_at, held.carried = carried_at, items_cents(w.content, w.chars[agent].inventory)
    return held.others + held.carried


class _Valued:
    """One character's wealth as `wealth_cents` keeps it: the terms other than the carried items (`others`) with the
    stamps they hold under, and the carried items' cents with the count of `World.holdings` they were valued at."""

    __slots__ = ("counters", "stored", "contents", "others", "carried_at", "carried")

    def __init__(self, w: World, agent: str, counters: tuple):
        terms = wealth_terms(w, agent)
        self.counters, self.stored = counters, w.stored
        self.contents = _contents(w, agent)
        self.carried_at, self.carried = w.holdings.get(agent), terms["carried"]
        self.others = sum(terms.values()) - self.carried


def standing_counters(w: World, agent: str) -> tuple:
    """What changes whenever a term of the agent's wealth other than what it carries may, except which escrows it has
    and what they and its deposits hold: a structure placed or removed (`World.builds`) or any construction event (a
    structure damaged or repaired, by anyone), and its reputation and attribute levels themselves."""
    standing = society.state(w)
    levels = standing.attributes.get(agent)
    return (w.builds, w.part_changes[CONSTRUCTION.name], standing.reputation.get(agent, 0),
            sum(levels.values()) if levels else 0)


def _contents(w: World, agent: str) -> tuple:
    """The agent's escrows and deposits and the sum of their `World.holdings` counters: those only grow, so for the
    same holders the sum changes whenever what one of them holds does. Every change of which escrows and deposits it
    has moves items too (an escrow opened with nothing in it counts for nothing), so this changes with them."""
    escrows, deposits = market.dealings(w, agent).escrows, deposit_holders(w, agent)
    if not escrows and not deposits:
        return ()
    holdings = w.holdings
    counts = sum([holdings.get(h, 0) for h in escrows] + [holdings.get(h, 0) for h in deposits])
    return tuple(escrows), tuple(deposits), counts


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
