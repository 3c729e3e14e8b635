"""The ``store_url`` fixture: every behaviour test runs once per ``UpdateLog`` backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", pytest.param("etcd", marks=pytest.mark.etcd)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL of a fresh, empty catalog: a new SQLite file, or a new prefix in etcd."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/catalog.db"
        return
    # The session's etcd is shared, so a unique prefix gives each test an empty catalog; the
    # etcd fixture deletes the server and its data directory at the end of the session.
    server = request.getfixturevalue("etcd_server")
    yield f"etcd://{server.endpoint}/test-{uuid.uuid4().hex}"
