"""What characters made: goods produced and their kinds, resources gathered, structures placed."""

from __future__ import annotations

from wildhold.eval.events import ItemMoved, Placed
from wildhold.eval.fold import Fold, MatchInfo, fold, on

PRODUCED = ("gather", "craft", "cook", "harvest", "collect", "produce", "artwork")  # item sources that count as goods


@fold
class Production(Fold):
    """Goods: items gained from a producing source (gathered, crafted, cooked, harvested, collected,
    produced, made as artwork), their kinds, what was gathered; structures placed."""

    writes = ("goods", "goods_kinds", "gathered", "structures_placed")

    def __init__(self, match: MatchInfo) -> None:
        super().__init__(match)
        self.kinds: dict[str, set[str]] = {}

    @on("item_gained")
    def gained(self, tick: int, ev: ItemMoved) -> None:
        am = self.agents.get(ev.holder)
        if am is not None:
            head = ev.source.split(":", 1)[0]
            if head in PRODUCED:
                am.goods += ev.qty
                self.kinds.setdefault(ev.holder, set()).add(ev.item)
                if head == "gather":
                    am.gathered += ev.qty

    @on("structure_placed")
    def placed(self, tick: int, ev: Placed) -> None:
        am = self.agents.get(ev.owner) if ev.owner is not None else None
        if am is not None:
            am.structures_placed += 1

    def finish(self) -> None:
        for a, am in self.agents.items():
            am.goods_kinds = sorted(self.kinds.get(a, ()))
