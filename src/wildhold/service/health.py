"""Whether a served match can go on, and why not: its store takes no writes (a full disk), or its clock stopped.

While either holds the host is degraded: `/api/health` says so with the cause, the operator's views show it, and the
log has a line when it begins and one when it ends. A store that takes no writes refuses every change with
`storage_unavailable` (nothing is acknowledged that is not durable) and pauses the clock, which tries the store again
every STORAGE_RETRY_S and, once it takes writes, takes the match up from it as a restart would.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from wildhold.service.errors import HostError

STORAGE_RETRY_S = 2.0


def log(line: str, exc: BaseException | None = None) -> None:
    """One line to the server's log (stderr), with a traceback when given; a log the full disk refuses is skipped."""
    try:
        print(f"wildhold: {line}", file=sys.stderr, flush=True)
        if exc is not None:
            traceback.print_exception(exc, file=sys.stderr)
    except OSError:
        pass


class Health:
    """The causes that degrade a host, each None while it does not hold."""

    def __init__(self) -> None:
        self.storage: str | None = None  # why the store takes no writes
        self.clock: str | None = None  # why the clock stopped
        self.storage_failures = 0  # writes that failed: a change refused, a tick paused, a try of the store

    @property
    def cause(self) -> str | None:
        return self.storage or self.clock

    def storage_failed(self, exc: BaseException, tick: int) -> None:
        self.storage_failures += 1
        if self.storage is None:
            self.storage = f"the match store takes no writes since tick {tick} ({exc})"
            log(f"{self.storage}. Changes are refused (storage_unavailable) and the clock is paused; the store is "
                f"tried again every {STORAGE_RETRY_S:g} s.")

    def storage_back(self, tick: int) -> None:
        if self.storage is not None:
            self.storage = None
            log(f"the match store takes writes again: the match goes on from its store at tick {tick}.")

    def clock_stopped(self, exc: BaseException, tick: int) -> None:
        self.clock = f"the clock stopped at tick {tick}: {type(exc).__name__}: {exc}"
        log(f"{self.clock}; the world no longer advances. Restart the server to resume the match.", exc)

    def refuse_changes(self) -> None:
        if self.storage is not None:
            raise HostError("storage_unavailable", f"{self.storage[0].upper()}{self.storage[1:]}; nothing was changed, "
                            f"retry in {STORAGE_RETRY_S:g} s.", STORAGE_RETRY_S)

    def view(self) -> dict[str, Any]:
        """What the operator's views show."""
        return {"degraded": self.cause is not None, "cause": self.cause, "storage": self.storage, "clock": self.clock,
                "storage_failures": self.storage_failures}
