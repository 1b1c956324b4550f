"""The service's reads answer each caller with its own data: writing into every part of one answer changes no other
character's answer, no later answer for the same character, and not the world (a twin host asked the same is the
reference)."""

from __future__ import annotations

import orjson
from ownership_support import scribble
from server_support import config

from wildhold.service.host import Host
from wildhold.service.queries import QUERIES
from wildhold.world.serialize import state_hash

READS = [("observe", {"memory": "full"}), ("observe", {}), ("observe", {"memory": "none"}), ("inventory", {}),
         ("map_memory", {}), ("quest_log", {}), ("world_info", {})]


def test_writing_into_an_answer_changes_no_other_answer(tmp_path):
    clean, dirty = (Host.open(tmp_path / name, config(), "famine", 4) for name in ("clean", "dirty"))
    try:
        agents = [clean.register(n)[1].agent for n in ("ann", "bob", "cy")]
        assert [dirty.register(n)[1].agent for n in ("ann", "bob", "cy")] == agents
        for _ in range(3):
            for name, args in READS:
                for agent in agents:
                    seen = QUERIES[name].run_now(clean, agent, args)
                    got = QUERIES[name].run_now(dirty, agent, args)
                    assert orjson.dumps(got) == orjson.dumps(seen), (name, args, agent)
                    scribble(got)
            clean.match.step()
            dirty.match.step()
        assert state_hash(dirty.world) == state_hash(clean.world)
    finally:
        clean.close()
        dirty.close()
