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
    """The character's wealth in cents under the public formula, valued now: kept per character while
    nothing a term reads may have changed (see `_holding_stamp`); every observation shows it."""
    stamp = _holding_stamp(w, agent)
    kept = w.caches.get("wealth")
    if kept is None:
        kept = w.caches["wealth"] = {}
    held = kept.get(agent)
    if held is None or held[0] != stamp:
        held = kept[agent] = (stamp, sum(wealth_terms(w, agent).values()))
    return held[1]


def _holding_stamp(w: World, agent: str) -> tuple:
    """What changes whenever a term of the agent's wealth may: what it carries and what each of its escrows and
    deposits holds (`World.holdings`, which also says when one is opened or emptied: the lists change), a structure
    placed or removed (`World.builds`) or any construction event (a structure damaged or repaired, by anyone), and
    its reputation and attribute levels themselves (its messages change neither, and name it)."""
    holdings = w.holdings
    return (holdings.get(agent), [(h, holdings.get(h)) for h in market.dealings(w, agent).escrows],
            [(h, holdings.get(h)) for h in deposit_holders(w, agent)], w.builds, w.part_changes[CONSTRUCTION.name],
            society.reputation_of(w, agent), society.attribute_levels(w, agent))


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
