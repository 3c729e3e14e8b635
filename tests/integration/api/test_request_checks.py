"""Requests the server cannot mean to answer are refused in words, and nothing is written."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.api.servers import RunningServer


@pytest.fixture
def http(api_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_server.url, timeout=20) as client:
        yield client


def test_an_unknown_query_parameter_is_named_with_the_accepted_ones(http: httpx.Client) -> None:
    refused = http.get("/v1/catalog", params={"verison": "1", "timeout_s": "5"})
    assert refused.status_code == 400
    problem = refused.json()
    assert problem["code"] == "UNKNOWN_PARAMETER"
    assert problem["detail"] == (
        "GET /v1/catalog does not take 'timeout_s', 'verison'; it takes at, version"
    )
    assert http.get("/v1/catalog", params={"version": "1"}).status_code == 200
    no_params = http.get("/healthz", params={"verbose": "1"}).json()
    assert no_params["detail"].endswith("it takes no query parameters")


def test_an_unknown_parameter_on_a_ddl_writes_nothing(http: httpx.Client) -> None:
    before = http.get("/v1/versions", params={"limit": "1"}).json()["latest"]
    refused = http.post(
        "/v1/sql",
        params={"dry_run": "true"},
        json={"sql": "CREATE TABLE T (ID INT PRIMARY KEY)"},
    )
    assert refused.status_code == 400 and refused.json()["code"] == "UNKNOWN_PARAMETER"
    assert http.get("/v1/versions", params={"limit": "1"}).json()["latest"] == before


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_is_415(http: httpx.Client, content_type: str) -> None:
    refused = http.post(
        "/v1/sql",
        content=b'{"sql": "CREATE TABLE T (ID INT PRIMARY KEY)"}',
        headers={"content-type": content_type},
    )
    assert refused.status_code == 415
    assert refused.json() | {"detail": ""} == {
        "type": "urn:event-catalog:error:UNSUPPORTED_MEDIA_TYPE",
        "title": "Unsupported Media Type",
        "status": 415,
        "code": "UNSUPPORTED_MEDIA_TYPE",
        "detail": "",
    }
    assert content_type in refused.json()["detail"]
    assert http.get("/v1/catalog").json()["tables"] == []


def test_json_with_parameters_or_a_json_suffix_is_json(http: httpx.Client) -> None:
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        answer = http.post(
            "/v1/sql",
            content=b'{"sql": "CREATE TABLE IF NOT EXISTS T (ID INT PRIMARY KEY)"}',
            headers={"content-type": content_type},
        )
        assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    "path",
    [
        "/v1/schemas/PUBLIC/tables/T/schema-versions?limit=0&version=99999",
        "/v1/schemas/" + "A" * 301 + "?version=99999",
        "/v1/indexes?schema=&version=99999",
    ],
)
def test_a_malformed_parameter_is_refused_before_the_catalog_is_read(
    http: httpx.Client, path: str
) -> None:
    """The version asked for does not exist; the malformed parameter is what the answer names."""
    refused = http.get(path)
    assert (refused.status_code, refused.json()["code"]) == (422, "VALIDATION_ERROR")
