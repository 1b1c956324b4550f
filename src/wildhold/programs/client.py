"""The world's side of the runner channel: spawn the runner, send one request, wait a bounded time.

A reply must answer the request it follows (same id) about the same program under the same
capability; anything else is refused and the runner is replaced. The runner works in a temporary folder
named after the process that made it; folders whose process is gone (a server killed outright) are
removed when the next client starts. A request may also be posted
(letting a program go at the end of its turn): its reply is read, and checked alike, before the
next request is sent. Every failure of the channel — an exit, a timeout, a malformed or forged
frame — raises `RunnerFailed` with the reason the program in flight fails with, and the next
request spawns a fresh runner.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

from wildhold.programs.protocol import HEADER, FrameError, decode, encode, frame_length
from wildhold.programs.runner import UNPRIVILEGED_GID, UNPRIVILEGED_UID
from wildhold.programs.sandbox import Settings

SPAWN_TIMEOUT_S = 30.0
READ_CHUNK = 1 << 16
WORKDIR_PREFIX = "wildhold-runner-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def sweep_workdirs(root: str | None = None) -> list[Path]:
    """Remove the runner folders (`wildhold-runner-<pid>-...`) whose process is gone, among those this user may
    remove (root's runners work in folders it gave away); the folders removed."""
    mine = {os.geteuid(), UNPRIVILEGED_UID} if os.geteuid() == 0 else {os.geteuid()}
    removed = []
    for folder in Path(root or tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        pid = folder.name[len(WORKDIR_PREFIX):].partition("-")[0]
        try:
            owned = folder.lstat().st_uid in mine and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if owned and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class RunnerFailed(RuntimeError):
    """The runner could not answer: `reason` is what the program in flight fails with."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason, self.message = reason, message


def runner_env() -> dict[str, str]:
    """Only what the runner needs: the interpreter's folder (for the `monty` binary) and the package."""
    package_root = str(Path(__file__).resolve().parents[2])
    return {"PATH": str(Path(sys.executable).parent), "PYTHONPATH": package_root, "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


class RunnerClient:
    def __init__(self, settings: Settings, command: list[str] | None = None):
        self.settings = settings
        self.command = command or [sys.executable, "-m", "wildhold.programs.runner"]
        self.proc: subprocess.Popen | None = None
        self.workdir: str | None = None
        self.next_id = 0
        self.spawns = 0
        self.identity: dict[str, Any] = {}
        self.owed: list[dict[str, Any]] = []  # posted requests whose replies are still to be read
        self.received = bytearray()  # bytes read past the last whole frame
        sweep_workdirs()

    @property
    def reply_timeout(self) -> float:
        s = self.settings
        return s.call_wall_s + s.reply_grace_s + 1.0

    def _spawn(self) -> None:
        self.workdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        if os.geteuid() == 0:  # the runner gives up root (runner.drop_privileges); its folder goes with it
            os.chown(self.workdir, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=self.workdir, env=runner_env(),
                                     close_fds=True, start_new_session=True)
        self.spawns += 1
        # Who the runner runs as: `still_root` says why it could not give up root, when it could not.
        self.identity = self._exchange({"op": "hello", "settings": asdict(self.settings)}, SPAWN_TIMEOUT_S)

    def request(self, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request and return its reply; a reply about another program or capability is refused."""
        self._settle()
        if self.proc is None or self.proc.poll() is not None:
            self.kill()
            self._spawn()
        reply = self._exchange(message, self.reply_timeout if timeout is None else timeout)
        self._check(reply, message)
        return reply

    def post(self, message: dict[str, Any]) -> None:
        """Send a request whose reply the world does not wait for (letting a paused program go): it is read,
        and checked like any reply, before the next request. A runner that fails it is replaced then."""
        if self.proc is None or self.proc.poll() is not None:
            return  # nothing to let go: a new runner holds no program
        try:
            self.owed.append(self._send(message))
        except RunnerFailed:
            pass  # the runner is gone: the next request spawns a fresh one

    def _settle(self) -> None:
        while self.owed:
            message = self.owed.pop(0)
            try:
                self._check(self._receive(message, time.monotonic() + self.reply_timeout), message)
            except RunnerFailed:
                return  # the runner was killed: the next request spawns a fresh one

    def _exchange(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        return self._receive(self._send(message), time.monotonic() + timeout)

    @contextmanager
    def _channel(self) -> Iterator[None]:
        """A broken pipe or frame: the runner is replaced and the program in flight fails."""
        try:
            yield
        except (OSError, FrameError) as exc:
            self.kill()
            raise RunnerFailed("runner_crash", f"the program runner failed: {exc}") from None

    def _send(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.next_id += 1
        message = {**message, "id": self.next_id}
        with self._channel():
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
        return message

    def _receive(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """The reply to `message`, which must be the next frame (same id)."""
        with self._channel():
            reply = self._read(deadline)
        if reply.get("id") != message["id"]:
            self.kill()
            raise RunnerFailed("capability", "the runner answered out of turn; the frame was refused")
        return reply

    def _check(self, reply: dict[str, Any], message: dict[str, Any]) -> None:
        if "program" in message and (
                reply.get("program") != message["program"] or reply.get("cap") != message.get("cap")):
            self.kill()
            raise RunnerFailed("capability", "the runner answered for another program or capability; the frame was refused")

    def _read(self, deadline: float) -> dict[str, Any]:
        """The next whole frame: usually one read brings all of it."""
        buf = self.received
        while True:
            if len(buf) >= HEADER.size:
                length = frame_length(bytes(buf[:HEADER.size]))
                end = HEADER.size + length
                if len(buf) >= end:
                    body = bytes(buf[HEADER.size:end])
                    del buf[:end]
                    return decode(body)
                self._fill(end - len(buf), deadline)
            else:
                self._fill(HEADER.size - len(buf), deadline)

    def _fill(self, needed: int, deadline: float) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise RunnerFailed("wall_clock", "the program runner did not answer in time; it was replaced")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                break
        chunk = os.read(fd, max(needed, READ_CHUNK))
        if not chunk:
            raise FrameError("the runner exited")
        self.received += chunk

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        self.owed.clear()
        self.received.clear()
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the runner leads its own group: it and its interpreters
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def close(self) -> None:
        """End the runner: closing its input lets it shut its interpreters down; kill it if it lingers."""
        proc = self.proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
