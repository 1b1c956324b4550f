"""Per-provider limits on model calls, shared by every worker of a sweep: how many may be in flight at once and how
many may start per minute. One `ProviderLimits` object lives in a manager process (the local pool) or in a Ray
actor, and workers hold a handle to it. It also keeps the peak number in flight per provider, which the sweep's
outcome reports."""

from __future__ import annotations

import threading
import time
from multiprocessing.managers import BaseManager
from typing import Any


class ProviderLimits:
    """A counting semaphore per limited provider, and per rated provider a spacing between call starts (60 / rate
    seconds); a provider with neither is never held back."""

    def __init__(self, limits: dict[str, int], rates: dict[str, float] | None = None):
        self.limits = dict(limits)
        self.rates = dict(rates or {})
        self._cond = threading.Condition()
        self._in_flight: dict[str, int] = {}
        self._peak: dict[str, int] = {}
        self._next_start: dict[str, float] = {}
        self._starts: dict[str, list[float]] = {}

    def acquire(self, provider: str) -> None:
        with self._cond:
            limit = self.limits.get(provider)
            while True:
                if limit is not None and self._in_flight.get(provider, 0) >= limit:
                    self._cond.wait()
                    continue
                wait = self._next_start.get(provider, 0.0) - time.monotonic()
                if provider in self.rates and wait > 0:
                    self._cond.wait(timeout=wait)
                    continue
                break
            if provider in self.rates:
                self._next_start[provider] = time.monotonic() + 60.0 / self.rates[provider]
            self._starts.setdefault(provider, []).append(time.monotonic())
            now = self._in_flight[provider] = self._in_flight.get(provider, 0) + 1
            self._peak[provider] = max(self._peak.get(provider, 0), now)

    def release(self, provider: str) -> None:
        with self._cond:
            self._in_flight[provider] = max(0, self._in_flight.get(provider, 0) - 1)
            self._cond.notify_all()

    def peaks(self) -> dict[str, int]:
        with self._cond:
            return dict(self._peak)

    def starts(self, provider: str) -> list[float]:
        """When each call of the provider started (monotonic seconds), in order."""
        with self._cond:
            return list(self._starts.get(provider, []))


class _Manager(BaseManager):
    pass


_Manager.register("ProviderLimits", ProviderLimits)


def local_limits(limits: dict[str, int], rates: dict[str, float] | None = None) -> tuple[Any, Any]:
    """A manager process holding the limits and a proxy to them that pool workers can take (stop the manager after)."""
    manager = _Manager(address=("127.0.0.1", 0))
    manager.start()
    return manager, manager.ProviderLimits(limits, rates)


class RayLimiter:
    """A worker's handle on the limits actor: the same acquire/release calls, each a call to the actor."""

    def __init__(self, actor: Any):
        self.actor = actor

    def acquire(self, provider: str) -> None:
        import ray

        ray.get(self.actor.acquire.remote(provider))

    def release(self, provider: str) -> None:
        import ray

        ray.get(self.actor.release.remote(provider))

    def peaks(self) -> dict[str, int]:
        import ray

        return ray.get(self.actor.peaks.remote())
