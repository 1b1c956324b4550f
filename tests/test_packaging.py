"""Packaging: compatible ranges and a lock, extras that fail in one sentence, and a wheel that carries its data.

A plain `pip install wildhold` has no provider SDK, no pyarrow and no httpx; the offline paths (demo, a
run of replay and scripted arms through the served world) must never reach for them, and the features
that do need one must say which extra to install.
"""

from __future__ import annotations

import email
import importlib.resources
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from wildhold.extras import EXTRAS, MissingExtra, require

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "wildhold"
OPTIONAL = ("openai", "anthropic", "google.genai", "pyarrow", "httpx", "gymnasium", "pettingzoo", "ray", "inspect_ai")

# Runs the CLI with every optional module unimportable, reporting each attempt to import one.
BLOCKED_CLI = """
import sys
OPTIONAL = {optional!r}
class Block:
    def find_spec(self, name, path=None, target=None):
        if any(name == m or name.startswith(m + ".") for m in OPTIONAL):
            print("IMPORTED", name, file=sys.stderr)
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
for m in [m for m in sys.modules if any(m == o or m.startswith(o + ".") for o in OPTIONAL)]:
    del sys.modules[m]
from wildhold.cli import app
app(sys.argv[1:], prog_name="wildhold")
"""


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _blocked_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "blocked_cli.py"
    script.write_text(BLOCKED_CLI.format(optional=OPTIONAL))
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)


def test_runtime_dependencies_are_ranges_and_the_extras_are_optional():
    project = _project()
    runtime = project["dependencies"]
    assert not [r for r in runtime if "==" in r], "runtime dependencies are ranges, not pins"
    assert all("<" in r or "~=" in r for r in runtime), "every range has an upper bound"
    names = {_name(r) for r in runtime}
    assert not names & {"openai", "anthropic", "google-genai", "pyarrow", "httpx", "ray"}
    extras = project["optional-dependencies"]
    assert {_name(r) for r in extras["openai"]} == {"openai"}
    assert {_name(r) for r in extras["anthropic"]} == {"anthropic"}
    assert {_name(r) for r in extras["google"]} == {"google-genai"}
    assert {_name(r) for r in extras["parquet"]} == {"pyarrow"}
    assert {_name(r) for r in extras["rl"]} == {"gymnasium", "pettingzoo", "numpy"}
    assert {_name(r) for r in extras["ray"]} == {"ray"}
    assert {_name(r) for r in extras["docs"]} == {"mkdocs", "mkdocs-material"}
    assert extras["all"] == ["wildhold[openai,anthropic,google,parquet,rl,ray]"]
    assert {"wildhold[all]", "wildhold[docs]"} <= set(extras["dev"]) and "httpx" in {_name(r) for r in extras["dev"]}
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0, January 2004" in (ROOT / "LICENSE").read_text()


def test_the_lock_pins_every_dependency_exactly():
    lock = (ROOT / "requirements.lock").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)$", lock, re.M))
    pinned = {n.lower().replace("_", "-").replace(".", "-") for n in pins}
    lines = [ln for ln in lock.splitlines() if ln and not ln.startswith("#") and not ln.startswith(" ")]
    assert len(lines) == len(pins), "every requirement in the lock is an exact pin"
    assert not [ln for ln in lines if ln.startswith("wildhold")], "the lock does not constrain Wildhold itself"
    project = _project()
    wanted = [*project["dependencies"], *[r for rs in project["optional-dependencies"].values() for r in rs]]
    missing = {_name(r) for r in wanted if not r.startswith("wildhold[")} - pinned
    assert not missing, f"not in requirements.lock (run `make lock`): {sorted(missing)}"


