"""The endpoints ``GET /v1/config`` advertises are exactly the routes the Iceberg app serves."""

from __future__ import annotations

from starlette.datastructures import State

from api.iceberg.app import create_iceberg_app
from api.iceberg.paths import ENDPOINTS

UNLISTED = {"GET /v1/config", "POST /v1/oauth/tokens", "POST /v1/aws/s3/sign"}
"""Served but never listed: the protocol's endpoint list leaves the config call and the sign-in
out (a client signs in before it reads the config), and the S3 signer is a protocol of its own
(a table load names it)."""


def test_the_advertised_endpoints_are_the_routes_served() -> None:
    paths = create_iceberg_app(State()).openapi()["paths"]
    served = {
        f"{method.upper()} {path.replace('/v1/', '/v1/{prefix}/', 1)}"
        for path, operations in paths.items()
        for method in operations
    }
    assert served - {e.replace("/v1/", "/v1/{prefix}/", 1) for e in UNLISTED} == set(ENDPOINTS)
    assert len(ENDPOINTS) == len(set(ENDPOINTS))
