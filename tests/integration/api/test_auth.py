"""Bearer tokens and roles against real servers: 401, 403, shared keys, rotation, no leaks."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import msgpack
import pytest

from api.client import CatalogApiError, CatalogClient
from api.server.auth import KEYS_REFRESH_S, TokenAuthority, TokenSecretError, auth_enabled
from api.server.signing_keys import load_signing_keys, swap_signing_keys
from api.wire.roles import Role
from tests.integration.api.servers import (
    TOKEN_SECRET_FILE,
    RunningServer,
    ServerFactory,
    issue_token,
)
from updatelog.url import open_log

TABLE = {
    "op": "create_table",
    "name": "T",
    "columns": [{"name": "ID", "type": "INT64", "nullable": False}],
    "primary_key": ["ID"],
}


def _get(server: RunningServer, token: str | None, path: str = "/v1/catalog") -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(server.url + path, headers=headers, timeout=10)


def _ddl(server: RunningServer, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(
        server.url + "/v1/ddl", json={"commands": [TABLE]}, headers=headers, timeout=10
    )


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/catalog.db"


def test_auth_is_on_by_default_except_on_loopback() -> None:
    assert not auth_enabled("127.0.0.1", "auto")
    assert not auth_enabled("::1", "auto")
    assert auth_enabled("0.0.0.0", "auto")
    assert auth_enabled("10.1.2.3", "auto")
    assert auth_enabled("127.0.0.1", "on")
    assert not auth_enabled("0.0.0.0", "off")


def test_roles_and_refusals(api_servers: ServerFactory, store: str) -> None:
    server = api_servers.start(store, auth="on")
    reader, writer, admin = (issue_token(store, r) for r in (Role.READER, Role.WRITER, Role.ADMIN))

    missing = _get(server, None)
    assert missing.status_code == 401
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["code"] == "UNAUTHENTICATED"
    forged = reader[:-4] + ("AAAA" if not reader.endswith("AAAA") else "BBBB")
    lenient = [reader + "==", reader + "$$$", reader[:-1] + "+"]  # one spelling per token
    for bad in ("nonsense", "ct1.x.y.z", forged, *lenient):
        answer = _get(server, bad)
        assert (answer.status_code, answer.json()["code"]) == (401, "UNAUTHENTICATED"), bad
    expired = issue_token(store, Role.ADMIN, ttl_s=10, now=1_000_000.0)
    assert "expired" in _get(server, expired).json()["detail"]

    assert _get(server, reader).status_code == 200
    refused = _ddl(server, reader)
    assert (refused.status_code, refused.json()["code"]) == (403, "FORBIDDEN")
    assert _ddl(server, writer).status_code == 200
    assert _get(server, None, "/healthz").status_code == 200
    assert _get(server, None, "/readyz").status_code == 200
    assert _get(server, None, "/metrics").status_code == 401
    assert _get(server, reader, "/metrics").status_code == 200

    with CatalogClient(server.url, token=writer) as client:
        with pytest.raises(CatalogApiError) as info:
            client.create_token("reader")
        assert info.value.status == 403
    with CatalogClient(server.url, token=admin) as client:
        issued = client.create_token("reader", ttl_s=60, subject="spark-job")
    assert issued.role == "reader"
    assert _get(server, issued.token).status_code == 200


def test_every_node_verifies_and_rotation_keeps_old_tokens(
    api_servers: ServerFactory, store: str
) -> None:
    a = api_servers.start(store, node_name="a", auth="on")
    b = api_servers.start(store, node_name="b", auth="on")
    admin = issue_token(store, Role.ADMIN)
    with CatalogClient(a.url, token=admin) as client:
        from_a = client.create_token("reader").token
    assert _get(b, from_a).status_code == 200
    rotated = httpx.post(
        b.url + "/v1/tokens/rotate", headers={"Authorization": f"Bearer {admin}"}, timeout=10
    )
    assert rotated.status_code == 200
    new_key = rotated.json()["key_id"]
    with CatalogClient(b.url, token=admin) as client:
        from_b = client.create_token("reader").token
    assert from_b.split(".")[1] == new_key != from_a.split(".")[1]
    deadline = time.monotonic() + 3.0
    for server in (a, b):  # a learns the new key within a second; the old key still verifies
        while _get(server, from_b).status_code != 200:
            assert time.monotonic() < deadline, f"{server.url} never learnt the new key"
            time.sleep(0.2)
        assert _get(server, from_a).status_code == 200
    # A leak: revoke every token issued so far, at once; every node learns it within seconds.
    revoked = httpx.post(
        a.url + "/v1/tokens/rotate",
        params={"revoke": "true"},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    )
    assert revoked.status_code == 200
    deadline = time.monotonic() + 3 * KEYS_REFRESH_S
    for server in (a, b):
        while _get(server, from_b).status_code != 401:
            assert time.monotonic() < deadline, f"{server.url} still accepts a revoked token"
            time.sleep(0.2)
        assert _get(server, from_a).status_code == 401
    fresh = issue_token(store, Role.READER)
    for server in (a, b):
        assert _get(server, fresh).status_code == 200


def test_tokens_are_never_logged(
    api_servers: ServerFactory, store: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = api_servers.start(store, auth="on")
    writer = issue_token(store, Role.WRITER)
    _ddl(server, writer)
    _get(server, writer[:-3] + "xyz")
    _get(server, writer, "/v1/schemas/PUBLIC/tables/NOPE")
    signature = writer.rsplit(".", 1)[1]
    assert caplog.records
    assert signature not in caplog.text


def test_cli_issues_tokens_from_the_store_and_uses_them(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    catalog = str(Path(sys.executable).parent / "catalog")
    env = {k: v for k, v in os.environ.items() if k != "CATALOG_TOKEN"}
    env["CATALOG_TOKEN_SECRET_FILE"] = TOKEN_SECRET_FILE
    made = subprocess.run(
        [
            catalog,
            "token",
            "create",
            "--role",
            "writer",
            "--ttl",
            "15m",
            "--store",
            store,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    issued = json.loads(made.stdout)
    token = issued["token"]
    expires = dt.datetime.fromisoformat(issued["expires"])
    assert expires.timestamp() == issued["expires_at"] and expires.tzinfo == dt.UTC
    refused = subprocess.run(
        [catalog, "--url", server.url, "get", "tables", "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 1  # under -o json the failure is JSON on stdout
    assert json.loads(refused.stdout)["code"] == "UNAUTHENTICATED"
    done = subprocess.run(
        [catalog, "--url", server.url, "exec", "--sql", "CREATE TABLE T (ID BIGINT PRIMARY KEY)"],
        capture_output=True,
        text=True,
        env={**env, "CATALOG_TOKEN": token},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert token not in done.stdout + done.stderr


def test_request_ids_belong_to_their_principal(api_servers: ServerFactory, store: str) -> None:
    """B reusing A's request id makes B's own request; A's retry is still A's outcome."""
    server = api_servers.start(store, auth="on")
    alice, bob = (issue_token(store, Role.WRITER, subject=s) for s in ("alice", "bob"))

    def create(token: str, table: str) -> httpx.Response:
        command = {**TABLE, "name": table}
        return httpx.post(
            server.url + "/v1/ddl",
            json={"commands": [command], "request_id": "nightly-1"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )

    first = create(bob, "CLAIMED_BY_BOB")  # Bob takes the id before Alice uses it
    assert first.status_code == 200
    mine = create(alice, "ALICE_TABLE")
    assert mine.status_code == 200 and mine.json()["version"] > first.json()["version"]
    retry = create(alice, "ALICE_TABLE")
    assert retry.json()["version"] == mine.json()["version"]  # answered, not run again
    names = {t["name"] for t in _get(server, alice).json()["tables"]}
    assert names == {"CLAIMED_BY_BOB", "ALICE_TABLE"}

    def commit(token: str, path: str) -> httpx.Response:
        table = _get(server, token).json()["tables"][0]
        body = {
            "table_id": table["id"],
            "schema_version": 1,
            "mode": "append",
            "files": [{"path": path, "partition": 0, "rows": 1, "size": 10}],
            "request_id": "load-1",
        }
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.post(server.url + "/v1/data/commits", json=body, headers=headers, timeout=10)

    bobs, alices = commit(bob, "bob.parquet"), commit(alice, "alice.parquet")
    assert (bobs.status_code, alices.status_code) == (200, 200)
    assert alices.json()["request_id"] == "load-1"  # the caller's own id comes back
    assert alices.json()["seq"] == bobs.json()["seq"] + 1  # a commit of its own, not Bob's
    assert commit(alice, "alice.parquet").json()["seq"] == alices.json()["seq"]  # a retry


def _signed_with(key_id: str, key: bytes, role: str = "admin") -> str:
    """Sign a token the way a holder of ``key`` would, without the token secret."""
    now = int(time.time())
    claims = {"sub": "mallory", "role": role, "iat": now, "exp": now + 600}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signed = f"ct1.{key_id}.{payload}"
    return f"{signed}.{_b64(hmac.new(key, signed.encode(), hashlib.sha256).digest())}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_reading_the_store_is_not_enough_to_mint_tokens(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    assert _get(server, issue_token(store, Role.READER)).status_code == 200

    async def stored_keys() -> list[list[object]]:
        log = open_log(store)
        try:
            stored = await load_signing_keys(log)
            assert stored is not None
            rows: list[list[object]] = msgpack.unpackb(stored)["keys"]
            return rows
        finally:
            await log.close()

    (key_id, key, _, _), *_ = asyncio.run(stored_keys())
    assert isinstance(key_id, str) and isinstance(key, bytes)
    minted = _signed_with(key_id, key)  # everything a store reader has
    answer = _get(server, minted)
    assert (answer.status_code, answer.json()["code"]) == (401, "UNAUTHENTICATED")

    async def load_with(secret: bytes) -> None:
        log = open_log(store)
        try:
            await TokenAuthority(log, secret).load()
        finally:
            await log.close()

    with pytest.raises(TokenSecretError, match="not the one the store's signing keys"):
        asyncio.run(load_with(b"x" * 48))  # a guessed secret is refused, not used


def test_keys_stored_without_a_secret_are_replaced(api_servers: ServerFactory, store: str) -> None:
    async def store_bare_keys() -> None:
        log = open_log(store)
        try:
            bare = msgpack.packb([["oldkey", b"k" * 32, int(time.time()), None]])
            assert await swap_signing_keys(log, None, bare)
        finally:
            await log.close()

    asyncio.run(store_bare_keys())
    server = api_servers.start(store, auth="on")

    async def stored_ids() -> list[str]:
        log = open_log(store)
        try:
            stored = await load_signing_keys(log)
            assert stored is not None
            return [row[0] for row in msgpack.unpackb(stored)["keys"]]
        finally:
            await log.close()

    assert "oldkey" not in asyncio.run(stored_ids())
    old = _get(server, _signed_with("oldkey", b"k" * 32, "reader"))
    assert (old.status_code, old.json()["code"]) == (401, "UNAUTHENTICATED")
    assert _get(server, issue_token(store, Role.READER)).status_code == 200


def test_serving_with_auth_needs_the_token_secret(tmp_path: Path) -> None:
    catalog = str(Path(sys.executable).parent / "catalog")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    short = tmp_path / "short.secret"
    short.write_text("too short\n")
    for extra in ([], ["--token-secret-file", str(short)]):
        done = subprocess.run(
            [catalog, "serve", "--store", f"sqlite:///{tmp_path}/c.db", "--auth", "on", *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("error: ") and "token secret" in line
        assert "at least 32" in line
