"""The rules document: complete, generated from content, and a stable fingerprint of it."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from escape_cases_support import CASES

from wildhold.content import Content, ContentError, default_content, load_content
from wildhold.content.loader import DATA_DIR
from wildhold.content.models import NeedsSpec
from wildhold.docs import rules_digest, rules_json, rules_markdown
from wildhold.docs.rules import _NEEDS_MEANING, TIMING_RULES
from wildhold.service.queries import program_reads
from wildhold.world import systems
from wildhold.world.actions import REGISTRY
from wildhold.world.errors import CODES
from wildhold.world.events import EVENT_TYPES
from wildhold.world.observe import observe
from wildhold.world.world import World

READS = program_reads()


@pytest.fixture(scope="module")
def content() -> Content:
    return default_content()


@pytest.fixture(scope="module")
def doc(content: Content) -> dict[str, Any]:
    return rules_json(content, READS)


@pytest.fixture(scope="module")
def md(content: Content) -> str:
    return rules_markdown(content, READS)


def section(md: str, title: str) -> str:
    """The text of one `## title` section, up to the next second-level heading."""
    start = md.index(f"\n## {title}\n")
    end = md.find("\n## ", start + 1)
    return md[start : end if end != -1 else len(md)]


def row(name: str) -> str:
    return f"| `{name}` |"


def edited(tmp_path: Path, file: str, change: Callable[[Any], None]) -> Content:
    """Content loaded from a copy of the shipped data with one file changed."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    path = target / file
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_content(target)


# ---- completeness ---------------------------------------------------------------------------


def test_every_registered_action_appears_in_both_formats(doc, md):
    actions = section(md, "Actions")
    for name, action in REGISTRY.items():
        entry = doc["actions"][name]
        assert entry["description"] == action.doc
        assert entry["arguments"] == action.args.model_json_schema()
        assert entry["while_busy"] == action.while_busy
        assert row(name) in actions
        assert f"### `{name}`" in actions
        assert action.doc in actions
    assert set(doc["actions"]) == set(REGISTRY)


def test_every_rejection_code_appears_in_both_formats(doc, md):
    codes = section(md, "Rejection codes")
    assert doc["rejection_codes"] == CODES
    for code, meaning in CODES.items():
        assert f"{row(code)} {meaning} |" in codes


def test_every_recipe_appears_in_both_formats(content, doc, md):
    recipes = section(md, "Recipes")
    for name, recipe in content.recipes.items():
        assert doc["recipes"][name] == recipe.model_dump()
        line = next(line for line in recipes.splitlines() if line.startswith(row(name)))
        assert f"| {recipe.duration} | {recipe.energy} |" in line
    assert set(doc["recipes"]) == set(content.recipes)


@pytest.mark.parametrize(
    ("key", "title", "names"),
    [
        ("items", "Items", lambda c: c.items),
        ("nodes", "Resource nodes", lambda c: c.nodes),
        ("structures", "Structures", lambda c: c.structures),
        ("terrain", "Terrain", lambda c: c.terrain),
        ("creatures", "Creatures", lambda c: c.creatures),
        ("scenarios", "Scenarios", lambda c: c.scenarios),
        ("events", "Events", lambda c: EVENT_TYPES),
    ],
)
def test_every_named_thing_appears_in_both_formats(content, doc, md, key, title, names):
    text = section(md, title)
    for name in names(content):
        assert name in doc[key]
        assert row(name) in text


def test_action_costs_come_from_content_or_their_timing_rule(content, doc):
    for name, action in REGISTRY.items():
        assert action.timing in TIMING_RULES or action.cost_rule is not None, f"{name}: timing {action.timing!r} has no rule in the rules document"
        cost = doc["actions"][name]["cost"]
        if action.timing == "fixed":
            assert (cost["duration"], cost["energy"]) == (content.actions[name].duration, content.actions[name].energy)


