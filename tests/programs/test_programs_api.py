"""The program API and the lifecycle: functions generated from the registry, stubs and the checks a save
makes (syntax and type errors name the line, nothing is saved), and every lifecycle error code."""

from __future__ import annotations

import ast

import pytest
from programs_support import code_of, events, inputs, join, log_texts, open_host, state, steps

from wildhold.content import default_content
from wildhold.programs.api import CONTROLS, api_functions, reference_markdown, stubs, type_text
from wildhold.service.queries import program_reads
from wildhold.world.actions import REGISTRY

CONTENT = default_content()
READS = program_reads()


# ---- generated from the registry ---------------------------------------------------------------


def test_every_registry_action_is_a_keyword_only_function_with_the_same_arguments():
    functions = {f["name"]: f for f in api_functions(reads=READS)}
    assert set(REGISTRY) <= set(functions)
    module = ast.parse(stubs(reads=READS))
    defs = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
    for name, spec in REGISTRY.items():
        assert functions[name]["kind"] == "action" and functions[name]["blocking"]
        node = defs[name]
        assert not node.args.args, f"{name} takes positional arguments"
        assert [a.arg for a in node.args.kwonlyargs] == list(spec.args.model_fields)
        required = [a.arg for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is None]
        assert required == [n for n, f in spec.args.model_fields.items() if f.is_required()]
        assert ast.unparse(node.returns) == "OpResult"
        assert spec.doc.split("\n")[0] in ast.get_docstring(node)


def test_reads_and_controls_sit_beside_the_actions_without_clashing():
    functions = {f["name"]: f for f in api_functions(reads=READS)}
    assert {n for n, f in functions.items() if f["kind"] == "read"} == set(READS) == {"observe", "inventory", "recipes", "quest_log", "now", "start_args"}
    assert {n for n, f in functions.items() if f["kind"] == "control"} == set(CONTROLS) == {"sleep_until", "log"}
    assert functions["sleep_until"]["blocking"] and not functions["observe"]["blocking"]
    assert len(functions) == len(REGISTRY) + len(READS) + len(CONTROLS)
    clashing = {**REGISTRY, "observe": REGISTRY["move"]}
    with pytest.raises(RuntimeError, match="share a name"):
        api_functions(clashing, reads=READS)


def test_an_argument_type_no_stub_can_express_fails_loudly():
    assert type_text(dict[str, int]) == "dict[str, int]"
    with pytest.raises(TypeError, match="cannot express"):
        type_text(bytes)


def test_the_reference_states_the_budgets_from_content_and_who_acts_first():
    p = CONTENT.programs
    text = reference_markdown(CONTENT, reads=READS)
    for number in (p.host_calls_per_turn, p.actions_per_tick, p.max_running_per_agent, p.max_source_bytes, p.log_lines):
        assert str(number) in text
    assert "busy" in text and "before your program's turn" in text and "program:<name>@<revision>" in text
    assert all(f"`{f['signature'].split('(')[0]}(" in text for f in api_functions(reads=READS))
    numbers = CONTENT.programs.model_copy(update={"host_calls_per_turn": 7})
    assert "7 world calls" in reference_markdown(CONTENT.model_copy(update={"programs": numbers}), reads=READS)


# ---- the checks a save makes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    host = open_host(tmp_path_factory.mktemp("api") / "m")
    agent = join(host, "ann")
    yield host, agent
    host.close()


@pytest.mark.parametrize("source, line, words", [
    ('x = 1\nmove(direction="up")\n', 2, "Literal"),
    ('x = 1\ny = 2\nmove(dir="n")\n', 3, "dir"),
    ('r = wait(ticks=1)\nlog(r["okay"])\n', 2, "okay"),
    ('observe()\n\n\nteleport(x=1, y=2)\n', 4, "teleport"),
    ('if now() > 3\n    log("late")\n', 1, "Expected"),
    ('n: int = now()\nn = n + "1"\n', 2, "+"),
    ('move("n")\n', 1, "positional"),
    ('from typing import Literal\nDirection = Literal["n", "s"]\nway: Direction = "n"\nmove(direction=way)\n', 2,
     "inside an annotation"),
], ids=["bad-literal", "unknown-keyword", "unknown-result-key", "unknown-function", "syntax", "str-plus-int", "positional",
        "literal-alias"])
def test_a_save_with_a_type_or_syntax_error_is_refused_naming_the_line(served, source, line, words):
    host, agent = served
    before = (len(inputs(host)), len(events(host, "program_saved")))
    with pytest.raises(Exception) as exc:
        host.programs.save(agent, "broken", source)
    assert exc.value.code == "program_invalid"
    assert f"line {line}:" in exc.value.message and words in exc.value.message
    assert (len(inputs(host)), len(events(host, "program_saved"))) == before
    assert code_of(lambda: host.programs.status(agent, "broken")) == "unknown_program"


