"""The host of a served match, without any face: registry and tokens, lobby, limits, activity, archive."""

from __future__ import annotations

import pytest
from server_support import ADMIN, SIGNUP, config

from wildhold.service import reads
from wildhold.service.access import HostConfig, RateLimiter
from wildhold.service.errors import HostError
from wildhold.service.host import Host
from wildhold.service.match import replay
from wildhold.store.archive import Archive
from wildhold.store.sqlite import StoreError
from wildhold.world.errors import Rejected
from wildhold.world.events import validate_event


@pytest.fixture
def host(tmp_path):
    h = Host.open(tmp_path / "m", config(), "tiny", 3, manifest_extra={"tools_hash": "abc"})
    yield h
    h.close()


def codes(fn) -> str:
    with pytest.raises(HostError) as exc:
        fn()
    return exc.value.code


def test_config_refuses_settings_that_make_a_match_unplayable():
    with pytest.raises(ValueError, match="late join off needs the lobby"):
        config(late_join=False).check()
    with pytest.raises(ValueError, match="must differ"):
        HostConfig(signup_token=SIGNUP, admin_token=SIGNUP).check()
    with pytest.raises(ValueError, match="spectator tokens must differ"):
        HostConfig(signup_token=SIGNUP, admin_token=ADMIN, spectator_token=ADMIN).check()
    with pytest.raises(ValueError, match="the spectator token must be at least 8"):
        HostConfig(signup_token=SIGNUP, admin_token=ADMIN, spectator_token="short").check()
    with pytest.raises(ValueError, match="at least 8"):
        HostConfig(signup_token="short", admin_token=ADMIN).check()
    with pytest.raises(ValueError, match="clock must be one of"):
        config(clock="turbo").check()


def test_tokens_name_their_role_and_unknown_tokens_are_unauthorised(host):
    token, rec = host.register("ann")
    assert host.access.authenticate(token).record is rec and host.access.authenticate(token).role == "agent"
    assert host.access.authenticate(SIGNUP).role == "signup" and host.access.authenticate(ADMIN).role == "admin"
    assert codes(lambda: host.access.authenticate("nope-nope")) == "unauthorised"
    assert codes(lambda: host.access.authenticate(None)) == "unauthorised"
    assert codes(lambda: host.access.agent_of(host.access.authenticate(ADMIN))) == "forbidden"


def test_names_are_checked_and_unique(host):
    host.register("ann")
    assert codes(lambda: host.register("ann")) == "name_taken"
    assert codes(lambda: host.register("")) == "bad_request"
    assert codes(lambda: host.register("x" * 41)) == "bad_request"


def test_lobby_holds_agents_out_of_the_world_until_the_start(tmp_path):
    h = Host.open(tmp_path / "m", config(lobby=True, late_join=False), "tiny", 3)
    try:
        token, rec = h.register("ann")
        h.register("bob")
        assert rec.agent is None and h.world.chars == {}
        assert codes(lambda: h.access.agent_of(h.access.authenticate(token))) == "not_started"
        started = h.start()
        assert started["agents"] == ["a1", "a2"] and rec.agent == "a1"
        assert codes(lambda: h.register("cat")) == "late_join_refused"
        assert codes(h.start) == "already_started"
    finally:
        h.close()


def test_the_operator_seats_an_agent_on_a_character_already_in_the_world_and_the_start_joins_only_the_others(tmp_path):
    from wildhold.service.match import Match

    (tmp_path / "m").mkdir(mode=0o700)
    match = Match.create("tiny", 3, tmp_path / "m" / "match.sqlite", clock="lockstep")  # a fork's history: ann is in
    match.join("ann", policy="producer")
    match.close()
    h = Host.open(tmp_path / "m", config(lobby=True), "tiny", 3)
    try:
        token, rec = h.seat("ann", {"model": "replay/explorer-v1"})
        assert rec.agent == "a1" and h.access.agent_of(h.access.authenticate(token)) == "a1"
        assert codes(lambda: h.seat("ann")) == "name_taken" and codes(lambda: h.seat("zed")) == "not_found"
        h.register("bob")
        assert h.start()["agents"] == ["a1", "a2"] and sorted(c.name for c in h.world.chars.values()) == ["ann", "bob"]
        h.stop()
        assert codes(lambda: h.seat("bob")) == "match_over"
    finally:
        h.close()


def test_late_join_enters_the_world_at_once(tmp_path):
    h = Host.open(tmp_path / "m", config(lobby=True, late_join=True), "tiny", 3)
    try:
        h.register("ann")
        h.start()
        _, rec = h.register("cat")
        assert rec.agent == "a2" and "a2" in h.world.chars
    finally:
        h.close()


def test_full_match_and_ended_match_close_registration(tmp_path):
    h = Host.open(tmp_path / "m", config(max_agents=1), "tiny", 3)
    try:
        h.register("ann")
        assert codes(lambda: h.register("bob")) == "lobby_closed"
        h.stop()
        assert codes(lambda: h.register("cat")) == "lobby_closed"
    finally:
        h.close()


def test_rate_limiter_allows_a_burst_then_says_how_long_to_wait():
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=3, now=lambda: now[0])
    assert [limiter.take("t") for _ in range(3)] == [None, None, None]
    wait = limiter.take("t")
    assert wait == pytest.approx(0.5)
    assert limiter.take("other") is None
    now[0] += 0.5
    assert limiter.take("t") is None


