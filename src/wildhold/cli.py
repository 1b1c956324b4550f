"""The `wildhold` command line: demo, resume, replay, rules, serve, report, leaderboard, export, run, sweep, compare, fork,
examples, bench."""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterable, Iterator, Optional

import click
import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from wildhold.content import ContentError, default_content
from wildhold.helptext import HelpCommand, HelpGroup
from wildhold.revision import version_text
from wildhold.terminal import Col, FitTable

if TYPE_CHECKING:
    import socket
    from importlib.resources.abc import Traversable

    from wildhold.eval.season import SeasonRow

class GuardedCommand(HelpCommand):
    """A command that never ends in a traceback: what it does not turn into a sentence itself is explained here
    (`readable.explain`), naming the files it was given; `wildhold --debug COMMAND` shows the traceback instead."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:
            if ctx.find_root().params.get("debug"):
                raise
            from wildhold.readable import explain

            message, code = explain(exc, _given_paths(ctx.params))
            _fail(message, code)


def _given_paths(params: dict[str, Any]) -> list[Path]:
    """The files among a command's parameters, in order (lists of paths included), else every path it was given."""
    paths = [item for value in params.values() for item in (value if isinstance(value, (list, tuple)) else [value])
             if isinstance(item, Path)]
    return [p for p in paths if p.is_file()] or paths


class Guarded(typer.Typer):
    """A Typer whose commands are GuardedCommands, its help laid out to read at 80 columns (wildhold.helptext)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=HelpGroup, rich_markup_mode=None, **kwargs)

    def command(self, *args: Any, cls: Any = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or GuardedCommand, **kwargs)


app = Guarded(help="Wildhold: a persistent multi-agent survival world and its benchmark harness.", no_args_is_help=True)
bench_app = Guarded(help="Benchmarks that print their figures (a table; --json adds one JSON line).", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
console = Console()  # its width is set per invocation by `main` (see `_width`)
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")]
Trust = Annotated[bool, typer.Option("--trust", help="Score the archive as it is, without re-simulating it; the output says so.")]
CacheDir = Annotated[Optional[Path], typer.Option("--cache", help="Folder of verdicts by archive digest (default: the user's cache, $WILDHOLD_CACHE or ~/.cache/wildhold); each is checked against this install's key.")]


class RulesFormat(str, Enum):
    md = "md"
    json = "json"


class ReportFormat(str, Enum):
    html = "html"
    json = "json"
    md = "md"


class Horizon(str, Enum):
    """The horizons of a match (wildhold.service.match.HORIZONS): whether its agents are told when it ends."""

    visible = "visible"
    hidden = "hidden"


class Tools(str, Enum):
    """The MCP tool profiles (wildhold.service.access.TOOL_PROFILES): a tool per action, query and program operation,
    or the same through a few."""

    full = "full"
    compact = "compact"


class Clock(str, Enum):
    """The host's clocks (wildhold.service.access.CLOCKS), listed here so that `--help` imports no world."""

    realtime = "realtime"
    lockstep = "lockstep"
    fast = "fast"


def _print_version(value: bool) -> None:
    if value:
        _say(version_text())
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                               help="Print the version (with the git commit in a checkout) and exit.")] = False,
         debug: Annotated[bool, typer.Option("--debug", envvar="WILDHOLD_DEBUG",
                                             help="On a failure, the full traceback instead of one sentence.")] = False) -> None:
    """Options before the command (the app's help text is the Typer's own)."""
    console.width = _width()


def _width() -> int | None:
    """$COLUMNS, else the terminal's (None: rich asks it), else 80. Output piped to a file or another program
    is laid out the same wherever it runs; every table fits any width (wildhold.terminal)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if console.is_terminal else 80


def _say(text: str) -> None:
    """A plain line (paths, hashes, tokens): printed as is, never wrapped, so it can be copied or grepped whole."""
    console.print(text, soft_wrap=True, markup=False, highlight=False)


@contextmanager
def _owner_only() -> Iterator[None]:
    """While a command serves or runs a match, whatever it creates is its owner's only (the data folder holds every
    agent's programs, logs and whispers): the store sets those modes itself, this covers anything else."""
    from wildhold.store.private import OTHERS

    before = os.umask(OTHERS)
    try:
        yield
    finally:
        os.umask(before)


def _output_format(format: Enum | None, json_out: bool, default: str) -> str:
    """`--json` is the one spelling for JSON output; `--format json` stays as its alias."""
    chosen = format.value if format is not None else None
    if json_out and chosen not in (None, "json"):
        _fail(f"--json and --format {chosen} ask for two formats; give one")
    return "json" if json_out else chosen or default


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)  # messages are plain text: 'wildhold[openai]' stays
    raise typer.Exit(code)


def _refuse(exc: Exception) -> None:
    """A score refused: its one sentence, and the stable code of the check that failed when there is one."""
    code = getattr(exc, "code", None)
    _fail(f"{exc} (refused: {code})" if code else str(exc), 1)


def _listening(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:port, taken before anything is opened, or one line saying why it cannot be."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        _fail(f"port {port} on 127.0.0.1 cannot be used: {exc.strerror or exc}; choose another with --port", 1)
    return sock


def _play(run, title: str) -> None:
    from wildhold.world.world import World

    w: World = run.world
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("ticks"),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        task = progress.add_task(title, total=w.end_tick - w.start_tick, completed=w.tick - w.start_tick)

        def tick(world: World) -> None:
            if world.tick % 60 == 0 or world.finished:
                progress.update(task, completed=world.tick - world.start_tick,
                                description=f"{title} day {world.day} {world.tick % 1440 // 60:02d}:00")

        run.run(on_tick=tick)
        progress.update(task, completed=w.end_tick - w.start_tick)


DEMO_COLUMNS = (Col("rank", short="#", key=True), Col("agent", "left", key=True), Col("policy", "left"), Col("wealth"),
                Col("health", short="hp"), Col("downs"), Col("actions", short="acts"), Col("rejected", short="rej"),
                Col("crafts"), Col("gathered", short="gath"), Col("moved"), Col("built"), Col("trades"), Col("raids"),
                Col("quests"), Col("defaults", short="dflt"))
SEASON_SHORT = {"Outfit": "Out", "Depth": "Dp", "Bosses": "Boss", "Crafts": "Cft", "Downs": "Dn"}


def _summary_table(archive_path: Path) -> FitTable | Group:
    """One row per agent from the archive alone, in wealth rank order; a season adds its Table 3. The
    folds that write the columns of both run once."""
    from wildhold.eval import season, summary
    from wildhold.eval.fold import writers
    from wildhold.eval.metrics import MatchRecord, compute_metrics, quiet_gc
    from wildhold.store.archive import Archive
    from wildhold.world.serialize import loads
    from wildhold.world.wealth import rank_standard, wealth_cents

    content = default_content()
    with Archive(archive_path) as archive, quiet_gc():
        record = MatchRecord(archive.manifest, list(archive.events()))
        final = loads(content, archive.final_state())
    m = record.manifest
    policies = {a["id"]: a.get("policy", "-") for a in m["agents"]}
    with_season = m["scenario"] == "season"
    shown = [*summary.METRICS.values(), *(season.METRICS.values() if with_season else ())]
    metrics = compute_metrics(record, content, writers(*shown))
    rows = summary.summaries_of(metrics)
    wealth = {agent: wealth_cents(final, agent) for agent in rows}
    ranks = rank_standard(wealth)
    days = (m["final_tick"] - m["start_tick"]) / 1440
    table = FitTable(DEMO_COLUMNS, title=f"Wildhold {m['scenario']} seed {m['seed']}: {days:.1f} days, {m['event_count']} events",
                     caption="wealth: the public formula (wealth section of `wildhold rules`); exact ties share a rank (1, 1, 3)")
    for agent in sorted(rows, key=lambda a: (ranks[a], a)):
        s = rows[agent]
        table.add_row(str(ranks[agent]), s.name, policies.get(agent, "?"), f"{wealth[agent] / 100:.2f}",
                      *(str(s.cells[c.header]) for c in DEMO_COLUMNS[4:]))
    return Group(table, season_table(season.rows_of(metrics).values())) if with_season else table


def season_table(rows: Iterable[SeasonRow]) -> FitTable:
    """Table 3 from season rows, wherever they come from (an archive, or fixed rows in a test)."""
    from wildhold.eval.season import COLUMNS
    from wildhold.world.parts.trial import STAGES

    table = FitTable([Col("agent", "left", key=True), *(Col(c, short=SEASON_SHORT.get(c)) for c in COLUMNS)],
                     title="Season: the tasks and the trial (seed 000, Table 3)")
    for row in rows:
        table.add_row(row.name, *row.cells(len(STAGES)))
    return table


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Scenario name (see `wildhold rules`).")] = "default",
    seed: Annotated[int, typer.Option(help="World seed.")] = 1,
    out: Annotated[Path, typer.Option(help="Folder for the match database and archive.")] = Path("runs/demo"),
    agents: Annotated[Optional[int], typer.Option(help="Number of scripted agents (default: the scenario's).")] = None,
    ack_stdout: Annotated[bool, typer.Option(hidden=True, help="Print each acknowledged input (for durability tests).")] = False,
    quiet: Quiet = False,
) -> None:
    """Play a match of scripted agents on the fast clock, archive it and print a summary."""
    from wildhold.agents.runner import ScriptedRun
    from wildhold.store.sqlite import StoreError

    out.mkdir(parents=True, exist_ok=True)
    db = out / "match.sqlite"
    try:
        run = ScriptedRun.start(scenario, seed, db, agents=agents, replace=True)
    except (ContentError, StoreError) as exc:
        _fail(str(exc))
    if ack_stdout:
        run.match.on_ack = lambda inp: print(f"ack {inp.seq}", flush=True)
    if quiet or ack_stdout:
        run.run()
    else:
        _play(run, f"{scenario} seed {seed}")
    archive = run.match.export(out / "match.wildhold.zip")
    run.match.close()
    if not ack_stdout:
        console.print(_summary_table(archive))
        _say(f"archive: {archive}\nchain head: {run.world.events.head}")


