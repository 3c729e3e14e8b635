"""schemathesis against the live ``/openapi.json``, auth on: generated requests never get a 5xx.

Every operation but the event stream (which never ends by design; its parameters are
covered by test_server) is fuzzed with schema-valid and schema-invalid requests. Responses
must be documented statuses, content types and shapes; invalid input must be refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from api.server.config import ServerSettings
from api.wire.roles import Role
from tests.integration.api.servers import TOKEN_SECRET_FILE, RunningServer, free_port, issue_token

EXAMPLES_PER_OPERATION = 55
READY_PATH = "/v1/versions/{version}/ready"


@schemathesis.check
def no_server_error(ctx: Any, response: Any, case: schemathesis.Case[Any]) -> bool | None:
    """Like not_a_server_error, but a ready-wait that times out must be 504."""
    if response.status_code == 504 and case.operation.path == READY_PATH:
        assert response.json()["code"] == "TIMEOUT"
        return True
    return not_a_server_error(ctx, response, case)


@schemathesis.check
def invalid_data_refused(ctx: Any, response: Any, case: schemathesis.Case[Any]) -> bool | None:
    """Like negative_data_rejection, but a body over the server's limit may be refused as such.

    The server refuses a body over ``max_body_bytes`` with 413 before it parses it, invalid or
    not; the generator makes such bodies of long lists now and then.
    """
    if response.status_code == 413 and response.json()["code"] == "REQUEST_TOO_LARGE":
        assert len(response.request.body or b"") > ServerSettings().max_body_bytes
        return True
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    no_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    invalid_data_refused,
]


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    store = Path(tmp_path_factory.mktemp("fuzz")) / "catalog.db"
    server = RunningServer(
        ServerSettings(
            store=f"sqlite:///{store}",
            node_name="fuzz",
            host="127.0.0.1",
            port=free_port(),
            delay_ms=0,
            max_clock_skew_ms=0,
            ready_timeout_max_s=0.05,
            auth="on",
            token_secret_file=TOKEN_SECRET_FILE,
        )
    ).start()
    try:
        yield server
    finally:
        server.stop()


def _fuzz(operation: Any, mode: GenerationMode, base_url: str, token: str) -> int:
    calls = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: schemathesis.Case[Any]) -> None:
        nonlocal calls
        calls += 1
        case.call_and_validate(
            base_url=base_url,
            timeout=10,
            checks=CHECKS,
            headers={"Authorization": f"Bearer {token}"},
        )

    try:
        run()
    except Unsatisfiable:
        # An operation without parameters or body has no invalid input to generate.
        if mode is not GenerationMode.NEGATIVE:
            raise
    return calls


def test_generated_requests_get_no_5xx_and_documented_answers(
    fuzzed_server: RunningServer,
) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed_server.url}/openapi.json")
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"our own OpenAPI document is invalid: {result}"
        operations.append(result.ok())
    # The event stream never ends by design; its parameters are covered in test_server.
    operations = [op for op in operations if op.path != "/v1/events"]
    assert len(operations) >= 15
    # With auth on, as an admin: every operation is reachable, and the tokens endpoint too.
    admin = issue_token(fuzzed_server.settings.store, Role.ADMIN, ttl_s=3600)
    total = 0
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            total += _fuzz(operation, mode, fuzzed_server.url, admin)
    print(f"schemathesis: {total} generated requests over {len(operations)} operations")
    assert total >= 1000, total
