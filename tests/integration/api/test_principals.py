"""Service principals and OAuth2 client credentials against real servers (and two nodes)."""

from __future__ import annotations

import base64
import json
import logging
import time
from pathlib import Path

import httpx
import jwt
import pytest

from api.client import CatalogApiError, CatalogClient
from api.wire.roles import Role
from catalog.events import CatalogEvent
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token
from tests.integration.api.test_cli import run, run_json

TABLE = {
    "op": "create_table",
    "name": "T",
    "columns": [{"name": "ID", "type": "INT64", "nullable": False}],
    "primary_key": ["ID"],
}
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/catalog.db"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _create(server: RunningServer, admin: str, name: str, role: str) -> dict[str, object]:
    made = httpx.post(
        f"{server.url}/v1/principals",
        json={"name": name, "role": role},
        headers=_bearer(admin),
        timeout=10,
    )
    assert made.status_code == 201, made.text
    assert made.headers["cache-control"] == "no-store"
    body: dict[str, object] = made.json()
    return body


def _sign_in(
    server: RunningServer, client_id: str, secret: str, path: str = "/iceberg/v1/oauth/tokens"
) -> httpx.Response:
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    return httpx.post(server.url + path, data=form | {"scope": "catalog"}, timeout=10)


def _token(server: RunningServer, principal: dict[str, object]) -> str:
    answer = _sign_in(server, str(principal["client_id"]), str(principal["client_secret"]))
    assert answer.status_code == 200, answer.text
    token: str = answer.json()["access_token"]
    return token


def _catalog(server: RunningServer, token: str) -> httpx.Response:
    return httpx.get(f"{server.url}/v1/catalog", headers=_bearer(token), timeout=10)


def _ddl(server: RunningServer, token: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/ddl", json={"commands": [TABLE]}, headers=_bearer(token), timeout=10
    )


