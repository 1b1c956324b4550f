"""Messages reach inboxes as if each were handed to each of its hearers as it was said: the sent messages wait and
are put into the inboxes when they are next read or saved, or at the end of their tick, and hearers are found from the positions kept in arrays."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wildhold.content import default_content
from wildhold.world import kept
from wildhold.world.errors import Accepted
from wildhold.world.kept import KeptMismatch
from wildhold.world.observe import observe
from wildhold.world.parts.society import SOCIETY, latest_to_each
from wildhold.world.positions import Positions
from wildhold.world.serialize import to_dict
from wildhold.world.setup import apply_setup
from wildhold.world.state import Character
from wildhold.world.world import World

CONTENT = default_content()
MOST = 3
SMALL = CONTENT.model_copy(update={"economy": CONTENT.economy.model_copy(update={"inbox_max_messages": MOST})})


def one_by_one(sent: list[list[int]], most: int) -> dict[int, list[int]]:
    """The plain definition: each message appended to each inbox it reaches, the oldest dropped beyond `most`."""
    boxes: dict[int, list[int]] = {}
    for i, rows in enumerate(sent):
        for r in rows:
            box = boxes.setdefault(r, [])
            box.append(i)
            if len(box) > most:
                del box[0]
    return boxes


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, 5), st.lists(st.sets(st.integers(0, n - 1)), max_size=30))))
def test_the_latest_messages_to_each_are_those_handing_them_one_by_one_leaves(case):
    n, most, sent = case
    rows = [sorted(s) for s in sent]
    latest = latest_to_each([(None, np.array(r, dtype=np.intp)) for r in rows], n, most)
    assert latest.rows == sorted(latest.rows) and len(latest.bounds) == len(latest.rows) + 1
    got = {r: latest.messages[latest.bounds[k]:latest.bounds[k + 1]].tolist() for k, r in enumerate(latest.rows)}
    assert got == one_by_one(rows, most)


@given(st.integers(1, 12), st.lists(st.integers(0, 11 * 11 - 1), min_size=1, max_size=25), st.integers(0, 4),
       st.integers(0, 11 * 11 - 1), st.data())
def test_who_stands_within_a_distance_is_who_the_plain_loop_finds(width, tiles, radius, p, data):
    tiles = [t % (width * width) for t in tiles]
    p %= width * width
    chars = {f"a{i}": Character(f"a{i}", f"c{i}", t, 1, 1, 1) for i, t in enumerate(tiles)}
    but = data.draw(st.sampled_from([None, *chars]))

    def distance(a: int, b: int) -> int:
        return max(abs(a % width - b % width), abs(a // width - b // width))

    plain = [i for i, (agent, c) in enumerate(chars.items()) if distance(c.pos, p) <= radius and agent != but]
    assert Positions(chars).within(p, radius, width, but).tolist() == plain


def _crowd(seed: int) -> tuple[World, list[str]]:
    w = World(SMALL, "tiny", seed)
    return w, [w.join(f"c{i}") for i in range(8)]


def _plain_inboxes(w: World, most: int) -> dict[str, list[dict]]:
    """Every inbox replayed from the events: a say reaches those its event says heard it, a whisper its listener."""
    boxes: dict[str, list[dict]] = {}
    for _, tick, kind, payload, _ in w.events.pending:
        data = orjson.loads(payload)["data"]
        if kind == "message_said":
            to, message = data["heard_by"], {"tick": tick, "from": data["agent"], "kind": "say", "text": data["text"]}
        elif kind == "message_whispered":
            to, message = [data["to"]], {"tick": tick, "from": data["agent"], "kind": "whisper", "text": data["text"]}
        else:
            continue
        for agent in to:
            box = boxes.setdefault(agent, [])
            box.append(message)
            del box[:-most]
    return boxes


step = st.one_of(
    st.tuples(st.just("say"), st.integers(0, 7), st.text("abc", min_size=1, max_size=3)),
    st.tuples(st.just("whisper"), st.integers(0, 7), st.integers(1, 7)),
    st.tuples(st.just("walk"), st.integers(0, 7), st.integers(0, 7)),
    st.tuples(st.just("observe"), st.integers(0, 7), st.just(0)),
    st.tuples(st.just("step"), st.integers(1, 3), st.just(0)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3), st.lists(step, max_size=40))
def test_a_crowd_that_talks_and_walks_holds_in_each_inbox_the_latest_it_was_sent(seed, program):
    w, ids = _crowd(seed)
    spots = sorted((p for p in range(w.width * w.height) if w.is_walkable(p)), key=lambda q: (w.distance(q, w.settlement), q))
    for kind, who, arg in program:
        if kind == "say":
            w.submit(ids[who], "say", {"text": arg})
        elif kind == "whisper":
            w.submit(ids[who], "whisper", {"to": ids[(who + arg) % 8], "text": f"to {arg}"})
        elif kind == "walk":
            x, y = w.xy(spots[arg * 7])
            apply_setup(w, "move_character", {"agent": ids[who], "x": x, "y": y})
        elif kind == "observe":
            plain = _plain_inboxes(w, MOST).get(ids[who], [])
            assert observe(w, ids[who])["messages"]["inbox"] == plain
        else:
            for _ in range(who):
                w.step()
    assert dict(to_dict(w)["parts"]["economy"]["inboxes"]) == _plain_inboxes(w, MOST)  # as saved
    assert all(observe(w, a)["messages"]["inbox"] == _plain_inboxes(w, MOST).get(a, []) for a in ids)


def test_a_say_is_heard_by_those_within_say_radius_in_the_order_they_joined():
    w, ids = _crowd(1)
    spots = sorted((p for p in range(w.width * w.height) if w.is_walkable(p)), key=lambda q: (w.distance(q, w.settlement), q))
    for i, agent in enumerate(ids):
        x, y = w.xy(spots[i * 5])
        apply_setup(w, "move_character", {"agent": agent, "x": x, "y": y})
    speaker = w.chars[ids[3]]
    assert isinstance(w.submit(speaker.id, "say", {"text": "hello"}), Accepted)
    w.step()
    said = next(orjson.loads(p)["data"] for _, _, k, p, _ in w.events.pending if k == "message_said")
    radius = CONTENT.social.say_radius
    assert said["heard_by"] == [a for a, c in w.chars.items() if c is not speaker and w.distance(c.pos, speaker.pos) <= radius]
    assert 0 < len(said["heard_by"]) < len(ids) - 1  # some hear it, some stand too far


def test_positions_kept_stale_are_caught_when_checking(monkeypatch):
    w, ids = _crowd(0)
    w.positions()
    c = w.chars[ids[0]]
    c.pos = next(p for p in range(w.width * w.height) if w.is_walkable(p) and p != c.pos)  # not through `relocate`
    monkeypatch.setattr(kept, "CHECKING", True)
    with pytest.raises(KeptMismatch, match="positions"):
        w.characters_within(c.pos, 2)


def test_messages_wait_no_longer_than_their_tick_when_no_one_reads():
    """A world no one observes (a replay, a re-simulation) delivers what was said at the end of each tick: what it
    holds undelivered never grows past one tick's messages, and the inboxes are those the events say."""
    w, ids = _crowd(2)
    society = w.states[SOCIETY.name]
    for tick in range(12):
        for i, agent in enumerate(ids):
            w.submit(agent, "say", {"text": f"{tick}:{i}"})
        w.step()
        assert society.undelivered == []
    assert society.inboxes == _plain_inboxes(w, MOST) and any(society.inboxes.values())
