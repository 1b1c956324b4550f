"""Reading the documentation's pages as the tests check them: their fenced blocks, the markers before them
(`<!-- run -->`: the tests run it; `<!-- output -->`: what the run block before it prints, every line of it), and
the `wildhold` commands a shell block shows."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from paths_support import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
CONTROL = {"&&", "||", ";", "|", "&"}
REDIRECT = re.compile(r"^\d*(>>?|<)(&\d+)?$")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
ELIDED = re.compile(r"[│┃|.\s]+")


@dataclass(frozen=True)
class Block:
    page: str
    section: str  # the `## ` heading it sits under ("" before the first)
    line: int
    lang: str
    body: str
    marker: str  # "run", "output" or ""


def pages() -> list[Path]:
    """Every page of the site's sources (the hooks are code, not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().rsplit("\n", 1)[-1].strip()
        marker = re.fullmatch(r"<!--\s*(run|output)\s*-->", before)
        sections = re.findall(r"^## (.+)$", text[:m.start()], re.M)
        found.append(Block(str(page.relative_to(ROOT)), sections[-1] if sections else "", text.count("\n", 0, m.start()) + 1,
                           m["lang"], m["body"], marker[1] if marker else ""))
    return found


def shown_commands(body: str) -> list[list[str]]:
    """The arguments of each `wildhold` command in a shell block: continuation lines joined, comments, variable
    assignments before a command and redirections left out, pipelines and lists split."""
    commands = []
    for line in re.sub(r"\\\n", " ", body).splitlines():
        words = shlex.split(line, comments=True)
        piece: list[str] = []
        pieces = [piece]
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word in CONTROL:
                piece = []
                pieces.append(piece)
            elif REDIRECT.match(word):
                skip = not word.endswith(("&1", "&2"))
            elif word.startswith(">"):
                continue
            else:
                piece.append(word)
        for piece in pieces:
            while piece and ASSIGNMENT.match(piece[0]):
                piece.pop(0)
            if piece[:1] == ["wildhold"]:
                commands.append(piece[1:])
    return commands


def unshown(shown: str, printed: str) -> list[str]:
    """The lines of an output block that the run did not print. Lines are compared without the spaces around them;
    a line of only dots and table bars stands for lines left out, and a line ending in "..." for a printed line that
    begins as it does."""
    lines = {line.strip() for line in printed.splitlines()}
    missing = []
    for line in (s.strip() for s in shown.splitlines()):
        if not line or (ELIDED.fullmatch(line) and "..." in line):
            continue
        if line.endswith("...") and any(p.startswith(line[:-3].rstrip()) for p in lines):
            continue
        if line not in lines:
            missing.append(line)
    return missing
