"""The archives a served match writes into its data folder, and the agents' epilogues kept in them.

The final archive is written when the match ends (and again when a late epilogue or spend arrives),
once the change that made it due is committed (`Host.changing`); the operator may ask for a snapshot
at any time; a report is computed from an archive, never from the live world.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from wildhold.service.errors import HostError
from wildhold.world.serialize import state_hash

if TYPE_CHECKING:
    from wildhold.service.host import Host

ARCHIVE_NAME = "match.wildhold.zip"
LIVE_REPORT_NAME = "report-live.wildhold.zip"
EPILOGUE_MAX_CHARS = 8000


class Archives:
    """The data folder's archives of one match, and what goes into their manifest beside the match."""

    def __init__(self, host: Host, data_dir: Path, manifest_extra: dict[str, Any], epilogues: dict[str, dict[str, Any]]):
        self.host = host
        self.data_dir = data_dir
        self.manifest_extra = manifest_extra
        self.epilogues = epilogues
        self.path: Path | None = None  # the final archive, once written
        self.due = False  # the final archive is to be written (again): the match ended, or what it holds changed

    def export(self) -> Path:
        self.path = self.host.match.export(self.data_dir / ARCHIVE_NAME, self.extra())
        self.due = False
        return self.path

    def extra(self) -> dict[str, Any]:
        return {**self.manifest_extra, "server": self.host.config.public(), "epilogues": dict(sorted(self.epilogues.items()))}

    def for_report(self, match_id: str, admin: bool) -> Path:
        """The archive a report is computed from: `current` (this match: its final archive once over, else an
        archive of the match so far, for the operator only) or an archive in the data folder by name."""
        host = self.host
        if match_id == "current":
            if host.state == "over" and self.path is not None:
                return self.path
            if not admin:
                raise HostError("forbidden", "A live match's report is for the operator (admin token) until the match ends.")
            with host.changing():
                return host.match.export(self.data_dir / LIVE_REPORT_NAME, self.extra())
        if not match_id.replace("-", "").replace("_", "").isalnum():
            raise HostError("not_found", f"No archive named {match_id!r}.")
        path = self.data_dir / f"{match_id}.wildhold.zip"
        if not path.exists() or path.name == LIVE_REPORT_NAME:
            raise HostError("not_found", f"No archive named {match_id!r} in this server's data folder.")
        return path

    def snapshot(self) -> dict[str, Any]:
        """A snapshot in the store and an archive of the match so far, beside the database."""
        match = self.host.match
        with self.host.changing():
            match.flush(snapshot=True)
            w = match.world
            path = match.export(self.data_dir / f"snapshot-tick{w.tick}.wildhold.zip", self.extra())
        return {"tick": w.tick, "state_hash": state_hash(w), "chain_head": w.events.head, "archive": str(path)}

    def write_epilogue(self, agent: str, text: str) -> dict[str, Any]:
        """The agent's own account, kept in the archive and never scored; a later one replaces it."""
        host = self.host
        if not isinstance(text, str) or not text.strip():
            raise HostError("bad_request", "The epilogue is empty.")
        if len(text) > EPILOGUE_MAX_CHARS:
            raise HostError("bad_request", f"The epilogue is {len(text)} characters; at most {EPILOGUE_MAX_CHARS}.")
        if host.state == "lobby":
            raise HostError("not_started", "The match is still in its lobby.")
        w = host.world
        with host.changing():
            self.epilogues[agent] = {"name": w.chars[agent].name, "text": text, "tick": w.tick}
            if host.match.store is not None:
                host.match.store.set_meta({"epilogues": self.epilogues})
            self.due = self.due or host.state == "over"
        return {"agent": agent, "chars": len(text), "tick": w.tick, "scored": False}
