"""The program runner: a separate, unprivileged process that owns the Monty interpreters.

`python -m wildhold.programs.runner` reads request frames on stdin and answers each with one
frame on stdout. The world spawns it with a scrubbed environment and an empty working folder;
it lowers its own resource limits before anything else. It holds a program only during that
program's turn, and only under the capability the world gave it for that run: a request for a
held program that carries another capability is refused.
"""

from __future__ import annotations

import os
import resource
import shutil
import stat
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pydantic_monty as pm

from wildhold.programs.protocol import FrameError, encode, pack_bytes, read_frame, unpack_bytes, write_frame
from wildhold.programs.sandbox import Sandbox, Settings, error_of

# Backstops of the process itself, beneath each program's own interpreter limits (programs.yaml):
# no core files, no files worth writing, few descriptors, and an address space far above any
# interpreter's heap limit (each interpreter process inherits these).
LIMITS = (
    (resource.RLIMIT_CORE, 0),
    (resource.RLIMIT_FSIZE, 1 << 20),
    (resource.RLIMIT_NOFILE, 256),
    (resource.RLIMIT_AS, 2 << 30),
)


# Started by root (a container, a CI machine), the runner gives up root for this user before it reads
# any program: no file the host can write is writable, no other process can be signalled.
UNPRIVILEGED_UID = UNPRIVILEGED_GID = 65534  # "nobody"
PR_SET_NO_NEW_PRIVS = 38


def lower_limits() -> None:
    for which, value in LIMITS:
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


def unreachable_by_others(path: Path) -> Path | None:
    """The first folder on the way to `path` that a user other than its owner cannot pass, or `path` itself
    if such a user cannot execute it (permission bits only: enough to know whether "nobody" may run it)."""
    for part in [*reversed(path.parents), path]:
        try:
            if not part.stat().st_mode & stat.S_IXOTH:
                return part
        except OSError:
            return part
    return None


def drop_privileges() -> str | None:
    """Never regain privileges (no setuid binaries), and stop being root when started as root; None once
    done, else why the runner stays root: it must still start interpreter processes as the other user."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the uid change below still applies
        pass
    if os.geteuid() != 0:
        return None
    binary = shutil.which("monty")  # the interpreter processes' program, beside this Python (see client.runner_env)
    if binary is None:
        return "no interpreter binary (monty) on the runner's PATH"
    blocked = unreachable_by_others(Path(binary).resolve())
    if blocked is not None:
        return f"the interpreter binary is not reachable by an unprivileged user ({blocked} is closed to others)"
    # Python's own files may sit where only root reads (a home folder): load what is read lazily first.
    sysconfig.get_config_vars()
    sysconfig.get_paths()
    os.setgroups([])
    os.setgid(UNPRIVILEGED_GID)
    os.setuid(UNPRIVILEGED_UID)
    return None


def handle(sandbox: Sandbox, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    key, cap = request.get("program", ""), request.get("cap", "")
    if op == "check":
        return {"errors": sandbox.check(request["source"], request["stubs"])}
    if op == "start":
        return with_snapshot(sandbox, key, sandbox.start(key, request["source"], int(request["seed"]), cap), request)
    if op == "load":
        return with_snapshot(sandbox, key, load(sandbox, key, cap, request), request)
    held = sandbox.active.get(key)
    if held is None:
        return {"kind": "refused", "message": f"no program {key!r} is held"}
    if held.cap != cap:
        return {"kind": "refused", "message": f"wrong capability for program {key!r}"}
    if op == "resume":
        return with_snapshot(sandbox, key, sandbox.resume(key, request["answer"]), request)
    if op == "park":
        return {"kind": "parked", "dump": pack_bytes(sandbox.park(key))}
    if op == "snapshot":
        return keep(sandbox, key)
    if op == "drop":
        sandbox.drop(key)
        return {"kind": "dropped"}
    return {"kind": "refused", "message": f"unknown request {op!r}"}


def load(sandbox: Sandbox, key: str, cap: str, request: dict[str, Any]) -> dict[str, Any]:
    """Restore a program from its snapshot. With `expect`, it must be paused in that very call (else the step
    is a `mismatch` and it is let go); with `answer` too, that call is answered at once (`answered` says so)."""
    step = sandbox.load(key, unpack_bytes(request["dump"]), int(request["seed"]), cap)
    if step["kind"] != "call" or "expect" not in request:
        return step
    if step["call"] != request["expect"]:
        sandbox.drop(key)
        return {**step, "kind": "mismatch"}
    if "answer" not in request:
        return step
    after = sandbox.resume(key, request["answer"])
    return {**after, "answered": True, "out": step["out"] + after["out"],
            "out_dropped": step["out_dropped"] + after["out_dropped"]}


def keep(sandbox: Sandbox, key: str) -> dict[str, Any]:
    """Whether the held program's snapshot can be taken, and its size (a re-simulation's check of a run that
    failed keeping it): the program stays paused; taking it failed is the program's error, and lets it go."""
    try:
        return {"kind": "kept", "bytes": len(sandbox.snapshot(key))}
    except pm.MontyError as exc:
        sandbox.drop(key)
        return {"kind": "error", "error": {**error_of(exc), "at": "snapshot"}}


