"""A catalog server whose warehouse is on a real S3 server (SeaweedFS), for the S3 tests.

The server runs in this process, so the catalog's own keys are this process's environment
while the module runs (``lake``). Engines that must hold no keys run elsewhere
(``tests/integration/engines/test_s3_engines.py``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog

from tests.integration.api.servers import RunningServer, issue_token
from tests.integration.engines.conftest import catalog_settings
from tests.seaweedfs import SeaweedFS

BUCKET = "lake"
WAREHOUSE = f"s3://{BUCKET}/wh"
SESSION_S = 6
"""How long the store lets a vended key live (its ``maxSessionLength``): a test sees one
expire, and the catalog hands out new ones every few seconds."""


@dataclass
class Lake:
    """The S3 server, the catalog server on it, and the catalog's environment."""

    s3: SeaweedFS
    server: RunningServer
    env: dict[str, str]

    @property
    def uri(self) -> str:
        return f"{self.server.url}/iceberg"

    def token(self, role: str) -> str:
        """Return a token of ``role`` (reader, writer, admin)."""
        from api.wire.roles import Role

        return issue_token(self.server.settings.store, Role(role))

    def pyiceberg(self, role: str = "admin", delegation: str = "vended-credentials") -> RestCatalog:
        """Return PyIceberg on the catalog, signed in with ``role``, holding no keys of its own."""
        loaded = load_catalog(
            f"lake-{role}",
            type="rest",
            uri=self.uri,
            token=self.token(role),
            **{"header.X-Iceberg-Access-Delegation": delegation},
        )
        assert isinstance(loaded, RestCatalog)
        return loaded


@pytest.fixture(scope="package")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    folder: Path = tmp_path_factory.mktemp("lake")
    with SeaweedFS(folder / "s3", max_session_s=SESSION_S) as s3:
        s3.create_bucket(BUCKET)
        env = {
            "AWS_ACCESS_KEY_ID": s3.admin.access_key,
            "AWS_SECRET_ACCESS_KEY": s3.admin.secret_key,
            "AWS_REGION": s3.region,
            "CATALOG_S3_ENDPOINT": s3.endpoint_url,
        }
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        settings = dataclasses.replace(catalog_settings(folder, auth="on"), warehouse=WAREHOUSE)
        server = RunningServer(settings).start()
        try:
            yield Lake(s3, server, env)
        finally:
            server.stop()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
