"""Inspect AI entry points: `wildhold/famine`, found through the `inspect_ai` entry point, run offline with
Inspect's mock model against a served world over MCP; the scores come from the verified archive, and the log
links the archive and the manifest. (The task suite's tasks: test_inspect_suite.py.)"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from wildhold.service.verify import verify_archive  # noqa: E402
from wildhold.store.archive import Archive  # noqa: E402

# Inspect's sample-event emitter (inspect_ai/hooks/_hooks.py) leaves its receive stream for the garbage collector,
# which warns; that stream is Inspect's own, so only that warning is let through.
pytestmark = [pytest.mark.slow(seconds=20), pytest.mark.xdist_group("inspect"),
              pytest.mark.filterwarnings("ignore:Unclosed <MemoryObjectReceiveStream:ResourceWarning")]
MOCK = "mockllm/model"


def _turn(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=120, output_tokens=12, total_tokens=132)  # offline: no token counting
    return output


def _mock():
    """Each conversation: observe, move north, then stop."""
    plays = (_turn(ModelOutput.for_tool_call(MOCK, "observe", {})),
             _turn(ModelOutput.for_tool_call(MOCK, "move", {"direction": "n"})),
             _turn(ModelOutput.from_content(MOCK, "I am done.")))
    return get_model(MOCK, custom_outputs=itertools.cycle(plays))


def test_inspect_eval_wildhold_famine_with_the_mock_model_scores_the_verified_archive(entry_point, tmp_path):
    logs = inspect_eval("wildhold/famine", model=_mock(), task_args={"seeds": "1", "out": str(tmp_path / "runs")},
                        display="none", log_dir=str(tmp_path / "logs"), max_samples=1)
    log = logs[0]
    assert log.status == "success", log.error
    assert log.eval.task == "wildhold/famine"
    names = {s.name for s in log.results.scores}
    assert {"fitness_index", "survival", "composite", "trial", "quests"} <= names
    assert all(set(s.metrics) == {"mean", "stderr"} for s in log.results.scores)
    sample = log.samples[0]
    assert [m.role for m in sample.messages][:3] == ["user", "assistant", "tool"]
    assert "tick" in str(sample.messages[2].content)  # the observe tool answered from the served world
    score = sample.scores["wildhold_score"]
    archive, manifest = Path(score.metadata["archive"]), Path(score.metadata["manifest"])
    verify_archive(archive)
    with Archive(archive) as a:
        m = a.manifest
    assert m["chain_head"] == score.metadata["chain_head"] and m["scenario"] == "famine"
    assert m["arm_identities"]["inspect"] == {"provider": "inspect", "model": MOCK, "harness": "inspect_ai"}
    assert json.loads(manifest.read_text())["chain_head"] == m["chain_head"]
    moves = [i for i in a_inputs(archive) if i.kind == "action" and i.name == "move"]
    assert moves  # the model's tool call reached the world as its agent's action


def a_inputs(path: Path):
    with Archive(path) as a:
        return list(a.inputs())


def test_the_registry_module_registers_the_five_tasks():
    from inspect_ai._util.registry import registry_info

    from wildhold.inspectai import _registry

    assert sorted(registry_info(getattr(_registry, n)).name for n in _registry.__all__) == \
        ["wildhold/famine", "wildhold/frontier", "wildhold/lite", "wildhold/season", "wildhold/tasks"]
    assert sys.modules["wildhold.inspectai.tasks"]
