"""The endpoints ``GET /v1/config`` advertises are exactly the routes the Iceberg app serves."""

from __future__ import annotations

from fastapi.routing import APIRoute

from api.iceberg.paths import ENDPOINTS
from api.iceberg.router import router

UNLISTED = {"GET /v1/config"}
"""Served but never listed: the protocol's endpoint list leaves the config call out."""


def test_the_advertised_endpoints_are_the_routes_served() -> None:
    served = {
        f"{method} {route.path.replace('/v1/', '/v1/{prefix}/', 1)}"
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods or ()
    }
    assert served - {e.replace("/v1/", "/v1/{prefix}/", 1) for e in UNLISTED} == set(ENDPOINTS)
    assert len(ENDPOINTS) == len(set(ENDPOINTS))
