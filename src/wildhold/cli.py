"""The `wildhold` command line: demo, resume, replay, rules, serve, report, leaderboard, export, run, examples, bench."""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Callable, Iterable, Iterator, Optional

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from wildhold.content import ContentError, default_content
from wildhold.revision import version_text
from wildhold.terminal import Col, FitTable

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from wildhold.eval.season import SeasonRow

app = typer.Typer(help="Wildhold: a persistent multi-agent survival world and its benchmark harness.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks that print their figures (a table; --json adds one JSON line).", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
console = Console()  # its width is set per invocation by `main` (see `_width`)
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")]
Trust = Annotated[bool, typer.Option("--trust", help="Score the archive as it is, without re-simulating it; the output says so.")]
CacheDir = Annotated[Optional[Path], typer.Option("--cache", help="Folder of verified archives by digest (default: cache/ beside each archive).")]


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
                                               help="Print the version (with the git commit in a checkout) and exit.")] = False) -> None:
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
    """One row per agent from the archive alone, in wealth rank order; a season adds its Table 3."""
    from wildhold.eval.summary import summarize
    from wildhold.store.archive import Archive
    from wildhold.world.serialize import loads
    from wildhold.world.wealth import rank_standard, wealth_cents

    content = default_content()
    with Archive(archive_path) as archive:
        policies = {a["id"]: a.get("policy", "-") for a in archive.manifest["agents"]}
        rows = summarize(archive.events(), content.needs.max_health)
        m = archive.manifest
        final = loads(content, archive.final_state())
    wealth = {agent: wealth_cents(final, agent) for agent in rows}
    ranks = rank_standard(wealth)
    days = (m["final_tick"] - m["start_tick"]) / 1440
    table = FitTable(DEMO_COLUMNS, title=f"Wildhold {m['scenario']} seed {m['seed']}: {days:.1f} days, {m['event_count']} events",
                     caption="wealth: the public formula (wealth section of `wildhold rules`); exact ties share a rank (1, 1, 3)")
    for agent in sorted(rows, key=lambda a: (ranks[a], a)):
        s = rows[agent]
        table.add_row(str(ranks[agent]), s.name, policies.get(agent, "?"), f"{wealth[agent] / 100:.2f}", str(s.health),
                      str(s.knockdowns), str(s.actions), str(s.rejected), str(s.crafts), str(s.gathered), str(s.tiles_moved),
                      str(s.structures), str(s.trades), str(s.raids), str(s.quests), str(s.defaults))
    return Group(table, _season_table(archive_path)) if m["scenario"] == "season" else table


