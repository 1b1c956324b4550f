"""A character's memory in arrays: the tiles remembered since a tick, read from the lists of its last ticks of
remembering, are exactly those the array of ticks says, whatever the walk (steps, long jumps, many moves in one
tick, long waits); a saved and loaded memory remembers the same tiles as the same records."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from wildhold.content import default_content
from wildhold.world import memory
from wildhold.world.serialize import dumps, loads
from wildhold.world.world import World

CONTENT = default_content()

moves = st.lists(st.tuples(st.sampled_from([0, 0, 0, 1, 3]), st.integers(0, 95), st.integers(0, 95), st.booleans()),
                 min_size=1, max_size=60)


@settings(max_examples=40, deadline=None)
@given(walk=moves, most=st.sampled_from([60, 200, memory.RECENT_MOST]))
def test_the_tiles_remembered_since_a_tick_are_those_the_array_says(walk, most):
    with mock.patch.object(memory, "RECENT_MOST", most):  # small: the lists overflow within a tick, and later
        _walk_and_compare(walk)


def _walk_and_compare(walk):
    w = World(CONTENT, "tiny", 1)
    c = w.chars[w.join("walker")]
    start = w.tick
    for ticks, x, y, far in walk:
        for _ in range(ticks):
            w.step()
        p = w.pos(x % w.width, y % w.height) if far else w.pos(min(w.width - 1, c.pos % w.width + 1), c.pos // w.width)
        w.relocate(c, p, event=False)
        remembered = list(c.memory.items())
        for tick in range(start, w.tick + 2):
            assert c.memory.since(tick) == [p for p, (at, *_) in remembered if at >= tick], tick
    again = loads(CONTENT, dumps(w)).chars[c.id].memory
    assert list(again.items()) == list(c.memory.items())
    assert again.since(start) == c.memory.since(start)


remembered_tiles = st.lists(st.tuples(st.integers(0, 384 * 384 - 1), st.integers(0, 50), st.integers(0, 9)), max_size=80)


@settings(max_examples=60, deadline=None)
@given(writes=remembered_tiles, edges=st.lists(st.integers(1, 384 * 384 // memory.PAGE - 1), max_size=4))
def test_a_memory_answers_as_a_table_of_its_tiles_whatever_pages_they_fall_on(writes, edges):
    """Tiles remembered anywhere (pages' first and last tiles among them) are answered as a plain table of them
    says, a copy stays as it was when its original remembers more, and only the pages written hold any room."""
    contents = memory.Contents()
    for i in range(1, 10):
        contents.add((f"node{i}", i, None, None, ()))
    m, table = memory.Memory(contents), {}
    edge_writes = [(k * memory.PAGE + d, 7, 3) for k in edges for d in (-1, 0)]
    for p, tick, held in writes + edge_writes:
        m.remember(p, tick, held)
        table[p] = (tick, held)
    assert len(m) == len(table) and m.tiles() == sorted(table)
    for p, (tick, held) in table.items():
        assert p in m and m.get(p) == (tick, *contents.records[held])
    for tick in (0, 7, 25, 51):
        assert m.since(tick) == sorted(p for p, (at, _) in table.items() if at >= tick)
    for p in {q ^ 1 for q in table} - set(table):  # a tile beside one remembered, on a page made: never seen
        assert p not in m and m.get(p) is None
    assert m.nbytes() == len({p >> memory.PAGE_BITS for p in table}) * 2 * memory.PAGE * 4
    copy = m.copy()
    m.remember(384 * 384 - 1, 60, 1)
    assert copy.tiles() == sorted(table) and list(copy.items()) == [(p, copy.get(p)) for p in sorted(table)]