@app.command()
def resume(db: Annotated[Path, typer.Argument(help="A match database written by `wildhold demo`, or the folder holding it.")],
           quiet: Quiet = False, ack_stdout: Annotated[bool, typer.Option(hidden=True)] = False) -> None:
    """Resume a stored match from its latest snapshot and inputs, play it to the end, and archive it."""
    from wildhold.agents.runner import ScriptedRun
    from wildhold.store.sqlite import StoreError

    if db.is_dir():
        db = db / "match.sqlite"
    if not db.exists():
        _fail(f"{db} does not exist")
    try:
        run = ScriptedRun.resume(db)
    except StoreError as exc:
        _fail(str(exc))
    served = sorted(agent for agent, args in run.match.joins().items() if "policy" not in args)
    if served:
        run.match.close()
        _fail(f"{db} holds a match whose agents {', '.join(served)} play from outside: resume it as it was played, "
              f"`wildhold serve --data {db.parent}` (or `wildhold run EXPERIMENT --out` its run folder)")
    if ack_stdout:
        run.match.on_ack = lambda inp: print(f"ack {inp.seq}", flush=True)
    if quiet or ack_stdout:
        run.run()
    else:
        _play(run, f"resumed at tick {run.world.tick}")
    archive = run.match.export(db.parent / "match.wildhold.zip")
    run.match.close()
    if not ack_stdout:
        console.print(_summary_table(archive))
    _say(f"archive: {archive}\nchain head: {run.world.events.head}")


@app.command()
def replay(archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")],
           parent: Annotated[Optional[Path], typer.Option(help="For a fork: its parent archive, to hold the fork point to it too.")] = None) -> None:
    """Re-simulate an archive from its seed and inputs; exit 1 unless the chain head, the state hash, the final
    state file and the roster match (and, when agents ran programs, unless every program run re-simulates from
    its transcript).

    For a fork, also unless its log at the fork point is the chain head it records (and, with --parent, the parent's)."""
    from wildhold.runner.fork import fork_checks
    from wildhold.service.verify import check_content, resimulate
    from wildhold.store.archive import Archive, ArchiveError

    try:
        with Archive(archive) as arc:
            logged_head = arc.verify()
            m, bound = arc.manifest, arc.bound
            content = default_content()
            check_content(m, content, archive)
            sim = resimulate(arc, content)
        forked = fork_checks(archive, parent)
    except ArchiveError as exc:
        _fail(str(exc), 1)
    if parent is not None and not forked:
        _fail(f"{archive.name} is not a fork: --parent is for forks")
    table = FitTable([Col("check", "left", key=True, wrap=True), Col("archive", "left"), Col("replay", "left"),
                      Col("match", "left")], title=f"replay of {archive.name}", caption="hashes: their first 16 characters")
    checks = [(c.name, c.archived, c.replayed, c.same) for c in sim.checks]
    checks.append(("log verifies", logged_head, m["chain_head"], logged_head == m["chain_head"]))
    fmt = m["format"]
    checks.append(("header bound", "every field" if fmt >= 3 else "core fields (format 2)" if bound else "no (format 1)",
                   "-", True))
    checks.extend(forked)
    runs = sim.runs
    if runs:
        same_runs = sum(r.ok for r in runs)
        checks.append(("program runs re-simulate", f"{len(runs)} runs", f"{same_runs} same", same_runs == len(runs)))
        for bad in (r for r in runs if not r.ok):
            console.print(f"[red]program run {bad.run} ({bad.agent} {bad.name}@{bad.revision}):[/red] {bad.problem}", soft_wrap=True)
    ok = True
    for name, a, b, same in checks:
        ok &= same
        table.add_row(name, a[:16], b[:16], "[green]yes[/green]" if same else "[red]NO[/red]")
    console.print(table)
    if not ok:
        console.print("[red]replay does not match the archive[/red]")
        raise typer.Exit(1)
    console.print("[green]replay matches the archive[/green]")