def _season_table(archive_path: Path) -> FitTable:
    """Seed 000's Table 3 for a season: the two tasks, depth, activity, native trial progress, knockdowns."""
    from wildhold.eval.season import season_rows
    from wildhold.store.archive import Archive

    with Archive(archive_path) as archive:
        return season_table(season_rows(archive.events(), default_content(), archive.manifest["scenario"]).values())


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

    out.mkdir(parents=True, exist_ok=True)
    db = out / "match.sqlite"
    for stale in out.glob("match.sqlite*"):
        stale.unlink()
    try:
        run = ScriptedRun.start(scenario, seed, db, agents=agents)
    except ContentError as exc:
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
def resume(db: Annotated[Path, typer.Argument(help="A match database written by `wildhold demo`.")],
           quiet: Quiet = False, ack_stdout: Annotated[bool, typer.Option(hidden=True)] = False) -> None:
    """Resume a stored match from its latest snapshot and inputs, play it to the end, and archive it."""
    from wildhold.agents.runner import ScriptedRun
    from wildhold.store.sqlite import StoreError

    if not db.exists():
        _fail(f"{db} does not exist")
    try:
        run = ScriptedRun.resume(db)
    except StoreError as exc:
        _fail(str(exc))
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
def replay(archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")]) -> None:
    """Re-simulate an archive from its seed and inputs; exit 1 unless the chain head, the state hash, the final
    state file and the roster match (and, when agents ran programs, unless every program run re-simulates from
    its transcript)."""
    from wildhold.service.verify import check_content, resimulate
    from wildhold.store.archive import Archive, ArchiveError

    try:
        with Archive(archive) as arc:
            logged_head = arc.verify()
            m, bound = arc.manifest, arc.bound
            content = default_content()
            check_content(m, content, archive)
            sim = resimulate(arc, content)
    except ArchiveError as exc:
        _fail(str(exc), 1)
    table = FitTable([Col("check", "left", key=True, wrap=True), Col("archive", "left"), Col("replay", "left"),
                      Col("match", "left")], title=f"replay of {archive.name}", caption="hashes: their first 16 characters")
    checks = [(c.name, c.archived, c.replayed, c.same) for c in sim.checks]
    checks.append(("log verifies", logged_head, m["chain_head"], logged_head == m["chain_head"]))
    checks.append(("header bound", "yes" if bound else "no (format 1)", "-", True))
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
    tools_hash: Annotated[bool, typer.Option("--tools-hash", help="Print the hash of the served tool surface (names, schemas, descriptions), then its size against the budget.")] = False,
    horizon: Annotated[Horizon, typer.Option(help="As a match of this horizon serves it: hidden says nothing of when a match ends.")] = Horizon.visible,
) -> None:
    """Print the rules document agents read, generated from the content files and the action registry."""
    from wildhold.docs.rules import rules_json, rules_markdown
    from wildhold.service.queries import program_reads

    if tools_hash:
        from wildhold.server.mcp import CATALOGUE_BUDGET, catalogue_size, tool_surface
        from wildhold.server.mcp import tools_hash as surface_hash

        surface = tool_surface(horizon=horizon.value)
        size = catalogue_size(surface)
        sys.stdout.write(f"{surface_hash(surface)}\n{len(surface)} tools, {size:,} characters of names, descriptions "
                         f"and schemas (budget {CATALOGUE_BUDGET:,}{'' if size <= CATALOGUE_BUDGET else ': OVER'})\n")
        raise typer.Exit(0 if size <= CATALOGUE_BUDGET else 1)
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
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
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
    rate: Annotated[float, typer.Option(help="Requests a second per token (0: no limit).")] = 20.0,
    idle_after: Annotated[int, typer.Option(help="Ticks of silence after which an agent is logged as idle.")] = 120,
    horizon: Annotated[Horizon, typer.Option(help="visible: agents are told when the match ends; hidden: no face says when, or how long it lasts.")] = Horizon.visible,
    max_agents: Annotated[int, typer.Option(help="Agents the match takes at most.")] = 64,
    wait_max: Annotated[float, typer.Option(help="The longest a wait_operation long poll holds, in seconds.")] = 30.0,
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

    config = HostConfig(signup_token=signup_token or secrets.token_urlsafe(16), admin_token=admin_token or secrets.token_urlsafe(16),
                        clock=clock.value, tick_seconds=tick_seconds, turn_deadline_s=turn_deadline, lobby=lobby,
                        late_join=late_join, rate_per_s=rate, idle_after_ticks=idle_after, max_agents=max_agents,
                        wait_max_s=wait_max)
    try:
        host = Host.open(data, config, scenario, seed, manifest_extra={"tools_hash": tools_hash(horizon=horizon.value)},
                         horizon=horizon.value)
    except (ValueError, StoreError, ContentError) as exc:
        _fail(str(exc))
    base = f"http://127.0.0.1:{port}"
    console.print(f"Wildhold {scenario} seed {seed}, clock {clock.value}, {'lobby' if lobby else 'no lobby'}; match in {data}", soft_wrap=True)
    console.print(f"HTTP  {base}/api   (OpenAPI {base}/openapi.json, briefing {base}/llms.txt)", soft_wrap=True)
    console.print(f"MCP   {base}/mcp   (streamable HTTP, header 'Authorization: Bearer <agent token>')", soft_wrap=True)
    console.print(f"signup token: {config.signup_token}\nadmin token:  {config.admin_token}", soft_wrap=True)
    console.print(f"get an agent token: curl -s -X POST {base}/api/agents -H 'Authorization: Bearer {config.signup_token}' "
                  "-H 'Content-Type: application/json' -d '{\"name\": \"my-agent\"}'", soft_wrap=True)
    if lobby:
        console.print(f"start the match:    curl -s -X POST {base}/api/admin/start -H 'Authorization: Bearer {config.admin_token}'", soft_wrap=True)
    served = create_app(host, scorer=score_archive, render_html=render_html)

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


LEADERBOARD_COLUMNS = (Col("rank", short="#", key=True), Col("configuration", "left", short="config", key=True, wrap=True),
                       Col("mu"), Col("sigma"), Col("ordinal", short="ord"), Col("matches", short="n"),
                       Col("firsts", short="1st"), Col("fitness mean", short="fitness"), Col("95% CI", wrap=True),
                       Col("tokens", wrap=True), Col("dollars", short="$", wrap=True))


def _spend_cells(row: dict) -> tuple[str, str]:
    """A configuration's tokens and dollars over the matches that recorded them, or that none did."""
    spend = row["spend"]
    if spend is None:
        return "not recorded", "not recorded"
    over = f" ({spend['matches']} of {row['matches']} matches)" if spend["matches"] < row["matches"] else ""
    return f"{spend['tokens']:,}{over}", f"{spend['dollars']:.4f}{over}"


