"""`wildhold bench web --quick`: it measures the live view it names (every agent in it) and a viewer over a real
archive, and prints one JSON object last."""

from __future__ import annotations

import json

import pytest

from wildhold.bench.web import QUICK_AGENTS, bench_web

pytestmark = pytest.mark.slow(seconds=15)


def test_quick_web_bench_measures_the_live_view_and_the_viewer(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the bench keeps its archive under runs/bench
    returned = bench_web(as_json=True, quick=True)
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == returned
    live, view = returned["live"], returned["viewer"]
    assert live["agents"] == QUICK_AGENTS and live["map"] == "128x128" and live["cpu_ms_per_update"] > 0
    assert live["view_bytes"] > 1000 and view["events"] > 0 and view["kept_states"] >= 1
    assert 0 < view["scrub_median_s"] <= view["scrub_max_s"] and view["open_s"] > 0