@pytest.mark.parametrize("extra, module", [(extra, module) for extra in sorted(EXTRAS) for module in EXTRAS[extra][0]])
def test_a_missing_extra_is_one_sentence_naming_it(extra, module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # what `import` sees when the package is not installed
    with pytest.raises(MissingExtra) as info:
        require(extra, "this feature")
    message = str(info.value)
    assert message.endswith(f"pip install 'wildhold[{extra}]'") and "\n" not in message
    assert isinstance(info.value, ImportError)


def test_every_extra_but_the_meta_ones_says_what_it_needs():
    extras = set(_project()["optional-dependencies"])
    assert extras - {"all", "dev"} == set(EXTRAS)


def test_importing_the_rl_faces_without_their_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)
    for name in [m for m in sys.modules if m == "wildhold.env" or m.startswith("wildhold.env.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtra, match=r"^wildhold.env needs Gymnasium and PettingZoo: pip install 'wildhold\[rl\]'$"):
        importlib.import_module("wildhold.env")


# Runs a script with the named modules unimportable.
BLOCKED_SCRIPT = """
import runpy, sys
BLOCKED = {blocked!r}
class Block:
    def find_spec(self, name, path=None, target=None):
        if any(name == m or name.startswith(m + ".") for m in BLOCKED):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.argv = [{script!r}, *sys.argv[1:]]
runpy.run_path({script!r}, run_name="__main__")
"""


@pytest.mark.parametrize("script, blocked, extra", [
    ("analysis/spend_band.py", ("pandas",), "analysis"),
    ("analysis/spend_band.py", ("pyarrow",), "analysis"),
    ("rl/reinforce_gather.py", ("gymnasium",), "rl"),
])
def test_an_example_without_its_extra_ends_with_one_line_naming_it(script, blocked, extra, tmp_path):
    runner = tmp_path / "blocked.py"
    runner.write_text(BLOCKED_SCRIPT.format(blocked=blocked, script=str(PACKAGE / "examples" / script)))
    done = subprocess.run([sys.executable, str(runner), "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.strip().splitlines() == [f"error: examples/{script} needs {EXTRAS[extra][1]}: "
                                                f"pip install 'wildhold[{extra}]'"]


def test_examples_are_package_data_and_the_checkout_link_points_at_them():
    shipped = importlib.resources.files("wildhold") / "examples"
    for name in ("offline-smoke.yaml", "programs-smoke.yaml", "sweep-smoke.yaml", "cassettes/explorer.json", "programs/farmer.py"):
        assert (shipped / name).is_file(), name
    assert (ROOT / "examples").resolve() == PACKAGE / "examples"


@pytest.mark.slow
def test_offline_paths_never_import_an_extra_and_the_rest_name_theirs(tmp_path):
    """demo and a replay + scripted run go through with every optional module blocked; export, an OpenAI arm
    and the RL faces' table stop at once with the sentence that names the extra, writing nothing."""
    demo = _blocked_cli(tmp_path, "demo", "--quiet", "--scenario", "tiny", "--out", "demo")
    assert demo.returncode == 0 and "IMPORTED" not in demo.stderr, demo.stdout + demo.stderr
    assert (tmp_path / "demo" / "match.wildhold.zip").is_file()

    run = _blocked_cli(tmp_path, "run", str(PACKAGE / "examples" / "offline-smoke.yaml"), "--out", "r", "--quiet")
    assert run.returncode == 0 and "IMPORTED" not in run.stderr, run.stdout + run.stderr
    assert (tmp_path / "r" / "world" / "match.wildhold.zip").is_file()

    export = _blocked_cli(tmp_path, "export", "demo/match.wildhold.zip", "--out", "x")
    assert export.returncode == 1, export.stdout + export.stderr
    assert "error: exporting to Parquet needs pyarrow: pip install 'wildhold[parquet]'" in export.stdout
    assert not (tmp_path / "x").exists()

    model = _blocked_cli(tmp_path, "run", str(PACKAGE / "examples" / "openai-tiny.yaml"), "--out", "o", "--quiet")
    assert model.returncode == 2, model.stdout + model.stderr
    assert "error: the openai arm 'gpt' needs the OpenAI SDK: pip install 'wildhold[openai]'" in model.stdout
    assert not (tmp_path / "o").exists()

    rl = _blocked_cli(tmp_path, "rules", "--env")
    assert rl.returncode == 2, rl.stdout + rl.stderr
    assert "error: wildhold rules --env needs Gymnasium and PettingZoo: pip install 'wildhold[rl]'" in rl.stdout


def _shipped_files() -> set[str]:
    """Every file under src/wildhold a wheel must carry (modules and data alike), as wheel paths."""
    return {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


@pytest.mark.slow
def test_the_wheel_carries_examples_data_licence_and_extras(tmp_path):
    """Build the wheel offline from a copy of the tree (so no build/ is left here) and read it, without installing it."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("building needs setuptools>=77 (the dev extras install it)")
    src = tmp_path / "tree"
    shutil.copytree(PACKAGE, src / "src" / "wildhold", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path / "dist"), str(src)], check=True, capture_output=True, timeout=240)
    (wheel,) = (tmp_path / "dist").glob("wildhold-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = email.message_from_bytes(zf.read(meta_name))
    missing = _shipped_files() - names
    assert not missing, f"files under src/wildhold the wheel leaves out (add them to package-data): {sorted(missing)}"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert meta["License-Expression"] == "Apache-2.0" and meta.get_all("License-File") == ["LICENSE"]
    assert set(meta.get_all("Provides-Extra")) >= {"openai", "anthropic", "google", "parquet", "all", "dev"}
    unconditional = {_name(r) for r in meta.get_all("Requires-Dist") if "extra ==" not in r}
    assert not unconditional & {"openai", "anthropic", "google-genai", "pyarrow", "httpx"}
    assert "httpx2" in unconditional
