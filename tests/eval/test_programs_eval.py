"""Program metrics from a small archive played for real: program share of actions, revisions per agent,
program failures by reason; on the card, in the match summary, in Markdown and HTML."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import config

from wildhold.eval.html import render_html
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report, report_markdown
from wildhold.service.host import Host

FARM = "for i in range(3):\n    wait(ticks=1)\n"
CRASH = 'log("about to fail")\nx = 1 // 0\n'


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """ann: one direct action, a program that acts 3 times (saved twice), one that fails; bob: direct only."""
    host = Host.open(tmp_path_factory.mktemp("programs"), config(), "tiny", 3)
    try:
        ann = host.register("ann")[1].agent
        bob = host.register("bob")[1].agent
        host.submit(ann, "wait", {"ticks": 1})
        host.submit(bob, "wait", {"ticks": 2})
        host.clock.step()
        host.programs.save(ann, "farm", "wait(ticks=1)\n")
        host.programs.save(ann, "farm", FARM)
        host.programs.save(ann, "crash", CRASH)
        host.programs.start(ann, "crash")
        host.clock.step()
        host.clock.step()
        host.programs.start(ann, "farm")
        for _ in range(10):
            host.clock.step()
        assert host.programs.status(ann, "farm")["state"] == "finished"
        assert host.programs.status(ann, "crash")["state"] == "failed"
        return Path(host.stop()["archive"])
    finally:
        host.close()


@pytest.fixture(scope="module")
def report(archive) -> dict:
    record = load_match(archive)
    return build_report(record, compute_metrics(record))


def test_program_share_revisions_and_failures_per_agent(archive):
    agents = compute_metrics(load_match(archive)).agents
    ann, bob = agents["a1"], agents["a2"]
    assert (ann.actions, ann.program_actions, ann.program_share) == (4, 3, 0.75)
    assert ann.by_issuer == {"direct": 1, "program:farm@2": 3}
    assert ann.program_revisions == 3
    assert ann.program_failures == {"runtime_error": 1}
    assert (bob.actions, bob.program_actions, bob.program_share, bob.program_revisions, bob.program_failures) == (1, 0, 0.0, 0, {})


def test_cards_and_the_match_summary_carry_the_program_metrics(report):
    cards = {c["name"]: c for c in report["agents"]}
    assert cards["ann"]["programs"] == {"actions": 3, "share": 0.75, "revisions": 3, "failures": {"runtime_error": 1}}
    assert cards["bob"]["programs"] == {"actions": 0, "share": 0.0, "revisions": 0, "failures": {}}
    assert report["programs"] == {"actions": 3, "share": 0.6, "revisions": 3, "failures": {"runtime_error": 1}}
    line = next(x for x in cards["ann"]["notable"] if x.startswith("Programs:"))
    assert "3 of 4 actions (75%)" in line and "3 revisions" in line and "1 program failure (1 runtime_error)" in line
    assert not any(x.startswith("Programs:") for x in cards["bob"]["notable"])
    assert report["metrics"]["a1"]["program_share"] == 0.75


def test_markdown_and_html_show_them(report):
    md = report_markdown(report)
    assert "Programs: 3 actions (60% of all) issued by agents' programs; 3 revisions saved; failures: 1 runtime_error." in md
    page = render_html(report)
    assert "(0 rejected, 3 by programs)" in page and "Programs: 3 of 4 actions (75%)" in page
