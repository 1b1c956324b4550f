"""A match store under writes that fail and writers that collide: a write the disk refuses keeps nothing and leaves
no transaction open, a duplicate event is refused rather than replacing the stored one, and one process writes a
match at a time. The full disk is SQLite's own page limit (`PRAGMA max_page_count`): no special filesystem."""

from __future__ import annotations

import os

import pytest

from wildhold.store.lock import command_line
from wildhold.store.errors import StoreError, StoreLocked, WriteFailed
from wildhold.store.sqlite import MatchStore

UNLIMITED = 1073741823


def fill(store: MatchStore) -> None:
    """The disk is full: the database may not grow past the pages it has."""
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count={pages}")


def free(store: MatchStore) -> None:
    store.db.execute(f"PRAGMA max_page_count={UNLIMITED}")


def said(store: MatchStore) -> list[str]:
    return [inp.args["text"] for inp in store.inputs()]


def until_full(store: MatchStore, write) -> int:
    """Write until the disk refuses; how many writes it took."""
    for n in range(10_000):
        try:
            write(n)
        except WriteFailed:
            return n
    raise AssertionError("the disk never filled")


def test_a_refused_write_inside_a_transaction_keeps_nothing_and_the_next_write_commits(tmp_path):
    store = MatchStore(tmp_path / "m.sqlite")
    store.record_input(0, "action", "a1", "say", {"text": "before"}, "direct")
    fill(store)

    def batch(n: int) -> None:
        with store.transaction():
            store.record_input(1, "action", "a1", "say", {"text": f"in batch {n}"}, "direct")
            store.append_events([(n + 1, 1, "said", b"x" * 3000, f"h{n}")])

    n = until_full(store, batch)
    assert not store.db.in_transaction  # SQLite's own rollback, or ours: nothing stays open to swallow later writes
    free(store)
    seq = store.record_input(2, "action", "a1", "say", {"text": "after"}, "direct")
    store.close()

    again = MatchStore(tmp_path / "m.sqlite")
    try:
        assert said(again) == ["before", *(f"in batch {i}" for i in range(n)), "after"]
        assert seq == n + 2  # numbered on from what was kept: no gap where the refused write was
    finally:
        again.close()


def test_a_failure_an_inner_part_caught_still_rolls_the_whole_transaction_back(tmp_path):
    store = MatchStore(tmp_path / "m.sqlite")
    try:
        fill(store)
        with pytest.raises(WriteFailed):
            with store.transaction():
                store.record_input(0, "action", "a1", "say", {"text": "kept only if all is kept"}, "direct")
                try:
                    with store.transaction():
                        store.append_events([(i, 0, "said", b"x" * 3000, f"h{i}") for i in range(1, 50)])
                except WriteFailed:
                    pass  # a caller that swallows the failure cannot commit the rest
        assert not store.db.in_transaction and said(store) == [] and store.last_input == 0
        free(store)
        store.record_input(0, "action", "a1", "say", {"text": "afresh"}, "direct")
        assert said(store) == ["afresh"]
    finally:
        store.close()


def test_a_duplicate_event_is_an_error_and_the_stored_one_stays(tmp_path):
    store = MatchStore(tmp_path / "m.sqlite")
    try:
        store.append_events([(1, 0, "said", b'{"first": 1}', "h1")])
        with pytest.raises(StoreError, match="already holds that record"):
            store.append_events([(1, 0, "said", b'{"second": 1}', "h2")])
        assert [(seq, bytes(payload), h) for seq, _, _, payload, h in store.events()] == [(1, b'{"first": 1}', "h1")]
    finally:
        store.close()


def test_a_second_writer_in_the_same_process_is_refused_naming_the_holder(tmp_path):
    first = MatchStore(tmp_path / "m.sqlite")
    with pytest.raises(StoreLocked, match=rf"open for writing by pid {os.getpid()} \(.+\), since \d{{4}}-"):
        MatchStore(tmp_path / "m.sqlite")
    with pytest.raises(StoreLocked):
        MatchStore(tmp_path / "m.sqlite", replace=True)  # starting afresh never removes a match being written
    assert first.meta() == {} and (tmp_path / "m.sqlite").exists()
    first.close()
    MatchStore(tmp_path / "m.sqlite").close()  # released with the store


def test_the_holder_s_command_line_leaves_secret_values_out():
    line = command_line(["/usr/bin/wildhold", "serve", "--admin-token", "s3cret", "--signup-token=also", "--port", "9"])
    assert line == "wildhold serve --admin-token '***' '--signup-token=***' --port 9"