def test_a_principal_signs_in_with_client_credentials(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    etl = _create(server, admin, "etl", "writer")
    assert set(etl) == {
        "name",
        "role",
        "client_id",
        "client_secret",
        "credential_version",
        "version",
    }
    answer = _sign_in(server, str(etl["client_id"]), str(etl["client_secret"]))
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "bearer"
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    assert 0 < body["expires_in"] <= 3600
    header = jwt.get_unverified_header(body["access_token"])
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert header["alg"] == "HS256" and header["kid"]
    assert claims["sub"] == "etl" and claims["scope"] == "catalog"
    assert claims["exp"] - claims["iat"] == body["expires_in"]
    token = body["access_token"]
    assert _catalog(server, token).status_code == 200
    assert _ddl(server, token).status_code == 200
    # The server's own path and HTTP Basic (client_secret_basic) sign in alike.
    basic = base64.b64encode(f"{etl['client_id']}:{etl['client_secret']}".encode()).decode()
    same = httpx.post(
        f"{server.url}/v1/oauth/tokens",
        data={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}"},
        timeout=10,
    )
    assert same.status_code == 200, same.text
    # Nothing lists or shows a secret or its hash.
    listed = httpx.get(f"{server.url}/v1/principals", headers=_bearer(admin), timeout=10).json()
    assert [p["name"] for p in listed["principals"]] == ["etl"]
    assert "client_secret" not in listed["principals"][0]
    assert (
        str(etl["client_secret"])
        not in httpx.get(
            f"{server.url}/v1/diff?from=1&to={etl['version']}", headers=_bearer(admin), timeout=10
        ).text
    )


def test_roles_come_from_the_catalog_and_apply_at_once(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    analyst = _create(server, admin, "analyst", "reader")
    token = _token(server, analyst)
    assert _catalog(server, token).status_code == 200
    refused = _ddl(server, token)
    assert refused.status_code == 403 and "reader" in refused.json()["detail"]
    promoted = httpx.patch(
        f"{server.url}/v1/principals/analyst",
        json={"role": "writer"},
        headers=_bearer(admin),
        timeout=10,
    )
    assert promoted.status_code == 200 and promoted.json()["role"] == "writer"
    assert _ddl(server, token).status_code == 200  # the same token, the new role
    # A principal may not manage principals unless it is an admin.
    assert httpx.get(f"{server.url}/v1/principals", headers=_bearer(token)).status_code == 403


def test_bad_credentials_are_refused_in_oauth2_words(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    etl = _create(server, admin, "etl", "writer")
    wrong = _sign_in(server, str(etl["client_id"]), "not the secret")
    unknown = _sign_in(server, "no-such-client-id-000", str(etl["client_secret"]))
    for answer in (wrong, unknown):
        assert answer.status_code == 401
        assert answer.json() == {
            "error": "invalid_client",
            "error_description": "unknown client id or wrong client secret",
        }
    grant = httpx.post(
        f"{server.url}/iceberg/v1/oauth/tokens", data={"grant_type": "password"}, timeout=10
    )
    assert grant.status_code == 400 and grant.json()["error"] == "unsupported_grant_type"
    as_json = httpx.post(
        f"{server.url}/iceberg/v1/oauth/tokens",
        json={"grant_type": "client_credentials"},
        timeout=10,
    )
    assert as_json.status_code == 400 and as_json.json()["error"] == "invalid_request"
    duplicate = httpx.post(
        f"{server.url}/v1/principals",
        json={"name": "etl", "role": "reader"},
        headers=_bearer(admin),
        timeout=10,
    )
    assert duplicate.status_code == 409 and duplicate.json()["code"] == "PRINCIPAL_EXISTS"
    missing = httpx.delete(f"{server.url}/v1/principals/nobody", headers=_bearer(admin))
    assert missing.status_code == 404 and missing.json()["code"] == "PRINCIPAL_NOT_FOUND"


def test_forged_and_foreign_tokens_are_refused(api_servers: ServerFactory, store: str) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    token = _token(server, _create(server, admin, "etl", "admin"))
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    forged = {
        "none": jwt.encode(claims, "", algorithm="none", headers={"kid": header["kid"]}),
        "other key": jwt.encode(claims, b"k" * 32, algorithm="HS256", headers=header),
        "unknown kid": jwt.encode(claims, b"k" * 32, algorithm="HS256", headers={"kid": "x"}),
        "tampered": token.rsplit(".", 1)[0] + "." + token.rsplit(".", 1)[1][::-1],
        "garbage": "a.b.c",
    }
    for what, bad in forged.items():
        answer = _catalog(server, bad)
        assert answer.status_code == 401, what
        assert answer.json()["code"] == "UNAUTHENTICATED", what


def test_rotation_and_removal_stop_tokens_on_every_node(
    api_servers: ServerFactory, store: str
) -> None:
    first = api_servers.start(store, auth="on")
    second = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    etl = _create(first, admin, "etl", "writer")
    old = _token(first, etl)
    assert _catalog(second, old).status_code == 200  # signed on one node, verified on another
    rotated = httpx.post(f"{first.url}/v1/principals/etl/secret", headers=_bearer(admin))
    assert rotated.status_code == 200 and rotated.json()["credential_version"] == 2
    assert _sign_in(first, str(etl["client_id"]), str(etl["client_secret"])).status_code == 401
    new = _token(first, rotated.json())
    deadline = time.monotonic() + 5
    while _catalog(second, old).status_code != 401 and time.monotonic() < deadline:
        time.sleep(0.05)
    refused = _catalog(second, old)
    assert refused.status_code == 401 and "new secret" in refused.json()["detail"]
    assert _catalog(second, new).status_code == 200
    dropped = httpx.delete(f"{first.url}/v1/principals/etl", headers=_bearer(admin))
    assert dropped.status_code == 204
    removed_at = time.monotonic()
    while _catalog(second, new).status_code != 401 and time.monotonic() < removed_at + 5:
        time.sleep(0.05)
    assert time.monotonic() - removed_at < 5
    gone = _catalog(second, new)
    assert gone.status_code == 401 and "no longer exists" in gone.json()["detail"]


def test_a_token_exchange_gives_a_fresh_token_for_the_same_principal(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    token = _token(server, _create(server, admin, "etl", "reader"))
    exchange = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": token,
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
    }
    answer = httpx.post(f"{server.url}/iceberg/v1/oauth/tokens", data=exchange, timeout=10)
    assert answer.status_code == 200, answer.text
    fresh = answer.json()["access_token"]
    assert jwt.decode(fresh, options={"verify_signature": False})["sub"] == "etl"
    assert _catalog(server, fresh).status_code == 200
    bad = httpx.post(
        f"{server.url}/iceberg/v1/oauth/tokens",
        data=exchange | {"subject_token": "a.b.c"},
        timeout=10,
    )
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"


def test_a_server_without_auth_issues_no_tokens(api_servers: ServerFactory, store: str) -> None:
    server = api_servers.start(store)
    answer = _sign_in(server, "client-id-00000000001", "secret")
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_request"
    assert "without auth" in answer.json()["error_description"]


def test_the_client_and_the_cli_manage_principals(
    api_servers: ServerFactory, store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    with CatalogClient(server.url, token=admin) as client:
        made = client.create_principal("etl", Role.WRITER)
        assert (made.name, made.role, made.credential_version) == ("etl", Role.WRITER, 1)
        assert [p.name for p in client.principals()] == ["etl"]
        assert client.change_principal("etl", "reader").role == Role.READER
        rotated = client.rotate_principal_secret("etl")
        assert rotated.client_id == made.client_id and rotated.credential_version == 2
        assert rotated.client_secret != made.client_secret
        client.drop_principal("etl")
        assert client.principals() == []
        with pytest.raises(CatalogApiError) as missing:
            client.drop_principal("etl")
        assert missing.value.code == "PRINCIPAL_NOT_FOUND"
    base = ("--url", server.url, "--token", admin, "-o", "json")
    created = run_json(capsys, "principal", "create", "nightly", "--role", "writer", *base)
    assert created["credential"] == f"{created['client_id']}:{created['client_secret']}"
    answer = _sign_in(server, created["client_id"], created["client_secret"])
    assert answer.status_code == 200
    listed = run_json(capsys, "principal", "list", *base)
    assert [p["name"] for p in listed["principals"]] == ["nightly"]
    assert "client_secret" not in listed["principals"][0]
    assert run_json(capsys, "principal", "role", "nightly", "admin", *base)["role"] == "admin"
    again = run_json(capsys, "principal", "rotate", "nightly", *base)
    assert again["credential_version"] == 2
    assert run_json(capsys, "principal", "drop", "nightly", *base) == {"dropped": "nightly"}
    code, out, err = run(capsys, "principal", "drop", "nightly", *base)
    assert code != 0 and "principal nightly not found" in out + err


def test_the_client_and_the_cli_sign_in_with_a_credential(
    api_servers: ServerFactory, store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    made = _create(server, admin, "etl", "writer")
    credential = f"{made['client_id']}:{made['client_secret']}"
    with CatalogClient(server.url, credential=credential) as client:
        result = client.sql("CREATE TABLE T (ID INT PRIMARY KEY)")
        # Every token issued so far stops: the client signs in again by itself.
        revoked = httpx.post(
            f"{server.url}/v1/tokens/rotate", params={"revoke": "true"}, headers=_bearer(admin)
        )
        assert revoked.status_code == 200
        assert client.table("PUBLIC", "T").id > 0
        (origin,) = client.versions(from_version=result.version, limit=1).versions[0].origins
        assert origin.principal == "etl"
    with CatalogClient(server.url, credential=credential) as client, client.events() as events:
        client.sql("CREATE TABLE U (ID INT PRIMARY KEY)")  # the stream flows as it comes
        assert next(events).event is CatalogEvent.TABLE_CREATE
    with CatalogClient(server.url, credential=f"{made['client_id']}:wrong") as client:
        with pytest.raises(CatalogApiError, match="wrong client secret") as refused:
            client.catalog()
        assert refused.value.code == "UNAUTHENTICATED"
    with pytest.raises(ValueError, match="<client id>:<secret>"):
        CatalogClient(server.url, credential="no-colon")
    listed = run_json(capsys, "get", "tables", "--url", server.url, "--credential", credential)
    assert "T" in str(listed)


def test_refusals_are_audited_without_secrets(
    api_servers: ServerFactory, store: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    reader = _create(server, admin, "analyst", "reader")
    token = _token(server, reader)
    with caplog.at_level(logging.WARNING, logger="catalog.audit"):
        assert _ddl(server, token).status_code == 403
        assert _sign_in(server, str(reader["client_id"]), "guessed").status_code == 401
        assert _catalog(server, "a.b.c").status_code == 401
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "catalog.audit"]
    assert [(x["code"], x["subject"], x["path"]) for x in lines] == [
        ("FORBIDDEN", "analyst", "/v1/ddl"),
        ("invalid_client", f"client {reader['client_id']}", "/iceberg/v1/oauth/tokens"),
        ("UNAUTHENTICATED", None, "/v1/catalog"),
    ]
    assert all(x["decision"] == "denied" and x["version"] >= 1 for x in lines)
    text = caplog.text
    assert token not in text and str(reader["client_secret"]) not in text and "guessed" not in text
    metrics = httpx.get(f"{server.url}/metrics", headers=_bearer(admin), timeout=10).text
    assert 'catalog_auth_denials_total{code="FORBIDDEN"} 1.0' in metrics
    assert 'catalog_auth_denials_total{code="invalid_client"} 1.0' in metrics


def test_a_principal_is_not_a_catalog_token_of_its_name(
    api_servers: ServerFactory, store: str
) -> None:
    server = api_servers.start(store, auth="on")
    admin = issue_token(store, Role.ADMIN)
    named_alike = _create(server, admin, "catalog", "reader")  # "catalog": a ct1 default
    writer = issue_token(store, Role.WRITER, subject="catalog")
    with CatalogClient(server.url, token=writer) as client:
        client.sql("CREATE TABLE T (ID INT PRIMARY KEY)")
        lease = client.take_lease(client.time().now, 600, "nightly")
    with CatalogClient(server.url, token=_token(server, named_alike)) as client:
        with pytest.raises(CatalogApiError) as refused:
            client.release_lease(lease.id)
        assert refused.value.status == 403
