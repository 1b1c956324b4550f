"""The surface benchmark runs end to end and reports every figure: each tool profile's catalogue within its budget,
and observe's default form smaller than the full one over the same looks."""

from __future__ import annotations

import json

from wildhold.bench.surface import bench_surface, observe_sizes


def test_quick_bench_prints_one_json_object_last_with_every_figure(capsys):
    returned = bench_surface(as_json=True, quick=True)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures == json.loads(json.dumps(returned))
    assert figures["catalogue"]["compact"]["tools"] <= 12 and figures["catalogue"]["compact"]["pass"]
    assert figures["catalogue"]["full"]["pass"] and figures["catalogue"]["full"]["tools"] > 60
    default, full = figures["observe"]["default"], figures["observe"]["full"]
    assert default["looks"] == full["looks"] > 10 and default["median"] < full["median"]


def test_the_default_form_is_never_larger_than_the_full_one_at_the_same_look():
    sizes = observe_sizes(ticks=120)
    assert all(d <= f for d, f in zip(sizes["default"], sizes["full"], strict=True))
