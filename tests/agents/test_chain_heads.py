"""The scripted demos play the same events, byte for byte, as they did when these heads were recorded.

Each head was recorded on the code before a change that should not alter play (a faster observation,
a faster policy); a change that alters play changes a head, and is either a bug or a new rules
version whose heads are recorded anew, never an edit of these.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wildhold.agents.runner import ScriptedRun

pytestmark = pytest.mark.slow(seconds=4)

HEADS = [  # (scenario, seed, ticks played with its default policies, event chain head)
    ("default", 1, 1440, "d5db78a0282e0f08bfbadbe9787b6c4a"),
    ("default", 2, 1440, "b88782bcef85ee5ccfe53af6cce973b1"),
    ("default", 3, 1440, "acf77ad8cb0ca3782c08e929b17ead47"),
    ("season", 1, 1440, "b0f8376287e3c72cf35cd448e4b21bb0"),
    ("season", 2, 1440, "f9f9122514d41a3212ac96f061fa9e33"),
    ("season", 3, 1440, "bea374779aca0adaeb069c070fb2a9b6"),
    ("famine", 1, 1000, "5ee24d5a787e7241739ba7501403c9e6"),
    ("famine", 2, 1000, "69d071aeff94cb3ef3549a0d374275b5"),
    ("famine", 3, 1000, "40427e1f51c1012ac7493e511113d5a1"),
    ("frontier", 1, 600, "d0b0fd3e1e3b533461d6c28b1e7e35fe"),
]


@pytest.mark.parametrize(("scenario", "seed", "ticks", "head"), HEADS, ids=[f"{s}-{n}" for s, n, _, _ in HEADS])
def test_a_demo_plays_the_recorded_events(tmp_path: Path, scenario: str, seed: int, ticks: int, head: str):
    run = ScriptedRun.start(scenario, seed, tmp_path / "m.sqlite")
    try:
        run.run(until=run.world.tick + ticks)
        assert run.world.events.head == head
    finally:
        run.match.close()
