"""The public wealth formula (seed 003) in exact integer cents, and the one ranking rule.

Exact ties share a rank (standard competition ranking: 1, 1, 3); `rank_standard` is the only
function that turns wealth into ranks, so every board, report and rating agrees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wildhold.content import Content
from wildhold.world.parts import market, society
from wildhold.world.parts.construction import deposits_of

if TYPE_CHECKING:
    from wildhold.world.world import World

def formula_summary(c: Content) -> str:
    """The formula in one line, with its weights: shown to every character on every observation."""
    w = c.wealth
    return (
        "wealth (cents) = carried items x value + escrowed items x value + owned intact structures x value x hp/max_hp"
        f" + net storehouse deposits x value + reputation x {w.reputation_cents} + attribute levels x {w.attribute_level_cents}"
    )


def _value(c: Content, items: dict[str, int]) -> int:
    return sum(c.items[item].value_cents * qty for item, qty in items.items())


def wealth_terms(w: World, agent: str) -> dict[str, int]:
    """Each term of the formula for one character, in cents; `wealth_cents` is their sum."""
    c, content = w.chars[agent], w.content
    escrowed = 0
    for holder in market.escrows_of(w, agent):
        escrowed += _value(content, w.containers.get(holder, {}))
    structures = 0
    for s in w.structures.values():
        if s.owner == agent and s.hp > 0:
            spec = content.structures[s.kind]
            structures += spec.value_cents * s.hp // spec.hp
    return {
        "carried": _value(content, c.inventory),
        "escrowed": escrowed,
        "structures": structures,
        "deposits": _value(content, deposits_of(w, agent)),
        "reputation": society.reputation_of(w, agent) * content.wealth.reputation_cents,
        "attributes": society.attribute_levels(w, agent) * content.wealth.attribute_level_cents,
    }


def wealth_cents(w: World, agent: str) -> int:
    """The character's wealth in cents under the public formula, valued now."""
    return sum(wealth_terms(w, agent).values())


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
