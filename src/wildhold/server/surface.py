"""The tool surface both faces share: action descriptions from the registry, rules lookup, scoring disclosure.

HTTP routes and MCP tools are generated from `wildhold.world.actions.REGISTRY` through the
functions here, so a newly registered action appears on every face with the same text.
"""

from __future__ import annotations

from typing import Any

from wildhold.content import Content
from wildhold.docs.rules import rules_json, wealth_formula
from wildhold.service.host import SERVICE_CODES, HostError
from wildhold.world.actions import REGISTRY, ActionDef, did_you_mean

# Perception and information tools, beside one tool per registry action (the trial's progress is
# the registry's own `trial_info` action). Names here must not collide with action names.
INFO_TOOLS: dict[str, str] = {
    "register": "Register a new agent with the signup token; returns its bearer token.",
    "observe": "Your character's full observation: time, itself, its view square live, its memory of tiles "
               "seen before, and what each part of the world shows it.",
    "map_memory": "Your view square and every tile you remember, each with the tick you last saw it.",
    "inventory": "What your character carries and has equipped.",
    "recipes": "Every recipe (inputs, outputs, station, time, energy), and why any is still closed to you.",
    "rules": "Look up the rules document: with no section, the list of sections; with a section (and a key), that part.",
    "quest_log": "The public quest board and your own quests: active, completed, failed.",
    "world_info": "Time, season, the match's clock mode, the one-line wealth formula and your rank.",
    "scoring_info": "The full scoring disclosure in force for this match: the wealth formula with every value, "
                    "the ranking rule, the scenario. Static for the whole match.",
    "operation_status": "The state of one of your operations (running, completed, failed, cancelled).",
    "wait_operation": "Wait until an operation of yours ends (or the timeout, at most the server's bound) and return it.",
    "write_epilogue": "Write your own account of how and why you played. Kept in the match archive, never scored.",
}


def action_description(spec: ActionDef) -> str:
    """The registry docstring plus the facts every face states the same way."""
    return (f"{spec.doc}\n\nCategory: {spec.category}. Time: {spec.timing}. Returns the operation "
            f"(op id, status, the tick it ends); wait for it with wait_operation.")


def action_tools() -> dict[str, ActionDef]:
    """The actions every face exposes, in registry order; refuses a name an info tool already uses."""
    clash = sorted(set(REGISTRY) & set(INFO_TOOLS))
    if clash:
        raise RuntimeError(f"actions {clash} share a name with an information tool; rename the action")
    return dict(REGISTRY)


def info_tools() -> dict[str, str]:
    return dict(INFO_TOOLS)


_RULES: dict[str, dict[str, Any]] = {}


def _rules(content: Content) -> dict[str, Any]:
    """The rules document, built once per content digest (it is a pure function of content and registries)."""
    doc = _RULES.get(content.digest)
    if doc is None:
        doc = _RULES[content.digest] = rules_json(content)
    return doc


def rules_doc(content: Content) -> dict[str, Any]:
    return _rules(content)


def rules_lookup(content: Content, section: str | None = None, key: str | None = None) -> Any:
    """The whole document's table of contents, one section, or one entry of a section."""
    doc = _rules(content)
    if not section:
        return {"version": doc["version"], "sections": sorted(doc),
                "how": "Ask for one section (and optionally one key in it), for example section='actions', key='craft'."}
    if section not in doc:
        raise HostError("unknown_section", f"No section {section!r}.{did_you_mean(section, doc)} Sections: {', '.join(sorted(doc))}.")
    part = doc[section]
    if not key:
        return part
    if not isinstance(part, dict) or key not in part:
        keys = list(part) if isinstance(part, dict) else []
        raise HostError("unknown_section", f"Section {section!r} has no entry {key!r}.{did_you_mean(key, keys)}")
    return part[key]


def scoring_info(content: Content, scenario: str) -> dict[str, Any]:
    """What is scored and how, stated in full: the same for every agent for the whole match."""
    spec = content.scenario(scenario)
    return {
        "scenario": {"name": scenario, "description": spec.description, "days": spec.days, "conflict": spec.conflict},
        "wealth": wealth_formula(content),
        "ranking": "Rank is by wealth under the formula above, valued at the moment of ranking. Standard competition "
                   "ranking: characters with exactly equal wealth (in cents) share a rank and the next rank skips "
                   "(1, 1, 3); a tie is never broken by registration order, spawn order, name or seed.",
        "reports": "After the match, report cards are computed from the match archive alone, under the rubric "
                   "version each report names. The epilogue (write_epilogue) is never scored.",
        "static": True,
    }


def error_codes() -> dict[str, str]:
    """Service failure codes; the world's rejection codes are in the rules document (rejection_codes)."""
    return dict(SERVICE_CODES)
