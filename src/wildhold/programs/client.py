"""The world's side of the runner channel: spawn the runner, send one request, wait a bounded time.

A reply must answer the request it follows (same id) about the same program under the same
capability; anything else is refused and the runner is replaced. Every failure of the channel
— an exit, a timeout, a malformed or forged frame — raises `RunnerFailed` with the reason the
program in flight fails with, and the next request spawns a fresh runner.
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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wildhold.programs.protocol import HEADER, FrameError, decode, encode, frame_length
from wildhold.programs.runner import UNPRIVILEGED_GID, UNPRIVILEGED_UID
from wildhold.programs.sandbox import Settings

SPAWN_TIMEOUT_S = 30.0


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

    @property
    def reply_timeout(self) -> float:
        s = self.settings
        return s.call_wall_s + s.reply_grace_s + 1.0

    def _spawn(self) -> None:
        self.workdir = tempfile.mkdtemp(prefix="wildhold-runner-")
        if os.geteuid() == 0:  # the runner gives up root (runner.drop_privileges); its folder goes with it
            os.chown(self.workdir, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=self.workdir, env=runner_env(),
                                     close_fds=True, start_new_session=True)
        self.spawns += 1
        self._exchange({"op": "hello", "settings": asdict(self.settings)}, SPAWN_TIMEOUT_S)

    def request(self, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request and return its reply; a reply about another program or capability is refused."""
        if self.proc is None or self.proc.poll() is not None:
            self.kill()
            self._spawn()
        reply = self._exchange(message, self.reply_timeout if timeout is None else timeout)
        if "program" in message and (reply.get("program") != message["program"] or reply.get("cap") != message.get("cap")):
            self.kill()
            raise RunnerFailed("capability", "the runner answered for another program or capability; the frame was refused")
        return reply

    def _exchange(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.next_id += 1
        message = {**message, "id": self.next_id}
        try:
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
            reply = self._read(time.monotonic() + timeout)
        except (OSError, FrameError) as exc:
            self.kill()
            raise RunnerFailed("runner_crash", f"the program runner failed: {exc}") from None
        if reply.get("id") != self.next_id:
            self.kill()
            raise RunnerFailed("capability", "the runner answered out of turn; the frame was refused")
        return reply

    def _read(self, deadline: float) -> dict[str, Any]:
        header = self._read_exact(HEADER.size, deadline)
        return decode(self._read_exact(frame_length(header), deadline))

    def _read_exact(self, n: int, deadline: float) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while len(buf) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise RunnerFailed("wall_clock", "the program runner did not answer in time; it was replaced")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise FrameError("the runner exited")
            buf += chunk
        return bytes(buf)

    def kill(self) -> None:
        proc, self.proc = self.proc, None
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
