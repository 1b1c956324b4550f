"""Folders and files only their owner may enter or read: a match's data folder holds every agent's programs,
logs and whispers. Modes are set here, not left to the umask (which only ever takes bits away).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDER, FILE = 0o700, 0o600
OTHERS = 0o077  # the bits of the group and of everyone else; also the umask under which nothing made is theirs


def opener(path: str | os.PathLike, flags: int) -> int:
    """For `open(..., opener=opener)`: a file it creates is the owner's only; one that was already there is made so."""
    fd = os.open(path, flags, FILE)
    os.fchmod(fd, FILE)
    return fd


def write_private(path: Path, data: bytes) -> Path:
    with open(path, "wb", opener=opener) as f:
        f.write(data)
    return path


def private_folder(path: Path) -> Path:
    """`path`, made (with the folders missing on the way to it) as a folder only its owner may enter; a folder
    that was there is left as it is (see `tighten` for a data folder's own)."""
    path = Path(path)
    for folder in reversed([p for p in (path, *path.parents) if not p.exists()]):
        try:
            folder.mkdir(mode=FOLDER)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs to keep as it is
        folder.chmod(FOLDER)
    return path


def private_file(path: Path) -> Path:
    """An empty file only its owner may read when missing; made the owner's only when others may read it."""
    try:
        st = path.stat()
    except FileNotFoundError:
        os.close(opener(path, os.O_WRONLY | os.O_CREAT))
        return path
    if st.st_mode & OTHERS:
        path.chmod(FILE)
    return path


def tighten(root: Path) -> list[Path]:
    """Every folder and file under `root` (itself included) that others may enter or read, made the owner's only;
    the paths changed. Links are left alone: what they lead to is not this folder's."""
    changed = []
    for path in (root, *root.rglob("*")):
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode) or not st.st_mode & OTHERS:
            continue
        path.chmod(FOLDER if stat.S_ISDIR(st.st_mode) else FILE)
        changed.append(path)
    return changed
