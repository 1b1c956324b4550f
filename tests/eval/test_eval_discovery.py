"""Discovery (RQ2): an arm's notes checked line by line against the rules' facts, from its session records."""

from __future__ import annotations

from wildhold.content import default_content
from wildhold.eval.discovery import discovery, rules_facts


def session(number: int, writes=(), deletes=(), reads=()) -> dict:
    return {"session": number, "log": {"end_tick": 100 * number, "writes": [[1.0, p, len(t), t] for p, t in writes],
                                       "deletes": [[2.0, p] for p in deletes],
                                       "design_reads": [[0.5, 90, "rules", args] for args in reads]}}


def test_the_facts_come_from_the_content_the_rules_are_rendered_from():
    content = default_content()
    facts = {f.id: f for f in rules_facts(content)}
    stew = content.recipes["berry_stew"]
    assert facts["recipe:berry_stew"].numbers == tuple(sorted(set(stew.inputs.values())))
    assert {f"villager:{n}" for n in content.npcs} <= set(facts) and {f"enemy:{n}" for n in content.enemies} <= set(facts)
    assert "wealth:formula" in facts and facts["price:bread"].numbers == (7, 8)


def test_right_wrong_only_named_and_never_and_what_was_found_by_playing():
    notes = ("Berry stew: 4 berries at the stove.\nBread costs 5 coins.\nThe skeleton raises its sword, then slashes.\n"
             "Saw mara.\nMy trade1 offer had berries in it.\n")
    d = discovery([session(1, [("notes/a.md", notes)], reads=[{"section": "recipes", "key": "berry_stew"}]),
                   session(2, [("notes/b.md", "scratch")], deletes=["notes/b.md"], reads=[{}])], default_content())
    status = {f["fact"]: (f["status"], f["by_playing"]) for f in d["facts"]}
    assert status["recipe:berry_stew"] == ("right", False)  # read in the rules' recipes section
    assert status["price:bread"] == ("wrong", True)  # 5 is no price of bread; the villagers section was never read
    assert status["enemy:skeleton"] == ("right", True)  # a move of its pattern
    assert status["villager:mara"] == ("unverified", True)  # named, without a place of its day
    assert status["price:berries"][0] == "never"  # "trade1" is a name, not a price, and no money is spoken of
    assert status["wealth:formula"] == ("never", False)
    assert d["sections_read"] == ["recipes"]  # rules without a section lists the sections, reading none
    assert [(w["files"], w["folders"]) for w in d["workspace"]] == [(1, 1), (1, 1)] and d["files"][0]["path"] == "notes/a.md"
    assert d["counts"]["right"] == 2 and d["counts"]["wrong"] == 1 and d["counts"]["never"] == d["of"] - 4
