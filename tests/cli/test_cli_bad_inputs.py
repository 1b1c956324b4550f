"""Every command, fed what a person gets wrong (a YAML file with an unclosed bracket, a missing cassette, an archive
with bytes flipped, a folder where a file goes, an unknown id, a bad option), answers in one sentence naming what is
wrong and exits 2 (bad usage) or 1 (a failure): never a traceback, a pydantic dump, a link or raw markup. A command
added without a row here fails the test."""

from __future__ import annotations

import re
import shutil
import socket
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import typer
from typer.testing import CliRunner

from wildhold.cli import app

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def commands(group=None, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every leaf command of the app, as its words ("tasks show")."""
    group = group or typer.main.get_command(app)
    out: set[str] = set()
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            out |= commands(command, (*prefix, name))
        else:
            out.add(" ".join((*prefix, name)))
    return out


def flipped(archive: Path, dest: Path) -> Path:
    """A copy of the archive with 10 bytes flipped inside the compressed events, as a disk or a transfer damages one."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo("events.jsonl")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    middle = start + info.compress_size // 2
    for i in range(10):
        data[middle + 7 * i] ^= 0xFF
    dest.write_bytes(bytes(data))
    return dest


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("bad")
    demo = root / "demo"
    assert runner.invoke(app, ["demo", "--scenario", "tiny", "--seed", "3", "--out", str(demo), "--quiet"]).exit_code == 0
    experiments = root / "experiments"
    shutil.copytree(EXAMPLES / "cassettes", experiments / "cassettes")
    good = (EXAMPLES / "offline-smoke.yaml").read_text()
    written = {
        "bracket": "name: x\nscenario: tiny\narms: [\n  - name: a\n",
        "indent": "name: x\nscenario: tiny\n  arms:\n - name: a\n",
        "fields": good.replace("provider: scripted", "provider: scriptd"),
        "no-cassette": good.replace("cassettes/explorer.json", "cassettes/missing.json"),
        "proxy": "prices: {}\nbudget_usd: -1\n",
    }
    out = {name: experiments / f"{name}.yaml" for name in written}
    for name, text in written.items():
        out[name].write_text(text)
    (root / "not-a-db").mkdir()
    (root / "not-a-db" / "match.sqlite").write_text("this is not a database")
    tasks = root / "tasks-out"
    tasks.mkdir()
    flipped(demo / "match.wildhold.zip", tasks / "attempt.wha")
    (root / "a-file").write_text("x")
    taken = socket.create_server(("127.0.0.1", 0))  # a port another program listens on
    yield {**out, "taken": taken.getsockname()[1], "root": root, "archive": demo / "match.wildhold.zip", "damaged": flipped(demo / "match.wildhold.zip",
                                                                                                 root / "damaged.zip"),
            "not-a-db": root / "not-a-db", "tasks": tasks, "a-file": root / "a-file", "empty": root / "empty"}
    taken.close()


# command -> [(arguments after it, exit code, what the sentence must say)]; {name} is a path from `files`
CASES: dict[str, list[tuple[str, int, str]]] = {
    "demo": [("--scenario atlantis --out {root}/d --quiet", 2, "unknown scenario"),
             ("--scenario tiny --out {a-file} --quiet", 2, "a-file")],
    "resume": [("{empty}", 2, "does not exist"), ("{not-a-db}", 1, "not a readable match database")],
    "replay": [("{damaged}", 1, "damaged.zip: the bytes are damaged"), ("{root}/nope.zip", 1, "not a Wildhold archive")],
    "rules": [("--format xml", 2, "xml"), ("--json --format md", 2, "two formats")],
    "serve": [("--data {root}/s --mcp-sessions 0", 2, "must be positive"),
              ("--data {root}/s --proxy {bracket}", 2, "bracket.yaml is not valid YAML: line 4, column 3"),
              ("--data {root}/s --proxy {proxy}", 2, "proxy.yaml: prices")],
    "report": [("{damaged}", 1, "damaged.zip: the bytes are damaged"), ("{archive} --rubric v0-nope", 1, "v0-nope")],
    "view": [("{damaged}", 1, "damaged.zip: the bytes are damaged"), ("{archive} --port 70000", 2, "65535")],
    "standin": [("--port 70000", 2, "less than or equal to 65535"), ("--port {taken}", 1, "cannot be used: Address already in use")],
    "leaderboard": [("{damaged}", 1, "damaged.zip")],
    "export": [("{damaged} --out {root}/x", 1, "damaged.zip: the bytes are damaged")],
    "run": [("{bracket} --out {root}/r1 -q", 2, "bracket.yaml is not valid YAML: line 4, column 3"),
            ("{indent} --out {root}/r2 -q", 2, "indent.yaml is not valid YAML: line 3, column 7"),
            ("{fields} --out {root}/r3 -q", 2, "fields.yaml: arms.2.provider: Input should be"),
            ("{no-cassette} --out {root}/r4 -q", 1, "cassette cassettes/missing.json is not a file"),
            ("{root}/nope.yaml --out {root}/r5", 2, "does not exist")],
    "sweep": [("{bracket} --out {root}/sw -q", 1, "bracket.yaml is not valid YAML: line 4, column 3")],
    "fork": [("{damaged} --at 10 --out {root}/f1", 1, "damaged.zip"),
             ("{archive} --at 10 --out {root}/f2 --replace nobody", 2, "NAME=POLICY"),
             ("{archive} --at 10 --out {root}/f3 --experiment {bracket}", 2, "bracket.yaml is not valid YAML")],
    "standin": [("--port notaport", 2, "--port")],
    "docs": [("--port notaport", 2, "--port"), ("--build {a-file}/inside", 2, "a-file is not a folder")],
    "compare": [("{root}/nope-a {root}/nope-b", 1, "nope-a")],
    "examples": [("{a-file}/inside", 1, "cannot write into")],
    "bench report": [("--archive {damaged} --quick", 1, "damaged.zip: unreadable event log")],
    "bench web": [("--bogus", 2, "--bogus")],
    "bench server": [("--bogus", 2, "--bogus")],
    "bench hardening": [("--only crahs", 2, "crash, diskfull, fuzz, load, soak"), ("--period 0", 2, "--period")],
    "bench programs": [("--bogus", 2, "--bogus")],
    "bench surface": [("--bogus", 2, "--bogus")],
    "bench sweep": [("--workers 0", 2, "--workers")],
    "bench engine": [("--bogus", 2, "--bogus")],
    "bench env": [("--bogus", 2, "--bogus")],
    "bench tasks": [("--workers 0", 2, "--workers")],
    "tasks list": [("extra", 2, "extra")],
    "tasks show": [("nope/x-v1", 2, "no task 'nope/x-v1'")],
    "tasks validate": [("--bogus", 2, "--bogus")],
    "tasks run": [("--suite nope/x-v1 --out {root}/t1 --quiet", 2, "no task 'nope/x-v1'"),
                  ("--suite lite --out {root}/t2 --experiment {fields}", 2, "fields.yaml: arms.2.provider"),
                  ("--suite lite --out {root}/t3 --experiment {no-cassette}", 2, "cassette cassettes/missing.json")],
    "tasks score": [("{root}/nope", 2, "is not a folder"), ("{tasks}", 1, "attempt.wha")],
    "tasks calibrate": [("--suite nope/x-v1 --out {root}/c1 --quiet", 2, "no task 'nope/x-v1'")],
}


def test_every_command_has_a_row_of_bad_inputs():
    assert commands() == set(CASES), "add the new command's bad inputs to CASES"


@pytest.mark.slow(seconds=60)
@pytest.mark.parametrize("command,args,code,says", [(c, *case) for c, cases in CASES.items() for case in cases],
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_a_bad_input_is_one_sentence_and_an_exit_code_never_a_traceback(files, command, args, code, says):
    argv = [*command.split(), *(re.sub(r"\{([\w-]+)\}", lambda m: str(files[m.group(1)]), a) for a in args.split())]
    result = runner.invoke(app, argv, env={"COLUMNS": "400"})
    output = result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    assert "Traceback" not in output and "errors.pydantic.dev" not in output and "[red]" not in output, output
    assert result.exit_code == code, output
    assert says in " ".join(output.split()), output
