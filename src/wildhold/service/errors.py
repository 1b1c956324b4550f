"""The service's own failures: one list of stable codes, and the error every part of the host raises.

The world's rejection codes are in `wildhold.world.errors.CODES`; these are the codes of the service
around it (tokens, limits, the lobby, programs), each with the sentence the briefing gives.
"""

from __future__ import annotations

SERVICE_CODES: dict[str, str] = {
    "unauthorised": "The request carries no bearer token, or one this server never issued.",
    "forbidden": "The token is valid but may not do this: an agent token on an admin route, another agent's "
                 "operation, or acting as another character.",
    "rate_limited": "Too many requests for this token; wait the number of seconds given, then retry.",
    "lobby_closed": "Registration is closed: the match has ended, or it has as many agents as it takes.",
    "late_join_refused": "The match has started and this server does not let agents join late.",
    "not_started": "The match is still in its lobby; the operator starts it with POST /api/admin/start.",
    "already_started": "The match has already started.",
    "match_over": "The match has ended; the world takes no more actions.",
    "name_taken": "Another agent already registered under that name.",
    "bad_request": "The request is malformed: not JSON, a field missing or of the wrong type, or too large.",
    "unknown_operation": "This agent has no operation with that id.",
    "unknown_section": "The rules document has no such section or entry.",
    "setup_refused": "The setup command did not apply; the world is unchanged.",
    "not_found": "No such route; GET /openapi.json lists them.",
    "unknown_program": "You have no program of that name, or it has no such revision; save it first.",
    "program_invalid": "The program has a syntax or type error (the message names the line); nothing was saved.",
    "program_too_large": "The program's source is over the size limit.",
    "program_limit": "Too many programs: running at once, saved by one character, or revisions of one program.",
    "program_not_running": "That program is not running (it is stopped, finished or failed).",
    "program_running": "That program is already running; stop it before starting it again.",
    "invalid_arguments": "An argument is of the wrong kind or out of range (a program name, a revision, a log position).",
    "runner_unavailable": "The program runner could not be reached just now; nothing changed, try again.",
    "storage_unavailable": "The match's store takes no writes just now (its disk is full, or refuses writes): nothing "
                           "was changed and the clock is paused; retry after the seconds given.",
    "archive_unverified": "The archive is not scored: re-simulated it is not what it says, or it was played under other "
                          "content (the message names the check and its code).",
}


class HostError(Exception):
    """A failure of the service (not a rule of the world): a stable code and a sentence."""

    def __init__(self, code: str, message: str, retry_after: float | None = None):
        if code not in SERVICE_CODES:
            raise ValueError(f"unregistered service code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.retry_after = code, message, retry_after


def refuse_unless_running(state: str) -> None:
    """`match_over` or `not_started` unless the match is running: what every change to the world requires."""
    if state != "running":
        raise HostError("match_over" if state == "over" else "not_started",
                        "The match has ended." if state == "over" else "The match is still in its lobby.")
