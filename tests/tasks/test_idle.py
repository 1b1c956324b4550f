"""Doing nothing earns nothing: over every task of the suite, a character that does nothing has progress 0 at
every tick (its progress is the Gymnasium face's reward: idling must never pay)."""

from __future__ import annotations

import pytest

from wildhold.content import default_content
from wildhold.tasks.attempt import play_in_memory
from wildhold.tasks.catalog import default_suite


@pytest.mark.slow(seconds=20)
def test_a_character_that_does_nothing_has_no_progress_on_any_task_at_any_tick():
    content = default_content()
    earned = {t.id: trace for t in default_suite().tasks.values() if (trace := play_in_memory(t, content).trace)[1:]}
    assert earned == {}


def test_living_through_a_night_earns_nothing_while_the_character_idles():
    # survival/survive-night-storm-tent-v1 climbed to 0.68 by time alone, then fell to 0 at the knockdown
    trace = play_in_memory(default_suite().get("survival/survive-night-storm-tent-v1"), default_content()).trace
    assert trace == trace[:1] and trace[0][1] == 0.0
