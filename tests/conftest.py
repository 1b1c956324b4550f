import signal
import threading

import pytest

from wildhold.content import default_content


@pytest.fixture(scope="session")
def content():
    return default_content()


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    """A test past its limit fails with one line naming it and the limit, instead of pytest-timeout's
    dump of every thread's stack (a wall of text that hides which test it was)."""
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # the plugin's own timer

    def expire(signum, frame):
        __tracebackhide__ = True
        pytest.fail(f"{item.nodeid} ran past its {settings.timeout:g} s limit", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout)

    def cancel():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    item.cancel_timeout = cancel
    return True


def pytest_collection_modifyitems(config, items):
    """Longest first: the long end-to-end checks (marked `slow`, with `seconds=` where one is much longer
    than the rest) start before the quick ones, so that parallel workers share them out and the run does
    not end waiting on one long test. The order is otherwise unchanged."""
    items.sort(key=lambda item: -expected_seconds(item))


def expected_seconds(item) -> float:
    mark = item.get_closest_marker("slow")
    return 0.0 if mark is None else mark.kwargs.get("seconds", 10.0)


@pytest.fixture(autouse=True, scope="session")
def user_cache(tmp_path_factory):
    """The user's cache (the verdict key and kept verdicts) of this test session, never the real home's; commands
    the tests start inherit it."""
    import os

    folder = tmp_path_factory.mktemp("user-cache")
    was = os.environ.get("WILDHOLD_CACHE")
    os.environ["WILDHOLD_CACHE"] = str(folder)
    yield folder
    if was is None:
        os.environ.pop("WILDHOLD_CACHE", None)
    else:
        os.environ["WILDHOLD_CACHE"] = was
