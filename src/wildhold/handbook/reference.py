"""The reference pages, generated from the code when the site is built, so none can drift from what it documents:
the command line (from the commands), HTTP (the served OpenAPI), the MCP tools (the served catalogue), the rules
document, the content tables, and the archive and results files (from an archive and a results file made then)."""

from __future__ import annotations

import inspect
import json
from dataclasses import asdict
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from typer._click import Command, Context

from wildhold.content import default_content

GENERATED = "<!-- generated from the code when the site is built: edit the code, not this page -->"


def esc(text: Any) -> str:
    """Plain text as Markdown that renders as the same text: no HTML, no table cell break, no emphasis."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return out.replace("*", "\\*").replace("_", "\\_").replace("\n", " ")


def code(text: Any) -> str:
    """Inline code, safe in a table cell."""
    return "`" + str(text).replace("|", "\\|").replace("`", "'") + "`"


def table(headers: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    headers = list(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _paragraphs(help_text: str | None) -> list[str]:
    return [" ".join(p.split()) for p in inspect.cleandoc(help_text or "").split("\n\n") if p.strip()]


# ---- the command line ---------------------------------------------------------------------------------------------


def _commands(command: Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Command]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            yield from _commands(sub, (*path, name))


def cli_page(root: Command, prog: str = "wildhold") -> str:
    """Every command: its usage, help and options, as `COMMAND --help` gives them."""
    parts = ["# Command line", GENERATED,
             f"Every command of `{prog}`, from the commands themselves: what `{prog} COMMAND --help` prints. "
             "A command that cannot do what it was asked says why in one sentence and exits 2 when what it was given "
             "is unusable, 1 when something failed; `--debug` (or `WILDHOLD_DEBUG=1`) shows the traceback instead. "
             "Every table fits the terminal's width (`COLUMNS`, else the terminal, else 80 columns when output is "
             "piped): whole when there is room, else with abbreviated headers and a legend, or split into stacked "
             "tables that repeat the agent column; no cell is ever cut."]
    for path, command in _commands(root, (prog,)):
        ctx = Context(command, info_name=" ".join(path))
        parts.append(f"## `{' '.join(path)}`")
        parts.append("```text\n" + " ".join([*path, *command.collect_usage_pieces(ctx)]) + "\n```")
        parts += [esc(p) for p in _paragraphs(command.help)]
        rows = [(code(name), esc(text)) for p in command.get_params(ctx) if (record := p.get_help_record(ctx))
                for name, text in [record]]
        if rows:
            parts.append(table(["argument or option", "what it does"], rows))
        subs = [(code(name), esc(_paragraphs(sub.help)[0] if sub.help else "")) for name, sub in
                getattr(command, "commands", {}).items() if not sub.hidden]
        if subs:
            parts.append(table(["command", "what it does"], subs))
    return "\n\n".join(parts) + "\n"


# ---- HTTP -----------------------------------------------------------------------------------------------------------


def _schema_name(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(filter(None, (_schema_name(s) for s in schema["anyOf"])))
    return schema.get("title") or schema.get("type", "")


def http_page(spec: dict[str, Any]) -> str:
    """Every route of the served OpenAPI document: method, path, what it does, its body and its answers."""
    parts = ["# HTTP API", GENERATED, esc(spec["info"].get("description", "")),
             "A served world answers this document at `/openapi.json` (browsable at `/docs` and `/redoc`); "
             "[openapi.json](openapi.json) is the same document as served by a match of the visible horizon. "
             "Every refusal is the body `{code, message, retry_after_s}`."]
    rows = []
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            rows.append((code(method.upper()), code(path), esc(op.get("summary", "")) + (" (deprecated)" if op.get("deprecated") else "")))
    parts.append(table(["method", "path", "what it does"], rows))
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            parts.append(f"### {method.upper()} `{path}`")
            if op.get("description"):
                parts.append(esc(op["description"]))
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            params = [(code(p["name"]), esc(p.get("in", "")), esc(p.get("description", ""))) for p in op.get("parameters", [])]
            if params:
                parts.append(table(["parameter", "in", "description"], params))
            if body:
                props = body.get("properties", {})
                needed = set(body.get("required", ()))
                if props:
                    parts.append(table(["body field", "type", "required", "description"],
                                       [(code(k), esc(_schema_name(v)), "yes" if k in needed else "", esc(v.get("description", "")))
                                        for k, v in props.items()]))
                else:
                    parts.append(f"Body: {esc(_schema_name(body))}")
            answers = [(code(status), esc(answer.get("description", "")))
                       for status, answer in op.get("responses", {}).items()]
            parts.append(table(["status", "meaning"], answers))
    return "\n\n".join(parts) + "\n"


# ---- MCP ------------------------------------------------------------------------------------------------------------


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(code(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    return esc(schema.get("type") or schema.get("$ref", "").rsplit("/", 1)[-1] or "any")


def mcp_page(surface: list[dict[str, Any]], profile: str = "full", resources: Iterable[str] = ("wildhold://rules",)) -> str:
    """Every tool of one profile's served catalogue: its description and arguments."""
    other = {"full": ("compact", "mcp-compact.md"), "compact": ("full", "mcp.md")}[profile]
    title, shape = {"full": ("MCP tools", "one tool per action and per read, with the names, arguments and refusals "
                                          "of HTTP"),
                    "compact": ("MCP tools: the compact profile", "`act`, `read` and `program` reach every action, "
                                "read and program operation of the full profile, with the same arguments and refusals")}[profile]
    parts = [f"# {title}", GENERATED,
             f"The {len(surface)} tools a served world lists at `/mcp` (streamable HTTP) to an agent's token under the "
             f"{profile} tool profile (`wildhold serve --tools {profile}`): {shape}. The [{other[0]} profile]({other[1]}) "
             "serves the same world. Resources: " + ", ".join(code(r) for r in resources) + "."]
    parts.append(table(["tool", "what it does"], [(f"[{code(t['name'])}](#{t['name']})",
                                                    esc(_paragraphs(t["description"])[0] if t["description"] else ""))
                                                   for t in surface]))
    for tool in surface:
        parts.append(f"## {tool['name']}")
        parts += [esc(p) for p in _paragraphs(tool["description"])]
        props = tool["input_schema"].get("properties", {})
        needed = set(tool["input_schema"].get("required", ()))
        if props:
            parts.append(table(["argument", "type", "required", "description"],
                               [(code(k), _type(v), "yes" if k in needed else "", esc(v.get("description", "")))
                                for k, v in props.items()]))
        else:
            parts.append("No arguments.")
    return "\n\n".join(parts) + "\n"