def test_every_need_is_explained_with_its_value(content, doc):
    assert set(_NEEDS_MEANING) == set(NeedsSpec.model_fields)
    for field, entry in doc["world"]["needs"].items():
        assert entry["value"] == getattr(content.needs, field)
        assert f"{entry['value']:g}" in entry["meaning"]


def test_event_fields_match_their_models(doc):
    for kind, model in EVENT_TYPES.items():
        assert list(doc["events"][kind]["fields"]) == list(model.model_json_schema(by_alias=True)["properties"])


def test_tick_order_lists_the_systems_step_runs(doc):
    order = doc["world"]["tick_order"]
    assert order[: len(World.SYSTEMS)] == [system.__name__ for system in World.SYSTEMS]
    assert order[0] == "advance_calendar"
    assert all(callable(getattr(systems, name)) for name in order[: len(World.SYSTEMS)])


def test_observation_format_matches_what_observe_returns(content, doc):
    world = World(content, "tiny", seed=0)
    agent = world.join("probe")
    world.step()
    obs = observe(world, agent)
    described = doc["observation"]["fields"]
    assert set(described) == set(obs) | {"changes_since", "unchanged"}  # those two: a served observation as changes
    for part in ("time", "self", "view"):
        assert list(described[part]["fields"]) == list(obs[part]), part
    assert doc["observation"]["glyphs"] == obs["legend"]
    assert set(described["memory"]["fields"]) >= {"x", "y", "terrain", "seen_tick"}


# ---- formats --------------------------------------------------------------------------------


def test_json_is_valid_json(doc):
    assert json.loads(json.dumps(doc)) == doc
    assert json.loads(json.dumps(doc, sort_keys=True, ensure_ascii=False)) == doc


def test_version_names_package_and_content(content, doc):
    import wildhold

    assert doc["version"]["wildhold"] == wildhold.__version__
    assert doc["version"]["content_digest"] == content.digest
    assert content.digest in rules_markdown(content, READS)


def test_digest_is_sha256_of_the_canonical_json(content, doc):
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert rules_digest(content, READS) == hashlib.sha256(canonical).hexdigest()
    assert rules_digest(content, READS) == rules_digest(content, READS)


def test_markdown_tables_are_well_formed(md):
    cells = lambda line: len(re.findall(r"(?<!\\)\|", line))  # noqa: E731
    table: list[str] = []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            assert len({cells(t) for t in table}) == 1, table[0]
            table = []


def test_the_document_describes_and_never_advises(md):
    advice = re.findall(r"\b(should|recommend\w*|strateg\w*|tips?|advice|best)\b", md, flags=re.IGNORECASE)
    assert advice == []


# ---- generated from content -----------------------------------------------------------------


def test_a_changed_recipe_duration_changes_doc_and_digest(content, tmp_path):
    assert content.recipes["wooden_axe"].duration != 37
    changed = edited(tmp_path, "recipes.yaml", lambda d: d["wooden_axe"].update(duration=37))
    assert rules_json(changed, READS)["recipes"]["wooden_axe"]["duration"] == 37
    line = next(line for line in section(rules_markdown(changed, READS), "Recipes").splitlines() if line.startswith(row("wooden_axe")))
    assert "| 37 |" in line
    assert rules_markdown(changed, READS) != rules_markdown(content, READS)
    assert rules_digest(changed, READS) != rules_digest(content, READS)


def test_a_changed_action_cost_changes_the_action_table(content, tmp_path):
    changed = edited(tmp_path, "actions.yaml", lambda d: d["gather"].update(duration=7, energy=5))
    actions = section(rules_markdown(changed, READS), "Actions")
    assert "Takes 7 ticks; costs 5 energy." in actions
    assert rules_digest(changed, READS) != rules_digest(content, READS)


def test_a_changed_view_radius_changes_every_mention(content, tmp_path):
    changed = edited(tmp_path, "needs.yaml", lambda d: d.update(view_radius=6))
    doc = rules_json(changed, READS)
    assert doc["world"]["fog_of_war"]["view_size"] == 13
    text = rules_markdown(changed, READS)
    assert "13x13" in text and "9x9" not in text
    assert rules_digest(changed, READS) != rules_digest(content, READS)


