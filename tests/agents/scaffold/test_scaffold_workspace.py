"""The agent's workspace: files kept under its own folder, a byte quota, and no way out of it."""

from __future__ import annotations

import pytest

from wildhold.agents.scaffold.workspace import Workspace, WorkspaceError


def test_write_read_list_and_delete_round_trip(tmp_path):
    ws = Workspace(tmp_path / "ws", quota_bytes=1000)
    assert ws.write("notes/a.md", "hello")["bytes"] == 5
    assert ws.read("notes/a.md")["content"] == "hello"
    assert ws.list()["files"] == [{"path": "notes/a.md", "bytes": 5}]
    ws.delete("notes/a.md")
    assert ws.list()["files"] == []


def test_a_write_over_the_quota_is_refused_and_changes_nothing(tmp_path):
    ws = Workspace(tmp_path / "ws", quota_bytes=10)
    ws.write("a.txt", "12345678")
    with pytest.raises(WorkspaceError) as exc:
        ws.write("b.txt", "123")
    assert exc.value.code == "quota_exceeded" and "at most 10" in str(exc.value)
    assert [f["path"] for f in ws.list()["files"]] == ["a.txt"]


def test_replacing_a_file_counts_only_its_new_size_against_the_quota(tmp_path):
    ws = Workspace(tmp_path / "ws", quota_bytes=10)
    ws.write("a.txt", "1234567890")
    assert ws.write("a.txt", "0987654321")["workspace_bytes"] == 10


@pytest.mark.parametrize("path", ["../escape.txt", "notes/../../escape.txt", "/etc/passwd", "", "..", "C:/x"])
def test_paths_that_leave_the_workspace_are_refused(tmp_path, path):
    ws = Workspace(tmp_path / "ws", quota_bytes=1000)
    (tmp_path / "escape.txt").write_text("outside")
    for op in (lambda: ws.write(path, "x"), lambda: ws.read(path), lambda: ws.delete(path)):
        with pytest.raises(WorkspaceError) as exc:
            op()
        assert exc.value.code == "bad_path"
    assert (tmp_path / "escape.txt").read_text() == "outside"


def test_a_symlink_pointing_outside_is_refused(tmp_path):
    ws = Workspace(tmp_path / "ws", quota_bytes=1000)
    (tmp_path / "secret.txt").write_text("secret")
    (ws.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(WorkspaceError) as exc:
        ws.read("link.txt")
    assert exc.value.code == "bad_path"
