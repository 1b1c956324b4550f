"""A served match on a full disk: a change whose write fails is refused with `storage_unavailable` (503, a retry
time) and nothing acknowledged is lost; the world pauses, the health says `degraded` with the cause, and once the
store takes writes again the match goes on (or resumes after a restart) with every acknowledged action in it once.
A clock that fails for another reason stops, and says so. The full disk is SQLite's page limit."""

from __future__ import annotations

from collections import Counter

import pytest
from server_support import ADMIN, auth, config, serving, until

from wildhold.service import clock as clock_module
from wildhold.service import reads
from wildhold.service.errors import HostError
from wildhold.service.host import Host
from wildhold.service.verify import verify_archive
from wildhold.store.sqlite import MatchStore

UNLIMITED = 1073741823
SAYER = 'n = 0\nwhile True:\n    say(text="program " + str(n))\n    n += 1\n    wait(ticks=1)\n'


@pytest.fixture
def anyio_backend():
    return "asyncio"


def fill(host: Host) -> None:
    db = host.match.store.db
    db.execute(f"PRAGMA max_page_count={db.execute('PRAGMA page_count').fetchone()[0]}")


def free(host: Host) -> None:
    host.match.store.db.execute(f"PRAGMA max_page_count={UNLIMITED}")


class Agent:
    """An agent that says a new line each turn and keeps what it was told: accepted, or refused with a code."""

    def __init__(self, host: Host, name: str):
        self.host, self.agent = host, host.register(name)[1].agent
        self.acked: list[str] = []
        self.refusals: Counter[str] = Counter()
        self.n = 0

    def turn(self) -> None:
        self.n += 1
        text = f"{self.agent} says {self.n} " + "x" * 100
        try:
            self.host.submit(self.agent, "say", {"text": text})
        except HostError as exc:
            self.refusals[exc.code] += 1
            assert exc.code == "storage_unavailable" and exc.retry_after > 0, exc
            return
        self.acked.append(text)
        try:
            self.host.clock.step()
        except HostError as exc:
            assert exc.code == "storage_unavailable"


def said(data) -> Counter[str]:
    store = MatchStore(data / "match.sqlite")
    try:
        return Counter(inp.args["text"] for inp in store.inputs() if inp.kind == "action" and inp.name == "say")
    finally:
        store.close()


def test_a_full_disk_refuses_changes_pauses_the_world_and_the_match_goes_on_when_space_returns(tmp_path):
    host = Host.open(tmp_path / "m", config(), "tiny", 3)
    try:
        ann = Agent(host, "ann")
        bob = host.register("bob")[1].agent
        host.programs.save(bob, "sayer", SAYER)
        host.programs.start(bob, "sayer")
        for _ in range(5):
            ann.turn()
        fill(host)
        while ann.refusals["storage_unavailable"] < 20:
            ann.turn()
        frozen = host.world.tick
        for _ in range(10):
            ann.turn()
        assert host.world.tick == frozen and ann.refusals["storage_unavailable"] == 30
        health = reads.metrics(host)["health"]
        assert health["degraded"] and "database or disk is full" in health["cause"]

        free(host)
        assert host.recover() and host.health.cause is None
        for _ in range(5):
            ann.turn()
        assert host.world.tick > frozen and host.programs.status(bob, "sayer")["state"] in ("running", "waiting")
        host.stop()
        archive = host.archives.path
    finally:
        host.close()
    stored = said(tmp_path / "m")
    assert all(stored[text] == 1 for text in ann.acked)  # every acknowledged action, once
    assert max(stored.values()) == 1  # the program's lines too: a turn the disk refused is taken again, not twice
    verify_archive(archive)  # re-simulated from its seed and inputs, programs and all


def test_after_a_full_disk_a_restart_resumes_with_every_acknowledged_action_once(tmp_path):
    host = Host.open(tmp_path / "m", config(), "tiny", 3)
    ann = Agent(host, "ann")
    for _ in range(5):
        ann.turn()
    fill(host)
    while ann.refusals["storage_unavailable"] < 5:
        ann.turn()
    host.close()  # still full: no final snapshot, the log is what the restart replays

    again = Host.open(tmp_path / "m", config(), "tiny", 3)
    try:
        assert again.health.cause is None and again.state == "running"
        again.submit(ann.agent, "say", {"text": "after the restart"})
        again.stop()
        archive = again.archives.path
    finally:
        again.close()
    stored = said(tmp_path / "m")
    assert all(stored[text] == 1 for text in ann.acked) and stored["after the restart"] == 1
    verify_archive(archive)


