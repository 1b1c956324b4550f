"""Bodies as every face reads them: the nesting bound is exact, and what JSON allows reaches the world as sent."""

from __future__ import annotations

import pytest

from wildhold.server.bodies import MAX_DEPTH, BodyError, parse_json


def nested(levels: int) -> bytes:
    return ("[" * levels + "]" * levels).encode()


def test_the_nesting_bound_is_exact_and_any_depth_past_it_is_one_sentence():
    assert parse_json(nested(MAX_DEPTH)) is not None
    for levels in (MAX_DEPTH + 1, 1_025, 100_000):
        with pytest.raises(BodyError, match=f"deeper than {MAX_DEPTH} levels"):
            parse_json(nested(levels))
    with pytest.raises(BodyError, match="deeper"):
        parse_json(b'{"a": ' * (MAX_DEPTH + 1) + b"0" + b"}" * (MAX_DEPTH + 1))


def test_json_the_world_judges_itself_is_read_as_sent_and_what_is_not_json_is_refused():
    assert parse_json(b'{"n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890  # not a float
    assert parse_json(b'{"t": "\\ud800"}')["t"] == "\ud800"
    for raw in (b'{"n": NaN}', b"[Infinity]", b'{"a": ', b"\xff\xfe"):
        with pytest.raises(BodyError, match="not JSON"):
            parse_json(raw)
