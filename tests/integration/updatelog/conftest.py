"""The ``store_url`` fixture: every behaviour test runs once per ``UpdateLog`` backend.

Both stores run with a small request limit, as an etcd started with ``--max-request-bytes``
of 64 KiB, so that every value above it goes the chunked way on every run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.etcd_fixtures import SMALL_REQUEST_BYTES


@pytest.fixture(params=["sqlite", pytest.param("etcd", marks=pytest.mark.etcd)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL of a fresh, empty catalog: a new SQLite file, or a new prefix in etcd."""
    limit = f"max_request_bytes={SMALL_REQUEST_BYTES}"
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/catalog.db?{limit}"
        return
    # The session's etcd is shared, so a unique prefix gives each test an empty catalog; the
    # etcd fixture deletes the server and its data directory at the end of the session.
    server = request.getfixturevalue("etcd_small_server")
    yield f"etcd://{server.endpoint}/test-{uuid.uuid4().hex}?{limit}"
