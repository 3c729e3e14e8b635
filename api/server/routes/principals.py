"""``/v1/principals``: admins create service principals, change their role, rotate, drop.

A principal signs in with its client id and secret at ``/v1/oauth/tokens`` (and the Iceberg
REST path ``/iceberg/v1/oauth/tokens``), the standard every Iceberg engine configures. The
server makes the client id and the secret; the log keeps only a salted hash of the secret,
which is shown once, in the answer that made it.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from api.server.auth import require
from api.server.errors import problem_responses
from api.server.execution import execute_batch, node_of
from api.server.oauth import add_token_route
from api.server.responses import json_response
from api.wire.principals import (
    PrincipalBody,
    PrincipalChange,
    PrincipalCredentials,
    PrincipalList,
    PrincipalRequest,
)
from api.wire.roles import Role
from catalog.commands.principals import (
    AlterPrincipalCommand,
    CreatePrincipalCommand,
    DropPrincipalCommand,
)
from catalog.descriptors.principals import PrincipalDescriptor, PrincipalRole, hash_secret


def _client_id() -> str:
    """Return a new client id: 22 random URL-safe characters, never starting with ``-``."""
    made = secrets.token_urlsafe(16)
    return made if made[0] != "-" else _client_id()  # a command line would take it as an option


def _secret() -> str:
    """Return a new secret: 43 random URL-safe characters, never starting with ``-``."""
    made = secrets.token_urlsafe(32)
    return made if made[0] != "-" else _secret()


router = APIRouter(
    prefix="/v1/principals",
    tags=["security"],
    responses=problem_responses(400, 401, 403, 404, 409, 415, 422, 503),
    dependencies=[Depends(require(Role.ADMIN))],
)

oauth_router = APIRouter(prefix="/v1", tags=["security"])
add_token_route(oauth_router)


def _body(principal: PrincipalDescriptor) -> PrincipalBody:
    return PrincipalBody(
        name=principal.name,
        role=Role(principal.role),
        client_id=principal.client_id,
        credential_version=principal.credential_version,
    )


def _credentials(
    principal: PrincipalDescriptor, secret: str, version: int, status_code: int = 200
) -> Response:
    shown = PrincipalCredentials(
        **_body(principal).model_dump(), client_secret=secret, version=version
    )
    response = json_response(shown, status_code)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("", response_model=PrincipalCredentials, status_code=201)
async def create_principal(request: Request, payload: PrincipalRequest) -> Response:
    """Create a principal; its client id and secret are shown only in this answer."""
    secret = _secret()
    command = CreatePrincipalCommand(
        name=payload.name,
        role=PrincipalRole(payload.role),
        client_id=_client_id(),
        secret_hash=hash_secret(secret),
    )
    result = await execute_batch(request, [command], message=f"create principal {payload.name}")
    made = node_of(request).service.catalog(result.version).principal(payload.name)
    return _credentials(made, secret, result.version, 201)


@router.get("", response_model=PrincipalList)
async def list_principals(request: Request) -> Response:
    """Every principal (never their secrets)."""
    catalog = node_of(request).service.latest_catalog()
    listed = PrincipalList(
        version=catalog.version, principals=[_body(p) for p in catalog.principals()]
    )
    return json_response(listed)


@router.get("/{name}", response_model=PrincipalBody)
async def get_principal(request: Request, name: str) -> Response:
    """One principal (never its secret)."""
    return json_response(_body(node_of(request).service.latest_catalog().principal(name)))


@router.patch("/{name}", response_model=PrincipalBody)
async def change_principal(request: Request, name: str, payload: PrincipalChange) -> Response:
    """Give a principal another role: its tokens act with it from this version on."""
    command = AlterPrincipalCommand(name=name, role=PrincipalRole(payload.role))
    result = await execute_batch(request, [command], message=f"change principal {name}")
    return json_response(_body(node_of(request).service.catalog(result.version).principal(name)))


@router.post("/{name}/secret", response_model=PrincipalCredentials)
async def rotate_secret(request: Request, name: str) -> Response:
    """Give a principal a new secret, shown only here; tokens of the old one stop working."""
    secret = _secret()
    command = AlterPrincipalCommand(name=name, secret_hash=hash_secret(secret))
    result = await execute_batch(request, [command], message=f"rotate the secret of {name}")
    made = node_of(request).service.catalog(result.version).principal(name)
    return _credentials(made, secret, result.version)


@router.delete("/{name}", status_code=204)
async def drop_principal(request: Request, name: str) -> Response:
    """Drop a principal: none of its tokens is accepted from this version on."""
    await execute_batch(
        request, [DropPrincipalCommand(name=name)], message=f"drop principal {name}"
    )
    return Response(status_code=204)
