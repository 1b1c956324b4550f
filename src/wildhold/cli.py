"""The `wildhold` command line: demo, resume, replay, rules, bench."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from wildhold.content import ContentError, default_content

app = typer.Typer(help="Wildhold: a persistent multi-agent survival world and its benchmark harness.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks that print their figures (a table; --json adds one JSON line).", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
console = Console()
if not console.is_terminal:
    console = Console(width=max(console.width, 160))


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)


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


def _summary_table(archive_path: Path) -> Table:
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
    table = Table(title=f"Wildhold {m['scenario']} seed {m['seed']}: {(m['final_tick'] - m['start_tick']) / 1440:.1f} days, {m['event_count']} events")
    for col in ("rank", "agent", "policy", "wealth", "health", "downs", "actions", "rejected", "crafts", "gathered",
                "moved", "built", "trades", "raids", "quests", "defaults"):  # noqa: E501
        table.add_column(col, justify="left" if col in ("agent", "policy") else "right")
    for agent in sorted(rows, key=lambda a: (ranks[a], a)):
        s = rows[agent]
        table.add_row(str(ranks[agent]), s.name, policies.get(agent, "?"), f"{wealth[agent] / 100:.2f}", str(s.health),
                      str(s.knockdowns), str(s.actions), str(s.rejected), str(s.crafts), str(s.gathered), str(s.tiles_moved),
                      str(s.structures), str(s.trades), str(s.raids), str(s.quests), str(s.defaults))
    table.caption = "wealth: the public formula (wealth section of `wildhold rules`); exact ties share a rank (1, 1, 3)"
    return table


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Scenario name (see `wildhold rules`).")] = "default",
    seed: Annotated[int, typer.Option(help="World seed.")] = 1,
    out: Annotated[Path, typer.Option(help="Folder for the match database and archive.")] = Path("runs/demo"),
    agents: Annotated[Optional[int], typer.Option(help="Number of scripted agents (default: the scenario's).")] = None,
    ack_stdout: Annotated[bool, typer.Option(hidden=True, help="Print each acknowledged input (for durability tests).")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
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
        console.print(f"archive: {archive}\nchain head: {run.world.events.head}")


@app.command()
def resume(db: Annotated[Path, typer.Argument(help="A match database written by `wildhold demo`.")],
           quiet: bool = False, ack_stdout: Annotated[bool, typer.Option(hidden=True)] = False) -> None:
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
    console.print(f"archive: {archive}\nchain head: {run.world.events.head}")


@app.command()
def replay(archive: Annotated[Path, typer.Argument(help="A match archive (.wildhold.zip).")]) -> None:
    """Re-simulate an archive from its seed and inputs; exit 1 unless the state hash and chain head match."""
    from wildhold.service.match import replay as resimulate
    from wildhold.store.archive import Archive, ArchiveError
    from wildhold.world.serialize import state_hash

    try:
        with Archive(archive) as arc:
            logged_head = arc.verify()
            m = arc.manifest
            content = default_content()
            if m["content_digest"] != content.digest:
                _fail(f"the archive was played under other content files ({m['content_digest'][:12]}); this Wildhold has {content.digest[:12]}", 1)
            world = resimulate(content, m["scenario"], m["seed"], arc.inputs(), m["final_tick"])
    except ArchiveError as exc:
        _fail(str(exc), 1)
    table = Table(title=f"replay of {archive.name}")
    for col in ("check", "archive", "replay", "match"):
        table.add_column(col)
    checks = [("chain head", m["chain_head"], world.events.head), ("state hash", m["state_hash"], state_hash(world)),
              ("events", str(m["event_count"]), str(world.events.seq)), ("log verifies", logged_head, m["chain_head"])]
    ok = True
    for name, a, b in checks:
        same = a == b
        ok &= same
        table.add_row(name, a[:16], b[:16], "[green]yes[/green]" if same else "[red]NO[/red]")
    console.print(table)
    if not ok:
        console.print("[red]replay does not match the archive[/red]")
        raise typer.Exit(1)
    console.print("[green]replay matches the archive[/green]")


@app.command()
def rules(
    format: Annotated[str, typer.Option("--format", help="md or json.")] = "md",
    out: Annotated[Optional[Path], typer.Option(help="Write to this file instead of stdout.")] = None,
) -> None:
    """Print the rules document agents read, generated from the content files and the action registry."""
    from wildhold.docs.rules import rules_json, rules_markdown

    content = default_content()
    if format == "md":
        text = rules_markdown(content)
    elif format == "json":
        text = json.dumps(rules_json(content), indent=2, sort_keys=True)
    else:
        _fail("--format must be md or json")
    if out:
        out.write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")


@bench_app.command("engine")
def bench_engine(json_out: Annotated[bool, typer.Option("--json", help="Also print one JSON object on the last line.")] = False,
                 quick: Annotated[bool, typer.Option(help="Fewer ticks: a rough figure, fast.")] = False) -> None:
    """Agent-ticks per second at 1, 100 and 1000 agents, worldgen time, memory, and crafter side by side."""
    from wildhold.bench.engine import bench_engine as run

    run(as_json=json_out, quick=quick)


if __name__ == "__main__":
    app()
