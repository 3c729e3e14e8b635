"""Tokens: admins issue bearer tokens and rotate the signing keys."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from api.server.auth import TokenAuthority, require
from api.server.errors import ApiError, problem_responses
from api.server.responses import json_response
from api.wire.codes import Code
from api.wire.models import RotatedBody, TokenBody, TokenRequest
from api.wire.roles import Role

router = APIRouter(
    prefix="/v1/tokens",
    tags=["security"],
    responses=problem_responses(400, 401, 403, 409, 415, 422, 503),
    dependencies=[Depends(require(Role.ADMIN))],
)


def _authority(request: Request) -> TokenAuthority:
    authority: TokenAuthority | None = getattr(request.app.state, "authority", None)
    if authority is None:
        raise ApiError(Code.AUTH_DISABLED, "this server runs without auth: it issues no tokens")
    return authority


@router.post("", response_model=TokenBody)
async def create_token(request: Request, payload: TokenRequest) -> Response:
    """Issue a token for a role, valid ``ttl_s`` seconds. The token is shown only here."""
    token, expires = await _authority(request).issue(payload.role, payload.ttl_s, payload.subject)
    return json_response(TokenBody(token=token, role=payload.role, expires_at=expires))


@router.post("/rotate", response_model=RotatedBody)
async def rotate_keys(
    request: Request,
    revoke: Annotated[
        bool, Query(description="Invalidate every token issued so far, at once.")
    ] = False,
) -> Response:
    """Start signing with a new key; tokens of the previous keys stay valid until they expire.

    With ``revoke=true`` the previous keys retire at once: every earlier token stops working.
    """
    return json_response(RotatedBody(key_id=await _authority(request).rotate(revoke=revoke)))
