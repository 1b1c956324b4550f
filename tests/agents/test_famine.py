"""The famine scenario (the Daishi protocol): scripted traders trade, raiders raid, wealth ranks share ties."""

import orjson
import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.world.wealth import rank_standard, wealth_cents

pytestmark = [pytest.mark.slow(seconds=15), pytest.mark.xdist_group("famine")]  # one famine match feeds every test


@pytest.fixture(scope="module")
def famine(tmp_path_factory):
    run = ScriptedRun.start("famine", 1, tmp_path_factory.mktemp("famine") / "m.sqlite")
    run.run(until=run.world.start_tick + 2 * 1440)
    kinds = [(kind, orjson.loads(payload)["data"]) for _, _, kind, payload, _ in run.match.store.events()]
    yield run, kinds
    run.match.close()


def test_famine_has_conflict_villagers_and_six_agents(famine):
    run, _ = famine
    assert run.world.scenario.conflict and run.world.scenario.npcs
    assert sorted(p.name for p in run.policies.values()) == ["producer", "producer", "raider", "survivor", "trader", "trader"]


def test_scripted_traders_complete_escrowed_trades(famine):
    _, events = famine
    assert any(kind == "trade_completed" for kind, _ in events)
    assert any(kind == "item_gained" and d["source"].startswith("trade:") for kind, d in events)


def test_the_raider_raids_outside_the_settlement(famine):
    run, events = famine
    raider = next(a for a, p in run.policies.items() if p.name == "raider")
    raids = [d for kind, d in events if kind in ("character_attacked", "structure_damaged") and raider in (d.get("agent"), d.get("by"))]
    assert raids
    assert any(kind == "reputation_changed" and d["agent"] == raider and d["delta"] < 0 for kind, d in events)


def test_the_wealth_table_uses_standard_competition_ranking(famine):
    run, _ = famine
    wealth = {a: wealth_cents(run.world, a) for a in run.world.chars}
    ranks = rank_standard(wealth)
    for a in wealth:
        assert ranks[a] == 1 + sum(1 for b in wealth if wealth[b] > wealth[a])
