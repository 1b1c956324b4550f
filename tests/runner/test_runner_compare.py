"""`wildhold compare`: two configurations of a sweep, or two sweeps, side by side with the difference, its
interval and the test of the same design (paired over shared seeds); Markdown, HTML with every string escaped, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.runner.compare import CompareError, compare

runner = CliRunner()


def _cell(arm: str, model: str, seed: int, index: float, protocol: str = "tiny") -> dict:
    ident = {"provider": "replay", "model": model, "cassette_sha256": arm * 8}
    from wildhold.eval.identity import identity_key

    return {"cell": f"{arm}__{protocol}__s{seed}__r0", "arm": arm, "protocol": protocol, "seed": seed, "repeat": 0,
            "identity": ident, "config": identity_key(ident), "measures": {"index": index, "spend_usd": 0.1 * seed}}


def _sweep(folder: Path, cells: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"results": cells}))
    return folder


def test_two_configurations_of_a_sweep_side_by_side_with_difference_interval_and_paired_test(tmp_path):
    cells = [_cell("a", "m-a", s, 50.0 + s) for s in range(1, 7)] + [_cell("b", "m-b", s, 55.0 + s) for s in range(1, 7)]
    sweep = _sweep(tmp_path / "s", cells)
    result = compare("a", "b", sweep, trust=True)
    index = next(m for m in result["protocols"][0]["measures"] if m["measure"] == "index")
    assert index["a"]["n"] == index["b"]["n"] == 6 and index["difference"]["diff"] == 5.0
    assert index["difference"]["method"] == "paired t" and index["difference"]["n"] == 6
    assert index["difference"]["ci95"] == [5.0, 5.0] and index["difference"]["p"] == 0.0  # every pair differs by 5
    md = runner.invoke(app, ["compare", "a", "b", "--sweep", str(sweep), "--trust"])
    assert md.exit_code == 0 and "| index |" in md.output
    assert "| +5.00 | [+5.00, +5.00] | p=0 (paired t, 6 pairs) |" in md.output


def test_the_interval_beside_the_paired_test_is_the_paired_interval(tmp_path):
    """Three seeds: B - A's interval is the paired t-interval of the differences, so it excludes 0 exactly when
    the paired p beside it is under 0.05 (one side that moves every seed the same way, one that does not)."""
    a = {1: 50.1, 2: 50.1, 3: 49.7}
    for name, b in (("lower", {1: 48.9, 2: 49.2, 3: 48.1}), ("mixed", {1: 51.0, 2: 48.9, 3: 49.5})):
        cells = [_cell("a", "m-a", s, v) for s, v in a.items()] + [_cell("b", "m-b", s, v) for s, v in b.items()]
        d = next(m for m in compare("a", "b", _sweep(tmp_path / name, cells), trust=True)["protocols"][0]["measures"]
                 if m["measure"] == "index")["difference"]
        ref = stats.ttest_rel(list(b.values()), list(a.values()))
        assert d["ci95"] == pytest.approx(list(ref.confidence_interval(0.95)), abs=1e-4)
        assert d["p"] == pytest.approx(ref.pvalue, rel=1e-3)
        assert (d["ci95"][0] > 0 or d["ci95"][1] < 0) == (d["p"] < 0.05) == (name == "lower")


def test_a_sweep_against_an_identical_copy_of_itself_differs_by_exactly_zero(tmp_path):
    cells = [_cell("a", "m-a", s, v) for s, v in ((1, 50.1), (2, 50.1), (3, 49.7))]
    one, two = _sweep(tmp_path / "one", cells), _sweep(tmp_path / "two", cells)
    for m in compare(str(one), str(two), trust=True)["protocols"][0]["measures"]:
        assert m["difference"]["diff"] == 0.0 and m["difference"]["ci95"] == [0.0, 0.0], m
    md = runner.invoke(app, ["compare", str(one), str(two), "--trust"])
    assert "| +0.00 | [+0.00, +0.00] | p=1 (paired t, 3 pairs) |" in md.output, md.output


def test_two_sweep_folders_compare_their_one_configuration_each(tmp_path):
    one = _sweep(tmp_path / "one", [_cell("a", "m-a", s, 50.0) for s in (1, 2)])
    two = _sweep(tmp_path / "two", [_cell("a", "m-a2", s, 40.0) for s in (2, 3)])
    result = compare(str(one), str(two), trust=True)
    index = result["protocols"][0]["measures"][0]
    assert index["difference"]["diff"] == -10.0 and index["difference"]["seeds"] == [2]
    assert index["difference"]["method"] == "Welch t"  # one shared seed is no paired design


def test_every_string_is_escaped_in_the_html(tmp_path):
    cells = [_cell("a", "<script>x</script>", s, 1.0, protocol="p&q") for s in (1, 2)] + \
            [_cell("b", "m-b", s, 2.0, protocol="p&q") for s in (1, 2)]
    sweep = _sweep(tmp_path / "s", cells)
    page = runner.invoke(app, ["compare", "a", "b", "--sweep", str(sweep), "--format", "html", "--trust"]).output
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page and "p&amp;q" in page


def test_an_ambiguous_or_unknown_side_is_refused_with_a_stable_code(tmp_path):
    sweep = _sweep(tmp_path / "s", [_cell("a", "m-a", 1, 1.0), _cell("b", "m-b", 1, 1.0)])
    for args, code in (([str(sweep), str(sweep)], "compare_ambiguous"), (["a", "zzz", "--sweep", str(sweep)], "compare_unknown_config"),
                       (["a", "b"], "compare_not_a_sweep")):
        out = runner.invoke(app, ["compare", *args])
        assert out.exit_code == 1 and f"(refused: {code})" in out.output, out.output
    with pytest.raises(CompareError) as refused:
        compare(f"{sweep}@a", f"{tmp_path}@b")
    assert refused.value.code == "compare_not_a_sweep"
