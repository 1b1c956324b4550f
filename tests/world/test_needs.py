"""`Needs.affordable`: the names whose needs an inventory covers, one comparison over a matrix, agrees with asking
`carries` of each row."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wildhold.world.actions.needs import Needs
from wildhold.world.actions.registry import carries
from wildhold.world.state import Character

ITEMS = ["wood", "stone", "fibre", "iron", "berry"]
tables = st.dictionaries(st.text("abcdef", min_size=1, max_size=3),
                         st.dictionaries(st.sampled_from(ITEMS), st.integers(0, 4), max_size=3), max_size=8)
packs = st.dictionaries(st.sampled_from(ITEMS + ["gem"]), st.integers(0, 5), max_size=6)


@settings(max_examples=200, deadline=None)
@given(needs=tables, inventory=packs)
def test_affordable_is_carries_of_each_row(needs, inventory):
    holder = Character(id="a1", name="a", pos=0, health=1, energy=1, satiety=1, inventory=inventory)
    assert Needs(needs).affordable(inventory) == {name for name, wanted in needs.items() if carries(holder, wanted)}
