"""`PARTS` is the one place parts are registered: every action, rejection code, event, observation key
and rules section beyond the core's is declared by exactly one part of it, and nothing else adds any."""

from __future__ import annotations

from collections import Counter

import pytest

from wildhold.docs.rules import rules_json
from wildhold.service.queries import program_reads
from wildhold.world.actions import REGISTRY, core
from wildhold.world.errors import CODES
from wildhold.world.events import EVENT_TYPES
from wildhold.world.observe import observe
from wildhold.world.parts import PARTS, Part
from wildhold.world.parts.base import install
from wildhold.world.parts.market import MARKET
from wildhold.world.parts.society import SOCIETY
from wildhold.world.serialize import to_dict
from wildhold.world.world import World

CORE_ACTIONS = [cls.name for cls in core.ACTIONS]


def declared(what) -> Counter:
    return Counter(name for part in PARTS for name in what(part))


def test_the_registry_is_the_core_actions_then_each_parts_in_parts_order():
    assert list(REGISTRY) == CORE_ACTIONS + [cls.name for part in PARTS for cls in part.actions]


def test_every_action_code_event_and_observation_key_of_a_part_belongs_to_exactly_one_part():
    for what in (lambda p: [c.name for c in p.actions], lambda p: p.codes, lambda p: p.events, lambda p: p.observation_fields):
        twice = [name for name, n in declared(what).items() if n > 1]
        assert not twice


def test_the_codes_and_events_beyond_the_cores_are_the_parts():
    codes = declared(lambda p: p.codes)
    assert set(codes) <= set(CODES)
    events = declared(lambda p: p.events)
    assert set(events) <= set(EVENT_TYPES)
    core_events = [k for k in EVENT_TYPES if k not in events]
    assert "agent_spawned" in core_events and not any(k.startswith(("trade_", "crop_", "quest_")) for k in core_events)


def test_an_observation_holds_the_cores_keys_and_exactly_the_keys_parts_declare(content):
    w = World(content, "tiny", 1)
    obs = observe(w, w.join("a"))
    parts_keys = set(declared(lambda p: p.observation_fields))
    assert parts_keys <= set(obs)
    assert set(obs) - parts_keys == {"time", "self", "view", "legend", "memory"}


def test_each_rules_section_of_a_part_has_keys_no_other_part_writes(content):
    keys = Counter(key for part in PARTS for section in part.rules for key in section.data(content))
    assert keys and max(keys.values()) == 1
    doc = rules_json(content, program_reads())
    assert set(keys) <= set(doc)
    assert {"attributes", "economy", "messages", "conflict", "dungeon", "farming", "villagers"} <= set(keys)


def test_every_declared_table_is_a_content_table(content):
    for part in PARTS:
        for table in part.tables:
            assert hasattr(content, table), f"{part.name} reads no such table {table!r}"


def test_a_part_that_declares_a_taken_name_is_refused():
    class Copycat(Part):
        name = "copycat"
        codes = {"self_target": "again"}

    before = len(PARTS)
    with pytest.raises(ValueError, match="self_target"):
        install([Copycat()], [])
    assert len(PARTS) == before


def test_the_market_society_and_conflict_save_together_in_the_economy_section(content):
    w = World(content, "tiny", 1)
    w.join("a")
    saved = to_dict(w)["parts"]
    assert list(saved) == ["construction", "farming", "settlement", "economy", "dungeon", "trial"]
    assert set(saved["economy"]) == {"next_id", "trades", "contracts", "orders", "reputation", "attributes", "defaults",
                                     "artworks", "inboxes", "board", "last_hit", "trade_credit"}
    assert [k for k, _ in saved["economy"]["next_id"]] == ["artwork", "contract", "order", "trade"]
    MARKET.state(w).next_id["order"] = 4
    SOCIETY.state(w).next_id["artwork"] = 2
    copy = World(content, "tiny", 1)
    for part in PARTS:
        part.init(copy)
        part.load(copy, to_dict(w)["parts"][part.section or part.name])
    assert MARKET.state(copy).next_id == {"trade": 0, "contract": 0, "order": 4}
    assert SOCIETY.state(copy).next_id == {"artwork": 2}
