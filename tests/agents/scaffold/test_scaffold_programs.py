"""Seed 000's core idea through `wildhold run`, offline: a model arm writes a program, starts it and sleeps
while the program acts for its character; in its next session it reads the program's log and status and
restarts a revision. Everything asserted about the world is read back from the run's artifacts (archive
events, telemetry, report); the leak check reads what the replayed model was sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_scaffold_run import LEAK_WORDS, _strings, _world_surface

from wildhold.agents.scaffold.accounting import Telemetry
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.agents.scaffold.session import SCAFFOLD_TOOLS
from wildhold.store.archive import Archive
from paths_support import ROOT

EXAMPLE = ROOT / "examples" / "programs-smoke.yaml"
ARM, PROGRAM = "programmer", "forager"
ISSUERS = (f"program:{PROGRAM}@1", f"program:{PROGRAM}@2")

pytestmark = [pytest.mark.slow(seconds=15), pytest.mark.xdist_group("programs_run")]  # one played run feeds every test


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("programs")
    run = Run(Experiment.load(EXAMPLE), out, EXAMPLE.parent)
    asyncio.run(run.play())
    paths = run.finish()
    with Archive(paths["archive"]) as a:
        ids = {agent["name"]: agent["id"] for agent in a.manifest["agents"]}
        events = list(a.events())
    return run, paths, Telemetry(paths["telemetry"]).records(), events, ids


def _mine(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["arm"] == ARM and r["kind"] == kind]


def _session_tools(records: list[dict], session: int) -> list[dict]:
    return [r for r in _mine(records, "tool_call") if r["session"] == session]


def test_the_program_acts_across_many_ticks_while_its_arm_makes_no_model_call(played):
    _, _, records, events, ids = played
    agent = ids[ARM]
    assert [r["reason"] for r in _mine(records, "session_end")] == ["end_session", "end_session"]
    # In telemetry order, every model call lies inside its own session (none while the arm sleeps), and
    # session 2 starts only after session 1 scheduled its wake.
    mine = [r for r in records if r["arm"] == ARM]
    order = [(r["kind"], r.get("session")) for r in mine]
    assert order.index(("wake_scheduled", 1)) < order.index(("session_start", 2))
    open_session = None
    for r in mine:
        if r["kind"] == "session_start":
            open_session = r["session"]
        elif r["kind"] == "session_end":
            open_session = None
        elif r["kind"] == "llm_call":
            assert r["session"] == open_session, r
    session_end_tick = next(r["tick"] for r in _mine(records, "progress") if r["session"] == 1)
    wake = next(r for r in _mine(records, "wake_scheduled") if r["session"] == 1)
    wake_tick = wake["wake_tick"]
    # the long wake the model chose, from the tick the arm went to sleep (its programs act on meanwhile)
    assert wake["minutes"] == 360 and 360 <= wake_tick - session_end_tick <= 360 + 10

    saved = {e["data"]["revision"]: e["tick"] for e in events
             if e["kind"] == "program_saved" and e["data"]["agent"] == agent}
    started = {e["data"]["revision"]: e["tick"] for e in events
               if e["kind"] == "program_started" and e["data"]["agent"] == agent}
    assert sorted(saved) == sorted(started) == [1, 2]
    assert saved[1] <= session_end_tick < wake_tick <= saved[2]  # the revision came in the next session

    ops = [e for e in events if e["kind"] == "operation_started" and e["data"]["agent"] == agent]
    # Its programs issued every action: the scaffold's sleep never occupied the character itself.
    assert {e["data"]["issuer"] for e in ops} == set(ISSUERS)
    first = [e["tick"] for e in ops if e["data"]["issuer"] == ISSUERS[0]]
    asleep = [t for t in first if session_end_tick < t < wake_tick]  # ticks with no model call at all
    assert len(asleep) >= 50 and max(asleep) - min(asleep) >= 250, (len(asleep), min(asleep), max(asleep))
    second = [e["tick"] for e in ops if e["data"]["issuer"] == ISSUERS[1]]
    assert max(first) < started[2] <= min(second)  # revision 1 stopped, revision 2 took over
    second_end = next(r["tick"] for r in _mine(records, "progress") if r["session"] == 2)
    assert len([t for t in second if t > second_end]) >= 20  # and it works through the second sleep too


def test_the_report_counts_the_programs_share_of_actions_and_both_revisions(played):
    _, paths, _, events, ids = played
    report = json.loads(paths["report"].read_text())
    agent = ids[ARM]
    metrics = report["metrics"][agent]
    issued = sum(1 for e in events if e["kind"] == "operation_started" and e["data"]["agent"] == agent)
    assert metrics["program_share"] > 0 and metrics["program_actions"] == metrics["actions"] == issued
    assert metrics["program_revisions"] == 2 and metrics["program_failures"] == {}
    assert set(metrics["by_issuer"]) == set(ISSUERS)
    card = next(c for c in report["agents"] if c["name"] == ARM)
    assert card["programs"]["revisions"] == 2 and card["programs"]["share"] > 0
    baseline = report["metrics"][ids["baseline"]]
    assert (baseline["program_revisions"], baseline["program_share"]) == (0, 0.0)


def test_the_revision_follows_what_the_first_run_logged_and_the_note_persists(played):
    run, _, records, _, _ = played
    saves = [r for r in _mine(records, "tool_call") if r["name"] == "save_program"]
    assert [(r["session"], r["code"], json.loads(r["result"])["revision"]) for r in saves] == [(1, "ok", 1), (2, "ok", 2)]
    second: dict[str, dict] = {}
    for r in _session_tools(records, 2):
        second.setdefault(r["name"], r)  # the first call of each name: before the revision
    status = json.loads(second["program_status"]["result"])
    assert status["issuer"] == ISSUERS[0] and status["state"] in ("running", "waiting") and status["actions"] > 50
    logged = [line["text"] for line in json.loads(second["program_logs"]["result"])["lines"]]
    assert logged[0].startswith("forager starts")
    sources = [t.rsplit(" from ", 1)[1].split(" |")[0] for t in logged if t.startswith("gathered")]
    assert max(set(sources), key=sources.count) == "tree"  # what revision 2 answers: wood capped, food first
    note = json.loads(second["read_file"]["result"])["content"]
    assert "forager" in note and "session 1" in note  # written in session 1, read back in session 2
    assert (run.out / "workspaces" / ARM / "notes" / "plan.md").read_text().startswith("# Plan")


def test_nothing_the_programmer_received_carries_budget_spend_or_duration(played):
    run, _, records, _, _ = played
    received = run.adapters[ARM].received
    assert len(received) == len(_mine(records, "llm_call"))
    world_tools = _world_surface()
    assert all(call["tools"] == world_tools + SCAFFOLD_TOOLS for call in received)
    strings = _strings([[c["system"], c["messages"]] for c in received], [])
    assert any("gathered" in s for s in strings)  # the program's log reached the model
    for s in strings:
        low = s.lower()
        assert not [w for w in LEAK_WORDS if w in low], s[:200]
    exp = run.exp
    secrets = {str(r["cost_usd"]) for r in records if r.get("cost_usd")}
    secrets |= {str(r["tokens"]) for r in records if r["kind"] == "progress"}
    secrets |= {str(exp.budget_usd), str(exp.ceiling_s), str(int(exp.ceiling_s))}
    for s in _strings(received, []):
        assert not [x for x in secrets if x in s and len(x) > 3], s[:200]


def test_the_archive_carries_the_programmers_spend_and_no_answer_it_got_told_the_end(played):
    from wildhold.agents.scaffold.accounting import rebuild

    run, paths, records, _, ids = played
    spent = json.loads(paths["report"].read_text())["curves"]
    ledger = rebuild(records).arm(ARM)
    assert set(spent["tokens"]) == {ids[ARM]}
    assert spent["tokens"][ids[ARM]]["tokens"] == ledger.tokens > 0
    assert spent["dollars"][ids[ARM]]["dollars"] == pytest.approx(ledger.cost_usd, rel=1e-12)
    end = str(run.host.world.end_tick)
    results = [r["result"] for r in records if r["kind"] == "tool_call" and r["arm"] == ARM]
    assert any('"tick"' in text for text in results)  # it read the clock, and the clock had no end
    assert not [text for text in results if "ends_at_tick" in text or end in text]