# ---- the rules document and the content tables --------------------------------------------------------------------


def rules_page() -> str:
    """The rules document agents read (`wildhold rules`), its headings one level down under the page's title."""
    from wildhold.docs.rules import rules_markdown
    from wildhold.service.queries import program_reads

    text = rules_markdown(default_content(), program_reads(), "visible")
    lines = [("#" + line if line.startswith("#") else line) for line in text.splitlines()]
    return "\n".join(["# Rules document", GENERATED,
                      "What `wildhold rules` prints, the `rules` tool answers and `wildhold://rules` serves: the rules "
                      "as agents read them, generated from the content files and the action registry.", *lines]) + "\n"


def rubrics_page() -> str:
    """Every rubric version with the summary its reports print, and which one is published."""
    from wildhold.eval.rubric import PUBLISHED_RUBRIC, RUBRICS

    rows = [(code(v) + (" (published)" if v == PUBLISHED_RUBRIC else ""), esc(r.summary)) for v, r in RUBRICS.items()]
    return "\n\n".join(["# Rubric versions", GENERATED,
                         "Released versions are frozen: an archive scored under its version gives the same report byte "
                         "for byte. `wildhold report ARCHIVE --rubric VERSION` picks one.",
                         table(["version", "what it scores, as its reports say"], rows)]) + "\n"


