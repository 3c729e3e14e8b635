"""The update log on a real etcd that serves TLS only, requires client certificates and
checks users and passwords: everything works with the right credentials, nothing without."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from catalog import commands as c
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from deploy.certificates import make_tls_files
from deploy.etcd_server import EtcdServer
from tests.integration.api.servers import free_port
from tests.integration.catalog.support import create_table, run
from tests.integration.updatelog.support import opened
from updatelog import StorageUnavailableError

pytestmark = pytest.mark.etcd

PASSWORD = "s3cret-pw"
CATALOG = str(Path(sys.executable).with_name("catalog"))


@pytest.fixture(scope="module")
def secure_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    folder = tmp_path_factory.mktemp("tls")
    with EtcdServer(base_dir=folder / "etcd", tls=make_tls_files(folder / "certs")) as server:
        server.members[0].enable_auth(PASSWORD)
        yield server


def _url(server: EtcdServer, prefix: str, **overrides: str) -> str:
    assert server.tls is not None
    params = {
        "ca": str(server.tls.ca),
        "cert": str(server.tls.client_cert),
        "key": str(server.tls.client_key),
        "user": "root",
        "password": PASSWORD,
        "timeout": "3",
        **overrides,
    }
    query = "&".join(f"{k}={v}" for k, v in params.items() if v)
    return f"etcd://{server.endpoint}/{prefix}?{query}"


def test_the_log_works_over_tls_with_a_user(secure_etcd: EtcdServer) -> None:
    async def scenario() -> None:
        async with opened(_url(secure_etcd, "tls-log")) as log:
            assert (await log.append(1, b"one", 10, ["r1"])).committed
            assert [e.payload for e in await log.read(1)] == [b"one"]
            watch = log.watch(1)
            try:
                first = await anext(watch)
                assert getattr(first, "version", None) == 1
            finally:
                await watch.aclose()

    run(scenario())


def test_a_node_serves_ddl_over_tls_with_a_user(secure_etcd: EtcdServer) -> None:
    async def scenario() -> None:
        url = _url(secure_etcd, "tls-node")
        async with CatalogNode.open(
            url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            result = await node.manager.execute([create_table("T"), c.CreateSchema(name="S")])
            assert node.service.catalog(result.version).find_table("PUBLIC", "T") is not None

    run(scenario())


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"password": "wrong"}, "authentication failed"),
        # No client certificate: etcd 3.5 (Go 1.16) refuses it in the handshake, etcd 3.4
        # (Go 1.19, TLS 1.3) right after it.
        ({"cert": "", "key": ""}, "BAD_CERTIFICATE|TSI_DATA_CORRUPTED"),
        ({"ca": "", "cert": "", "key": ""}, "no answer"),  # plain text against TLS only
    ],
    ids=["wrong-password", "no-client-certificate", "no-tls"],
)
def test_wrong_credentials_are_refused(
    secure_etcd: EtcdServer, overrides: dict[str, str], reason: str
) -> None:
    async def scenario() -> None:
        url = _url(secure_etcd, "tls-refused", **overrides)
        with pytest.raises(StorageUnavailableError) as info:
            async with opened(url) as log:
                await log.append(1, b"one", 10)
        assert re.search(reason, info.value.message), info.value.message
        assert PASSWORD not in info.value.message

    run(scenario(), timeout_s=60)


def test_the_password_never_reaches_a_servers_output(secure_etcd: EtcdServer) -> None:
    """A real ``catalog serve`` on the secured etcd, debug logging on: the password stays out."""
    port = free_port()
    env = {**os.environ, "CATALOG_STORE": _url(secure_etcd, "tls-serve")}
    flags = ["--port", str(port), "--log-level", "debug", "--delay-ms", "0"]
    server = subprocess.Popen(
        [CATALOG, "serve", *flags, "--max-clock-skew-ms", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        sql = {"sql": "CREATE TABLE T (ID INT PRIMARY KEY)"}
        assert httpx.post(url + "/v1/sql", json=sql, timeout=30).status_code == 200
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=60)
    assert "Uvicorn running" in output and PASSWORD not in output
    refused = subprocess.run(
        [CATALOG, "serve", *flags, "--max-clock-skew-ms", "0"],
        env={**env, "CATALOG_STORE": _url(secure_etcd, "tls-serve", password="wrong-" + PASSWORD)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode != 0 and "authentication failed" in refused.stderr
    assert PASSWORD not in refused.stderr + refused.stdout
