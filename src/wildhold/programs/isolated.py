"""The sandbox operations a re-simulation needs (start, resume, park and load, snapshot, drop), run in the runner
process over its channel: archived code meets the user drop, no-new-privileges, limits and clean environment
that `serve` gives live code, and never runs in the process that verifies it.
"""

from __future__ import annotations

import secrets
from typing import Any

from wildhold.programs.client import RunnerClient, RunnerFailed
from wildhold.programs.sandbox import Settings


def failed_step(exc: RunnerFailed) -> dict[str, Any]:
    """A runner that could not answer, as the step a program that fails there takes."""
    return {"kind": "error", "error": {"type": "RunnerFailed", "message": exc.message, "line": None, "reason": exc.reason},
            "out": [], "out_dropped": 0}


class RunnerSandbox:
    """Programs by key in one runner process, each under a capability of its own; steps as `Sandbox` gives them."""

    def __init__(self, settings: Settings, command: list[str] | None = None):
        self.client = RunnerClient(settings, command)
        self.caps: dict[str, str] = {}

    def _request(self, key: str, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.request({**message, "program": key, "cap": self.caps[key]})
        except RunnerFailed as exc:
            return failed_step(exc)

    def start(self, key: str, source: str, seed: int) -> dict[str, Any]:
        self.caps[key] = secrets.token_urlsafe(18)
        return self._request(key, {"op": "start", "source": source, "seed": seed})

    def resume(self, key: str, answer: dict[str, Any]) -> dict[str, Any]:
        return self._request(key, {"op": "resume", "answer": answer})

    def restore(self, key: str, seed: int) -> dict[str, Any]:
        """Pause the program and load it from its snapshot, as a live program is between turns; the step it
        resumes at (an error step when pausing it failed)."""
        parked = self._request(key, {"op": "park"})
        if parked.get("kind") == "parked":
            return self._request(key, {"op": "load", "dump": parked["dump"], "seed": seed})
        if parked.get("kind") == "error":
            return parked
        return failed_step(RunnerFailed("runner_crash", str(parked.get("message", "the runner could not pause the program"))))

    def snapshot_error(self, key: str) -> dict[str, Any] | None:
        """The error taking the paused program's snapshot meets (it is let go then), or None once taken."""
        reply = self._request(key, {"op": "snapshot"})
        return None if reply.get("kind") == "kept" else reply.get("error") or {"type": reply.get("kind")}

    def drop(self, key: str) -> None:
        """Let the program go; nothing waits on it (a runner that fails it is replaced at the next request)."""
        cap = self.caps.pop(key, None)
        if cap is not None:
            self.client.post({"op": "drop", "program": key, "cap": cap})

    def close(self) -> None:
        self.client.close()