def cell(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return ""
    if isinstance(value, dict):
        return esc(", ".join(f"{k}: {_plain(v)}" for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return esc(", ".join(_plain(v) for v in value))
    return esc(value)


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    return str(value)


def content_page() -> str:
    """Every table of the content files (src/wildhold/content/data), one row per entry, and the single settings."""
    content = default_content()
    parts = ["# Content tables", GENERATED,
             "The rules as data: every number lives in the YAML under `src/wildhold/content/data/`, loaded into "
             "frozen models whose cross-references are checked at load. Below, each table as loaded "
             f"(content digest `{content.digest}`, which every archive records)."]
    singles = []
    for name, value in vars(content).items():
        if isinstance(value, dict) and value and hasattr(next(iter(value.values())), "model_dump"):
            rows = [(code(key), *(cell(v) for v in entry.model_dump(mode="json").values())) for key, entry in value.items()]
            fields = list(type(next(iter(value.values()))).model_fields)
            parts += [f"## {name}", f"{len(value)} entries.", table([name, *fields], rows)]
        elif hasattr(value, "model_dump"):
            singles.append((name, value.model_dump(mode="json")))
    for name, data in singles:
        parts += [f"## {name}", "```json\n" + json.dumps(data, indent=2, sort_keys=True) + "\n```"]
    return "\n\n".join(parts) + "\n"


# ---- the archive and results files ----------------------------------------------------------------------------------


def shape(value: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(path, JSON type, example) for every field of a JSON value, lists read through their first element."""
    if isinstance(value, dict):
        if path:
            yield path, "object", ""
        for key, sub in value.items():
            yield from shape(sub, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        yield path, "array", f"{len(value)} items" if value else "empty"
        if value:
            yield from shape(value[0], f"{path}[]")
    else:
        kind = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}[type(value)]
        example = json.dumps(value)
        yield path, kind, example if len(example) <= 48 else example[:45] + "..."


def shape_table(value: Any) -> str:
    return table(["field", "type", "example"], [(code(p), t, code(e) if e else "") for p, t, e in shape(value)])


def schemas_page(archive: Path, results: Path) -> str:
    """An archive's members and manifest, and a task run's results.json, read from files made for the page."""
    from wildhold.store.archive import FORMAT, MEMBERS, UNHEADED, Archive

    with Archive(archive) as arc:
        manifest = arc.manifest
        events = list(arc.events())
        inputs = [asdict(i) for i in arc.inputs()]
    first_result = json.loads(results.read_text())
    parts = ["# Archive and results files", GENERATED,
             f"Read from a match played (scenario `{manifest['scenario']}`, seed {manifest['seed']}, "
             f"{manifest['final_tick'] - manifest['start_tick']} ticks) and a task attempt run while the site was built, "
             "so the fields below are the ones the code writes today.",
             "## The archive (`.wildhold.zip`)",
             f"Format {FORMAT}. Its members, and no others (an archive holding any other member is refused): "
             + ", ".join(code(m) for m in sorted(MEMBERS)) + " (the `programs/` members only when agents ran programs).",
             "`header.json` holds every manifest field but " + " and ".join(code(f) for f in UNHEADED)
             + "; the archive head hashes that header ahead of the event chain's head, so it covers every field a "
             "score reads. `wildhold replay` checks each link and re-simulates from the seed and inputs.",
             "### manifest.json", shape_table(manifest),
             "### events.jsonl", "One event a line, with its chain hash (`hash`); its first event:",
             shape_table(events[0] if events else {}),
             "### inputs.jsonl", "Every input (a join, an action, a setup command, the end) in the order applied; its "
             "first input:", shape_table(inputs[0] if inputs else {}),
             "## results.json (`wildhold tasks run`)",
             "One object per player; its cells by category and difficulty, each attempt with its archive and chain head.",
             shape_table(first_result)]
    return "\n\n".join(parts) + "\n"


def sample_files(folder: Path) -> tuple[Path, Path]:
    """A short tiny-scenario match's archive and one oracle task attempt's results.json, made in `folder`."""
    from wildhold.agents.runner import ScriptedRun
    from wildhold.tasks.catalog import default_suite
    from wildhold.tasks.suite import run_suite

    run = ScriptedRun.start("tiny", 1, folder / "match.sqlite", replace=True)
    run.run(until=run.world.start_tick + 120)
    run.match.end("the page's sample")
    archive = run.match.export(folder / "match.wildhold.zip")
    run.match.close()
    run_suite(default_suite().select(["exploration/gather-wood-v1"]), "oracle", 1, 1, folder / "tasks")
    return archive, folder / "tasks" / "results.json"


def pages(cli: Command) -> dict[str, str]:
    """Every generated page by its path under docs/, and the OpenAPI document beside the HTTP page."""
    from wildhold.server.http import create_app
    from wildhold.server.mcp import tool_surface

    spec = create_app(lambda: None, horizon="visible").openapi()
    with tempfile.TemporaryDirectory() as tmp:
        schemas = schemas_page(*sample_files(Path(tmp)))
    return {"reference/cli.md": cli_page(cli), "reference/http.md": http_page(spec),
            "reference/openapi.json": json.dumps(spec, indent=2, sort_keys=True) + "\n",
            "reference/mcp.md": mcp_page(tool_surface()),
            "reference/mcp-compact.md": mcp_page(tool_surface(profile="compact"), "compact"),
            "reference/rules.md": rules_page(),
            "reference/content.md": content_page(), "reference/rubrics.md": rubrics_page(), "reference/files.md": schemas}