@app.command()
def leaderboard(
    archives: Annotated[list[Path], typer.Argument(help="Match archives (.wildhold.zip).")],
    rubric: Annotated[Optional[str], typer.Option(help="Rubric version (default: the published one).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the leaderboard as one JSON document instead of a table.")] = False,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Skill ratings (openskill; shared ranks are draws) and mean fitness with 95% CI per agent configuration,
    over archives each verified by re-simulation first."""
    from wildhold.eval.leaderboard import leaderboard as board
    from wildhold.eval.rubric import UnknownRubric
    from wildhold.service.verify import TRUSTED_NOTE
    from wildhold.store.archive import ArchiveError

    try:
        result = board(archives, rubric, trust=trust, cache=cache)
    except (ArchiveError, UnknownRubric, ContentError) as exc:
        _refuse(exc)
    if json_out:
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
        return
    caption = result["model"] + (f"; {TRUSTED_NOTE}" if trust else "; every archive verified by re-simulation")
    table = FitTable(LEADERBOARD_COLUMNS, caption=caption,
                     title=f"Leaderboard over {len(result['matches'])} matches (rubric {result['rubric_version']})")
    for row in result["rows"]:
        f, r = row["fitness"], row["rating"]
        ci = "n/a (one match)" if f["ci95"] is None else f"{f['ci95'][0]:.1f} to {f['ci95'][1]:.1f}"
        table.add_row(str(row["rank"]), row["config"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}",
                      str(row["matches"]), str(row["firsts"]), f"{f['mean']:.1f}", ci, *_spend_cells(row))
    console.print(table)


@app.command("export")
def export_cmd(
    archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")],
    out: Annotated[Path, typer.Option(help="Folder for events, agents (with their spend) and the spend table as JSONL and Parquet.")],
    rubric: Annotated[Optional[str], typer.Option(help="Rubric version for the per-agent scores (default: the published one).")] = None,
    trust: Trust = False,
    cache: CacheDir = None,
) -> None:
    """Write an archive's events, per-agent metrics and spend, and its model sessions to JSONL and Parquet for analysis (verified first)."""
    from wildhold.eval.export import export_match
    from wildhold.eval.rubric import UnknownRubric
    from wildhold.extras import MissingExtra
    from wildhold.store.archive import ArchiveError

    try:
        paths = export_match(archive, out, rubric, trust=trust, cache=cache)
    except (ArchiveError, UnknownRubric, ContentError, MissingExtra) as exc:
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
    from pydantic import ValidationError

    from wildhold.agents.scaffold.experiment import run_experiment
    from wildhold.extras import MissingExtra
    from wildhold.store.sqlite import StoreError

    if not experiment.exists():
        _fail(f"{experiment} does not exist")
    try:
        paths = run_experiment(experiment, out, quiet=quiet)
    except (ValidationError, ContentError, ValueError, StoreError, MissingExtra) as exc:
        _fail(str(exc))
    from wildhold.agents.scaffold.progress import summary_table

    console.print(summary_table(out))
    for kind, path in paths.items():
        _say(f"{kind}: {path}")


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


@bench_app.command("report")
def bench_report(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="A one-day tiny match: a rough figure, fast.")] = False,
                 archive: Annotated[Optional[Path], typer.Option(help="Rescore this archive instead of the famine match.")] = None) -> None:
    """Events/s for rescoring an archive: verify the log, fold the metrics, build the report (one core)."""
    from wildhold.bench.report import bench_report as run

    run(as_json=json_out, quick=quick, archive=archive)


@bench_app.command("server")
def bench_server(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="Short runs: a rough figure, fast.")] = False) -> None:
    """Actions/s and p50/p99 latency over HTTP and MCP at 1 and 32 clients, beside a bare FastAPI echo endpoint."""
    from wildhold.bench.server import bench_server as run

    run(as_json=json_out, quick=quick)