def test_throttle_refuses_with_rate_limited_and_the_wait(tmp_path):
    h = Host.open(tmp_path / "m", config(rate_per_s=0.5, rate_burst=1), "tiny", 3)
    try:
        token, _ = h.register("ann")
        who = h.access.authenticate(token)
        h.access.throttle(who)
        with pytest.raises(HostError) as exc:
            h.access.throttle(who)
        assert exc.value.code == "rate_limited" and exc.value.retry_after > 0
    finally:
        h.close()


def test_actions_return_operations_and_rejections_change_nothing(host):
    _, rec = host.register("ann")
    bad = host.submit(rec.agent, "eat", {"item": "bread"})
    assert isinstance(bad, Rejected) and bad.code == "not_in_inventory"
    op = host.submit(rec.agent, "wait", {"ticks": 2})
    assert op["status"] == "running" and op["ends"] == host.world.tick + 2
    for _ in range(2):
        host.clock.step()
    assert host.operations.operation(rec.agent, op["op"])["status"] == "completed"


def test_an_agent_cannot_read_another_agents_operation(host):
    _, ann = host.register("ann")
    _, bob = host.register("bob")
    op = host.submit(ann.agent, "wait", {"ticks": 2})
    assert codes(lambda: host.operations.operation(bob.agent, op["op"])) == "forbidden"
    assert codes(lambda: host.operations.operation(ann.agent, "op999")) == "unknown_operation"


def test_lockstep_turn_is_ready_only_when_every_active_agent_is_busy(host):
    _, ann = host.register("ann")
    _, bob = host.register("bob")
    assert not host.clock.turn_ready()
    host.submit(ann.agent, "wait", {"ticks": 3})
    assert not host.clock.turn_ready()
    host.submit(bob.agent, "wait", {"ticks": 1})
    assert host.clock.turn_ready()
    host.clock.step()
    assert not host.clock.turn_ready()  # bob's wait ended: the world waits for bob again


def test_silence_is_logged_once_as_agent_idle_and_replays_exactly(tmp_path):
    h = Host.open(tmp_path / "m", config(idle_after_ticks=5), "tiny", 3)
    try:
        _, ann = h.register("ann")
        _, bob = h.register("bob")
        for _ in range(8):
            h.submit(bob.agent, "wait", {"ticks": 1})
            h.clock.step()
        idle = [e for e in h.match.store.events(0) if e[2] == "agent_idle"]
        assert len(idle) == 1 and h.clock.idle == {ann.agent}
        assert ann.agent not in h.clock.active_agents()
        h.submit(ann.agent, "wait", {"ticks": 1})
        assert ann.agent in h.clock.active_agents()
        h.stop()
        with Archive(h.archives.path) as arc:
            m = arc.manifest
            events = [e for e in arc.events() if e["kind"] == "agent_idle"]
            world = replay(h.content, m["scenario"], m["seed"], arc.inputs(), m["final_tick"])
        assert world.events.head == m["chain_head"]
        validate_event("agent_idle", events[0]["data"])
        assert events[0]["data"]["agent"] == ann.agent and events[0]["data"]["idle_ticks"] >= 5
    finally:
        h.close()


def test_archive_carries_clock_settings_tool_hash_and_epilogues_never_scored(host):
    _, ann = host.register("ann", {"model": "m-1", "harness": "h-1"})
    saved = host.archives.write_epilogue(ann.agent, "I gathered wood and waited out the rain.")
    assert saved["scored"] is False
    assert codes(lambda: host.archives.write_epilogue(ann.agent, "  ")) == "bad_request"
    host.stop()
    with Archive(host.archives.path) as arc:
        m = arc.manifest
    assert m["clock"] == "lockstep" and m["server"]["clock"] == "lockstep" and m["tools_hash"] == "abc"
    assert m["epilogues"][ann.agent]["text"].startswith("I gathered wood")
    assert m["agents"][0]["model"] == "m-1" and m["agents"][0]["harness"] == "h-1"
    assert "token" not in str(m).lower().replace("tools_hash", "")


def test_an_epilogue_written_after_the_end_updates_the_archive(host):
    _, ann = host.register("ann")
    host.stop()
    host.archives.write_epilogue(ann.agent, "Late words.")
    with Archive(host.archives.path) as arc:
        assert arc.manifest["epilogues"][ann.agent]["text"] == "Late words."


def test_a_restart_keeps_tokens_characters_and_operations(tmp_path):
    h = Host.open(tmp_path / "m", config(), "tiny", 3)
    token, ann = h.register("ann")
    op = h.submit(ann.agent, "wait", {"ticks": 2})
    h.close()
    again = Host.open(tmp_path / "m", config(), "tiny", 3)
    try:
        assert again.access.authenticate(token).record.agent == ann.agent
        assert again.operations.operation(ann.agent, op["op"])["status"] == "running"
        again.clock.step()
        again.clock.step()
        assert again.operations.operation(ann.agent, op["op"])["status"] == "completed"
    finally:
        again.close()


def test_resuming_with_other_settings_is_refused(tmp_path):
    Host.open(tmp_path / "m", config(), "tiny", 3).close()
    with pytest.raises(StoreError, match="clock 'lockstep', not 'realtime'"):
        Host.open(tmp_path / "m", config(clock="realtime"), "tiny", 3)
    with pytest.raises(StoreError, match="seed"):
        Host.open(tmp_path / "m", config(), "tiny", 4)


def test_spectator_state_shows_no_position_or_inventory(host):
    host.register("ann")
    state = reads.spectator_state(host)
    assert state["agents"] == [{"agent": "a1", "name": "ann", "rank": 1}]
    flat = str(state)
    assert "inventory" not in flat and "'x'" not in flat and "memory" not in flat
