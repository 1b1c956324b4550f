"""A host's owner may end its match on a condition of its own (a task attempt's limits): looked at after every
tick and every submission, the match then ends and its archive says why; and it may say the season's end does
not end it (a task attempt's set-up may start past it)."""

from __future__ import annotations

from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from wildhold.store.archive import Archive
from wildhold.world.errors import Rejected


def _host(tmp_path) -> Host:
    return Host.open(tmp_path / "m", HostConfig(signup_token="signup-token-1", admin_token="admin-token-1",
                                                clock="lockstep"), "tiny", 3)


def _end_reason(path) -> str:
    with Archive(path) as a:
        return next(i.args["reason"] for i in a.inputs() if i.kind == "end")


def test_the_match_ends_after_the_tick_its_owners_condition_names_a_reason(tmp_path):
    host = _host(tmp_path)
    _, rec = host.register("ann")
    stop = host.world.tick + 3
    host.ends_when = lambda: "tick limit" if host.world.tick >= stop else None
    for _ in range(2):
        host.clock.step()
    assert host.state == "running"
    host.clock.step()
    assert host.state == "over" and host.world.tick == stop
    assert _end_reason(host.archives.path) == "tick limit"
    host.close()


def test_a_submission_that_meets_the_condition_ends_the_match_at_once(tmp_path):
    host = _host(tmp_path)
    _, rec = host.register("ann")
    host.ends_when = lambda: "turn limit" if sum(host.rejections.values()) >= 2 else None
    assert isinstance(host.submit(rec.agent, "eat", {"item": "bread"}), Rejected) and host.state == "running"
    assert isinstance(host.submit(rec.agent, "eat", {"item": "bread"}), Rejected)
    assert host.state == "over" and _end_reason(host.archives.path) == "turn limit"
    host.close()


def test_without_a_condition_the_match_runs_on(tmp_path):
    host = _host(tmp_path)
    host.register("ann")
    for _ in range(5):
        host.clock.step()
    assert host.state == "running"
    host.close()


def test_past_the_season_s_end_only_the_owners_condition_ends_a_match_that_says_so(tmp_path):
    host = _host(tmp_path)
    host.register("ann")
    host.setup("set_season", {"season": "autumn"})  # as a task's set-up may: the tiny season is then over
    assert host.world.finished
    host.season_ends = False  # a task attempt's: its limits alone end it
    host.clock.step()
    assert host.state == "running"
    host.season_ends = True
    host.clock.step()
    assert host.state == "over" and _end_reason(host.archives.path) == "season over"
    host.close()
