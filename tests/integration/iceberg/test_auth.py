"""With auth on, the Iceberg routes take the same bearer tokens and roles as ``/v1``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pyiceberg.exceptions import ForbiddenError, UnauthorizedError

from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token
from tests.integration.iceberg.conftest import rest_catalog

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[RunningServer]:
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db", auth="on")
    finally:
        factory.stop_all()


def test_a_request_without_a_token_is_refused_401(guarded: RunningServer) -> None:
    answer = httpx.get(f"{guarded.url}/iceberg/v1/namespaces", timeout=5)
    assert answer.status_code == 401
    assert answer.json()["error"]["type"] == "NotAuthorizedException"
    with pytest.raises(UnauthorizedError, match="NotAuthorizedException"):
        rest_catalog(guarded)


def test_reads_take_the_reader_role_and_ddl_the_writer_role(guarded: RunningServer) -> None:
    reader = rest_catalog(guarded, issue_token(guarded.settings.store, Role.READER))
    assert ("PUBLIC",) in reader.list_namespaces()
    with pytest.raises(ForbiddenError, match="needs the writer role"):
        reader.create_namespace("SALES")
    writer = rest_catalog(guarded, issue_token(guarded.settings.store, Role.WRITER))
    writer.create_namespace("SALES")
    assert reader.namespace_exists("SALES")
