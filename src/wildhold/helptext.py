"""`--help` that reads at 80 columns: click's plain layout, wrapped only between words.

Typer's boxed layout squeezes the help column until environment variable names are cut
(`WILDHOLD_SIGNUP_T…`), labels every flag `<bool>` and reads arguments as `{archive}`; click's
wrapper breaks `--no-lobby` at its hyphens. Here names, flags and paths are never broken, flags
take no placeholder, arguments read as `ARCHIVE` / `[DIR]`, and the command list gives each
command's first sentence, its docstring's line breaks joined.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, Sequence

from typer._click import Context, HelpFormatter
from typer.core import TyperArgument, TyperCommand, TyperGroup

COLUMN_MAX = 30  # the widest a name column grows before its help starts on the next line


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), max(width, 20), initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


class WholeWordsFormatter(HelpFormatter):
    """click's HelpFormatter, except that a line breaks only at a space."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        head = f"{'':>{self.current_indent}}{prefix or 'Usage: '}{prog} "
        indent = " " * (len(head) if self.width - len(head) >= 20 else self.current_indent + 4)
        self.write("\n".join(_wrap(args, self.width, head, indent)) + "\n")

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        self.write("\n\n".join("\n".join(_wrap(p, self.width, indent, indent)) for p in paragraphs) + "\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = COLUMN_MAX, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((len(name) for name, _ in rows), default=0), col_max) + col_spacing
        pad = " " * (self.current_indent + first_col)
        for name, text in rows:
            line = f"{'':>{self.current_indent}}{name}"
            if not text:
                self.write(line + "\n")
                continue
            if len(name) > first_col - col_spacing:
                self.write(line + "\n")
                line = pad
            lines = _wrap(text, self.width, line.ljust(len(pad)), pad)
            self.write("\n".join(lines) + "\n")


class HelpContext(Context):
    formatter_class = WholeWordsFormatter


def argument_label(param: Any) -> str:
    """ARCHIVE, [DIR], ARCHIVES...: an argument as the usage line and the Arguments list name it."""
    name = param.metavar or param.name.upper()
    if param.nargs != 1:
        name += "..."
    return name if param.required else f"[{name}]"


def first_sentence(help_text: str | None) -> str:
    """The first sentence of a docstring's first paragraph, its line breaks joined."""
    paragraph = " ".join(inspect.cleandoc(help_text or "").split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


def _usage_pieces(command: Any, ctx: Context) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    return pieces + [argument_label(p) for p in command.get_params(ctx) if isinstance(p, TyperArgument)]


class HelpCommand(TyperCommand):
    """A command whose help is laid out by WholeWordsFormatter, with click's names for arguments."""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return _usage_pieces(self, ctx)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if isinstance(param, TyperArgument):
                arguments.append((argument_label(param), record[1]))
            else:
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class HelpGroup(TyperGroup):
    """A group laid out like HelpCommand, listing each command with its first sentence."""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return [*_usage_pieces(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        HelpCommand.format_options(self, ctx, formatter)  # type: ignore[arg-type]
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = [(name, first_sentence(command.short_help or command.help)) for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
