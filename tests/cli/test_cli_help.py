"""Every command's `--help` at 80 columns: every option, argument and environment variable name whole, no line
wider than the terminal, flags without a value placeholder, arguments named as click names them (ARCHIVE, [DIR]),
and the command lists giving each command's first sentence on lines broken between words only."""

from __future__ import annotations

import re

import pytest
import typer
from typer.core import TyperArgument, TyperGroup
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.helptext import argument_label, first_sentence

runner = CliRunner()
ROOT = typer.main.get_command(app)


def commands(group=ROOT, path=()):
    """(path, command) for the app and every command and subcommand under it."""
    yield path, group
    for name, command in getattr(group, "commands", {}).items():
        if not command.hidden:
            yield from commands(command, (*path, name))


def help_at_80(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("path, command", list(commands()), ids=lambda p: " ".join(p) if isinstance(p, tuple) else "")
def test_help_at_80_columns_shows_every_name_whole(path, command):
    text = help_at_80(path)
    lines = text.splitlines()
    assert not [line for line in lines if len(line) > 80], text
    assert "…" not in text and "<bool>" not in text
    usage = lines[0]
    assert usage.startswith("Usage: ") and "{" not in usage
    for param in command.params:
        if param.hidden:
            continue
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert re.search(rf"(^|[\s,/(]){re.escape(name)}([\s,;.)]|$)", text, re.M), (name, text)
        if isinstance(param, TyperArgument):
            assert argument_label(param) in usage and re.search(rf"^\s+{re.escape(argument_label(param))}\s", text, re.M)
        envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
        for envvar in envvars if getattr(param, "show_envvar", False) else ():
            assert re.search(rf"\b{envvar}\b", text), (envvar, text)
    for flag in (p for p in command.params if getattr(p, "is_flag", False) and not p.hidden):
        line = next(line.strip() for line in lines if line.strip().startswith(tuple(flag.opts)))
        assert "<" not in line.split("  ")[0], line
    if isinstance(command, TyperGroup):
        listed = words(text.split("Commands:")[1])
        for name, sub in command.commands.items():
            assert words(f"{name} {first_sentence(sub.help)}") in listed


def test_serve_help_at_80_columns_names_each_token_variable_whole():
    text = help_at_80(("serve",))
    for name in ("WILDHOLD_SIGNUP_TOKEN", "WILDHOLD_ADMIN_TOKEN", "WILDHOLD_SPECTATOR_TOKEN", "WILDHOLD_MCP_SESSIONS"):
        assert re.search(rf"(^|\s){name}[\];]", text, re.M), name
    assert re.search(r"^  --lobby / --no-lobby\s+Agents register", text, re.M)  # a flag: no placeholder


def test_a_docstring_split_mid_sentence_reads_as_one_sentence_in_the_command_list():
    text = help_at_80(())
    replay = words(text.split("\n  replay ")[1].split("\n  rules ")[0])
    assert replay.startswith("Re-simulate an archive from its seed and inputs; exit 1 unless the chain head, the state hash")
    assert "the final state file and the roster match" in replay  # the docstring breaks after "the final"


def test_fork_takes_quiet_as_run_does():
    for command in ("run", "fork", "demo", "resume"):
        assert any("-q" in p.opts for p in ROOT.commands[command].params), command
