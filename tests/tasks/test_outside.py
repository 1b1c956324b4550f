"""Outside agents take tasks: `tasks run --agent-cmd` serves each attempt on 127.0.0.1 and runs the command against
it. The example MCP agent solves easy Lite tasks with results in the oracle's format, rebuilt by `tasks score`; turns
are the agent's own actions; the attempt ends at the turn limit, when the command exits (an error is the agent's),
or at the ceiling, and the command's whole process group is ended; a proxy file meters its model calls."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import threading
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wildhold.cli import app
from wildhold.store.archive import Archive
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.outside import AgentCommand, run_outside_attempt
from wildhold.tasks.spec import Limits
from wildhold.tasks.suite import RESULT_FILES, run_suite

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "wildhold" / "examples"
AGENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLES / 'outside' / 'agent.py'))}"
EASY = ["crafting/craft-bed-v1", "construction/place-barrel-v1", "farming/harvest-wheat-v1", "exploration/gather-stone-v1"]
runner = CliRunner()

# An agent that rests a minute at a time, as fast as it can, until it is stopped.
RESTLESS = """
import asyncio, os, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main():
    auth = {"Authorization": "Bearer " + os.environ["WILDHOLD_TOKEN"]}
    async with httpx2.AsyncClient(headers=auth, trust_env=False) as http:
        async with Client(streamable_http_client(os.environ["WILDHOLD_MCP_URL"], http_client=http)) as world:
            while True:
                await world.call_tool("observe", {"memory": "none"})
                op = (await world.call_tool("rest", {"ticks": 1})).structured_content or {}
                if op.get("status") == "running":
                    await world.call_tool("wait_operation", {"op": op["op"]})

