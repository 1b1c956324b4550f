"""Failures of reading what a person wrote (an experiment, a sweep, a proxy file, tool arguments) as one sentence
each: where in the file or the arguments, and what is wrong there; never a parser's dump or a link."""

from __future__ import annotations

import errno
import json
import sqlite3
import zipfile
import zlib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class UnreadableFile(ValueError):
    """A file that cannot be read as what it should be; the message names it and says where and why."""


def describe_validation(exc: ValidationError, whole: str = "arguments") -> str:
    """The first three problems, each as `key.path: what is wrong` (`whole` when it is the whole value's); the input
    itself is left out (it may be large), and so is pydantic's link."""
    parts = []
    for err in exc.errors(include_url=False)[:3]:
        where = ".".join(str(p) for p in err["loc"]) or whole
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def describe_yaml(exc: yaml.YAMLError) -> str:
    """A YAML parser's complaint as `line L, column C: problem`."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}"


def read_yaml(path: Path | str) -> Any:
    """The data of a YAML file, or UnreadableFile naming it: missing, a folder, not text, or not YAML (with where)."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UnreadableFile(f"{path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{path} is a folder; give the YAML file in it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableFile(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UnreadableFile(f"{path} is not valid YAML: {describe_yaml(exc)}; fix it there") from None


def read_model(path: Path | str, model: type[M]) -> M:
    """A YAML file as `model`, or UnreadableFile naming the file and the first keys at fault."""
    data = read_yaml(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UnreadableFile(f"{path}: {describe_validation(exc, 'the file')}") from None


DAMAGE = (zipfile.BadZipFile, zlib.error, json.JSONDecodeError, UnicodeDecodeError, EOFError)


def damaged(what: Path | str, exc: BaseException) -> str:
    """The sentence for a file whose bytes cannot be read (`exc`, one of DAMAGE)."""
    return f"{what}: the bytes are damaged and cannot be read ({type(exc).__name__}: {exc}); use an intact copy"


def explain(exc: BaseException, files: list[Path]) -> tuple[str, int]:
    """An exception a command did not turn into a sentence itself, as one (naming the files the command was given,
    `files`), and the exit code: 2 when what the person gave is unusable (a missing path, a file that does not
    parse or validate), 1 for a failure (bytes damaged on disk, anything else)."""
    given = ", ".join(str(f) for f in files) or "the input"
    if isinstance(exc, UnreadableFile):
        return str(exc), 2
    if isinstance(exc, OSError) and exc.filename is not None:
        what = {errno.ENOENT: "does not exist; check the path", errno.EISDIR: "is a folder, not a file",
                errno.ENOTDIR: "is not a folder", errno.EACCES: "may not be read or written by you"}
        return f"{exc.filename} {what.get(exc.errno or 0, f'cannot be used ({exc.strerror})')}", 2
    if isinstance(exc, yaml.YAMLError):
        return f"{given} is not valid YAML: {describe_yaml(exc)}; fix it there", 2
    if isinstance(exc, ValidationError):
        return f"{given}: {describe_validation(exc, 'the file')}", 2
    if isinstance(exc, DAMAGE):
        return damaged(given, exc), 1
    if isinstance(getattr(exc, "code", None), str):  # a refusal with its stable code, as a command says its own
        return f"{exc} (refused: {exc.code})", 1  # type: ignore[attr-defined]
    if isinstance(exc, sqlite3.DatabaseError):
        return f"{given}: not a readable match database ({exc}); give the match.sqlite a command wrote", 1
    return (f"{type(exc).__name__}: {exc} (this is a fault in wildhold, not in what you gave; --debug shows where, "
            "for a report)"), 1
