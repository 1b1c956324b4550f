"""Seed 000's observation, reproduced: an agent that never wears armour stalls in the first tiers."""

import orjson
import pytest

from wildhold.agents.runner import ScriptedRun


@pytest.mark.slow
def test_an_agent_that_never_wears_armour_stalls_in_tier_1_or_2(tmp_path):
    run = ScriptedRun.start("season", 1, tmp_path / "m.sqlite", policies=["unarmoured"], agents=1)
    run.run()
    events = [(kind, orjson.loads(payload)["data"]) for _, _, kind, payload, _ in run.match.store.events()]
    run.match.close()
    cleared = {d["tier"] for kind, d in events if kind == "tier_cleared"}
    worn = {d["item"] for kind, d in events if kind == "equipped" and d["slot"] == "body" and d["item"]}
    assert not worn
    assert 1 in cleared and max(cleared) <= 2
    assert not any(kind == "shadow_king_defeated" for kind, _ in events)
