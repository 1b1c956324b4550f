"""Records (a model session's spend) are inputs of the match the world never sees: a match with them replays,
resumes and verifies to exactly the chain head and state of the same match without them, and the archive's
header binds them, so an edited record is refused."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from archive_support import members, write

from wildhold.agents.runner import ScriptedRun
from wildhold.content import default_content
from wildhold.service.match import RECORD_KINDS, SPEND, apply_input, records_digest, replay
from wildhold.service.verify import Unverified, verify_archive
from wildhold.store.archive import Archive
from wildhold.store.sqlite import Input
from wildhold.world.serialize import state_hash
from wildhold.world.world import World

SCENARIO, SEED, TICKS = "tiny", 7, 400


def usage(session: int) -> dict:
    return {"session": session, "model": "replay/test", "llm_calls": 2, "input_tokens": 1000 * session,
            "cached_input_tokens": 100, "output_tokens": 50 * session, "cost_usd": 0.004 * session,
            "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}, "price_table": "ab" * 32}


def play(db: Path, spend: bool, resume_at: int | None = None) -> ScriptedRun:
    """The tiny scripted match; with `spend`, a record for its first character every 100 ticks."""
    run = ScriptedRun.start(SCENARIO, SEED, db)
    agent = next(iter(run.world.chars))
    for n, stop in enumerate(range(run.world.tick + 100, run.world.tick + TICKS + 1, 100), start=1):
        run.run(until=stop)
        if spend:
            run.match.record_spend(agent, usage(n))
        if resume_at == n:
            run.match.close()
            run = ScriptedRun.resume(db)
    run.match.end("done")
    return run


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    base = tmp_path_factory.mktemp("records")
    without, with_spend = play(base / "plain.sqlite", False), play(base / "spend.sqlite", True)
    archives = (without.match.export(base / "plain.wildhold.zip"), with_spend.match.export(base / "spend.wildhold.zip"))
    return without, with_spend, archives


def test_apply_input_skips_a_record_and_changes_nothing():
    world = World(default_content(), SCENARIO, SEED)
    before, head, seq = state_hash(world), world.events.head, world.events.seq
    assert SPEND in RECORD_KINDS
    assert apply_input(world, Input(1, world.tick, SPEND, "a1", "session", usage(1), "operator")) is None
    assert (state_hash(world), world.events.head, world.events.seq) == (before, head, seq)


def test_a_match_with_spend_records_plays_and_replays_to_the_same_head_and_state(pair):
    without, with_spend, (plain, spent) = pair
    assert sum(inp.kind == SPEND for inp in with_spend.match.store.inputs()) == TICKS // 100
    assert with_spend.world.events.head == without.world.events.head
    assert state_hash(with_spend.world) == state_hash(without.world)
    with Archive(spent) as a:
        m = a.manifest
        world = replay(default_content(), m["scenario"], m["seed"], a.inputs(), m["final_tick"])
    assert (world.events.head, state_hash(world)) == (without.world.events.head, state_hash(without.world))
    assert verify_archive(spent, cache=spent.parent / "cache").status == "verified"
    assert Archive(spent).manifest["records_digest"] and Archive(plain).manifest["records_digest"] is None


def test_a_match_resumed_between_records_reaches_the_same_head(tmp_path, pair):
    without, _, _ = pair
    resumed = play(tmp_path / "resumed.sqlite", True, resume_at=2)
    assert resumed.world.events.head == without.world.events.head
    assert state_hash(resumed.world) == state_hash(without.world)
    assert [i.args["session"] for i in resumed.match.store.inputs() if i.kind == SPEND] == [1, 2, 3, 4]


def test_an_edited_spend_record_is_refused_though_replay_cannot_see_it(tmp_path, pair):
    _, _, (_, spent) = pair
    files = members(spent)
    lines = [orjson.loads(line) for line in files["inputs.jsonl"].splitlines()]
    first = next(line for line in lines if line["kind"] == SPEND)
    first["args"]["cost_usd"] = 0.0001  # a cheaper arm
    files["inputs.jsonl"] = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    forged = write(tmp_path / "cheaper.wildhold.zip", files)
    with pytest.raises(Unverified) as refused:
        verify_archive(forged, cache=tmp_path / "cache")
    assert refused.value.code == "records_differ" and "each model session's spend" in str(refused.value)
    assert records_digest(Archive(forged).inputs()) != Archive(forged).manifest["records_digest"]
