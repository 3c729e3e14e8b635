"""Versions say who asked for them, from which client, and why: HTTP, the client, the CLI."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from api.client import CatalogClient
from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token
from tests.integration.api.test_cli import run, run_json


def _origins(url: str, version: int, token: str | None = None) -> list[dict[str, object]]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    body = httpx.get(f"{url}/v1/versions", params={"from_version": version}, headers=headers)
    origins: list[dict[str, object]] = body.json()["versions"][0]["origins"]
    return origins


def test_each_version_names_its_principal_client_message_and_request(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = api_server.url
    assert _origins(url, 1) == []  # the catalog's own first version
    plain = httpx.post(
        f"{url}/v1/sql",
        json={"sql": "CREATE TABLE A (ID INT PRIMARY KEY)", "message": "first", "request_id": "r1"},
        headers={"user-agent": "curl/8.5.0"},
    ).json()
    assert _origins(url, plain["version"]) == [
        {
            "principal": "local",
            "client": "curl",
            "message": "first",
            "request_id": "r1",
            "entries": 6,  # with the Default zone the first table creates
        }
    ]
    with CatalogClient(url) as client:
        second = client.sql("CREATE TABLE B (ID INT PRIMARY KEY)", message="second")
        (origin,) = client.versions(from_version=second.version, limit=1).versions[0].origins
        assert (origin.principal, origin.client, origin.message) == (
            "local",
            "python-client",
            "second",
        )
        assert origin.request_id  # the client's own uuid
        events = client.events(from_version=plain["version"])
        try:
            first_event = next(iter(events))
        finally:
            events.close()
        assert first_event.origin is not None and first_event.origin.message == "first"

    code, out, err = run(
        capsys,
        "exec",
        "--url",
        url,
        "-m",
        "from the shell",
        "--sql",
        "CREATE TABLE C (ID INT PRIMARY KEY)",
    )
    assert code == 0, err
    third = run_json(capsys, "versions", "--url", url)["versions"][-1]
    assert [(o["client"], o["message"]) for o in third["origins"]] == [("cli", "from the shell")]
    code, out, _ = run(capsys, "versions", "--url", url, "-o", "table")
    assert code == 0 and "local (cli)" in out and "from the shell" in out and "local (curl)" in out


def test_the_principal_is_the_tokens_subject(api_servers: ServerFactory, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/catalog.db"
    server = api_servers.start(store, auth="on")
    token = issue_token(store, Role.WRITER, subject="alice@sales")
    with CatalogClient(server.url, token=token) as client:
        version = client.sql("CREATE TABLE T (ID INT PRIMARY KEY)", message="for sales").version
    (origin,) = _origins(server.url, version, token)
    assert (origin["principal"], origin["message"]) == ("alice@sales", "for sales")


def test_a_message_too_long_is_refused_and_nothing_is_written(api_server: RunningServer) -> None:
    url = api_server.url
    before = httpx.get(f"{url}/v1/versions").json()["latest"]
    answer = httpx.post(
        f"{url}/v1/sql", json={"sql": "CREATE TABLE T (ID INT PRIMARY KEY)", "message": "x" * 1001}
    )
    assert answer.status_code == 422 and answer.json()["code"] == "VALIDATION_ERROR"
    assert "message" in answer.json()["detail"]
    assert httpx.get(f"{url}/v1/versions").json()["latest"] == before
