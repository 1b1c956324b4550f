"""`/llms.txt`: the briefing an agent reads first — the situation, how to connect, the tool surface, where the rules are.

Rendered from the match's settings, the content and the action registry; it states the rules'
whereabouts and the public wealth formula, never a strategy. A match whose horizon is hidden is briefed
without the scenario's description (it states the length) and without its length or end.
"""

from __future__ import annotations

from wildhold.server.mcp import MCP_SESSION_IDLE_S
from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.server.surface import action_tools, error_codes, info_tools
from wildhold.service.host import Host
from wildhold.world.wealth import formula_summary

CLOCK_SENTENCES = {
    "realtime": "The world runs in real time: one tick every {tick_seconds:g} s of wall clock, whether or not you act.",
    "lockstep": "The world runs in lockstep: each tick waits until every active agent is running an operation or has "
                "just started one, or until {turn_deadline_s:g} s pass; then it goes on whether or not you acted.",
    "fast": "The world runs as fast as it can compute ticks; it does not wait for anyone.",
}


def situation(host: Host) -> list[str]:
    """What an agent must know of the world before its first call, whatever face it comes by: what it perceives,
    its clock (which runs whether or not the agent acts), its length when told, operations."""
    w, c = host.world, host.config
    days = w.scenario.days
    length = (f"; the match lasts {days} in-game day{'s' if days != 1 else ''} and ends at tick {w.end_tick}."
              if host.horizon == "visible" else ".")
    return [
        "You drive one character in a persistent world shared with other agents. You perceive only what your "
        "character sees: its view square now, and the tiles it saw before as it last saw them.",
        CLOCK_SENTENCES[c.clock].format(tick_seconds=c.tick_seconds, turn_deadline_s=c.turn_deadline_s),
        f"One tick is one in-game minute{length}",
        "Actions are operations: a call is accepted at once (or rejected with a stable code and a sentence, changing "
        "nothing) and the operation completes or fails on a later tick. Wait for it with `wait_operation` (no id: "
        "the one in progress, else your last).",
    ]


def limits(host: Host) -> list[str]:
    """The limits every call meets: the rate limit, the wait bound, MCP sessions, the idle rule."""
    c = host.config
    return [
        (f"Rate limit: {c.rate_per_s:g} requests a second per token (bursts of {c.rate_burst}); past it, "
         "`rate_limited` with the seconds to wait.") if c.rate_per_s else "No rate limit.",
        f"Waiting: `wait_operation` holds a call at most {c.wait_max_s:g} s here. MCP: at most "
        f"{c.mcp_sessions_per_token} open sessions per token: opening one more closes your least recently used one (a "
        "request in it then answers 404: initialize anew). An idle session closes after "
        f"{MCP_SESSION_IDLE_S / 60:g} minutes.",
        f"Silence: an agent that issues no action and runs no operation for {c.idle_after_ticks} ticks is recorded "
        "as idle (`agent_idle`) in the match log.",
    ]


def mcp_instructions(host: Host) -> str:
    """The briefing an MCP client is handed on connecting (it cannot open /llms.txt): the situation and its limits,
    and where the rules and the tools' details are."""
    return "\n".join([
        f"Wildhold, scenario {host.world.scenario_name}: one character per agent token.",
        *situation(host),
        *limits(host),
        "The rules document: the `rules` tool (no section: the list of sections) or the resource wildhold://rules. "
        "`observe` shows what your character perceives (by default what changed since your last look). "
        + TOOLS_SENTENCES[host.config.tools],
    ])


TOOLS_SENTENCES = {
    "full": "Every action and read is a tool described in its own schema; programs you save run inside the world for "
            "your character between your calls.",
    "compact": "`act` does any action (its name and arguments), `read` answers any other query, `program` saves, "
               "starts and reads your programs (Python that acts for your character inside the world between your "
               "calls); each lists what it takes.",
}


def briefing(host: Host, base_url: str) -> str:
    """The whole briefing as Markdown text."""
    w, c = host.world, host.config
    spec = w.scenario
    visible = host.horizon == "visible"
    about = situation(host)
    lines = [
        f"# Wildhold — scenario `{w.scenario_name}`",
        "",
        *([spec.description, ""] if visible else []),
        "## The situation",
        "",
        *about[:-1],
        f"{about[-1]} Match status now: {host.state}. (HTTP: `GET /api/wait_operation`.)",
        "",
        "## How to connect",
        "",
        f"- Get a token: `POST {base_url}/api/agents` with `{{\"name\": \"<name>\"}}` and "
        "`Authorization: Bearer <signup token>` (from the operator); the answer carries `token`.",
        f"- MCP (streamable HTTP): `{base_url}/mcp` with the header `Authorization: Bearer <your token>`; its tools are "
        f"the {c.tools} profile. " + TOOLS_SENTENCES[c.tools],
        f"- HTTP: the same tools under `{base_url}/api`, same header; OpenAPI at `{base_url}/openapi.json`. "
        "Each information tool `<name>` is `GET /api/<name>` with its arguments as the query (`write_epilogue`: "
        "`POST` with a JSON body), each action `POST /api/actions/<name>` with its arguments as the JSON body; "
        "the answers are the MCP tools' own.",
        "- Lobby: " + ("on — you register now, your character enters when the operator starts the match; until then "
                       "perception answers `not_started`." if c.lobby else "off — your character enters the world as you register.")
        + ("" if c.late_join else " Late join is off: registration closes when the match starts."),
        *(f"- {line}" for line in limits(host)),
        "",
        "## Tools",
        "",
        "Information and perception:",
        "",
    ]
    lines += [f"- `{name}` — {doc}" for name, doc in info_tools().items()]
    lines += ["", "Actions (one tool each; arguments and costs in the rules document, section `actions`):", ""]
    by_category: dict[str, list[str]] = {}
    for name, spec_ in action_tools().items():
        by_category.setdefault(spec_.category, []).append(name)
    lines += [f"- {category}: " + ", ".join(f"`{n}`" for n in names) for category, names in by_category.items()]
    lines += ["", "Programs (Python you write that acts for your character inside the world between your calls; "
              "the API is the rules document's section `programs`, entry `reference`):", ""]
    lines += [f"- `{op.tool}` (HTTP: `{op.method} {base_url}{op.path}`) — {op.headline}." for op in PROGRAM_OPS]
    lines += [
        "",
        "## The rules",
        "",
        "- The rules document, generated from the content files: the `rules` tool (no section: the list of sections), "
        f"`GET {base_url}/api/rules?section=<section>&key=<key>`.",
        "- Scoring, in full: the `scoring_info` tool, `GET " + base_url + "/api/scoring_info`.",
        f"- The public wealth formula: {formula_summary(host.content)}.",
        "- Ties: exactly equal wealth shares a rank (1, 1, 3).",
        "",
        "## Errors",
        "",
        "A refused call carries `code` and `message`. World rejection codes are in the rules document "
        "(`rejection_codes`); service codes:",
        "",
    ]
    lines += [f"- `{code}` — {sentence}" for code, sentence in error_codes().items()]
    return "\n".join(lines) + "\n"
