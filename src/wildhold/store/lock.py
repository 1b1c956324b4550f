"""One writer per match: an exclusive lock beside its database, held while a store is open for writing.

The lock is `flock` on `<database>.lock`: the kernel releases it when its holder exits, however it exits (SIGKILL
too), so it is never stale. The file names its holder (pid, command, since when) for the refusal a second writer gets.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
import time
from pathlib import Path

import orjson

from wildhold.store.errors import StoreLocked
from wildhold.store.private import FILE

SUFFIX = ".lock"
SECRET_WORDS = ("token", "key", "secret", "password")  # an option naming one of these has its value left out


def command_line(argv: list[str] | None = None) -> str:
    """The command that holds the lock, as a person would type it, with the values of secret options left out."""
    argv = list(sys.argv if argv is None else argv) or ["?"]
    program = Path(argv[0]).name
    words = ["wildhold" if program in ("cli.py", "__main__.py") else program]
    hide = False
    for arg in argv[1:]:
        name, eq, _ = arg.partition("=")
        secret = name.startswith("-") and any(w in name.lower() for w in SECRET_WORDS)
        words.append("***" if hide else f"{name}=***" if secret and eq else arg)
        hide = secret and not eq
    return shlex.join(words)


class WriterLock:
    """The exclusive lock of one match's database; `StoreLocked` names whoever holds it."""

    def __init__(self, db: Path):
        self.path = db.with_name(db.name + SUFFIX)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder(fd)
            os.close(fd)
            raise StoreLocked(f"{db} is open for writing by {holder}: one process writes a match; stop that one "
                              "first, or use another folder") from None
        self.fd: int | None = fd
        since = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, orjson.dumps({"pid": os.getpid(), "command": command_line(), "since": since}), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, only its holder's name is missing

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            info = orjson.loads(os.pread(fd, 1 << 16, 0))
            return f"pid {info['pid']} ({info['command']}), since {info['since']}"
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            return "another process (it has not written its name yet)"

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