def test_every_save_is_a_new_revision_with_its_source_kept(served):
    host, agent = served
    first = host.programs.save(agent, "keep", "log('one')\n")
    second = host.programs.save(agent, "keep", "log('two')\n")
    assert (first["revision"], second["revision"]) == (1, 2) and first["source_sha256"] != second["source_sha256"]
    assert host.programs.source(agent, "keep") == {"name": "keep", "revision": 2, "source": "log('two')\n", "revisions": 2}
    assert host.programs.source(agent, "keep", 1)["source"] == "log('one')\n"
    saved = [e["data"] for e in events(host, "program_saved") if e["data"]["name"] == "keep"]
    assert [(s["revision"], s["source_sha256"]) for s in saved] == [(1, first["source_sha256"]), (2, second["source_sha256"])]
    assert host.programs.status(agent, "keep")["state"] == "stopped"


def test_names_sizes_and_counts_are_checked_before_anything_is_saved(served):
    host, agent = served
    save = host.programs.save
    assert code_of(lambda: save(agent, "Bad Name", "x = 1\n")) == "invalid_arguments"
    assert code_of(lambda: save(agent, "x" * 41, "x = 1\n")) == "invalid_arguments"
    assert code_of(lambda: save(agent, "ok", 42)) == "invalid_arguments"
    big = "x = 1\n" * (CONTENT.programs.max_source_bytes // 6 + 1)
    assert code_of(lambda: save(agent, "big", big)) == "program_too_large"
    other = join(host, "many")
    for i in range(CONTENT.programs.max_programs_per_agent):
        save(other, f"p{i}", "x = 1\n")
    assert code_of(lambda: save(other, "one-too-many", "x = 1\n")) == "program_limit"
    assert save(other, "p0", "x = 2\n")["revision"] == 2  # a new revision of a kept name is fine


def test_lifecycle_errors_have_stable_codes(served):
    host, agent = served
    p = host.programs
    assert code_of(lambda: p.start(agent, "nothing")) == "unknown_program"
    p.save(agent, "idle", "sleep_until(now() + 100)\n")
    assert code_of(lambda: p.start(agent, "idle", 9)) == "unknown_program"
    assert code_of(lambda: p.start(agent, "idle", "1")) == "invalid_arguments"
    assert code_of(lambda: p.stop(agent, "idle")) == "program_not_running"
    assert p.start(agent, "idle")["state"] == "running"
    assert code_of(lambda: p.start(agent, "idle")) == "program_running"
    assert code_of(lambda: p.logs(agent, "idle", after=-1)) == "invalid_arguments"
    assert code_of(lambda: p.logs(agent, "idle", limit=0)) == "invalid_arguments"
    steps(host, 1)
    assert p.status(agent, "idle")["waiting_on"] == {"kind": "tick", "tick": host.world.tick + 100}
    assert p.stop(agent, "idle")["state"] == "stopped"
    assert [e["data"]["reason"] for e in events(host, "program_stopped")][-1] == "stopped by its agent"


def test_a_character_runs_at_most_the_configured_number_of_programs_at_once(served):
    host, agent = served
    limit = CONTENT.programs.max_running_per_agent
    crowd = join(host, "crowd")
    for i in range(limit + 1):
        host.programs.save(crowd, f"s{i}", "sleep_until(now() + 50)\n")
    for i in range(limit):
        host.programs.start(crowd, f"s{i}")
    assert code_of(lambda: host.programs.start(crowd, f"s{limit}")) == "program_limit"
    host.programs.stop(crowd, "s0")
    assert host.programs.start(crowd, f"s{limit}")["state"] == "running"
    assert [p["name"] for p in host.programs.list(crowd)["programs"]] == [f"s{i}" for i in range(limit + 1)]
    assert state(host, crowd, "s0") == "stopped"


def test_a_literal_written_in_its_annotation_saves_and_runs(served):
    host, agent = served
    source = ('from typing import Literal\n'
              'ways: list[Literal["n", "s"]] = ["n", "s"]\n'
              'def pick(i: int) -> Literal["n", "s"]:\n'
              '    return ways[i % 2]\n'
              'log(pick(now()))\n')
    assert host.programs.save(agent, "literal-ok", source)["revision"] == 1
    host.programs.start(agent, "literal-ok")
    steps(host, 2)
    assert state(host, agent, "literal-ok") == "finished"
    assert log_texts(host, agent, "literal-ok")[-1] in ("n", "s")
