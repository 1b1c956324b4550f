"""Schemathesis against the served OpenAPI, bounded: no 5xx, no undocumented status, no response off its schema."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from server_support import auth, config

from wildhold.server.http import create_app
from wildhold.service.host import Host

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = {GenerationMode.POSITIVE: 3, GenerationMode.NEGATIVE: 2}


@pytest.mark.slow
def test_fuzzed_requests_find_no_server_error_and_no_schema_violation(tmp_path):
    tokens: dict[str, str] = {}

    def open_host() -> Host:  # runs on schemathesis's event-loop thread, where the app lives
        host = Host.open(tmp_path / "m", config(wait_max_s=0.05), "tiny", 3)
        tokens["agent"], _ = host.register("fuzzer")
        return host

    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(open_host))
    headers = auth(tokens["agent"])
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode, examples in EXAMPLES.items():

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            def fuzz(case) -> None:
                case.call_and_validate(headers=headers, checks=CHECKS)

            try:
                fuzz()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.label  # nothing in it can be made invalid
    assert operations >= 80