@app.command()
def rules(
    format: Annotated[Optional[RulesFormat], typer.Option("--format", help="Markdown or JSON (default md).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="The JSON document (the same as --format json).")] = False,
    out: Annotated[Optional[Path], typer.Option(help="Write to this file instead of stdout.")] = None,
    tools_hash: Annotated[bool, typer.Option("--tools-hash", help="Print the hash of the served tool surface (names, schemas, descriptions), then its tools and size against the budget.")] = False,
    tools: Annotated[Tools, typer.Option("--tools", help="With --tools-hash: the tool profile (full: a tool per action, query and program operation; compact: the same through a few).")] = Tools.full,
    horizon: Annotated[Horizon, typer.Option(help="As a match of this horizon serves it: hidden says nothing of when a match ends.")] = Horizon.visible,
    env: Annotated[bool, typer.Option("--env", help="The RL faces' Discrete action table instead: each entry's action and how its arguments are filled (needs the rl extra).")] = False,
) -> None:
    """Print the rules document agents read, generated from the content files and the action registry."""
    from wildhold.docs.rules import rules_json, rules_markdown
    from wildhold.service.queries import program_reads

    if env:
        from wildhold.extras import MissingExtra, require

        try:
            require("rl", "wildhold rules --env")
        except MissingExtra as exc:
            _fail(str(exc))
        from wildhold.env.gym_env import action_table

        table = action_table()
        if _output_format(format, json_out, "md") == "json":
            text = json.dumps({"entries": len(table), "actions": table.describe(),
                               "table": [e.text() for e in table.entries]}, indent=2)
        else:
            text = table.markdown()
        if out:
            out.write_text(text + "\n")
        else:
            sys.stdout.write(text + "\n")
        return
    if tools_hash:
        from wildhold.server.mcp import CATALOGUE_BUDGET, catalogue_size, tool_surface
        from wildhold.server.mcp import tools_hash as surface_hash

        surface = tool_surface(horizon=horizon.value, profile=tools.value)
        size, budget = catalogue_size(surface), CATALOGUE_BUDGET[tools.value]
        sys.stdout.write(f"{surface_hash(surface)}\n{tools.value} profile: {len(surface)} tools, {size:,} characters of "
                         f"names, descriptions and schemas (budget {budget:,}{'' if size <= budget else ': OVER'})\n")
        raise typer.Exit(0 if size <= budget else 1)
    content = default_content()
    if _output_format(format, json_out, "md") == "json":
        text = json.dumps(rules_json(content, program_reads(), horizon.value), indent=2, sort_keys=True)
    else:
        text = rules_markdown(content, program_reads(), horizon.value)
    if out:
        out.write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")


@app.command()
@_owner_only()
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8765,
    data: Annotated[Path, typer.Option(help="Folder for the match database and archive; an existing match there resumes.")] = Path("runs/serve"),
    scenario: Annotated[str, typer.Option(help="Scenario name (see `wildhold rules`).")] = "default",
    seed: Annotated[int, typer.Option(help="World seed.")] = 1,
    clock: Annotated[Clock, typer.Option(help="realtime (the world never waits), lockstep (each tick waits for every agent or the deadline) or fast.")] = Clock.realtime,
    tick_seconds: Annotated[float, typer.Option(help="realtime: wall-clock seconds per tick.")] = 1.0,
    turn_deadline: Annotated[float, typer.Option(help="lockstep: the longest a tick waits for an agent, in seconds.")] = 30.0,
    lobby: Annotated[bool, typer.Option(help="Agents register while the map is hidden; POST /api/admin/start starts everyone together.")] = False,
    late_join: Annotated[bool, typer.Option(help="Let agents register after the start (off needs --lobby).")] = True,
    signup_token: Annotated[Optional[str], typer.Option(envvar="WILDHOLD_SIGNUP_TOKEN", help="Token that registers agents (default: a random one, printed).")] = None,
    admin_token: Annotated[Optional[str], typer.Option(envvar="WILDHOLD_ADMIN_TOKEN", help="Token for /api/admin (default: a random one, printed).")] = None,
    spectator_token: Annotated[Optional[str], typer.Option(envvar="WILDHOLD_SPECTATOR_TOKEN", help="Token that opens the live page at / (default: a random one, printed).")] = None,
    rate: Annotated[float, typer.Option(help="Requests a second per token (0: no limit).")] = 20.0,
    idle_after: Annotated[int, typer.Option(help="Ticks of silence after which an agent is logged as idle.")] = 120,
    horizon: Annotated[Horizon, typer.Option(help="visible: agents are told when the match ends; hidden: no face says when, or how long it lasts.")] = Horizon.visible,
    max_agents: Annotated[int, typer.Option(help="Agents the match takes at most.")] = 64,
    wait_max: Annotated[float, typer.Option(help="The longest a wait_operation long poll holds, in seconds.")] = 30.0,
    mcp_sessions: Annotated[int, typer.Option(envvar="WILDHOLD_MCP_SESSIONS", help="MCP sessions one token holds open at "
                                              "most; opening one more closes its least recently used.")] = 8,
    proxy: Annotated[Optional[Path], typer.Option(help="A proxy file (upstreams, pinned prices, hidden budget): meter outside "
                                                       "harnesses at /proxy/openai/v1 and /proxy/anthropic with the agent's token.")] = None,
    tools: Annotated[Tools, typer.Option("--tools", help="The MCP tool profile: full (a tool per action, query and program "
                                                         "operation) or compact (the same through a few, for a smaller catalogue).")] = Tools.full,
) -> None:
    """Serve one world to remote agents: HTTP API and MCP (streamable HTTP) on 127.0.0.1."""
    import secrets

    import uvicorn

    from wildhold.eval.html import render_html
    from wildhold.eval.report import score_archive
    from wildhold.server.http import KEEP_ALIVE_S, create_app
    from wildhold.server.mcp import tools_hash
    from wildhold.service.access import HostConfig
    from wildhold.service.host import Host
    from wildhold.store.sqlite import StoreError
    from wildhold.web.site import add_site

    config = HostConfig(signup_token=signup_token or secrets.token_urlsafe(16), admin_token=admin_token or secrets.token_urlsafe(16),
                        spectator_token=spectator_token or secrets.token_urlsafe(16),
                        clock=clock.value, tick_seconds=tick_seconds, turn_deadline_s=turn_deadline, lobby=lobby,
                        late_join=late_join, rate_per_s=rate, idle_after_ticks=idle_after, max_agents=max_agents,
                        wait_max_s=wait_max, mcp_sessions_per_token=mcp_sessions, tools=tools.value)
    spec = None
    if proxy is not None:
        from wildhold.agents.proxy import ProxySpec
        from wildhold.readable import UnreadableFile

        try:
            spec = ProxySpec.load(proxy)
        except UnreadableFile as exc:
            _fail(str(exc))
    extra = {"tools_hash": tools_hash(horizon=horizon.value, profile=tools.value)}
    if spec is not None:
        from wildhold.agents.scaffold.accounting import price_table_id

        extra |= {"price_table": spec.price_table(), "price_table_sha256": price_table_id(spec.price_table()),
                  "proxy_budget_usd": spec.budget_usd}
    try:
        host = Host.open(data, config, scenario, seed, manifest_extra=extra, horizon=horizon.value)
    except (ValueError, StoreError, ContentError) as exc:
        _fail(str(exc))
    base = f"http://127.0.0.1:{port}"
    console.print(f"Wildhold {scenario} seed {seed}, clock {clock.value}, {'lobby' if lobby else 'no lobby'}; match in {data}", soft_wrap=True)
    console.print(f"HTTP  {base}/api   (OpenAPI {base}/openapi.json, briefing {base}/llms.txt)", soft_wrap=True)
    console.print(f"MCP   {base}/mcp   (streamable HTTP, header 'Authorization: Bearer <agent token>'; {tools.value} tools)", soft_wrap=True)
    console.print(f"signup token: {config.signup_token}\nadmin token:  {config.admin_token}", soft_wrap=True)
    console.print(f"spectator token: {config.spectator_token}   (watch: {base}/login, or {base}/login?token=<it>)", soft_wrap=True)
    console.print(f"get an agent token: curl -s -X POST {base}/api/agents -H 'Authorization: Bearer {config.signup_token}' "
                  "-H 'Content-Type: application/json' -d '{\"name\": \"my-agent\"}'", soft_wrap=True)
    if lobby:
        console.print(f"start the match:    curl -s -X POST {base}/api/admin/start -H 'Authorization: Bearer {config.admin_token}'", soft_wrap=True)
    served = create_app(host, scorer=score_archive, render_html=render_html)
    add_site(served)  # the live page at /, matches, the leaderboard and profiles
    if spec is not None:
        from wildhold.agents.proxy import proxy_app

        served.mount("/proxy", proxy_app(host, spec))
        console.print(f"proxy {base}/proxy/openai/v1 (OPENAI_BASE_URL) and {base}/proxy/anthropic (ANTHROPIC_BASE_URL), "
                      "the agent's token as the API key", soft_wrap=True)

    def close() -> None:
        host.close()
        if host.archives.path:
            _say(f"archive: {host.archives.path}")

    with _closed_on_stop(close):
        uvicorn.run(served, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
                    timeout_keep_alive=KEEP_ALIVE_S)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
SHUTDOWN_GRACE_S = 5.0  # open long polls and MCP streams are cut after this


class _Stop(Exception):
    """A stop signal reached `serve`: unwind to its close, then exit 0."""


@contextmanager
def _closed_on_stop(close: Callable[[], None]) -> Iterator[None]:
    """Run the server, then `close`, however it ends; SIGTERM and SIGINT end it with exit code 0. uvicorn
    handles them while it serves, shuts down, then raises them again: that second delivery (or one that
    comes before uvicorn took over) lands here. Once closing, further signals wait for the close."""
    def stop(sig: int, _frame: object) -> None:
        raise _Stop(sig)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    except _Stop:
        pass
    finally:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        try:
            close()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


@app.command()
def standin(port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8790) -> None:
    """Serve the stand-in model on 127.0.0.1: scripted policies behind an OpenAI-compatible chat-completions endpoint
    (models wildhold-standin/<policy>; not language models), reporting usage at four characters a token. Point an
    OpenAI-compatible agent, or a proxy file's upstream, at http://127.0.0.1:PORT/v1 to run it offline."""
    import uvicorn

    from wildhold.agents.scaffold.standin import standin_app

    sock = _listening(port)
    console.print(f"stand-in model on http://127.0.0.1:{port}/v1 (OPENAI_BASE_URL; any key): "
                  "scripted policies, not language models", soft_wrap=True)
    uvicorn.Server(uvicorn.Config(standin_app(), log_level="warning")).run(sockets=[sock])


@app.command()
def report(
    archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")],
    rubric: Annotated[Optional[str], typer.Option(help="Rubric version (default: the published one).")] = None,
    format: Annotated[Optional[ReportFormat], typer.Option("--format", help="HTML, JSON or Markdown (default md).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="The report as JSON (the same as --format json).")] = False,
    out: Annotated[Optional[Path], typer.Option(help="Write to this file instead of stdout.")] = None,
    agent: Annotated[Optional[str], typer.Option(help="Print only this agent's card (id or name), as JSON.")] = None,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Score an archive under a rubric version: report cards, standings, the season table, the trial, charts.
    The archive is verified by re-simulation first (see `wildhold replay`); one that does not verify is refused."""
    from wildhold.eval.html import render_html
    from wildhold.eval.report import card_for, report_json, report_markdown, score_archive
    from wildhold.eval.rubric import UnknownRubric
    from wildhold.store.archive import ArchiveError

    chosen = _output_format(format, json_out, "md")
    try:
        built = score_archive(archive, rubric, trust=trust, cache=cache)
    except (ArchiveError, UnknownRubric, ContentError) as exc:
        _refuse(exc)
    if agent is not None:
        card = card_for(built, agent)
        if card is None:
            _fail(f"no agent {agent!r} in this match; agents: {', '.join(c['name'] for c in built['agents'])}")
        data = report_json({"rubric_version": built["rubric_version"], "card": card, "verification": built["verification"]})
    elif chosen == "json":
        data = report_json(built)
    elif chosen == "html":
        data = render_html(built).encode()
    else:
        data = report_markdown(built).encode()
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        _say(f"report: {out}")
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


@app.command()
def view(
    archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")],
    run_dir: Annotated[Optional[Path], typer.Argument(help="The `wildhold run` folder it came from: each agent's track.")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")] = 0,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Open a replay viewer on 127.0.0.1: a timeline over the whole match (the map and events at any tick), and
    with the run folder each agent's sessions, model turns, tool calls, workspace writes, program saves and spend
    on the same timeline. The archive is verified first, as `wildhold report` does."""
    import time

    import uvicorn

    from wildhold.readable import DAMAGE
    from wildhold.store.archive import ArchiveError
    from wildhold.web.viewer import Timeline, Tracks, viewer_app

    began = time.perf_counter()
    try:
        timeline = Timeline(archive, trust=trust, cache=cache)
        tracks = Tracks(run_dir, timeline) if run_dir is not None else None
    except (ArchiveError, ContentError, ValueError, FileNotFoundError) as exc:
        if isinstance(exc, DAMAGE):
            raise  # bytes damaged on disk: explained with the archive's name (GuardedCommand)
        _refuse(exc)
    sock = _listening(port)
    _say(f"{archive}: {len(timeline.events):,} events, ticks {timeline.start_tick}-{timeline.final_tick}, "
         f"{len(timeline.keyframes)} kept states, opened in {time.perf_counter() - began:.1f} s")
    _say(f"viewer: http://127.0.0.1:{sock.getsockname()[1]}/   (deep links: #tick=N&agent=ID; Ctrl-C stops)")
    config = uvicorn.Config(viewer_app(timeline, tracks), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


LEADERBOARD_COLUMNS = (Col("rank", short="#", key=True), Col("configuration", "left", short="config", key=True, wrap=True),
                       Col("mu"), Col("sigma"), Col("ordinal", short="ord"), Col("matches", short="n"),
                       Col("firsts", short="1st"), Col("fitness mean ± std", "left", short="fitness"),
                       Col("95% CI", wrap=True), Col("composite [95% CI]", "left", short="comp", wrap=True),
                       Col("tokens", wrap=True), Col("dollars", short="$", wrap=True))


@app.command()
def leaderboard(
    archives: Annotated[list[Path], typer.Argument(help="Match archives (.wildhold.zip).")],
    rubric: Annotated[Optional[str], typer.Option(help="Rubric version (default: the published one).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the leaderboard as one JSON document instead of a table.")] = False,
    pool_scenarios: Annotated[bool, typer.Option("--pool-scenarios", help="Pool archives of different scenarios into one board (refused otherwise).")] = False,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Skill ratings (openskill; shared ranks are draws) and every measure with a 95% interval over seeds.

    Per configuration (its full arm identity), over archives each verified by re-simulation first, every one
    scored under the one rubric named; archives of one scenario, unless --pool-scenarios. Intervals are Student-t
    (a BCa bootstrap from 30 seeds on, marked BCa); --json gives every measure's. An archive that does not verify
    is named with the reason and left out (exit 1); copies of one log count once."""
    from wildhold.eval.leaderboard import PoolingRefused, spend_cells
    from wildhold.eval.leaderboard import leaderboard as board
    from wildhold.eval.rubric import UnknownRubric
    from wildhold.eval.stats import interval_text
    from wildhold.service.verify import TRUSTED_NOTE
    from wildhold.store.archive import ArchiveError

    try:
        result = board(archives, rubric, trust=trust, cache=cache, pool_scenarios=pool_scenarios)
    except (ArchiveError, UnknownRubric, ContentError, PoolingRefused) as exc:
        _refuse(exc)
    if json_out:
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
        if result["refused"]:
            raise typer.Exit(1)
        return
    caption = (f"{result['pooled']['statement']}. {result['model']}. {result['statistic']}"
               + (f"; {TRUSTED_NOTE}" if trust else "; every archive verified by re-simulation"))
    table = FitTable(LEADERBOARD_COLUMNS, caption=caption,
                     title=f"Leaderboard over {len(result['matches'])} matches (rubric {result['rubric_version']})")
    for row in result["rows"]:
        f, r, m = row["fitness"], row["rating"], row["measures"]
        ci = "n/a (one seed)" if f["ci95"] is None else interval_text(f, 1)
        fitness = f"{f['mean']:.1f}" + ("" if f["std"] is None else f" ± {f['std']:.1f}")
        c = m.get("composite")
        composite = "-" if c is None else f"{c['mean']:.1f}" + ("" if c["ci95"] is None else f" {interval_text(c, 1)}")
        table.add_row(str(row["rank"]), row["config"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}",
                      str(row["matches"]), str(row["firsts"]), fitness, ci, composite, *spend_cells(row))
    console.print(table)
    for dup in result["duplicates"]:
        _say(f"{dup['archive']} holds the same log as {dup['same_log_as']} (the same chain head): counted once")
    for refusal in result["refused"]:
        _say(f"refused {refusal['archive']}: {refusal['reason']} ({refusal['code']})")
    if result["refused"]:
        raise typer.Exit(1)


@app.command("export")
def export_cmd(
    archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip), or a folder `wildhold sweep` wrote.")],
    out: Annotated[Path, typer.Option(help="Folder for the tables as JSONL and Parquet.")],
    rubric: Annotated[Optional[str], typer.Option(help="Rubric version for the per-agent scores (default: the published one).")] = None,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Write an archive's events, per-agent metrics and spend, and its model sessions (or a sweep's cells, telemetry
    and curves) to JSONL and Parquet.

    An archive is verified first; a sweep folder gives its cells, every model cell's scaffold telemetry and every
    spend-curve point."""
    from wildhold.eval.export import export_match
    from wildhold.eval.rubric import UnknownRubric
    from wildhold.extras import MissingExtra
    from wildhold.runner.cells import CellUnverified
    from wildhold.runner.export import NotASweep, export_sweep
    from wildhold.store.archive import ArchiveError

    try:
        if archive.is_dir():
            paths = export_sweep(archive, out)
        else:
            paths = export_match(archive, out, rubric, trust=trust, cache=cache)
    except (ArchiveError, UnknownRubric, ContentError, MissingExtra, NotASweep, CellUnverified) as exc:
        _refuse(exc)
    for name, path in paths.items():
        _say(f"{name}: {path}")


@app.command("run")
@_owner_only()
def run_cmd(
    experiment: Annotated[Path, typer.Argument(help="An experiment file (`wildhold examples DIR` copies some out).")],
    out: Annotated[Path, typer.Option(help="Folder for the archive, telemetry, manifest, report and spend curve; a crashed run there resumes.")] = Path("runs/experiment"),
    quiet: Quiet = False,
) -> None:
    """Run an experiment: the world served on 127.0.0.1 with its lobby, every arm through its MCP server, then the run's artifacts."""
    from wildhold.agents.scaffold.experiment import ExperimentError, run_experiment
    from wildhold.extras import MissingExtra
    from wildhold.store.sqlite import StoreError

    if not experiment.exists():
        _fail(f"{experiment} does not exist")
    try:
        paths = run_experiment(experiment, out, quiet=quiet)
    except ExperimentError as exc:
        _refuse(exc)
    except (ContentError, ValueError, StoreError, MissingExtra) as exc:
        _fail(str(exc))
    from wildhold.agents.scaffold.progress import summary_table

    console.print(summary_table(out))
    for kind, path in paths.items():
        _say(f"{kind}: {path}")


class Executor(str, Enum):
    """Where a sweep's cells run (wildhold.runner.sweep.EXECUTORS)."""

    local = "local"
    ray = "ray"


@app.command()
@_owner_only()
def sweep(
    sweep_file: Annotated[Path, typer.Argument(metavar="SWEEP.yaml", help="A sweep file (`wildhold examples DIR` copies sweep-smoke.yaml).")],
    out: Annotated[Path, typer.Option(help="Folder for every cell's run folder and archive, sweep.jsonl, results.json and the summary; a rerun resumes (finished cells are skipped).")],
    executor: Annotated[Executor, typer.Option(help="local: a process pool; ray: Ray tasks (the ray extra).")] = Executor.local,
    address: Annotated[Optional[str], typer.Option(help="Ray: the cluster's address (default: a local Ray started for the sweep and shut down after).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Cells at once (default: the cores).")] = os.cpu_count() or 1,
    quiet: Quiet = False,
) -> None:
    """Run arms x protocols x seeds x repeats, each cell its own run and archive; then the summary.

    Each cell is one `wildhold run` (or task attempt, or fork); failures are retried with their errors recorded,
    no cell starts once the sweep's budget is spent, and a rerun skips the finished cells."""
    from wildhold.extras import MissingExtra
    from wildhold.runner.spec import Sweep, SweepError, cells
    from wildhold.runner.sweep import run_sweep

    if address and executor is not Executor.ray:
        _fail("--address is for --executor ray")
    try:
        total = len(cells(Sweep.load(sweep_file)))
    except SweepError as exc:
        _refuse(exc)
    with Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console, disable=quiet) as bar:
        job = bar.add_task("", total=total)
        spent = [0.0]

        def advance(result: dict) -> None:
            failed = " (failed)" if result["status"] == "failed" else ""
            spent[0] += result.get("cost_usd", 0.0)
            bar.update(job, advance=1, description=f"{result['cell']}{failed}; ${spent[0]:.4f} spent by cells finished now")

        try:
            outcome = run_sweep(sweep_file, out, executor=executor.value, workers=workers, address=address, on_cell=advance)
        except (SweepError, MissingExtra) as exc:
            _refuse(exc)
    console.print(sweep_table(json.loads((out / "summary.json").read_text())))
    for cell, errors in outcome["failed"].items():
        _say(f"failed: {cell} after {len(errors)} tries; last error: {errors[-1]}")
    if outcome["unlaunched_for_budget"]:
        _say(f"budget spent (${outcome['spent_usd']:.4f} of ${outcome['budget_usd']:.2f}): "
             f"{len(outcome['unlaunched_for_budget'])} cells not started; raise budget_usd and rerun to go on")
    _say(f"{outcome['finished']} of {outcome['cells']} cells finished ({outcome['ran_now']} now, "
         f"{outcome['skipped_finished']} before); spent ${outcome['spent_usd']:.4f} of ${outcome['budget_usd']:.2f}; "
         f"{outcome['wall_s']:.1f} s on {outcome['workers']} workers ({outcome['executor']})")
    _say(f"summary: {out / 'summary.md'}\nresults: {out / 'results.json'}")
    if outcome["failed"]:
        raise typer.Exit(1)


@app.command()
@_owner_only()
def fork(
    archive: Annotated[Path, typer.Argument(help="The parent match archive (.wildhold.zip); verified by re-simulation first.")],
    at: Annotated[int, typer.Option("--at", help="The tick to fork at: the new match starts from the parent's state there.")],
    out: Annotated[Path, typer.Option(help="Folder for the fork's match database and archive.")],
    replace: Annotated[Optional[list[str]], typer.Option("--replace", metavar="NAME=POLICY", help="From the fork on, this agent plays this scripted policy (repeatable).")] = None,
    absent: Annotated[Optional[list[str]], typer.Option("--absent", metavar="NAME", help="From the fork on, this agent does nothing (repeatable).")] = None,
    ticks: Annotated[Optional[int], typer.Option(min=1, help="Ticks to play after the fork (default: as many as the parent played after it; with --experiment, fewer once every model arm is done).")] = None,
    experiment: Annotated[Optional[Path], typer.Option(metavar="EXP.yaml", help="Play the fork as `wildhold run` plays this experiment: an arm with a `seat` takes that agent over, one without joins at the fork, the other agents keep their policies.")] = None,
    cache: CacheDir = None,
    quiet: Quiet = False,
) -> None:
    """A new match from the verified, replayed state of ARCHIVE at a tick, with the same agents or others.

    Its archive records the parent's digest, the chain head at the fork and the tick; `wildhold replay` verifies it.
    Agent programs running at the tick restart there from their revision (stopped when their agent is replaced or
    absent); the archive says what happened to each."""
    from wildhold.agents.scaffold.experiment import Experiment, ExperimentError
    from wildhold.extras import MissingExtra
    from wildhold.runner.fork import ForkError
    from wildhold.runner.fork import fork as run_fork
    from wildhold.store.archive import ArchiveError
    from wildhold.store.sqlite import StoreError

    swaps: dict[str, str] = {}
    for item in replace or []:
        name, eq, policy = item.partition("=")
        if not eq or not name or not policy:
            _fail(f"--replace takes NAME=POLICY, not {item!r}")
        swaps[name] = policy
    exp = None
    if experiment is not None:
        if not experiment.exists():
            _fail(f"{experiment} does not exist")
        try:
            exp = Experiment.load(experiment)
        except ValueError as exc:
            _fail(str(exc))
    try:
        made = run_fork(archive, at, out, replace=swaps, absent=absent or [], ticks=ticks, cache=cache, experiment=exp,
                        base=experiment.resolve().parent if experiment is not None else None, quiet=quiet)
    except (ForkError, ExperimentError, ArchiveError, ContentError, StoreError, MissingExtra) as exc:
        _refuse(exc)
    if "run" in made:
        from wildhold.agents.scaffold.progress import summary_table

        console.print(summary_table(out))
        for kind, path in made["run"].items():
            _say(f"{kind}: {path}")
    console.print(_summary_table(made["archive"]))
    f = made["fork"]
    _say(f"archive: {made['archive']}\nforked at tick {f['tick']} (event {f['seq']}, chain head {f['chain_head_at_fork']}) "
         f"from parent {f['parent_sha256'][:16]}")
    for name, change in f["agents"].items():
        _say(f"  {name}: {change['from']} -> {change['to']}")
    for p in f.get("programs", ()):
        done = f"restarted as run {p['run']}" if p["to"] == "restarted" else f"stopped ({p['why']})"
        _say(f"  {p['character']}'s program {p['program']}@{p['revision']} (run {p['parent_run']}): {done} at tick {p['tick']}")
    if f.get("programs"):
        _say(f"  ({f['program_memory']})")
    _say(f"verify: wildhold replay {made['archive']} --parent {archive}")


class CompareFormat(str, Enum):
    md = "md"
    html = "html"
    json = "json"


@app.command()
def compare(
    a: Annotated[str, typer.Argument(help="Side A: a sweep folder (DIR or DIR@CONFIG), or a configuration of --sweep (an arm, a label or a key prefix).")],
    b: Annotated[str, typer.Argument(help="Side B, the same way.")],
    sweep_dir: Annotated[Optional[Path], typer.Option("--sweep", help="The sweep folder A and B name configurations of.")] = None,
    format: Annotated[CompareFormat, typer.Option("--format", help="Markdown, HTML or JSON.")] = CompareFormat.md,
    out: Annotated[Optional[Path], typer.Option(help="Write to this file instead of stdout.")] = None,
    trust: Annotated[bool, typer.Option("--trust", help="Take each cell's result as it is, without checking it against its archives; the output says so.")] = False,
) -> None:
    """Two configurations (or two sweeps) side by side on every measure, with intervals and a test.

    Per protocol: each side's mean, std and 95% t-interval over seeds, and B - A over the seeds both ran with the
    paired t-interval and the paired t-test (one test: they agree); sides with no seed in common get Welch's.
    Every cell's measures are first recomputed from its verified archives (a cell that disagrees is refused)."""
    from wildhold.runner.compare import CompareError, markdown, render_html
    from wildhold.runner.compare import compare as run_compare

    try:
        result = run_compare(a, b, sweep_dir, trust=trust)
    except CompareError as exc:
        _refuse(exc)
    if format is CompareFormat.json:
        text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    else:
        text = render_html(result) if format is CompareFormat.html else markdown(result)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        _say(f"compare: {out}")
    else:
        sys.stdout.write(text)


SWEEP_MEASURES = ("index", "composite", "trial", "task_success", "quests", "spend_usd")


def sweep_table(summary: dict) -> FitTable:
    """The sweep's summary: a row per configuration and protocol; each cell mean ± std [95% CI] over seeds."""
    from wildhold.eval.stats import show
    from wildhold.runner.summary import DIGITS

    shown = [m for m in SWEEP_MEASURES if any(m in r["measures"] for r in summary["rows"])]
    table = FitTable([Col("configuration", "left", short="config", key=True, wrap=True), Col("protocol", "left", key=True),
                      Col("n"), *(Col(m, "left", wrap=True) for m in shown)],
                     title="Sweep: mean ± std [95% CI] over seeds", caption=summary["statistic"])
    for row in summary["rows"]:
        table.add_row(row["label"], row["protocol"], str(len(row["seeds"])),
                      *(show(row["measures"].get(m, {}), DIGITS.get(m, 2)).rsplit(" n=", 1)[0] for m in shown))
    return table


@app.command()
def examples(
    dest: Annotated[Path, typer.Argument(metavar="DIR", help="Folder to copy them into (made if missing).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that are already there.")] = False,
) -> None:
    """Copy the example experiments, their recorded model turns (cassettes) and the example programs into DIR."""
    from importlib.resources import files

    source = files("wildhold") / "examples"
    if not source.is_dir():
        _fail("this installation of wildhold has no examples folder", 1)
    found = dict(_example_files(source, PurePosixPath()))
    there = [str(dest / rel) for rel in found if (dest / rel).exists()]
    if there and not force:
        _fail(f"{len(there)} of the files are already there ({', '.join(there[:3])}{', ...' if len(there) > 3 else ''}); "
              "pass --force to overwrite them", 1)
    try:
        for rel, item in found.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(item.read_bytes())
    except OSError as exc:
        _fail(f"cannot write into {dest}: {exc.strerror or exc}", 1)
    _say(f"wrote {len(found)} files into {dest}:")
    for rel in found:
        _say(f"  {dest / rel}")
    _say(f"next, offline with no keys: wildhold run {dest / 'offline-smoke.yaml'} --out runs/smoke")


def _example_files(node: Traversable, rel: PurePosixPath) -> Iterator[tuple[PurePosixPath, Traversable]]:
    """Every file under the package's examples, by path relative to it, in a stable order (no bytecode)."""
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__" or child.name.endswith(".pyc"):
            continue
        if child.is_dir():
            yield from _example_files(child, rel / child.name)
        else:
            yield rel / child.name, child


@app.command()
def docs(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8000,
    build: Annotated[Optional[Path], typer.Option(metavar="DIR", help="Build the site into DIR (strict: a broken link fails) and exit, instead of serving it.")] = None,
) -> None:
    """Serve this checkout's documentation site on 127.0.0.1, rebuilt as its pages change (the docs extra).

    The site is built offline: nothing it serves is fetched from the internet. Its reference pages (commands,
    HTTP, MCP tools, rules, content, files) are generated from the code as it is built."""
    from wildhold.extras import MissingExtra
    from wildhold.handbook.site import NoSite, build as build_site, serve

    try:
        if build is not None:
            _say(f"site: {build_site(build)}")
            return
        _say(f"documentation: http://127.0.0.1:{port}/   (Ctrl-C stops)")
        serve(port)
    except (MissingExtra, NoSite) as exc:
        _fail(str(exc))


@bench_app.command("report")
def bench_report(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="A one-day tiny match: a rough figure, fast.")] = False,
                 archive: Annotated[Optional[Path], typer.Option(help="Rescore this archive instead of the famine match.")] = None) -> None:
    """Events/s for rescoring an archive: verify the log, fold the metrics, build the report (one core)."""
    from wildhold.bench.report import bench_report as run

    run(as_json=json_out, quick=quick, archive=archive)


@bench_app.command("web")
def bench_web(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
              quick: Annotated[bool, typer.Option(help="16 agents and a tiny archive: a rough figure, fast.")] = False) -> None:
    """Server CPU per live-page update with 64 agents on a 128x128 map; the replay viewer's open and scrub times."""
    from wildhold.bench.web import bench_web as run

    run(as_json=json_out, quick=quick)


@bench_app.command("server")
def bench_server(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="Short runs: a rough figure, fast.")] = False) -> None:
    """Actions/s and p50/p99 latency over HTTP and MCP at 1 and 32 clients, beside a bare FastAPI echo endpoint."""
    from wildhold.bench.server import bench_server as run

    run(as_json=json_out, quick=quick)


@bench_app.command("hardening")
def bench_hardening(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                    quick: Annotated[bool, typer.Option(help="Small sizes: 3 kills, 1 fill, 400 requests, 16 agents, a 1-minute soak.")] = False,
                    only: Annotated[Optional[list[str]], typer.Option(help="Run only this measurement: crash, diskfull, fuzz, load or soak (repeatable).")] = None,
                    kills: Annotated[Optional[int], typer.Option(help="SIGKILLs of serve (default 100).")] = None,
                    fills: Annotated[Optional[int], typer.Option(help="Times the disk fills under serve, then frees (default 5).")] = None,
                    requests: Annotated[Optional[int], typer.Option(help="Fuzzed requests, HTTP and MCP together (default 100,000).")] = None,
                    agents: Annotated[Optional[int], typer.Option(help="Agents of the load run (default 256).")] = None,
                    soak_minutes: Annotated[Optional[float], typer.Option(help="Minutes of the realtime soak (default 60).")] = None,
                    period: Annotated[float, typer.Option(help="Load: seconds between one agent's turns (observe + act); the offered load is agents x 2 / period calls a second.")] = 1.0,
                    official_mcp: Annotated[bool, typer.Option("--official-mcp", help="Load: MCP agents on the official client rather than the wire (its own work a call, about as much CPU as the server spends on it, then shares the machine).")] = False,
                    seed: Annotated[int, typer.Option(help="Seed of the kill moments and the fuzzing.")] = 1) -> None:
    """A real `wildhold serve` under abuse: SIGKILLs and a full disk (nothing acknowledged lost), fuzzing (no 5xx), load (p99), soak (memory)."""
    from wildhold.bench.hardening import MEASUREMENTS
    from wildhold.bench.hardening import bench_hardening as run

    chosen = tuple(only or MEASUREMENTS)
    if set(chosen) - set(MEASUREMENTS):
        _fail(f"--only takes {', '.join(MEASUREMENTS)}, not {', '.join(sorted(set(chosen) - set(MEASUREMENTS)))}")
    if period <= 0:
        _fail("--period is a positive number of seconds")
    run(as_json=json_out, quick=quick, only=chosen, seed=seed, kills=kills, requests=requests, agents=agents,
        soak_minutes=soak_minutes, period=period, wire=not official_mcp, console=console, fills=fills)


@bench_app.command("programs")
def bench_programs(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                   quick: Annotated[bool, typer.Option(help="Fewer actions and calls: a rough figure, fast.")] = False) -> None:
    """Program actions/s and overhead per host call at 1 and 100 concurrent programs, beside direct calls."""
    from wildhold.bench.programs import bench_programs as run

    run(as_json=json_out, quick=quick)


@bench_app.command("sweep")
def bench_sweep(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                workers: Annotated[int, typer.Option(min=1, help="Workers of each executor.")] = 2,
                executor: Annotated[Optional[list[Executor]], typer.Option(help="Only this executor (repeatable; default local and ray).")] = None,
                quick: Annotated[bool, typer.Option(help="One seed on one protocol (3 cells): a rough figure, fast.")] = False) -> None:
    """Cells per minute of the smoke sweep (18 cells) on the local pool and on a local Ray, side by side."""
    from wildhold.bench.sweep import bench_sweep as run

    run(as_json=json_out, workers=workers, executors=tuple(e.value for e in executor or list(Executor)), console=console,
        quick=quick)


@bench_app.command("engine")
def bench_engine(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="Fewer ticks: a rough figure, fast.")] = False) -> None:
    """Agent-ticks per second at 1, 100 and 1000 agents, worldgen time, memory, and crafter side by side."""
    from wildhold.bench.engine import bench_engine as run

    run(as_json=json_out, quick=quick)