def test_a_changed_night_moves_the_clock_times(tmp_path):
    changed = edited(tmp_path, "calendar.yaml", lambda d: d.update(night_start=1200))
    assert "20:00" in section(rules_markdown(changed, READS), "Time")


def test_content_out_of_step_with_the_registry_is_refused(tmp_path):
    changed = edited(tmp_path, "actions.yaml", lambda d: d.pop("gather"))
    with pytest.raises(ContentError):
        rules_json(changed, READS)


def test_the_wealth_formula_is_public_with_every_weight(content, doc):
    wealth = doc["wealth"]
    assert str(content.wealth.reputation_cents) in wealth["summary"]
    assert str(content.wealth.attribute_level_cents) in wealth["summary"]
    assert wealth["item_values_cents"]["wood"] == content.items["wood"].value_cents
    assert "Wealth" in rules_markdown(content, READS) and wealth["summary"] in rules_markdown(content, READS)


def test_villagers_gift_opinions_are_left_to_discover(content, doc):
    for name, npc in content.npcs.items():
        entry = doc["villagers"]["people"][name]
        assert "loves" not in entry and "likes" not in entry and "dislikes" not in entry
    assert doc["villagers"]["friendship"]["gift_points"] == dict(content.social.gift_points)


# ---- programs -------------------------------------------------------------------------------


def test_every_program_function_and_result_field_appears_in_both_formats(content, doc, md):
    from wildhold.programs.api import OP_RESULT_FIELDS, api_functions

    programs = section(md, "Programs")
    functions = api_functions(content=content, reads=READS)
    assert list(doc["programs"]["functions"]) == [f["name"] for f in functions]
    assert {name for name in REGISTRY} < set(doc["programs"]["functions"])
    for f in functions:
        assert f"`{f['signature'].replace('|', chr(92) + '|')}`" in programs, f["name"]
    for field in OP_RESULT_FIELDS:
        assert f"`{field}`" in programs


def test_every_programs_number_is_in_the_limits_table(content, doc, md):
    limits = section(md, "Programs").split("### Limits and budgets", 1)[1]
    values = content.programs.model_dump(mode="json")
    assert set(doc["programs"]["limits"]) == set(values)
    for name, value in values.items():
        assert doc["programs"]["limits"][name]["value"] == value
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        assert f"{row(name)} {shown} |" in limits, name


def test_the_programs_section_states_fairness_the_safety_net_who_acts_first_and_the_sandbox(doc, md):
    programs = section(md, "Programs")
    assert "no interpreter-step counter" in programs and "wall_clock" in programs and "recorded" in programs
    assert "goes ahead of your program's" in programs and "busy" in programs and "cancelled" in programs
    assert "program:<name>@<revision>" in programs
    refused = doc["programs"]["sandbox"]["refused"]
    for attempt, outcome in refused.items():
        assert f"| {attempt} | {outcome} |" in programs


def test_the_sandbox_table_names_every_outcome_of_the_escape_suite(doc):
    outcomes = " ".join(doc["programs"]["sandbox"]["refused"].values())
    for case, _, kind, reason, _, _ in CASES:
        assert kind in outcomes, case
        assert reason == "runtime_error" or f"reason {reason}" in outcomes, case
    assert set(doc["programs"]["events"]) <= set(EVENT_TYPES)


def test_a_changed_program_budget_changes_the_section_and_the_digest(content, tmp_path):
    assert content.programs.host_calls_per_turn != 17
    changed = edited(tmp_path, "programs.yaml", lambda d: d.update(host_calls_per_turn=17, max_running_per_agent=2))
    programs = section(rules_markdown(changed, READS), "Programs")
    assert f"{row('host_calls_per_turn')} 17 |" in programs and "17 world calls" in programs
    assert "runs at most 2 at once" in programs
    assert rules_digest(changed, READS) != rules_digest(content, READS)
