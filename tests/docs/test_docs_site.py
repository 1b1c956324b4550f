"""The documentation site, as CI checks it with every commit: it builds strictly (every link, anchor and nav entry
resolves), fetches nothing from the internet, its generated reference covers every command, route, tool and rubric,
every `wildhold` command a page shows parses against the real command line, and the blocks marked `<!-- run -->` run,
section by section, in a fresh folder holding the examples, and exit 0, printing every line their `<!-- output -->`
blocks show."""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer
from docs_support import DOCS, Block, blocks, pages, shown_commands, unshown
from paths_support import ROOT
from typer.exceptions import Exit
from typer.core import TyperGroup

from wildhold.cli import app
from wildhold.handbook.site import build

CLI = typer.main.get_command(app)
SHELLS = ("sh", "bash", "console")
RUNNABLE = ("sh", "python")
EVERY_BLOCK = [b for page in pages() for b in blocks(page)]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build(out)  # strict: a broken link, anchor, nav entry or a page left out of the nav fails the build
    return out


# ---- the build -------------------------------------------------------------------------------------------------------


class Resources(html.parser.HTMLParser):
    """The URLs a page makes the browser fetch as it loads (scripts, styles, icons, images, frames)."""

    FETCHED = {"script": "src", "img": "src", "iframe": "src", "source": "src", "audio": "src", "video": "src",
               "embed": "src", "object": "data"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in self.FETCHED and a.get(self.FETCHED[tag]):
            self.urls.append(a[self.FETCHED[tag]])
        if tag == "link" and a.get("href") and a.get("rel") != "canonical":
            self.urls.append(a["href"])


def remote(url: str) -> bool:
    return bool(re.match(r"^(https?:)?//", url.strip(), re.I))


@pytest.mark.slow(seconds=30)
@pytest.mark.xdist_group("docs-site")
def test_the_site_builds_strictly_and_fetches_nothing_from_the_internet(site):
    built = sorted(site.rglob("*.html"))
    for page in pages():
        rel = page.relative_to(DOCS).with_suffix(".html")
        assert (site / rel).is_file(), f"{rel} was not built"
    fetched = {}
    for page in built:
        parser = Resources()
        parser.feed(page.read_text())
        fetched[page.relative_to(site)] = [u for u in parser.urls if remote(u)]
    assert not {p: u for p, u in fetched.items() if u}, "pages that would fetch from the internet"
    for sheet in site.rglob("*.css"):
        assert not re.search(r"(url\(\s*['\"]?|@import\s+['\"])(https?:)?//", sheet.read_text()), sheet
    assert "fonts.googleapis" not in "".join(p.read_text() for p in built)


@pytest.mark.slow(seconds=30)
@pytest.mark.xdist_group("docs-site")
def test_the_reference_is_generated_from_the_code_and_covers_all_of_it(site):
    from wildhold.eval.rubric import RUBRICS
    from wildhold.server.http import create_app
    from wildhold.server.mcp import tool_surface

    cli = (site / "reference" / "cli.html").read_text()
    paths = [" ".join(("wildhold", *p)) for p in _command_paths(CLI)]
    assert paths and all(f"<code>{p}</code>" in cli for p in paths), [p for p in paths if f"<code>{p}</code>" not in cli]
    assert "WILDHOLD_SIGNUP_TOKEN" in cli.replace("\\_", "_") and "--no-lobby" in cli
    for page, profile in (("mcp.html", "full"), ("mcp-compact.html", "compact")):
        mcp = (site / "reference" / page).read_text()
        assert all(f'id="{t["name"]}"' in mcp for t in tool_surface(profile=profile)), profile
    http = (site / "reference" / "http.html").read_text()
    spec = create_app(lambda: None, horizon="visible").openapi()
    assert all(f"<code>{path}</code>" in http for path in spec["paths"])
    assert (site / "reference" / "openapi.json").read_text().count('"/api/') >= len(spec["paths"]) - 2
    rubrics = (site / "reference" / "rubrics.html").read_text()
    assert all(f"<code>{v}</code>" in rubrics for v in RUBRICS)
    rules = (site / "reference" / "rules.html").read_text()
    assert 'id="actions"' in rules and "<code>gather</code>" in rules
    files = (site / "reference" / "files.html").read_text()
    for field in ("archive_head", "chain_head", "content_digest", "results[].chain_head"):
        assert f"<code>{field}</code>" in files, field


def _command_paths(group, path=()):
    for name, command in group.commands.items():
        if not command.hidden:
            yield (*path, name)
            if isinstance(command, TyperGroup):
                yield from _command_paths(command, (*path, name))


def test_the_install_page_names_every_extra_and_counts_all_right():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    text = (DOCS / "install.md").read_text()
    for extra in set(extras) - {"dev"}:
        assert f"pip install '.[{extra}]'" in text, extra
    (inside,) = re.findall(r"wildhold\[([\w,]+)\]", " ".join(extras["all"]))
    words = {5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"all {words[len(inside.split(','))]} above" in text
    assert [line.split("#")[0].split("'.[")[1].split("]")[0] for line in text.splitlines()
            if line.startswith("pip install '.[")][:len(inside.split(","))] == inside.split(",")


def test_the_readme_is_the_front_door_with_the_two_commands_first():
    text = (ROOT / "README.md").read_text()
    first = re.search(r"```\n(.*?)```", text, re.S)[1].splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert "demo: $(STAMP)\n\t$(BIN)/wildhold demo --out runs/demo" in makefile
    assert "`wildhold docs`" in text and len(text.splitlines()) < 60
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link
    getting_started = (DOCS / "getting-started.md").read_text()
    assert "wildhold demo --out runs/demo" in getting_started  # what `make demo` runs, shown and run on that page


# ---- the commands the pages show ------------------------------------------------------------------------------------


def parse(args: list[str]) -> None:
    """Parse a command line as `wildhold` would, without running it: every command, option, choice and required
    argument is checked against the real commands."""
    command, ctx, name = CLI, None, "wildhold"
    while True:
        try:
            ctx = command.make_context(name, list(args), parent=ctx)
        except Exit:  # --help, --version: parsed
            return
        if not isinstance(command, TyperGroup):
            return
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return
        name, args = rest[0], rest[1:]
        command = command.get_command(ctx, name)
        assert command is not None, f"no command {name!r}"


SHELL_BLOCKS = [b for b in EVERY_BLOCK if b.lang in SHELLS] + [
    Block("README.md", "", 0, "sh", m[1], "") for m in re.finditer(r"```[a-z]*\n(.*?)```", (ROOT / "README.md").read_text(), re.S)]


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: f"{b.page}:{b.line}")
def test_every_command_a_page_shows_parses(block):
    for args in shown_commands(block.body):
        try:
            parse(args)
        except Exception as exc:
            pytest.fail(f"{block.page} line {block.line}: wildhold {' '.join(args)}: {exc}", pytrace=False)


def test_a_stale_command_would_not_parse_and_a_shown_line_is_read_as_a_shell_reads_it():
    for stale in (["demo", "--bogus"], ["serve", "--clock", "sundial"], ["tasks", "runn"], ["report"]):
        with pytest.raises(Exception):
            parse(stale)
    body = "OPENAI_API_KEY=... wildhold run a.yaml \\\n    --out r -q > log.txt 2>&1  # a comment\nwildhold standin &\n"
    assert shown_commands(body) == [["run", "a.yaml", "--out", "r", "-q"], ["standin"]]


def test_an_output_block_must_be_what_the_run_printed_but_may_leave_lines_out():
    printed = "  Table  \n┃ agent ┃ wealth ┃\n│ a     │   1.00 │\n│ b     │   2.00 │\nRubric 2.5: long, wrapped text\n"
    shown = "Table\n┃ agent ┃ wealth ┃\n│ a     │   1.00 │\n│ ...   │        │\n...\nRubric 2.5: long...\n"
    assert unshown(shown, printed) == []
    assert unshown("│ a     │   3.00 │\nRubric 2.6: long...", printed) == ["│ a     │   3.00 │", "Rubric 2.6: long..."]


def test_the_pages_show_commands_and_run_some_of_them():
    assert sum(len(shown_commands(b.body)) for b in SHELL_BLOCKS) > 40
    for page in ("getting-started.md", "evaluate.md", "reproduce.md", "rl.md", "programs.md", "install.md"):
        assert any(b.marker == "run" for b in EVERY_BLOCK if b.page == f"docs/{page}"), page
    assert all(b.lang in RUNNABLE for b in EVERY_BLOCK if b.marker == "run")


# ---- the blocks the pages run ---------------------------------------------------------------------------------------


SECTIONS = sorted({(b.page, b.section) for b in EVERY_BLOCK if b.marker == "run"})


@pytest.fixture(scope="module")
def shims(tmp_path_factory) -> Path:
    """`wildhold` and `python` as a reader's shell finds them: this interpreter, with the tests' import path."""
    folder = tmp_path_factory.mktemp("bin")
    (folder / "wildhold").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wildhold.cli "$@"\n')
    (folder / "wildhold").chmod(0o755)
    (folder / "python").symlink_to(sys.executable)
    return folder


@pytest.fixture(scope="module")
def reader_env(shims) -> dict[str, str]:
    """A reader's environment: the shims first on PATH, the tests' import path, a terminal 100 columns wide."""
    return {**os.environ, "PATH": f"{shims}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "COLUMNS": "100", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())}


@pytest.fixture(scope="module")
def examples(shims, reader_env, tmp_path_factory) -> Path:
    """The examples as `wildhold examples` copies them out, once; each section gets its own copy."""
    folder = tmp_path_factory.mktemp("examples") / "examples"
    subprocess.run([str(shims / "wildhold"), "examples", str(folder)], env=reader_env, check=True, capture_output=True,
                   timeout=120)
    return folder


@pytest.mark.slow(seconds=60)
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page, section", SECTIONS, ids=[f"{p.removeprefix('docs/')}#{s or 'top'}" for p, s in SECTIONS])
def test_the_blocks_a_page_runs_run(page, section, reader_env, examples, tmp_path):
    shutil.copytree(examples, tmp_path / "examples")
    last = None
    for block in (b for b in EVERY_BLOCK if (b.page, b.section) == (page, section)):
        if block.marker == "run":
            if block.lang == "python":
                script = tmp_path / f"block_{block.line}.py"
                script.write_text(block.body)
                argv = [sys.executable, str(script)]
            else:
                argv = ["bash", "-euo", "pipefail", "-c", block.body]
            last = subprocess.run(argv, cwd=tmp_path, env=reader_env, capture_output=True, text=True, timeout=840)
            assert last.returncode == 0, f"{page} line {block.line} exited {last.returncode}:\n{last.stdout}\n{last.stderr}"
        elif block.marker == "output":
            assert last is not None, f"{page} line {block.line}: an output block with no run block before it"
            missing = unshown(block.body, last.stdout)
            assert not missing, f"{page} line {block.line} shows lines the run did not print: {missing}\n{last.stdout}"
