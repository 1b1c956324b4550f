"""The agent's workspace: its only cross-session memory, a file tree under one folder with a byte quota."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from wildhold.store.private import private_folder, write_private


class WorkspaceError(Exception):
    """A refused workspace operation, read by the model as "code: sentence"."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


class Workspace:
    """Files the agent writes, reads, lists and deletes; nothing outside `root`, never more than `quota_bytes` in all."""

    def __init__(self, root: Path, quota_bytes: int):
        self.root = Path(root).resolve()
        private_folder(self.root)
        self.quota_bytes = quota_bytes

    def _path(self, path: str) -> Path:
        rel = PurePosixPath(path.replace("\\", "/"))
        if not path or rel.is_absolute() or ".." in rel.parts or any(":" in p for p in rel.parts):
            raise WorkspaceError("bad_path", f"{path!r} is not a relative path inside your workspace "
                                 "(no leading '/', no '..').")
        full = (self.root / rel).resolve()
        if full != self.root and self.root not in full.parents:
            raise WorkspaceError("bad_path", f"{path!r} leads outside your workspace.")
        return full

    def used_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    def write(self, path: str, content: str) -> dict:
        full = self._path(path)
        data = content.encode()
        old = full.stat().st_size if full.is_file() else 0
        used = self.used_bytes() - old + len(data)
        if used > self.quota_bytes:
            raise WorkspaceError("quota_exceeded", f"Writing {len(data)} bytes to {path!r} would make your workspace "
                                 f"{used} bytes; it holds at most {self.quota_bytes}. Delete or shorten files first.")
        if full.is_dir():
            raise WorkspaceError("is_a_folder", f"{path!r} is a folder.")
        write_private(private_folder(full.parent) / full.name, data)
        return {"path": path, "bytes": len(data), "workspace_bytes": used, "quota_bytes": self.quota_bytes}

    def read(self, path: str) -> dict:
        full = self._path(path)
        if not full.is_file():
            raise WorkspaceError("not_found", f"No file {path!r} in your workspace; `list_files` shows what exists.")
        return {"path": path, "content": full.read_text(errors="replace")}

    def list(self) -> dict:
        files = [{"path": p.relative_to(self.root).as_posix(), "bytes": p.stat().st_size}
                 for p in sorted(self.root.rglob("*")) if p.is_file()]
        return {"files": files, "workspace_bytes": sum(f["bytes"] for f in files), "quota_bytes": self.quota_bytes}

    def delete(self, path: str) -> dict:
        full = self._path(path)
        if not full.is_file():
            raise WorkspaceError("not_found", f"No file {path!r} in your workspace.")
        full.unlink()
        return {"deleted": path}
