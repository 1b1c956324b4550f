"""Which code is running: the package version, and the git commit when it runs from a checkout.

`wildhold --version` and every run manifest ask here, so the two never disagree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import wildhold

PACKAGE_DIR = Path(wildhold.__file__).resolve().parent
GIT_TIMEOUT_S = 2.0


def git_revision(directory: Path = PACKAGE_DIR, short: bool = True) -> str | None:
    """The commit of the git checkout that tracks `directory`, with `-dirty` when tracked files have
    changed; None for an installed package (even one inside somebody else's repository), or when git is
    missing, refuses or hangs."""
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S)

    try:
        if git("ls-files", "--error-unmatch", ".").returncode != 0:
            return None
        head = git("rev-parse", *(["--short"] if short else []), "HEAD")
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0 or status.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def version_text(directory: Path = PACKAGE_DIR) -> str:
    revision = git_revision(directory)
    return f"wildhold {wildhold.__version__}" + (f" (git {revision})" if revision else "")
