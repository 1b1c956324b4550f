"""The lifecycle table both faces are generated from: any arguments at all give an answer of the documented
shape or a refusal with a service code, and a refusal changes nothing that is recorded."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from programs_support import join, open_host

from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.service.errors import SERVICE_CODES, HostError

SOURCES = ["log(1)\n", "wait(ticks=1)\n", "for i in range(3)\n    log(i)\n", "move(dir='n')\n", "x" * 20001]
GOOD = {"name": st.sampled_from(["farm", "farm", "ghost", "Bad Name"]), "source": st.sampled_from(SOURCES),
        "revision": st.one_of(st.none(), st.integers(0, 4)), "after": st.integers(-1, 5), "limit": st.integers(0, 5),
        "args": st.one_of(st.just({}), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))}
JUNK = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.lists(st.integers(), max_size=2), st.floats(allow_nan=False))


def arguments(op) -> st.SearchStrategy:
    """Mostly the op's own fields with plausible values; sometimes junk values, a stray field, or not an object."""
    required = {k for k, f in op.args.model_fields.items() if f.is_required()}
    good = st.fixed_dictionaries({k: GOOD[k] for k in required},
                                 optional={k: GOOD[k] for k in op.args.model_fields if k not in required})
    odd = st.fixed_dictionaries({}, optional={**{k: st.one_of(GOOD[k], JUNK) for k in op.args.model_fields},
                                              "agent": st.just("a2")})
    return st.one_of(good, good, good, odd, st.sampled_from([[], "x", None]))


CALLS = st.lists(st.sampled_from(PROGRAM_OPS).flatmap(lambda op: st.tuples(st.just(op), arguments(op))),
                 min_size=1, max_size=6)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    host = open_host(tmp_path_factory.mktemp("surface") / "m")
    agent = join(host, "ann")
    host.programs.save(agent, "farm", "wait(ticks=1)\n")
    yield host, agent
    host.close()


def recorded(host) -> tuple[int, str]:
    host.match.flush()
    return len(list(host.match.store.inputs(0))), host.world.events.head


@settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(calls=CALLS)
def test_any_arguments_give_the_documented_answer_or_a_coded_refusal_that_changes_nothing(served, calls):
    host, agent = served
    for op, raw in calls:
        before = recorded(host)
        try:
            answer = op.run(host.programs, agent, raw)
        except HostError as exc:
            assert exc.code in SERVICE_CODES and exc.message
            assert recorded(host) == before, (op.tool, raw, exc.code)
            continue
        assert op.answer.model_validate(answer).model_dump(mode="json") == answer
        if op.read_only:
            assert recorded(host) == before, op.tool
    for program in host.programs.list(agent)["programs"]:  # leave nothing running for the next example
        if program["state"] in ("running", "waiting"):
            host.programs.stop(agent, program["name"])
    host.clock.step()
