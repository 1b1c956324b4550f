"""The task suite in Inspect AI is `wildhold tasks run`'s benchmark: the same scripted player gets the same attempts
(every result field, chain heads included) through `wildhold/tasks` as through `tasks run`, repeat by repeat at
the same seeds; a model replaying the same moves gets the same attempt; a model is held to the task's limits and
stops at success; the archives are verified and scored by `tasks score`; the log's metrics are keyed by category
and difficulty."""

from __future__ import annotations

import itertools
import statistics

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from wildhold.server.mcp import tools_hash  # noqa: E402
from wildhold.store.archive import Archive  # noqa: E402
from wildhold.tasks.attempt import attempt_name  # noqa: E402
from wildhold.tasks.catalog import default_suite  # noqa: E402
from wildhold.tasks.suite import run_suite, score_dir  # noqa: E402

pytestmark = [pytest.mark.slow(seconds=30), pytest.mark.xdist_group("inspect"),
              pytest.mark.filterwarnings("ignore:Unclosed <MemoryObjectReceiveStream:ResourceWarning")]
MOCK = "mockllm/model"
STONE = "exploration/gather-stone-v1"
CABBAGE = "farming/harvest-cabbage-v1"  # its set-up starts the attempt past the tiny season's end


def _eval(tmp_path, model, **task_args):
    logs = inspect_eval("wildhold/tasks", model=model, task_args=task_args, display="none",
                        log_dir=str(tmp_path / "logs"), max_samples=1)
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _results(log) -> list[dict]:
    return sorted((s.scores["attempt_score"].metadata["result"] for s in log.samples), key=lambda r: (r["task"], r["repeat"]))


def _call(name: str, args: dict) -> ModelOutput:
    return _used(ModelOutput.for_tool_call(MOCK, name, args))


def _used(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=120, output_tokens=12, total_tokens=132)  # offline: no token counting
    return output


def test_wildhold_tasks_plays_the_attempts_tasks_run_plays_with_the_same_scripted_player(entry_point, tmp_path):
    ref = run_suite(default_suite().select([STONE, CABBAGE]), "oracle", 2, 1, tmp_path / "tasks")
    log = _eval(tmp_path, MOCK, suite=f"{STONE},{CABBAGE}", repeats=2, player="oracle", out=str(tmp_path / "inspect"))
    got = _results(log)
    assert got == ref  # status, progress, turns, ticks, trace, seed, clock and chain head, attempt by attempt
    assert {r["status"] for r in got} == {"success"}
    stone = default_suite().get(STONE)
    assert [r["seed"] for r in got if r["task"] == STONE] == [stone.seeds.seed(0), stone.seeds.seed(1)] == [0, 1]
    for sample in log.samples:  # each decision went to the served world as a tool call over MCP
        result = sample.scores["attempt_score"].metadata["result"]
        assert sum(m.role == "tool" for m in sample.messages) == result["turns"]
    # `tasks score` verifies these archives by re-simulation and as attempts, and reads the same results
    scored = score_dir(tmp_path / "inspect", verify=True)
    assert scored.results == ref and not scored.duplicates
    metrics = {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores}
    for measure in ("success", "progress"):
        assert metrics[measure]["mean"] == statistics.fmean(r["status"] == "success" for r in ref)
        assert {k for k in metrics[measure] if "/" in k} == \
            {"wildhold/category_exploration", "wildhold/category_farming", "wildhold/difficulty_easy"}


def test_a_scripted_player_s_malformed_calls_reach_the_world_as_in_tasks_run(entry_point, tmp_path):
    ref = run_suite(default_suite().select([STONE]), "random", 1, 1, tmp_path / "tasks")
    log = _eval(tmp_path, MOCK, suite=STONE, player="random", out=str(tmp_path / "inspect"))
    assert _results(log) == ref
    with Archive(next((tmp_path / "inspect").glob("*.wha"))) as a:
        refused = [e["data"]["code"] for e in a.events() if e["kind"] == "action_rejected"]
    assert "bad_arguments" in refused  # refused by the world, not by Inspect's check of a model's arguments


def test_a_model_making_the_oracle_s_moves_gets_its_attempt_and_is_not_called_after_success(entry_point, tmp_path):
    ref = run_suite(default_suite().select([STONE]), "oracle", 1, 1, tmp_path / "tasks")[0]
    with Archive(tmp_path / "tasks" / f"{attempt_name(default_suite().get(STONE), 0)}.wha") as a:
        moves = [(i.name, i.args) for i in a.inputs() if i.kind == "action"]
    outputs = [_call(n, args) for n, args in moves] + [_call("observe", {})] * 5
    log = _eval(tmp_path, get_model(MOCK, custom_outputs=outputs), suite=STONE, name="oracle",
                out=str(tmp_path / "inspect"))
    (got,) = _results(log)
    model_fields = {"llm_calls", "tokens", "cached_input_tokens", "dollars"}
    assert {k: v for k, v in got.items() if k not in model_fields} == ref  # the chain head too
    assert got["status"] == "success" and got["llm_calls"] == got["turns"] == len(moves)  # no call after success
    assert got["tokens"] == 132 * len(moves)
    assert score_dir(tmp_path / "inspect", verify=True).results == [got]
    # the same eval again into the same folder (a retried eval) reads the finished attempt, playing nothing
    again = _eval(tmp_path, get_model(MOCK, custom_outputs=[]), suite=STONE, name="oracle", out=str(tmp_path / "inspect"))
    assert _results(again) == [got] and not any(m.role == "assistant" for m in again.samples[0].messages)


