"""The scribbler of the ownership tests: it writes into everything a receiver was handed."""

from __future__ import annotations

from typing import Any

MARK = "scribbled"


def scribble(x: Any) -> None:
    """Write into every container of `x`, deepest first: each value of a dict and each item of a list replaced,
    one key or item added. A container that refuses writes (read-only) is left as it is."""
    if isinstance(x, dict):
        for v in list(x.values()):
            scribble(v)
        for k in list(x):
            _try(x.__setitem__, k, MARK)
        _try(x.__setitem__, MARK, [MARK])
    elif isinstance(x, list):
        for v in list(x):
            scribble(v)
        for i in range(len(x)):
            _try(x.__setitem__, i, MARK)
        _try(x.append, {MARK: MARK})
    elif hasattr(x, "setflags") and x.flags.writeable:  # a numpy array
        x.fill(7)


def _try(write: Any, *args: Any) -> None:
    try:
        write(*args)
    except TypeError:
        pass
