"""Read-only records for observations: what observations share (kept between calls, or with other characters) is
built from these, so that no receiver can change what another receiver is shown, or the world.

They are a dict and a list that refuse writes: they serialise, compare and read as the plain ones do, and a copy
(`dict(r)`, `list(r)`, a slice, `copy.copy`) is a plain, writable one.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

REFUSED = "an observation's shared records are read-only: copy one (dict(r), list(r)) to change it"


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(REFUSED)


class ReadOnlyDict(dict):
    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return ReadOnlyDict, (dict(self),)


class ReadOnlyList(list):
    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return ReadOnlyList, (list(self),)


def freeze(x: Any) -> Any:
    """`x` with every dict and list in it read-only (copies of those that are not already: the world's own stay
    writable)."""
    t = type(x)
    if t is dict:
        return ReadOnlyDict({k: freeze(v) for k, v in x.items()})
    if t is list:
        return ReadOnlyList([freeze(v) for v in x])
    return x