asyncio.run(main())
"""


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in RESULT_FILES}


def _end_reason(archive: Path) -> str:
    with Archive(archive) as a:
        return next(inp.args["reason"] for inp in a.inputs() if inp.kind == "end")


@pytest.mark.slow(seconds=25)
def test_the_example_agent_solves_easy_lite_tasks_in_the_oracles_format_and_tasks_score_rebuilds_them(tmp_path):
    out = tmp_path / "outside"
    ran = runner.invoke(app, ["tasks", "run", "--suite", ",".join(EASY), "--agent-cmd", AGENT, "--harness", "example",
                              "--repeats", "1", "--workers", "2", "--out", str(out), "--quiet"])
    assert ran.exit_code == 0, ran.output
    assert "Tasks: example: 4 tasks x 1 repeat, lockstep clock" in ran.output
    results = {r["task"]: r for r in json.loads((out / "results.json").read_text())["results"]}
    assert {t: r["status"] for t, r in results.items()} == {t: "success" for t in EASY}
    # turns are its own actions: equip, walk and gather; its observe and rules reads and its waits are not turns
    assert results["exploration/gather-stone-v1"]["turns"] == 3 and results["crafting/craft-bed-v1"]["turns"] == 1
    oracle = run_suite([default_suite().get(EASY[0])], "oracle", 1, 1, tmp_path / "oracle")
    assert set(results[EASY[0]]) == set(oracle[0]) and "tokens" not in results[EASY[0]]
    with Archive(out / "crafting__craft-bed-v1__r0.wha") as a:
        ident = a.manifest["arm_identities"]["tasker"]
        assert a.manifest["policy"] == "example" and a.manifest["objective"] == "Craft a bed at the workbench beside you."
    assert ident["harness"] == "example" and ident["agent_cmd"] == AGENT and ident["clock"] == "lockstep"
    assert "objective: Craft a bed" in (out / "crafting__craft-bed-v1__r0.agent.log").read_text()
    written = _files(out)
    scored = runner.invoke(app, ["tasks", "score", str(out)])
    assert scored.exit_code == 0, scored.output
    assert "4 archives verified by re-simulation and as attempts" in " ".join(scored.output.split())
    assert _files(out) == written


def _restless(tmp_path: Path) -> str:
    script = tmp_path / "restless.py"
    script.write_text(RESTLESS)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_an_agent_that_acts_without_end_stops_at_the_tasks_turn_limit(tmp_path, content):
    task = default_suite().get("exploration/gather-wood-v1")
    task = task.model_copy(update={"limits": Limits(ticks=task.limits.ticks, turns=4)})
    result = run_outside_attempt(task, AgentCommand(_restless(tmp_path)), 0, tmp_path, content, name="busy")
    assert result["status"] == "failure" and result["turns"] == 4 and result["ticks"] < task.limits.ticks
    assert _end_reason(tmp_path / "busy.wha") == "turn limit"


def test_a_command_that_fails_fails_its_own_attempt_and_the_archive_says_why(tmp_path, content):
    from wildhold.tasks.attempt import score_archive

    task = default_suite().get("exploration/gather-wood-v1")
    live = run_outside_attempt(task, AgentCommand("echo cannot start >&2; exit 3"), 0, tmp_path, content, name="bad")
    assert live["status"] == "failure" and live["turns"] == 0
    assert live["agent_error"] == "the agent's command exited with status 3 (its output: bad.agent.log)"
    assert (tmp_path / "bad.agent.log").read_text() == "cannot start\n"
    assert _end_reason(tmp_path / "bad.wha") == "agent exited" and score_archive(tmp_path / "bad.wha", content) == live


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"  # ended, waiting for whoever adopted it to reap it


def test_a_command_past_the_ceiling_is_killed_with_everything_it_started(tmp_path, content):
    task = default_suite().get("exploration/gather-wood-v1")
    pids = tmp_path / "pids"
    stubborn = f"trap '' TERM; sleep 300 & echo $! > {pids}; echo $$ >> {pids}; wait"  # deaf to SIGTERM, and a child
    agent = AgentCommand(stubborn, ceiling_s=1.0, grace_s=0.2)
    result = run_outside_attempt(task, agent, 0, tmp_path, content, name="deaf")
    assert result["status"] == "failure" and _end_reason(tmp_path / "deaf.wha") == "wall-clock ceiling"
    assert all(_gone(int(pid)) for pid in pids.read_text().split())


@pytest.fixture
def standin_url():
    """The stand-in model served on 127.0.0.1 from a thread of this process while the test runs."""
    from wildhold.agents.scaffold.loopback import Loopback
    from wildhold.agents.scaffold.standin import standin_app

    ready, stop, where = threading.Event(), threading.Event(), {}

    async def serve() -> None:
        async with Loopback(standin_app()) as server:
            where["url"] = server.url
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=asyncio.run, args=(serve(),))
    thread.start()
    ready.wait()
    yield where["url"]
    stop.set()
    thread.join()


@pytest.mark.slow(seconds=15)
def test_an_outside_agents_model_calls_through_the_proxy_are_metered_per_task(tmp_path, standin_url):
    proxy = tmp_path / "proxy.yaml"
    proxy.write_text(yaml.safe_dump({"openai": {"base_url": f"{standin_url}/v1"}, "budget_usd": 1.0,
                                     "prices": {"wildhold-standin/quester": {"input_per_mtok": 0.5, "output_per_mtok": 2.0}}}))
    loop = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLES / 'outside' / 'openai_loop.py'))}"
    out = tmp_path / "loop"
    ran = runner.invoke(app, ["tasks", "run", "--suite", "exploration/gather-wood-v1", "--agent-cmd",
                              f"{loop} --model wildhold-standin/quester --max-steps 4", "--proxy", str(proxy),
                              "--harness", "openai-loop", "--model", "wildhold-standin/quester", "--repeats", "1",
                              "--workers", "1", "--out", str(out), "--quiet"])
    assert ran.exit_code == 0, ran.output
    [result] = json.loads((out / "results.json").read_text())["results"]
    assert result["policy"] == "openai-loop/wildhold-standin/quester" and result["llm_calls"] == 4
    assert result["tokens"] > 0 and result["dollars"] > 0 and result["turns"] < result["llm_calls"]  # looks are not turns
    md = (out / "results.md").read_text()
    assert "tokens / task" in md and f"{result['tokens']:,}" in md
    written = _files(out)
    assert runner.invoke(app, ["tasks", "score", str(out)]).exit_code == 0
    assert _files(out) == written


@pytest.mark.parametrize(("args", "said"), [
    (["--agent", "oracle", "--agent-cmd", "true"], "pass one of --agent, --experiment and --agent-cmd"),
    (["--model", "gpt-4.1"], "--harness, --model, --proxy and --tools label, meter and serve an outside agent: pass them with --agent-cmd"),
    (["--agent-cmd", "true", "--harness", "claude code"], "--harness 'claude code': a label of 1 to 100 letters"),
    (["--agent-cmd", " "], "the agent command is empty"),
    (["--agent-cmd", "true", "--proxy", "no-such-proxy.yaml"], "no-such-proxy.yaml does not exist; check the path"),
])
def test_an_outside_agent_run_that_cannot_start_says_why_in_one_line(tmp_path, args, said):
    ran = runner.invoke(app, ["tasks", "run", "--suite", "exploration/gather-wood-v1", "--out", str(tmp_path / "o"),
                              *args])
    assert ran.exit_code == 2 and said in ran.output and "Traceback" not in ran.output
    assert not (tmp_path / "o").exists()


def test_the_agents_environment_names_the_server_token_objective_and_a_client_config(tmp_path, content):
    task = default_suite().get("exploration/gather-wood-v1")
    dump = (f"{shlex.quote(sys.executable)} -c 'import json, os; print(json.dumps({{\"env\": dict(os.environ), "
            f"\"config\": json.load(open(os.environ[\"WILDHOLD_MCP_CONFIG\"]))}}))'")
    run_outside_attempt(task, AgentCommand(dump), 0, tmp_path, content, name="env")
    seen = json.loads((tmp_path / "env.agent.log").read_text())
    env = seen["env"]
    assert env["WILDHOLD_OBJECTIVE"] == task.description and env["WILDHOLD_MCP_URL"] == env["WILDHOLD_HTTP_URL"] + "/mcp"
    assert env["WILDHOLD_HTTP_URL"].startswith("http://127.0.0.1:") and len(env["WILDHOLD_TOKEN"]) >= 24
    assert env.get("OPENAI_BASE_URL") == os.environ.get("OPENAI_BASE_URL")  # no proxy: the model's endpoint untouched
    # the config `claude -p --mcp-config "$WILDHOLD_MCP_CONFIG"` reads (removed with the attempt's working folder)
    assert seen["config"] == {"mcpServers": {"wildhold": {"type": "http", "url": env["WILDHOLD_MCP_URL"], "headers": {
        "Authorization": f"Bearer {env['WILDHOLD_TOKEN']}"}}}}
    assert not (tmp_path / "env.work").exists()


TOOL_NAMES = """
import asyncio, os, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main():
    auth = {"Authorization": "Bearer " + os.environ["WILDHOLD_TOKEN"]}
    async with httpx2.AsyncClient(headers=auth, trust_env=False) as http:
        async with Client(streamable_http_client(os.environ["WILDHOLD_MCP_URL"], http_client=http)) as world:
            print(" ".join(sorted(t.name for t in (await world.list_tools()).tools)))

asyncio.run(main())
"""


def test_an_outside_agent_is_served_the_tool_profile_it_asks_for_and_its_identity_says_which(tmp_path, content):
    from wildhold.server.mcp import tools_hash

    task = default_suite().get("exploration/gather-wood-v1")
    script = tmp_path / "tools.py"
    script.write_text(TOOL_NAMES)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    seen = {}
    for profile in ("full", "compact"):
        run_outside_attempt(task, AgentCommand(command, tools=profile), 0, tmp_path / profile, content, name="t")
        seen[profile] = (tmp_path / profile / "t.agent.log").read_text().split()
        with Archive(tmp_path / profile / "t.wha") as a:
            ident = a.manifest["arm_identities"]["tasker"]
        assert ident["tools"] == profile and ident["tools_hash"] == tools_hash(horizon="visible", profile=profile)
    assert "act" in seen["compact"] and len(seen["compact"]) <= 12 < len(seen["full"])