@bench_app.command("hardening")
def bench_hardening(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                    quick: Annotated[bool, typer.Option(help="Small sizes: 3 kills, 400 requests, 16 agents, a 1-minute soak.")] = False,
                    only: Annotated[Optional[list[str]], typer.Option(help="Run only this measurement: crash, fuzz, load or soak (repeatable).")] = None,
                    kills: Annotated[Optional[int], typer.Option(help="SIGKILLs of serve (default 100).")] = None,
                    requests: Annotated[Optional[int], typer.Option(help="Fuzzed requests, HTTP and MCP together (default 100,000).")] = None,
                    agents: Annotated[Optional[int], typer.Option(help="Agents of the load run (default 256).")] = None,
                    soak_minutes: Annotated[Optional[float], typer.Option(help="Minutes of the realtime soak (default 60).")] = None,
                    period: Annotated[float, typer.Option(help="Load: seconds between one agent's turns (observe + act); the offered load is agents x 2 / period calls a second.")] = 1.0,
                    official_mcp: Annotated[bool, typer.Option("--official-mcp", help="Load: MCP agents on the official client rather than the wire (its own work a call, about as much CPU as the server spends on it, then shares the machine).")] = False,
                    seed: Annotated[int, typer.Option(help="Seed of the kill moments and the fuzzing.")] = 1) -> None:
    """A real `wildhold serve` under abuse: SIGKILLs (nothing acknowledged lost), fuzzing (no 5xx), load (p99), soak (memory)."""
    from wildhold.bench.hardening import MEASUREMENTS
    from wildhold.bench.hardening import bench_hardening as run

    chosen = tuple(only or MEASUREMENTS)
    if set(chosen) - set(MEASUREMENTS):
        _fail(f"--only takes {', '.join(MEASUREMENTS)}, not {', '.join(sorted(set(chosen) - set(MEASUREMENTS)))}")
    if period <= 0:
        _fail("--period is a positive number of seconds")
    run(as_json=json_out, quick=quick, only=chosen, seed=seed, kills=kills, requests=requests, agents=agents,
        soak_minutes=soak_minutes, period=period, wire=not official_mcp, console=console)


@bench_app.command("programs")
def bench_programs(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                   quick: Annotated[bool, typer.Option(help="Fewer actions and calls: a rough figure, fast.")] = False) -> None:
    """Program actions/s and overhead per host call at 1 and 100 concurrent programs, beside direct calls."""
    from wildhold.bench.programs import bench_programs as run

    run(as_json=json_out, quick=quick)


@bench_app.command("engine")
def bench_engine(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="Fewer ticks: a rough figure, fast.")] = False) -> None:
    """Agent-ticks per second at 1, 100 and 1000 agents, worldgen time, memory, and crafter side by side."""
    from wildhold.bench.engine import bench_engine as run

    run(as_json=json_out, quick=quick)


if __name__ == "__main__":
    app()


# ---- the task suite ------------------------------------------------------------------------------

tasks_app = typer.Typer(help="The task suite: list, show, validate, run and score tasks.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")


def _suite():
    from wildhold.tasks.catalog import default_suite

    try:
        return default_suite()
    except ContentError as exc:
        _say(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None


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
        _say(f"[red]{escape(exc.args[0])}[/red]")
        raise typer.Exit(2) from None
    typer.echo(json.dumps(task.model_dump(mode="json"), indent=1))


@tasks_app.command("validate")
def tasks_validate() -> None:
    """Load every task file and check every reference."""
    suite = _suite()
    try:
        suite.check_breadth()
    except ContentError as exc:
        _say(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    variants = sum(map(len, suite.quantity_variants()))
    typer.echo(f"{len(suite.tasks)} tasks and a Lite list of {len(suite.lite)}: valid; "
               f"{variants} ({variants / max(1, len(suite.tasks)):.0%}) differ from another only in a quantity")


@tasks_app.command("run")
def tasks_run(
    suite_names: Annotated[list[str], typer.Option("--suite", help="lite, full, or task ids.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for archives and results.json (a rerun resumes).")],
    agent: Annotated[str, typer.Option("--agent", help="oracle, idle, random or another scripted policy.")] = "oracle",
    repeats: Annotated[int, typer.Option("--repeats", min=1)] = 3,
    workers: Annotated[int, typer.Option("--workers", min=1)] = os.cpu_count() or 1,
    quiet: Quiet = False,
) -> None:
    """Run each attempt as a short match with its own archive; print the table."""
    from wildhold.tasks.suite import markdown, run_suite

    suite = _suite()
    try:
        tasks = suite.select(suite_names)
    except KeyError as exc:
        _say(f"[red]{escape(exc.args[0])}[/red]")
        raise typer.Exit(2) from None
    with Progress(TextColumn("tasks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  disable=quiet) as bar:
        job = bar.add_task("tasks", total=len(tasks) * repeats)
        results = run_suite(tasks, agent, repeats, workers, out, on_result=lambda _: bar.advance(job))
    for r in results:
        if r["status"] == "error":
            _say(f"[yellow]task error[/yellow] {r['task']} r{r['repeat']}: {escape(r['error'])}")
    typer.echo(markdown(results), nl=False)


@tasks_app.command("score")
def tasks_score(out: Annotated[Path, typer.Argument(help="A folder `tasks run` wrote.")]) -> None:
    """Recompute results.json and the table from the archives alone."""
    from wildhold.tasks.suite import markdown, score_dir, write_results

    results = score_dir(out)
    write_results(out, results)
    typer.echo(markdown(results), nl=False)
