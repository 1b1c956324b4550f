"""`wildhold sweep`: the smoke sweep on the local pool and on Ray gives the same archives; an interrupted sweep
resumes, skipping finished cells; failures are retried and recorded; the budget stops new cells; limits hold."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.runner.spec import Sweep, SweepError, cells
from wildhold.runner.sweep import run_sweep

runner = CliRunner()

pytestmark = [pytest.mark.slow(seconds=90), pytest.mark.xdist_group("sweep_smoke")]  # one local smoke sweep feeds several tests

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SMOKE = EXAMPLES / "sweep-smoke.yaml"


def _variant(tmp: Path, **changes) -> Path:
    """The smoke sweep with some fields changed, written beside a copy of its cassettes."""
    folder = tmp / "sweepfile"
    if not folder.exists():
        shutil.copytree(EXAMPLES / "cassettes", folder / "cassettes")
    data = yaml.safe_load(SMOKE.read_text())
    data.update(changes)
    path = folder / f"sweep-{len(list(folder.glob('*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _heads(outcome: dict) -> dict[str, list[str]]:
    return {r["cell"]: r["chain_heads"] for r in outcome["results"]}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return out, run_sweep(SMOKE, out, executor="local", workers=2)


def test_the_smoke_sweep_is_2_model_arms_and_1_scripted_x_3_seeds_x_2_protocols_each_with_its_own_archive(local):
    out, outcome = local
    sweep = Sweep.load(SMOKE)
    assert {a.provider for a in sweep.arms} == {"replay", "scripted"} and len(sweep.arms) == 3
    assert outcome["cells"] == outcome["finished"] == 18 and not outcome["failed"]
    archives = {out / "cells" / r["cell"] / r["archives"][0] for r in outcome["results"]}
    assert len(archives) == 18 and all(p.is_file() for p in archives)
    model_cell = out / "cells" / "explorer__tiny__s2__r0"
    assert (model_cell / "experiment.yaml").is_file() and (model_cell / "run" / "telemetry.jsonl").is_file()
    # a cell is a `wildhold run`: its experiment file replays it with the same chain head
    assert yaml.safe_load((model_cell / "experiment.yaml").read_text())["seed"] == 2
    # seeds give different worlds, so the three seeds' archives differ
    assert len({tuple(r["chain_heads"]) for r in outcome["results"] if r["arm"] == "producer"}) == 6
    assert outcome["spent_usd"] == pytest.approx(sum(r["cost_usd"] for r in outcome["results"])) and outcome["spent_usd"] > 0


def test_configurations_are_keyed_by_the_full_arm_identity_and_the_summary_has_intervals(local):
    out, outcome = local
    by_arm = {}
    for r in outcome["results"]:
        by_arm.setdefault(r["arm"], set()).add(r["config"])
    assert all(len(keys) == 1 for keys in by_arm.values()) and len(set().union(*by_arm.values())) == 3
    explorer = next(r for r in outcome["results"] if r["arm"] == "explorer")["identity"]
    assert explorer["provider"] == "replay" and explorer["model"] == "replay/explorer-v1"
    assert len(explorer["cassette_sha256"]) == 64 and explorer["caps"]["max_tool_calls"] == 40
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["rows"]) == 6
    row = next(r for r in summary["rows"] if r["label"] == "producer" and r["protocol"] == "tiny")
    index = row["measures"]["index"]
    assert index["n"] == 3 and index["method"] == "t" and index["ci95"][0] <= index["mean"] <= index["ci95"][1]
    assert "index" in (out / "summary.md").read_text()
    curves = json.loads((out / "curves.json").read_text())
    assert {(ln["label"], ln["protocol"]) for ln in curves["lines"]} == {
        (m, p) for m in ("replay/explorer-v1", "replay/stumbler-v1") for p in ("tiny", "famine")}
    from wildhold.eval.leaderboard import leaderboard

    tiny = [out / "cells" / r["cell"] / r["archives"][0] for r in outcome["results"] if r["protocol"] == "tiny"]
    board = leaderboard(tiny)  # the same archives, keyed the same way on the leaderboard
    assert {r["key"] for r in board["rows"]} == {r["config"] for r in outcome["results"]}
    page = (out / "summary.html").read_text()
    assert page.count("<svg") == 2 * 9 and "<polygon" in page  # each protocol: 3 measures x 3 axes, bands drawn


@pytest.mark.timeout(900)
def test_the_ray_executor_runs_the_same_cells_to_the_same_archives(local, tmp_path):
    pytest.importorskip("ray")
    outcome = run_sweep(SMOKE, tmp_path, executor="ray", workers=2)
    assert outcome["finished"] == 18 and not outcome["failed"]
    assert _heads(outcome) == _heads(local[1])
    assert outcome["peak_in_flight"].get("replay", 0) <= 2


class Interrupt(KeyboardInterrupt):
    pass


def test_an_interrupted_sweep_resumes_skipping_finished_cells_to_the_same_archives(local, tmp_path):
    small = _variant(tmp_path, seeds=[1, 2], protocols=[{"name": "tiny", "scenario": "tiny", "ticks": 60}],
                     limits={"replay": 1})
    seen = []

    def stop_after_two(result):
        seen.append(result["cell"])
        if len(seen) == 2:
            raise Interrupt()

    with pytest.raises(Interrupt):
        run_sweep(small, tmp_path / "out", workers=2, on_cell=stop_after_two)
    done_first = {p.parent.name for p in (tmp_path / "out" / "cells").glob("*/result.json")}
    assert 2 <= len(done_first) < 6
    ledger = [json.loads(line) for line in (tmp_path / "out" / "sweep.jsonl").read_text().splitlines()]
    assert any(r["kind"] == "cell_done" for r in ledger)

    resumed = run_sweep(small, tmp_path / "out", workers=2)
    assert resumed["skipped_finished"] == len(done_first) and resumed["ran_now"] == 6 - len(done_first)
    assert resumed["finished"] == 6
    full = _heads(local[1])
    assert _heads(resumed) == {k: full[k] for k in _heads(resumed)}
    assert resumed["peak_in_flight"].get("replay", 0) <= 1  # the limit held across both workers

    again = run_sweep(small, tmp_path / "out", workers=2)
    assert again["ran_now"] == 0 and again["skipped_finished"] == 6


def test_a_failing_cell_is_retried_a_bounded_number_of_times_with_each_error_recorded(tmp_path):
    path = _variant(tmp_path, seeds=[1], retries=1, protocols=[{"name": "tiny", "scenario": "tiny", "ticks": 30}])
    data = yaml.safe_load(path.read_text())
    (path.parent / "cassettes" / "broken.json").write_text("{not json")
    data["arms"] = [{"name": "broken", "provider": "replay", "model": "replay/broken", "cassette": "cassettes/broken.json",
                     "price": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}},
                    {"name": "producer", "provider": "scripted", "policy": "producer"}]
    path.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["sweep", str(path), "--out", str(tmp_path / "out"), "--workers", "2", "--quiet"])
    assert result.exit_code == 1, result.output
    assert "failed: broken__tiny__s1__r0 after 2 tries" in result.output
    ledger = [json.loads(line) for line in (tmp_path / "out" / "sweep.jsonl").read_text().splitlines()]
    errors = [r for r in ledger if r["kind"] == "cell_error"]
    assert [(r["attempt"], r["retry"]) for r in errors] == [(1, True), (2, False)]
    assert all("broken.json" in r["error"] or "JSON" in r["error"] or "Expecting" in r["error"] for r in errors)
    assert (tmp_path / "out" / "cells" / "producer__tiny__s1__r0" / "result.json").is_file()


def test_no_cell_starts_once_the_sweeps_budget_is_spent(tmp_path):
    path = _variant(tmp_path, budget_usd=0.1, seeds=[1, 2], protocols=[{"name": "tiny", "scenario": "tiny"}])
    outcome = run_sweep(path, tmp_path / "out", workers=1)
    assert outcome["finished"] == 1 and outcome["spent_usd"] >= 0.1  # the explorer's first cell spent it
    assert len(outcome["unlaunched_for_budget"]) == 5
    ledger = [json.loads(line) for line in (tmp_path / "out" / "sweep.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in ledger if r["kind"] == "budget_spent"] == ["budget_spent"]


@pytest.mark.parametrize("change, code", [
    ({"protocols": [{"name": "x", "scenario": "atlantis"}]}, "sweep_unknown_scenario"),
    ({"arms": [{"name": "p", "provider": "scripted", "policy": "napper"}]}, "sweep_unknown_policy"),
    ({"arms": [{"name": "e", "provider": "replay", "cassette": "cassettes/none.json",
                "price": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}}]}, "sweep_cassette_missing"),
    ({"protocols": [{"name": "t", "tasks": ["no/such-task"]}]}, "sweep_invalid"),
    ({"protocols": [{"name": "t", "tasks": ["no/such-task"], "arms": ["producer"]}]}, "sweep_unknown_task"),
    ({"seeds": [1, 1]}, "sweep_invalid"),
    ({"experiment": {"seed": 4}}, "sweep_invalid"),
    ({"arms": [{"name": "p", "provider": "scripted", "policy": "producer", "seat": "producer-1"}]}, "sweep_invalid"),
])
def test_a_bad_sweep_file_is_refused_with_a_stable_code(tmp_path, change, code):
    with pytest.raises(SweepError) as refused:
        Sweep.load(_variant(tmp_path, **change))
    assert refused.value.code == code
    result = CliRunner().invoke(app, ["sweep", str(_variant(tmp_path, **change)), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and f"(refused: {code})" in result.output


def test_a_task_protocol_runs_each_task_as_an_attempt_of_a_scripted_arm():
    sweep = Sweep.model_validate({**yaml.safe_load(SMOKE.read_text()),
                                  "protocols": [{"name": "lite", "tasks": ["lite"], "arms": ["producer"]}]})
    planned = cells(sweep)
    assert {c.arm for c in planned} == {"producer"} and all(c.task for c in planned)
    assert len(planned) == len({c.key for c in planned}) == len({c.task for c in planned}) * 3


def test_a_task_cell_is_an_attempt_with_its_own_archive_and_success_in_the_summary(tmp_path):
    path = _variant(tmp_path, seeds=[1, 2], arms=[{"name": "oracle", "provider": "scripted", "policy": "oracle"}],
                    protocols=[{"name": "gather", "tasks": ["exploration/gather-wood-v1", "crafting/craft-plank-v1"]}])
    outcome = run_sweep(path, tmp_path / "out", workers=2)
    assert outcome["finished"] == 4 and not outcome["failed"]
    assert all(r["archives"][0].endswith(".wha") for r in outcome["results"])
    row = json.loads((tmp_path / "out" / "summary.json").read_text())["rows"][0]
    assert row["measures"]["task_success"]["n"] == 2 and row["measures"]["task_success"]["mean"] == 1.0  # the oracle passes


def test_the_ray_executor_without_ray_installed_names_the_extra(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(app, ["sweep", str(SMOKE), "--out", str(tmp_path / "o"), "--executor", "ray", "--quiet"])
    assert result.exit_code == 1 and "pip install 'wildhold[ray]'" in result.output
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_the_sweeps_exports_hold_cells_telemetry_and_curve_points_and_the_worked_analysis_redraws_the_band(local, tmp_path):
    import subprocess
    import sys

    pq = pytest.importorskip("pyarrow.parquet")
    out, outcome = local
    result = CliRunner().invoke(app, ["export", str(out), "--out", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    cells = pq.read_table(tmp_path / "data" / "cells.parquet").to_pylist()
    assert len(cells) == 18 and {c["label"] for c in cells} == {"producer", "replay/explorer-v1", "replay/stumbler-v1"}
    telemetry = pq.read_table(tmp_path / "data" / "telemetry.parquet").to_pylist()
    assert {"session_start", "llm_call", "tool_call", "progress", "session_end"} <= {t["kind"] for t in telemetry}
    assert all(json.loads(t["data"]) is not None for t in telemetry)
    points = [json.loads(line) for line in (tmp_path / "data" / "curve_points.jsonl").read_text().splitlines()]
    assert {p["cell"] for p in points} == {r["cell"] for r in outcome["results"] if r["arm"] != "producer"}
    assert all(p["cost_usd"] > 0 for p in points)

    pytest.importorskip("pandas")
    script = EXAMPLES / "analysis" / "spend_band.py"
    ran = subprocess.run([sys.executable, str(script), str(tmp_path / "data"), "--y", "wealth_cents", "--out",
                          str(tmp_path / "band.svg")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "replay/explorer-v1" in ran.stdout and "replay/stumbler-v1" in ran.stdout
    assert ran.stdout.startswith("wealth (coins) (mean, min and max over seeds) at each budget of cumulative dollars")
    chart = (tmp_path / "band.svg").read_text()
    labels = re.findall(r'font-size="11"[^>]*>([^<]*)</text>', chart)
    assert "<polygon" in chart and "wealth (coins)" in chart and "cumulative dollars" in chart
    assert labels[0] == "0" and len(labels) >= 6 and any(s.startswith("$") for s in labels)  # numbers on both axes


def test_export_of_a_folder_that_is_not_a_sweep_is_refused(tmp_path):
    result = CliRunner().invoke(app, ["export", str(tmp_path), "--out", str(tmp_path / "x")])
    assert result.exit_code == 1 and "(refused: export_not_a_sweep)" in result.output


def test_a_fork_protocol_plays_each_arm_in_one_seat_of_every_parent_from_the_fork_tick(tmp_path):
    from wildhold.agents.runner import ScriptedRun
    from wildhold.service.verify import verify_archive
    from wildhold.store.archive import Archive

    parents = []
    for seed in (1, 2):
        run = ScriptedRun.start("tiny", seed, tmp_path / f"p{seed}.sqlite")
        run.run(until=700)
        parents.append(run.match.export(tmp_path / f"parent{seed}.wildhold.zip"))
        run.match.close()
    path = _variant(tmp_path, arms=[{"name": "producer", "provider": "scripted", "policy": "producer"},
                                    {"name": "trader", "provider": "scripted", "policy": "trader"}],
                    protocols=[{"name": "takeover", "ticks": 60,
                                "fork": {"parents": [str(p) for p in parents], "at": 500, "seat": "producer-1"}}])
    outcome = run_sweep(path, tmp_path / "out", workers=2)
    assert outcome["finished"] == 4 and not outcome["failed"]
    assert {(r["arm"], r["seed"]) for r in outcome["results"]} == {(a, s) for a in ("producer", "trader") for s in (1, 2)}
    for r in outcome["results"]:
        archive = tmp_path / "out" / "cells" / r["cell"] / r["archives"][0]
        verify_archive(archive)
        with Archive(archive) as a:
            fork = a.manifest["fork"]
        assert fork["tick"] == 500 and a.manifest["final_tick"] == 560 and r["scenario"] == "tiny"
        assert fork["agents"] == {"producer-1": {"from": "producer", "to": r["arm"]}}
    with pytest.raises(SweepError) as refused:
        Sweep.load(_variant(tmp_path, protocols=[{"name": "t", "fork": {"parents": [str(parents[0])], "at": 500,
                                                                        "seat": "nobody"}}],
                            arms=[{"name": "p", "provider": "scripted", "policy": "producer"}]))
    assert refused.value.code == "sweep_fork_parent"


def test_a_fork_protocol_seats_a_model_arm_in_every_parent_as_wildhold_fork_experiment_does(tmp_path):
    from wildhold.agents.runner import ScriptedRun
    from wildhold.eval.identity import agent_identity
    from wildhold.runner.fork import fork_checks
    from wildhold.service.verify import verify_archive
    from wildhold.store.archive import Archive

    run = ScriptedRun.start("tiny", 1, tmp_path / "p.sqlite")
    run.run(until=700)
    parent = run.match.export(tmp_path / "parent.wildhold.zip")
    run.match.close()
    explorer = yaml.safe_load(SMOKE.read_text())["arms"][0]
    path = _variant(tmp_path, arms=[explorer], seeds=[1],
                    protocols=[{"name": "takeover", "ticks": 60,
                                "fork": {"parents": [str(parent)], "at": 500, "seat": "producer-1"}}])
    outcome = run_sweep(path, tmp_path / "out", workers=1)
    assert outcome["finished"] == 1 and not outcome["failed"]
    (result,) = outcome["results"]
    assert result["cost_usd"] > 0 and result["tokens"] > 0 and result["measures"]["spend_usd"] == result["cost_usd"]
    archive = tmp_path / "out" / "cells" / result["cell"] / result["archives"][0]
    verify_archive(archive)
    assert all(same for *_, same in fork_checks(archive, parent))
    with Archive(archive) as a:
        m = a.manifest
    assert m["fork"]["agents"] == {"producer-1": {"from": "producer", "to": "explorer"}} and m["fork"]["tick"] == 500
    seat = next(agent for agent in m["agents"] if agent["name"] == "producer-1")
    assert agent_identity(m, seat)["model"] == "replay/explorer-v1" and 500 < m["final_tick"] <= 560


def test_a_sweep_killed_with_its_workers_resumes_to_the_same_archives(local, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    small = _variant(tmp_path, seeds=[1, 2], protocols=[{"name": "tiny", "scenario": "tiny", "ticks": 60}])
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-m", "wildhold.cli", "sweep", str(small), "--out", str(out), "--workers", "2",
                             "--quiet"], env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(3000):  # up to 300 s on a loaded machine; it usually takes a few
            if len(list((out / "cells").glob("*/result.json"))) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers, mid-sweep
        proc.wait(timeout=60)
    done_first = len(list((out / "cells").glob("*/result.json")))
    assert done_first >= 2

    resumed = run_sweep(small, out, workers=2)
    assert resumed["finished"] == 6 and resumed["skipped_finished"] == done_first
    full = _heads(local[1])
    assert _heads(resumed) == {k: full[k] for k in _heads(resumed)}


def test_compare_and_export_recompute_every_cell_from_its_archives_and_refuse_an_edited_result(local, tmp_path):
    out = tmp_path / "sweep"
    shutil.copytree(local[0], out)
    compared = runner.invoke(app, ["compare", "explorer", "stumbler", "--sweep", str(out)])
    assert compared.exit_code == 0 and "recomputed from its verified archives" in compared.output, compared.output
    results = json.loads((out / "results.json").read_text())
    cell = next(r for r in results["results"] if r["arm"] == "stumbler")
    cell["measures"]["index"] += 10.0  # a stumbler that did better than its archive says
    (out / "results.json").write_text(json.dumps(results))
    refused = runner.invoke(app, ["compare", "explorer", "stumbler", "--sweep", str(out)])
    line = refused.output.strip().splitlines()
    assert refused.exit_code == 1 and len(line) == 1 and "(refused: cell_unverified)" in line[0]
    assert cell["cell"] in line[0] and "index" in line[0]
    exported = runner.invoke(app, ["export", str(out), "--out", str(tmp_path / "x")])
    assert exported.exit_code == 1 and "cell_unverified" in exported.output and not (tmp_path / "x").exists()
    trusted = runner.invoke(app, ["compare", "explorer", "stumbler", "--sweep", str(out), "--trust"])
    assert trusted.exit_code == 0 and "not checked against their archives" in trusted.output


def test_a_resumed_sweep_runs_again_a_cell_whose_result_no_longer_follows_from_its_archive(local, tmp_path):
    small = _variant(tmp_path, seeds=[1], protocols=[{"name": "tiny", "scenario": "tiny", "ticks": 60}])
    first = run_sweep(small, tmp_path / "out", workers=2)
    path = next((tmp_path / "out" / "cells").glob("producer__*/result.json"))
    edited = json.loads(path.read_text())
    edited["measures"]["index"] = 99.0
    path.write_text(json.dumps(edited))
    again = run_sweep(small, tmp_path / "out", workers=2)
    assert again["ran_now"] == 1 and again["skipped_finished"] == 2
    assert _heads(again) == _heads(first)
    assert json.loads(path.read_text())["measures"]["index"] != 99.0
