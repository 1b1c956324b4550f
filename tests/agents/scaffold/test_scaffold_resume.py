"""A `wildhold run` killed mid-way (SIGKILL, a real process) resumes where its telemetry stops, with the
same accounting as an uninterrupted run; and the pieces that make that true: a session cut short goes on
with its transcript, a call whose effect is unknown is never repeated, and the ceiling counts earlier lives."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wildhold.agents.scaffold.accounting import Price, Telemetry, rebuild
from wildhold.agents.scaffold.adapters import ReplayAdapter
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.agents.scaffold.session import INTERRUPTED, Caps, SessionState, run_session
from wildhold.agents.scaffold.workspace import Workspace
from wildhold.cli import app
from wildhold.store.archive import Archive

KILL_AFTER_LLM_CALLS = 10
PROCESS_TIMEOUT_S = 60


def _usage(n: int) -> dict[str, int]:
    return {"input_tokens": 4000 + 37 * n, "cached_input_tokens": 2048 if n % 2 else 0, "output_tokens": 20 + n}


def _cassette(model: str, sessions: int, session_turns: list[list[dict]]) -> dict:
    turns = []
    for s in range(1, sessions + 1):
        for calls in session_turns:
            turns.append({"text": "", "tool_calls": json.loads(json.dumps(calls).replace("{s}", str(s))),
                          "usage": _usage(len(turns))})
        turns.append({"text": "", "tool_calls": [{"name": "set_next_wake", "arguments": {"minutes": 5}},
                                                 {"name": "end_session", "arguments": {}}], "usage": _usage(len(turns))})
    return {"model": model, "turns": turns}


def write_experiment(folder: Path) -> Path:
    """Two replay arms with long cassettes (world reads, workspace writes, a world action) and a scripted arm."""
    folder.mkdir(parents=True, exist_ok=True)
    alpha = _cassette("replay/alpha", 7, [
        [{"name": "observe", "arguments": {}}],
        [{"name": "write_file", "arguments": {"path": "notes/s{s}.md", "content": "session {s}"}}],
        [{"name": "world_info", "arguments": {}}, {"name": "list_files", "arguments": {}}],
    ])
    beta = _cassette("replay/beta", 6, [
        [{"name": "rules", "arguments": {}}],
        [{"name": "eat", "arguments": {"item": "berries"}}, {"name": "inventory", "arguments": {}}],
        [{"name": "quest_log", "arguments": {}}],
        [{"name": "read_file", "arguments": {"path": "missing.md"}}],
    ])
    (folder / "alpha.json").write_text(json.dumps(alpha))
    (folder / "beta.json").write_text(json.dumps(beta))
    exp = {"name": "resume-check", "scenario": "tiny", "seed": 4, "clock": "lockstep", "turn_deadline_s": 5.0,
           "budget_usd": 50.0, "ceiling_s": 600,
           "arms": [{"name": "alpha", "provider": "replay", "cassette": "alpha.json",
                     "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}},
                    {"name": "beta", "provider": "replay", "cassette": "beta.json",
                     "price": {"input_per_mtok": 0.5, "output_per_mtok": 2.0}},
                    {"name": "baseline", "provider": "scripted", "policy": "producer"}]}
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    return path


def _command(experiment: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", "from wildhold.cli import app; app()", "run", str(experiment), "--out", str(out)]


def _llm_calls(telemetry: Path) -> int:
    if not telemetry.exists():
        return 0
    return telemetry.read_bytes().count(b'"kind": "llm_call"')


def _accounting(telemetry: Path) -> dict[str, tuple]:
    ledger = rebuild(Telemetry(telemetry).records())
    return {arm: (a.input_tokens, a.cached_input_tokens, a.output_tokens, round(a.cost_usd, 9), a.sessions,
                  a.llm_calls, a.tool_calls, a.complete)
            for arm, a in ledger.arms.items() if arm != "baseline"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uninterrupted")
    experiment = write_experiment(folder / "exp")
    run = Run(Experiment.load(experiment), folder / "out", experiment.parent)
    asyncio.run(run.play())
    return run.finish()


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_and_its_accounting_matches_an_uninterrupted_run(uninterrupted, tmp_path):
    experiment = write_experiment(tmp_path / "exp")
    out = tmp_path / "out"
    telemetry = out / "telemetry.jsonl"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(_command(experiment, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    try:
        while _llm_calls(telemetry) < KILL_AFTER_LLM_CALLS:
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the run never reached the kill point"
            time.sleep(0.005)
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait(timeout=10)
        first.stderr.close()
    assert first.returncode == -signal.SIGKILL
    crashed = Telemetry(telemetry).records()
    assert not any(r["kind"] == "run_complete" for r in crashed), "killed too late: the run had already finished"
    expected = _accounting(uninterrupted["telemetry"])
    assert sum(a.llm_calls for a in rebuild(crashed).arms.values()) < sum(v[5] for v in expected.values())

    again = subprocess.run(_command(experiment, out), capture_output=True, text=True, env=env,
                           timeout=PROCESS_TIMEOUT_S)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _accounting(telemetry) == expected
    assert all(v[7] == "cassette_exhausted" for v in expected.values())

    records = Telemetry(telemetry).records()
    for arm in ("alpha", "beta"):  # one checkpoint and one wake per session, however the crash fell
        sessions = rebuild(records).arm(arm).sessions
        assert [r["session"] for r in records if r["arm"] == arm and r["kind"] == "progress"] == list(range(1, sessions + 1))
        assert [r["session"] for r in records if r["arm"] == arm and r["kind"] == "wake_scheduled"] == \
            list(range(1, sessions + 1))
        assert any(r["arm"] == arm and r["kind"] == "run_start" and r["resumed"] for r in records)
    for name in ("manifest.json", "report.json", "spend_curve.json"):
        assert (out / name).exists(), name
    archive = out / "world" / "match.wildhold.zip"
    with Archive(archive) as a:
        a.verify()
    replayed = CliRunner().invoke(app, ["replay", str(archive)])
    assert replayed.exit_code == 0 and "replay matches the archive" in replayed.output, replayed.output


class FakeWorld:
    """World tools that record what was run; `observe` is read-only, `eat` is an action."""

    def __init__(self):
        self.calls: list[str] = []

    async def call(self, name, arguments):
        self.calls.append(name)
        return False, json.dumps({"tool": name}), {"tool": name}


WORLD_TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("eat", "observe")]


def _interrupted_session(tmp_path: Path) -> tuple[list[dict], Caps]:
    """Telemetry of a session that died after its second turn: one of that turn's three calls has a result."""
    t = Telemetry(tmp_path / "telemetry.jsonl")
    caps = Caps(wake_default_minutes=30)
    t.emit("run_start", "a")
    t.emit("session_start", "a", session=3)
    first = [{"id": "c1", "name": "set_next_wake", "arguments": {"minutes": 45}}]
    t.emit("llm_call", "a", session=3, input_tokens=100, cached_input_tokens=0, output_tokens=5, cost_usd=0.001,
           text="Planning.", calls=first)
    t.emit("tool_call", "a", session=3, id="c1", name="set_next_wake", args={"minutes": 45}, code="ok",
           result='{"next_wake_in_minutes": 45}')
    second = [{"id": "c2", "name": "observe", "arguments": {}}, {"id": "c3", "name": "eat", "arguments": {"item": "x"}},
              {"id": "c4", "name": "write_file", "arguments": {"path": "n.md", "content": "hi"}},
              {"id": "c5", "name": "observe", "arguments": {}}]
    t.emit("llm_call", "a", session=3, input_tokens=200, cached_input_tokens=100, output_tokens=9, cost_usd=0.002,
           text="", calls=second)
    t.emit("tool_call", "a", session=3, id="c2", name="observe", args={}, code="ok", result='{"seen": 1}')
    return t.records(), caps


