"""The learning example runs through the Gymnasium env and writes its returns and its chart."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "wildhold" / "examples" / "rl" / "reinforce_gather.py"


def test_the_reinforce_example_writes_its_curve(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("reinforce_gather", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    curves = module.main(["--episodes", "4", "--random-episodes", "2", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "returns.json").read_text())
    assert saved == curves and [len(v) for v in saved.values()] == [4, 4, 2]
    assert all(0.0 <= r <= 1.0 for v in saved.values() for r in v)
    chart = (tmp_path / "curve.svg").read_text()
    assert chart.startswith("<svg") and chart.count("<polyline") == 3
