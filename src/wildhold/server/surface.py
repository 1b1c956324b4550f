"""The tool surface every face shares: action descriptions from the registry, the information tools' texts.

HTTP routes and MCP tools are generated from `wildhold.world.actions.REGISTRY` through the
functions here, so a newly registered action appears on every face with the same text.
"""

from __future__ import annotations

from wildhold.service.errors import SERVICE_CODES
from wildhold.service.queries import queries
from wildhold.world.actions import REGISTRY, ActionDef

# Registering makes a token, so it is no query; every other information tool is one (the trial's
# progress is the registry's own `trial_info` action).
REGISTER_DOC = "Register a new agent with the signup token; returns its bearer token."


def action_description(spec: ActionDef) -> str:
    """The registry docstring plus the facts every face states the same way."""
    return (f"{spec.doc}\n\nCategory: {spec.category}. Time: {spec.timing}. Returns the operation "
            f"(op id, status, the tick it ends; its schema is operation_status's answer); wait for it with wait_operation.")


def action_tools() -> dict[str, ActionDef]:
    """The actions every face exposes, in registry order; refuses a name a query already uses."""
    queries()
    return dict(REGISTRY)


def info_tools() -> dict[str, str]:
    """Every information tool and its description: registering, then the queries."""
    return {"register": REGISTER_DOC, **{name: q.doc for name, q in queries().items()}}


def error_codes() -> dict[str, str]:
    """Service failure codes; the world's rejection codes are in the rules document (rejection_codes)."""
    return dict(SERVICE_CODES)
