"""Tables read from content, made once per content (`per_content`): those of the action mask's sifts
(`ActionDef.sift`) and the wealth formula's item values. Among them, what each of a set of named things (recipes,
buildable structures) needs carried, as one matrix over the items any of them needs: the mask asks which of them a
character can afford now in one comparison, not one check each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

import numpy as np

if TYPE_CHECKING:
    from wildhold.content import Content

T = TypeVar("T")


class Needs:
    """Rows: the names, in the order given; columns: every item some row needs; cells: how many of it."""

    def __init__(self, needs: Mapping[str, Mapping[str, int]]):
        self.names = tuple(needs)
        self.items = tuple(sorted({item for wanted in needs.values() for item in wanted}))
        self.matrix = np.array([[wanted.get(item, 0) for item in self.items] for wanted in needs.values()],
                               dtype=np.int64).reshape(len(self.names), len(self.items))

    def affordable(self, inventory: Mapping[str, int]) -> frozenset[str]:
        """The names whose every need the inventory covers (`registry.carries` of each row, at once)."""
        have = np.fromiter((inventory.get(item, 0) for item in self.items), dtype=np.int64, count=len(self.items))
        return frozenset(self.names[k] for k in np.flatnonzero((self.matrix <= have).all(axis=1)).tolist())


_TABLES: dict[tuple[str, str], Any] = {}


def per_content(content: Content, name: str, make: Callable[[], T]) -> T:
    """The table `name` of this content (a `Needs`, a set of item names, the item values), made by `make` once per
    content: content is frozen, and the sifts and the wealth read these tables for every character on every step."""
    table = _TABLES.get((content.digest, name))
    if table is None:
        table = _TABLES[(content.digest, name)] = make()
    return table