@bench_app.command("env")
def bench_env(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
              quick: Annotated[bool, typer.Option(help="Fewer steps: a rough figure, fast.")] = False,
              check_all: Annotated[bool, typer.Option("--check-all", help="Run Gymnasium's checker over every registered id instead; exits 1 if one fails.")] = False) -> None:
    """Gymnasium, batched and PettingZoo steps per second, crafter's side by side (needs the rl extra)."""
    from wildhold.extras import MissingExtra, require

    try:
        require("rl", "wildhold bench env")
    except MissingExtra as exc:
        _fail(str(exc))
    from wildhold.bench import env as bench

    if check_all:
        raise typer.Exit(0 if not bench.check_all(as_json=json_out)["failed"] else 1)
    bench.bench_env(as_json=json_out, quick=quick)


@bench_app.command("surface")
def bench_surface(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                  quick: Annotated[bool, typer.Option(help="The first 240 ticks instead of a whole day: a rough figure, fast.")] = False) -> None:
    """What an LLM pays for the surface: each tool profile's catalogue, and observe's size over a scripted day (default and full)."""
    from wildhold.bench.surface import bench_surface as run

    run(as_json=json_out, quick=quick)


@bench_app.command("tasks")
def bench_tasks(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                quick: Annotated[bool, typer.Option(help="One repeat instead of three: a rough figure, fast.")] = False,
                workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes.")] = 2) -> None:
    """The oracle over Lite x 3 repeats (wall time) and each attempt's overhead by phase: set-up, archive, scoring."""
    from wildhold.bench.tasks import bench_tasks as run

    run(as_json=json_out, quick=quick, workers=workers)




# ---- the task suite ------------------------------------------------------------------------------

tasks_app = Guarded(help="The task suite: list, show, validate, run and score tasks.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")


def _suite():
    from wildhold.tasks.catalog import default_suite

    try:
        return default_suite()
    except ContentError as exc:
        _fail(str(exc))


@tasks_app.command("list")
def tasks_list(counts: Annotated[bool, typer.Option("--counts", help="The category x difficulty grid, full and Lite.")] = False) -> None:
    """Every task id (or the grid of counts)."""
    from wildhold.tasks.spec import CATEGORIES, DIFFICULTIES

    suite = _suite()
    if not counts:
        for task_id in sorted(suite.tasks):
            typer.echo(task_id)
        return
    for label, ids in (("full", list(suite.tasks)), ("lite", list(suite.lite))):
        typer.echo(f"{label} ({len(ids)} tasks)")
        typer.echo(f"{'category':<14}" + "".join(f"{d:>8}" for d in DIFFICULTIES))
        for cat in CATEGORIES:
            row = [sum(1 for i in ids if suite.tasks[i].category == cat and suite.tasks[i].difficulty == d) for d in DIFFICULTIES]
            typer.echo(f"{cat:<14}" + "".join(f"{n:>8}" for n in row))


@tasks_app.command("show")
def tasks_show(task_id: str) -> None:
    """One task as JSON."""
    try:
        task = _suite().get(task_id)
    except KeyError as exc:
        _fail(exc.args[0])
    typer.echo(json.dumps(task.model_dump(mode="json"), indent=1))


@tasks_app.command("validate")
def tasks_validate() -> None:
    """Load every task file and check every reference, and that every task's description and evaluator agree."""
    from wildhold.content import default_content

    suite = _suite()
    try:
        suite.check_breadth()
        disagree = suite.disagreements(default_content())
    except ContentError as exc:
        _fail(str(exc), 1)
    for task_id, problem in disagree:
        _say(f"disagrees: {task_id}: {problem}")
    if disagree:
        _say(f"{len({t for t, _ in disagree})} of {len(suite.tasks)} tasks say what their evaluator or set-up does not hold")
        raise typer.Exit(1)
    variants = sum(map(len, suite.quantity_variants()))
    typer.echo(f"{len(suite.tasks)} tasks and a Lite list of {len(suite.lite)}: valid, every description agreeing with its "
               f"evaluator; {variants} ({variants / max(1, len(suite.tasks)):.0%}) differ from another only in a quantity")


class TaskClock(str, Enum):
    lockstep = "lockstep"
    realtime = "realtime"


class TaskLayout(str, Enum):
    wildhold = "wildhold"
    seed002 = "seed002"


Layout = Annotated[TaskLayout, typer.Option("--layout", help="The table printed: this suite's (category rows, with "
                                            "intervals) or seed 002's Table 3 (difficulty rows, mean ± std); "
                                            "results.md and results.html hold both.")]


def _results_tables(results: list[dict[str, Any]], layout: TaskLayout = TaskLayout.wildhold) -> list[FitTable]:
    """The suite's table per player, for the terminal (results.md and results.html hold the same rows)."""
    from wildhold.tasks.report import caption, rows, title
    from wildhold.tasks.suite import tables

    out = []
    for player, t in tables(results).items():
        header, body = rows(t, layout.value)
        table = FitTable([Col(header[0], "left", key=True), *(Col(h, wrap=True) for h in header[1:])],
                         title=f"Tasks: {escape(title(player, t, layout.value))}", caption=caption(results, layout.value))
        for row in body:
            table.add_row(*(escape(c) for c in row))
        out.append(table)
    return out


def _print_results(results: list[dict[str, Any]], paths: dict[str, Path], layout: TaskLayout = TaskLayout.wildhold) -> None:
    for r in results:
        if r["status"] == "error":
            console.print(f"[yellow]task error[/yellow] {escape(r['task'])} r{r['repeat']}: {escape(r['error'])}", soft_wrap=True)
    for t in _results_tables(results, layout):
        console.print(t)
    for name, path in paths.items():
        _say(f"{name}: {path}")


@tasks_app.command("run")
def tasks_run(
    suite_names: Annotated[list[str], typer.Option("--suite", help="lite, full, or task ids (repeat --suite, or separate them with commas).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for archives and results (a rerun resumes).")],
    agent: Annotated[Optional[str], typer.Option("--agent", help="oracle, oracle-eps:E (the oracle playing a random legal action with probability E), idle, random or another scripted policy (default oracle).")] = None,
    experiment: Annotated[Optional[Path], typer.Option("--experiment", help="An experiment file: each arm attempts every task (model arms through the scaffold).")] = None,
    agent_cmd: Annotated[Optional[str], typer.Option("--agent-cmd", help="An outside agent: a shell command run against each task served on 127.0.0.1, with WILDHOLD_MCP_URL, WILDHOLD_HTTP_URL, WILDHOLD_TOKEN, WILDHOLD_OBJECTIVE and WILDHOLD_MCP_CONFIG in its environment.")] = None,
    harness: Annotated[Optional[str], typer.Option("--harness", help="--agent-cmd: the harness's label (default agent-cmd), in the arm's identity and the player's name.")] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="--agent-cmd: the model's label, in the arm's identity and the player's name (HARNESS/MODEL).")] = None,
    proxy: Annotated[Optional[Path], typer.Option("--proxy", help="--agent-cmd: a proxy file (upstreams, pinned prices, a budget per attempt): the command's model calls go through the metering proxy (OPENAI_BASE_URL, ANTHROPIC_BASE_URL and their keys set for it), and the table shows tokens and $ per task.")] = None,
    turn_deadline: Annotated[float, typer.Option("--turn-deadline", min=0.001, help="--agent-cmd, lockstep: the longest one tick waits for the agent, in seconds.")] = 60.0,
    ceiling: Annotated[float, typer.Option("--ceiling", min=0.001, help="--agent-cmd: wall-clock seconds an attempt may last.")] = 1800.0,
    tools: Annotated[Tools, typer.Option("--tools", help="--agent-cmd: the MCP tool profile served to the agent (full, or compact: the same through a few tools), in the arm's identity.")] = Tools.full,
    clock: Annotated[Optional[TaskClock], typer.Option("--clock", help="Pause the world while the player decides (lockstep) or not (realtime); default: each task's own.")] = None,
    tick_seconds: Annotated[float, typer.Option("--tick-seconds", min=0.001, help="Realtime, scripted policies and outside agents: wall-clock seconds per world minute (a model arm's is its experiment's).")] = 1.0,
    repeats: Annotated[int, typer.Option("--repeats", min=1)] = 3,
    workers: Annotated[int, typer.Option("--workers", min=1)] = os.cpu_count() or 1,
    layout: Layout = TaskLayout.wildhold,
    quiet: Quiet = False,
) -> None:
    """Run each attempt as a short match with its own archive; write results.json, .md and .html; print the table."""
    from wildhold.tasks.suite import Player, SuiteError, players_of, run_suite

    if sum(x is not None for x in (agent, experiment, agent_cmd)) > 1:
        _fail("pass one of --agent, --experiment and --agent-cmd")
    if agent_cmd is None and ((harness, model, proxy) != (None, None, None) or tools is not Tools.full):
        _fail("--harness, --model, --proxy and --tools label, meter and serve an outside agent: pass them with "
              "--agent-cmd (a model arm's tool profile is its experiment's `tools`)")
    players = [Player(agent or "oracle", policy=agent or "oracle")]
    if agent not in (None, "oracle"):
        from wildhold.agents.scripted import POLICIES
        from wildhold.tasks.graded import parse_eps

        try:
            graded = parse_eps(agent)
        except ValueError as exc:
            _fail(str(exc))
        if graded is None and agent not in POLICIES:
            _fail(f"unknown agent {agent!r}; known: oracle, oracle-eps:E (the graded player), {', '.join(POLICIES)}")
    if experiment is not None:
        if not experiment.exists():
            _fail(f"{experiment} does not exist")
        from wildhold.extras import MissingExtra

        from wildhold.readable import UnreadableFile

        try:
            players = players_of(experiment)
        except UnreadableFile as exc:
            _fail(str(exc))
        except (ValueError, OSError, MissingExtra) as exc:
            _fail(f"{experiment}: {exc}")
    if agent_cmd is not None:
        players = [Player.outside(_agent_command(agent_cmd, harness, model, proxy, turn_deadline, ceiling, tools.value))]
    suite = _suite()
    try:
        tasks = suite.select([name for value in suite_names for name in value.split(",") if name])
    except KeyError as exc:
        _fail(exc.args[0])
    with Progress(TextColumn("tasks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  disable=quiet) as bar:
        job = bar.add_task("tasks", total=len(tasks) * repeats * len(players))
        try:
            results = run_suite(tasks, players, repeats, workers, out, on_result=lambda _: bar.advance(job),
                                clock=clock.value if clock else None, tick_seconds=tick_seconds)
        except SuiteError as exc:
            _fail(str(exc))
    _print_results(results, {name: out / name for name in ("results.json", "results.md", "results.html")}, layout)


def _agent_command(command: str, harness: str | None, model: str | None, proxy: Path | None, turn_deadline: float,
                   ceiling: float, tools: str) -> Any:
    """The outside agent `--agent-cmd` names, its labels checked and its proxy file read before any attempt starts."""
    from pydantic import ValidationError

    from wildhold.agents.proxy import ProxySpec
    from wildhold.tasks.outside import HARNESS, AgentCommand

    if proxy is not None:
        try:
            ProxySpec.load(proxy)
        except (OSError, ValueError, ValidationError) as exc:
            _fail(f"{proxy}: {' '.join(str(exc).split())}")
    try:
        return AgentCommand(command, harness or HARNESS, model, str(proxy.resolve()) if proxy else None,
                            turn_deadline_s=turn_deadline, ceiling_s=ceiling, tools=tools)
    except ValueError as exc:
        _fail(str(exc))


@tasks_app.command("calibrate")
def tasks_calibrate(
    suite_names: Annotated[list[str], typer.Option("--suite", help="lite, full, or task ids (repeat --suite, or separate them with commas).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for measurements.jsonl (a rerun resumes), calibration.yaml and calibration.md.")],
    workers: Annotated[int, typer.Option("--workers", min=1)] = os.cpu_count() or 1,
    write: Annotated[bool, typer.Option("--write", help="Install the measured levels and limits into the suite's calibration.yaml (the whole suite: replaced; some tasks: theirs added, the cut-offs kept).")] = False,
    quiet: Quiet = False,
) -> None:
    """Measure each task's level and limits: the oracle's turns and minutes over the repeats templates.yaml's
    `calibration` names give its effort, its level (the third of its category it falls in) and its limits; for the
    whole suite, also the graded players' table over the held-out repeats (calibration.md)."""
    from wildhold.tasks.calibrate import calibrate, declared_suite

    try:
        suite = declared_suite()
    except ContentError as exc:
        _fail(str(exc))
    try:
        tasks = suite.select([name for value in suite_names for name in value.split(",") if name])
    except KeyError as exc:
        _fail(str(exc.args[0]))
    with Progress(TextColumn("calibrate"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  disable=quiet) as bar:
        job = bar.add_task("calibrate", total=None)
        try:
            paths = calibrate(tasks, out, workers, write=write, on_row=lambda _: bar.advance(job))
        except (ValueError, ContentError) as exc:
            _fail(str(exc), 1)
    for name, path in paths.items():
        _say(f"{name}: {path}")


@tasks_app.command("score")
def tasks_score(out: Annotated[Path, typer.Argument(help="A folder `tasks run` wrote.")], trust: Trust = False,
                layout: Layout = TaskLayout.wildhold) -> None:
    """Recompute results.json, results.md and results.html and the table from the archives alone, each archive
    verified by re-simulation first (one that does not verify is refused)."""
    from wildhold.store.archive import ArchiveError
    from wildhold.tasks.suite import score_dir, write_results

    if not out.is_dir():
        _fail(f"{out} is not a folder")
    try:
        scored = score_dir(out, verify=not trust)
    except ArchiveError as exc:
        _refuse(exc)
    results = scored.results
    if not results:
        _fail(f"{out} holds no attempt archives (*.wha)")
    _print_results(results, write_results(out, results, scored.duplicates), layout)
    for counted, left in scored.duplicates:
        _say(f"{left} holds the same log as {counted} (the same chain head): counted once")
    how = "scored as they are (--trust): not verified" if trust else "verified by re-simulation and as attempts"
    _say(f"{len(results) + len(scored.duplicates)} archives {how}; {len(results)} attempts counted")


if __name__ == "__main__":
    app()