def test_a_model_handed_the_compact_tools_plays_the_same_moves_through_act_and_its_identity_says_so(entry_point, tmp_path):
    ref = run_suite(default_suite().select([STONE]), "oracle", 1, 1, tmp_path / "tasks")[0]
    with Archive(tmp_path / "tasks" / f"{attempt_name(default_suite().get(STONE), 0)}.wha") as a:
        moves = [(i.name, i.args) for i in a.inputs() if i.kind == "action"]
    outputs = [_call("act", {"action": n, "args": args}) for n, args in moves]
    log = _eval(tmp_path, get_model(MOCK, custom_outputs=outputs), suite=STONE, name="oracle", tools="compact",
                out=str(tmp_path / "inspect"))
    (got,) = _results(log)
    assert got["status"] == "success" and got["turns"] == len(moves) and got["chain_head"] == ref["chain_head"]
    messages = log.samples[0].messages
    assert {c.function for m in messages if m.role == "assistant" for c in m.tool_calls or []} == {"act"}
    assert not [m.error for m in messages if m.role == "tool" and m.error]  # the served tools knew `act`
    with Archive(next((tmp_path / "inspect").glob("*.wha"))) as a:
        manifest = a.manifest
    assert manifest["tools_hash"] == tools_hash(horizon="hidden", profile="compact") != tools_hash(horizon="hidden")
    assert manifest["arm_identities"]["tasker"]["tools"] == "compact"
    with pytest.raises(Exception, match="bad_tools"):
        _eval(tmp_path, MOCK, suite=STONE, tools="tiny", out=str(tmp_path / "bad"))


def test_the_task_s_limits_end_a_model_s_attempt(entry_point, tmp_path):
    limits = default_suite().get(STONE).limits
    waits = get_model(MOCK, custom_outputs=itertools.repeat(_call("wait", {"ticks": 240})))
    (waited,) = _results(_eval(tmp_path, waits, suite=STONE, out=str(tmp_path / "waits")))
    assert waited["status"] == "failure" and waited["ticks"] == limits.ticks and waited["turns"] < limits.turns
    looks = get_model(MOCK, custom_outputs=itertools.repeat(_call("observe", {})))
    (looked,) = _results(_eval(tmp_path, looks, suite=STONE, out=str(tmp_path / "looks")))
    assert looked["status"] == "failure" and looked["turns"] == looked["llm_calls"] == limits.turns
    assert looked["ticks"] == limits.turns  # each turn is followed by a minute of world time
    stops = get_model(MOCK, custom_outputs=[_call("observe", {}), _used(ModelOutput.from_content(MOCK, "I am done."))])
    (stopped,) = _results(_eval(tmp_path, stops, suite=STONE, out=str(tmp_path / "stops")))
    assert stopped["status"] == "failure" and stopped["turns"] == 2 and stopped["policy"] == "mockllm-model"


def test_every_selection_is_a_suite_s_and_bad_ones_are_refused_with_a_code(tmp_path):
    from wildhold.inspectai.attempts import attempt
    from wildhold.inspectai.tasks import lite, task_suite

    suite = default_suite()
    assert [s.id for s in lite(out=str(tmp_path)).dataset] == list(suite.lite)
    assert len(task_suite(suite="full", out=str(tmp_path)).dataset) == len(suite.tasks)
    (sample,) = task_suite(suite=STONE, out=str(tmp_path)).dataset
    assert sample.input == suite.get(STONE).description
    assert sample.metadata == {"task": STONE, "category": "exploration", "difficulty": "easy"}
    with pytest.raises(ValueError, match="^unknown_task: "):
        task_suite(suite="exploration/no-such-task-v1", out=str(tmp_path))
    with pytest.raises(ValueError, match="^unknown_player: 'nobody'"):
        attempt(str(tmp_path), player="nobody")
    with pytest.raises(ValueError, match="^bad_clock: 'fast'"):
        attempt(str(tmp_path), clock="fast")
    with pytest.raises(ValueError, match="^bad_player_name: 'openai/gpt'"):
        attempt(str(tmp_path), name="openai/gpt")