def test_a_session_cut_short_is_rebuilt_with_its_transcript_counters_and_unanswered_calls(tmp_path):
    records, caps = _interrupted_session(tmp_path)
    state = SessionState.resume(records, "a", caps)
    assert state is not None and state.number == 3 and state.wake == 45
    assert [m["role"] for m in state.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert state.messages[0]["content"] == "Session 3 begins." and state.messages[-1]["content"] == '{"seen": 1}'
    assert [c.id for c in state.unanswered] == ["c3", "c4", "c5"]
    assert (state.calls, state.tokens) == (2, 314)
    assert SessionState.resume(records, "someone-else", caps) is None
    ended = records + [{"kind": "session_end", "arm": "a", "session": 3, "reason": "end_session", "t": 0}]
    assert SessionState.resume(ended, "a", caps) is None


def test_a_resumed_session_never_repeats_an_action_but_reruns_reads_and_scaffold_tools(tmp_path):
    records, caps = _interrupted_session(tmp_path)
    state = SessionState.resume(records, "a", caps)
    cassette = tmp_path / "c.json"
    cassette.write_text(json.dumps({"model": "m", "turns": [{"tool_calls": [{"name": "end_session"}]}]}))
    adapter, world = ReplayAdapter(cassette), FakeWorld()
    telemetry = Telemetry(tmp_path / "telemetry.jsonl")
    ledger = rebuild(records).arm("a")
    result = asyncio.run(run_session(arm="a", number=3, system="s", world_tools=WORLD_TOOLS, world=world,
                                     adapter=adapter, workspace=Workspace(tmp_path / "ws", 1000), telemetry=telemetry,
                                     price=Price(1.0, 1.0), caps=caps, ledger=ledger, resumed=state,
                                     repeatable=frozenset({"observe"})))
    assert world.calls == ["observe"]  # c5 ran again; eat (c3) may already have happened, so it never runs twice
    assert (tmp_path / "ws" / "n.md").read_text() == "hi"
    sent = adapter.received[0]["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert answers["c3"] == INTERRUPTED and answers["c2"] == '{"seen": 1}' and "c5" in answers
    assert result.reason == "end_session" and result.wake_minutes == 45
    after = telemetry.records()[len(records):]
    assert [r["kind"] for r in after][:1] == ["session_resumed"] and not any(r["kind"] == "session_start" for r in after)
    codes = {r["id"]: r["code"] for r in after if r["kind"] == "tool_call"}
    assert codes["c3"] == "interrupted" and codes["c4"] == codes["c5"] == "ok"
    assert rebuild(telemetry.records()).arm("a").sessions == 1  # still one session, not two


def test_the_ceiling_counts_the_time_each_earlier_process_was_alive(tmp_path):
    records = [{"kind": "run_start", "arm": "a", "t": 100.0}, {"kind": "session_start", "arm": "a", "session": 1, "t": 101.0},
               {"kind": "session_start", "arm": "b", "session": 1, "t": 300.0},  # another arm's time is not a's
               {"kind": "llm_call", "arm": "a", "t": 130.0, "input_tokens": 1, "cached_input_tokens": 0,
                "output_tokens": 1, "cost_usd": 0.0},
               {"kind": "run_start", "arm": "a", "t": 500.0},  # the process died after 130 and was rerun at 500
               {"kind": "session_end", "arm": "a", "session": 1, "reason": "end_session", "t": 520.0}]
    assert rebuild(records).arm("a").elapsed_s == pytest.approx(30.0 + 20.0)
