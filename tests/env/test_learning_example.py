"""The learning example runs through the Gymnasium env and writes its returns and its chart."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "src" / "wildhold" / "examples" / "rl" / "reinforce_gather.py"
KEPT_CURVE = ROOT / "docs" / "assets" / "reinforce-curve.svg"  # the learning curve the RL guide shows


def _example():
    spec = importlib.util.spec_from_file_location("reinforce_gather", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reinforce_example_writes_its_curve(tmp_path: Path):
    curves = _example().main(["--episodes", "4", "--random-episodes", "2", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "returns.json").read_text())
    assert saved == curves and [len(v) for v in saved.values()] == [4, 4, 2]
    assert all(0.0 <= r <= 1.0 for v in saved.values() for r in v)
    chart = (tmp_path / "curve.svg").read_text()
    assert chart.startswith("<svg") and chart.count("<polyline") == 3


def test_the_guides_learning_curve_is_the_examples_own(tmp_path: Path):
    """The chart in the RL guide is what the example draws now, at its defaults: a change to the env or the learner
    that moves the curve fails here until the chart is drawn again (run the example, copy its curve.svg)."""
    curves = _example().main(["--out", str(tmp_path)])
    assert (tmp_path / "curve.svg").read_text() == KEPT_CURVE.read_text()
    trained, untrained = curves["REINFORCE (tabular)"], curves["its nine moves, untrained"]
    assert sum(trained[-20:]) > 2 * sum(untrained[-20:])  # it learns: what the chart is there to show
