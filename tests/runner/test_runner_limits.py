"""Per-provider limits shared by every worker: calls in flight never pass the limit, calls start no closer than
the rate allows, and a provider without limits is never held back; the same object serves a pool's processes."""

from __future__ import annotations

import threading
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from wildhold.runner.limits import ProviderLimits, local_limits


def _hold(limits, provider: str, gate: threading.Event | None = None) -> None:
    limits.acquire(provider)
    try:
        if gate is not None:
            gate.wait(timeout=30)
    finally:
        limits.release(provider)


def test_calls_in_flight_never_pass_the_providers_limit_across_threads():
    limits = ProviderLimits({"replay": 2})
    gate = threading.Event()
    threads = [threading.Thread(target=_hold, args=(limits, "replay", gate)) for _ in range(6)]
    for t in threads:
        t.start()
    for _ in range(200):
        if limits.peaks().get("replay") == 2:
            break
        threading.Event().wait(0.01)
    gate.set()
    for t in threads:
        t.join(timeout=30)
    assert limits.peaks() == {"replay": 2}


def test_calls_start_no_closer_than_the_rate_allows_and_unlimited_providers_pass():
    limits = ProviderLimits({}, {"openai": 6000.0})  # one start per 10 ms
    for _ in range(5):
        _hold(limits, "openai")
        _hold(limits, "anthropic")
    starts = limits.starts("openai")
    assert len(starts) == 5 and all(b - a >= 0.0099 for a, b in zip(starts, starts[1:]))
    assert limits.peaks() == {"openai": 1, "anthropic": 1}


def _worker(limiter) -> None:
    for _ in range(3):
        limiter.acquire("replay")
        threading.Event().wait(0.02)
        limiter.release("replay")


def test_one_limits_object_in_a_manager_process_holds_for_every_pool_worker():
    manager, limiter = local_limits({"replay": 1})
    try:
        with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
            for f in [pool.submit(_worker, limiter) for _ in range(2)]:
                f.result(timeout=120)
        assert limiter.peaks() == {"replay": 1}
        assert len(limiter.starts("replay")) == 6
    finally:
        manager.shutdown()
