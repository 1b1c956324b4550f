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
