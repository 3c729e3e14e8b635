"""A catalog on an S3 warehouse, served by a real ``catalog serve`` process, for engine tests.

The server alone holds S3 keys: SeaweedFS's admin keys (``tests/seaweedfs.py``, fresh random
keys for every server), given in its own environment only (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, with ``CATALOG_S3_ENDPOINT``). The test process
and the engines have none: what they read and write on S3 they reach with the short-lived
keys the catalog vends for one table, or with requests the catalog signs. SeaweedFS refuses
any unsigned request and knows no other keys, so an engine that reads a table proves the
catalog let it.

Auth is on: engines sign in as principals (``Lake``), and the server's access log
(``CatalogProcess.requests``) shows what it answered, for failure messages and for counting
the requests it signed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from api.wire.roles import Role
from tests.integration.api.servers import TOKEN_SECRET_FILE, free_port, issue_token
from tests.integration.engines.conftest import engine_env, stop_group
from tests.integration.engines.test_sign_in import _principal
from tests.seaweedfs import S3Keys, SeaweedFS

CATALOG = Path(sys.executable).parent / "catalog"
BUCKET = "lake"
WAREHOUSE = f"s3://{BUCKET}/wh"
READY_TIMEOUT_S = 60.0
KEY_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
"""Where S3 clients look for keys first; no engine's environment holds any of them."""
DELEGATION = "X-Iceberg-Access-Delegation"
VENDED, SIGNED = "vended-credentials", "remote-signing"
SIGNER_PATH = "/iceberg/v1/aws/s3/sign"

_ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3})')


@dataclass(frozen=True)
class Answered:
    """One request the server answered, as its access log shows it."""

    method: str
    target: str
    status: int

    def __str__(self) -> str:
        return f"{self.method} {self.target} -> {self.status}"


class CatalogProcess:
    """``catalog serve`` on a free port with auth on, its warehouse ``WAREHOUSE`` on ``s3``.

    Its store is a SQLite file in ``folder``, its output goes to ``folder/serve.log``.
    """

    def __init__(self, folder: Path, s3: SeaweedFS) -> None:
        if not CATALOG.exists():
            raise RuntimeError(f"{CATALOG} is missing: pip install -e '.[api]'")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.uri = f"{self.url}/iceberg"
        self.store = f"sqlite:///{folder}/catalog.db"
        self.log_path = folder / "serve.log"
        env = {k: v for k, v in engine_env().items() if not k.startswith("CATALOG_")}
        env.update(
            AWS_ACCESS_KEY_ID=s3.admin.access_key,
            AWS_SECRET_ACCESS_KEY=s3.admin.secret_key,
            AWS_REGION=s3.region,
            CATALOG_S3_ENDPOINT=s3.endpoint_url,
        )
        # The flags of a test server: a short schema sync delay and clock skew.
        flags = {
            "host": "127.0.0.1",
            "port": str(port),
            "store": self.store,
            "warehouse": WAREHOUSE,
            "node-name": "s3",
            "delay-ms": "20",
            "max-clock-skew-ms": "10",
            "auth": "on",
            "token-secret-file": TOKEN_SECRET_FILE,
        }
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(CATALOG), "serve", *(f"--{k}={v}" for k, v in flags.items())],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"catalog serve exited: {self.log_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"catalog serve was not ready in {READY_TIMEOUT_S} s")
            time.sleep(0.1)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def requests(self) -> list[Answered]:
        """Return every request the server answered so far, in order."""
        return [
            Answered(m["method"], m["target"], int(m["status"]))
            for m in _ACCESS.finditer(self.log_text())
        ]

    def refused_since(self, mark: int) -> str:
        """Return the requests answered with an error after the first ``mark``, one a line."""
        refused = [str(a) for a in self.requests()[mark:] if a.status >= 400]
        return "\n".join(refused) or "(none)"

    def stop(self) -> None:
        stop_group(self.process)


@dataclass(frozen=True)
class Lake:
    """The S3 store, the catalog server on it, and its principals' ``<id>:<secret>``.

    ``writer`` has the cluster role writer, ``reader`` reader, and ``nobody`` the role none
    with no grant: it may see nothing.
    """

    s3: SeaweedFS
    server: CatalogProcess
    writer: str
    reader: str
    nobody: str

    @property
    def uri(self) -> str:
        return self.server.uri

    def token(self, credential: str) -> str:
        """Return an access token of the principal ``credential`` names."""
        client_id, secret = credential.split(":", 1)
        answer = httpx.post(
            f"{self.uri}/v1/oauth/tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": client_id,
                "client_secret": secret,
                "scope": "catalog",
            },
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        token: str = answer.json()["access_token"]
        return token

    def load(self, credential: str, path: str, delegation: str | None) -> httpx.Response:
        """Return the server's answer to ``GET {uri}/v1/{path}`` as ``credential``'s principal,
        asking for ``delegation`` (X-Iceberg-Access-Delegation)."""
        headers = {"Authorization": f"Bearer {self.token(credential)}"}
        if delegation is not None:
            headers[DELEGATION] = delegation
        return httpx.get(f"{self.uri}/v1/{path}", headers=headers, timeout=30)

    def sign(self, credential: str, method: str, s3_path: str) -> httpx.Response:
        """Ask the catalog, as ``credential``'s principal, to sign ``method`` on ``s3_path``
        (``bucket/key``), as Iceberg's remote signer asks."""
        request: dict[str, Any] = {
            "region": self.s3.region,
            "uri": f"{self.s3.endpoint_url}/{s3_path}",
            "method": method,
            "headers": {"x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]},
        }
        return httpx.post(
            f"{self.uri}/v1/aws/s3/sign",
            json=request,
            headers={"Authorization": f"Bearer {self.token(credential)}"},
            timeout=30,
        )


@contextmanager
def running_lake(folder: Path, s3: SeaweedFS) -> Iterator[Lake]:
    """Make bucket ``BUCKET``, serve the catalog on it, and make its principals."""
    s3.create_bucket(BUCKET)
    server = CatalogProcess(folder, s3)
    try:
        admin = issue_token(server.store, Role.ADMIN)
        yield Lake(
            s3,
            server,
            writer=_principal(server, admin, "lake_writer", "writer"),
            reader=_principal(server, admin, "lake_reader", "reader"),
            nobody=_principal(server, admin, "nobody", "none"),
        )
    finally:
        server.stop()


def config_keys(config: dict[str, str]) -> S3Keys:
    """Return the keys an Iceberg ``config`` (or FileIO properties) hands an engine."""
    return S3Keys(
        config["s3.access-key-id"], config["s3.secret-access-key"], config["s3.session-token"]
    )