def with_snapshot(sandbox: Sandbox, key: str, step: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Attach the program's snapshot to a call that may end its turn, so pausing it there costs the world no
    further request: any call under `{"snapshot": "any"}`, a blocking function's under "blocking". A snapshot
    too large to keep (the world refuses it) is left for an explicit park."""
    want = request.get("snapshot")
    call = step.get("call")
    if step.get("kind") != "call" or not want or (want != "any" and not (
            call["kind"] == "function" and call["fn"] in sandbox.blocking)):
        return step
    try:
        dump = sandbox.snapshot(key)
    except pm.MontyError as exc:
        # Keeping the snapshot failed (a heap too large to copy), not the program: the failure says where, so that
        # a re-simulation fed the same answers takes the snapshot there too and meets the same failure.
        sandbox.drop(key)
        return {**step, "kind": "error", "error": {**error_of(exc), "at": "snapshot", "call": call}}
    if len(dump) <= sandbox.settings.max_state_bytes:
        step["dump"] = pack_bytes(dump)
    return step


def serve(stdin, stdout, still_root: str | None = None) -> None:
    hello = read_frame(stdin)
    if hello is None:
        return
    sandbox = Sandbox(Settings(**hello["settings"]), defer_release=True)
    write_frame(stdout, {"id": hello.get("id"), "kind": "ready", "pid": os.getpid(), "uid": os.geteuid(),
                         "still_root": still_root})
    try:
        while True:
            request = read_frame(stdin)
            if request is None:
                return
            try:
                reply = handle(sandbox, request)
            except Exception as exc:  # a fault of the runner itself: report it, keep serving
                reply = {"kind": "error", "error": {"type": type(exc).__name__, "message": str(exc)[:500],
                                                    "line": None, "reason": "runner_crash"}}
            key = request.get("program")
            held = sandbox.active.get(key) if key else None
            reply.update(id=request.get("id"), program=key, cap=held.cap if held else request.get("cap"))
            stdout.write(reply_frame(sandbox, key, reply))
            stdout.flush()
            sandbox.retire()  # interpreters of programs dropped by this request go back to the pool after the reply
    finally:
        sandbox.close()


def reply_frame(sandbox: Sandbox, key: str | None, reply: dict[str, Any]) -> bytes:
    try:
        return encode(reply)
    except FrameError as exc:
        if "dump" in reply:  # the snapshot made it too large: the world asks for it on its own if it needs it
            reply.pop("dump")
            return reply_frame(sandbox, key, reply)
        sandbox.drop(key)  # a program passed the world a value too large to carry: it fails
        return encode({"id": reply["id"], "program": key, "cap": reply["cap"], "kind": "error",
                       "error": {"type": "ValueError", "message": f"A value too large to pass to the world ({exc}).",
                                 "line": None, "reason": "runtime_error"}})


def main() -> None:
    lower_limits()
    still_root = drop_privileges()
    # Frames own the real stdout; anything else that writes there (a stray print) goes to stderr.
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        serve(sys.stdin.buffer, frames, still_root)
    except (FrameError, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