@pytest.mark.anyio
async def test_the_faces_refuse_with_a_retry_time_and_health_says_degraded_with_the_cause(tmp_path):
    async with serving(tmp_path / "m") as served:
        token, _ = await served.register("ann")
        assert (await served.http.get("/api/health")).json() == {"ok": True, "status": "running", "tick": served.host.world.tick,
                                                                  "cause": None}
        fill(served.host)
        refused = None
        for i in range(500):  # a say refused as busy is a recorded input too: each one writes
            r = await served.http.post("/api/actions/say", json={"text": f"line {i} " + "x" * 200}, headers=auth(token))
            if r.status_code not in (200, 409):
                refused = r
                break
        assert refused is not None and refused.status_code == 503, refused and refused.text
        body = refused.json()
        assert body["code"] == "storage_unavailable" and body["retry_after_s"] > 0 and refused.headers["Retry-After"]
        health = await served.http.get("/api/health")
        assert health.status_code == 503 and health.json()["status"] == "degraded"
        assert "database or disk is full" in health.json()["cause"]
        metrics = (await served.http.get("/api/metrics", headers=auth(ADMIN))).json()
        assert metrics["health"]["degraded"] and metrics["health"]["storage"]

        free(served.host)
        assert served.host.recover()
        assert (await served.http.get("/api/health")).json()["status"] == "running"
        assert (await served.http.post("/api/actions/cancel", json={}, headers=auth(token))).status_code in (200, 409)


@pytest.mark.anyio
async def test_the_clock_pauses_while_the_disk_is_full_and_goes_on_when_space_returns(tmp_path, monkeypatch):
    monkeypatch.setattr(clock_module, "STORAGE_RETRY_S", 0.01)
    async with serving(tmp_path / "m", clock="fast") as served:
        host = served.host
        await served.register("ann")
        assert await until(lambda: host.world.tick > host.world.start_tick + 10)
        fill(host)
        assert await until(lambda: host.health.storage is not None)
        paused, failures = host.world.tick, host.health.storage_failures
        assert await until(lambda: host.health.storage_failures >= failures + 5)  # tried again, still refused
        assert host.world.tick == paused and host.clock.running
        free(host)
        assert await until(lambda: host.health.cause is None and host.world.tick > paused + 10)


@pytest.mark.anyio
async def test_a_clock_that_fails_stops_and_says_why(tmp_path, monkeypatch):
    async with serving(tmp_path / "m", clock="fast") as served:
        host = served.host

        def broken() -> None:
            raise RuntimeError("a fault in the world")

        monkeypatch.setattr(host.match, "step", broken)
        await served.register("ann")
        assert await until(lambda: not host.clock.running)
        assert host.health.clock == f"the clock stopped at tick {host.world.tick}: RuntimeError: a fault in the world"
        health = await served.http.get("/api/health")
        assert health.status_code == 503 and health.json()["cause"] == host.health.clock


@pytest.mark.parametrize("change", ["register", "setup", "epilogue", "snapshot"])
def test_every_change_is_refused_while_the_store_takes_no_writes(tmp_path, change):
    host = Host.open(tmp_path / "m", config(), "tiny", 3)
    try:
        ann = host.register("ann")[1].agent
        fill(host)
        with pytest.raises(HostError):  # the write that finds the disk full
            for i in range(500):
                host.submit(ann, "say", {"text": f"line {i} " + "x" * 200})
        calls = {"register": lambda: host.register("bob"), "setup": lambda: host.setup("set_time", {"tick": 900}),
                 "epilogue": lambda: host.archives.write_epilogue(ann, "Last words."),
                 "snapshot": lambda: host.archives.snapshot()}
        with pytest.raises(HostError) as refused:
            calls[change]()
        assert refused.value.code == "storage_unavailable"
    finally:
        host.close()
