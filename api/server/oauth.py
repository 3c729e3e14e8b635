"""``POST /v1/oauth/tokens``: OAuth2 client credentials (RFC 6749 4.4) and token exchange.

What every Iceberg engine configured with ``credential=<client id>:<secret>`` calls first
(Spark's and Trino's Iceberg runtime, PyIceberg, DuckDB's ``CLIENT_ID``/``CLIENT_SECRET``):
served at ``/iceberg/v1/oauth/tokens`` (the Iceberg REST path) and at ``/v1/oauth/tokens``.
The request is a form; the client may send its id and secret in the form or as HTTP Basic
(``client_secret_basic``). A token exchange (RFC 8693) of a valid access token gives a fresh
one for the same principal: the Java client refreshes its token that way.

Refusals are OAuth2's own (``{"error", "error_description"}``): ``invalid_client`` (401) for
an unknown client id or a wrong secret, alike, so a caller cannot tell which;
``invalid_request``, ``unsupported_grant_type`` and ``invalid_grant`` (400).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from api.server.access_tokens import MAX_SESSION_S, issue_access_token, verify_access_token
from api.server.audit import record_denial
from api.server.auth import TokenAuthority
from api.server.errors import ApiError
from api.server.execution import node_of
from catalog.descriptors.principals import PrincipalDescriptor, hash_secret, secret_matches

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
DEFAULT_SCOPE = "catalog"
_FORM = "application/x-www-form-urlencoded"
_MAX_FORM_BYTES = 16 * 1024

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "An access token (a JWT) to send as `Authorization: Bearer`."},
    400: {"description": "OAuth2's `invalid_request`, `unsupported_grant_type`, `invalid_grant`."},
    401: {"description": "OAuth2's `invalid_client`: an unknown client id or a wrong secret."},
}


_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_MAX_SCOPE_CHARS = 200
_UNKNOWN_CLIENT = PrincipalDescriptor(
    id=-1, name="", role="reader", client_id="-", secret_hash=hash_secret("")
)
"""Compared with when the client id is unknown, so that both refusals take the same time."""


def _refusal(
    request: Request,
    status: int,
    error: str,
    description: str,
    *,
    client: str | None = None,
    basic: bool = False,
) -> JSONResponse:
    record_denial(request, error, description, None if client is None else f"client {client}")
    headers = dict(_NO_STORE)
    if basic and status == 401:
        headers["WWW-Authenticate"] = 'Basic realm="catalog"'
    body = {"error": error, "error_description": description}
    return JSONResponse(body, status_code=status, headers=headers)


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    """Return the client id and secret of an ``Authorization: Basic`` header, if any.

    Each is form-urlencoded before it is joined (RFC 6749, 2.3.1).
    """
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    return (unquote_plus(client_id), unquote_plus(secret)) if colon else None


def _form(body: bytes) -> dict[str, str] | str:
    """Return the form's fields, or why it is refused (RFC 6749: no field twice)."""
    try:
        pairs = parse_qsl(body.decode(), keep_blank_values=True)
    except UnicodeDecodeError:
        return "the form is not valid UTF-8"
    form = dict(pairs)
    if len(form) != len(pairs):
        return "a field is given more than once"
    if len(form.get("scope", "")) > _MAX_SCOPE_CHARS:
        return f"the scope is longer than {_MAX_SCOPE_CHARS} characters"
    return form


async def token_endpoint(request: Request) -> Response:
    """Answer a client-credentials or token-exchange request with an access token."""
    authority: TokenAuthority | None = getattr(request.app.state, "authority", None)
    if authority is None:
        return _refusal(
            request,
            400,
            "invalid_request",
            "this server runs without auth: it issues no tokens, send requests without one",
        )
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    body = await request.body()
    if media != _FORM or len(body) > _MAX_FORM_BYTES:
        return _refusal(request, 400, "invalid_request", f"send the request as {_FORM}")
    form = _form(body)
    if isinstance(form, str):
        return _refusal(request, 400, "invalid_request", form)
    grant = form.get("grant_type", "")
    scope = form.get("scope") or DEFAULT_SCOPE
    catalog = node_of(request).service.latest_catalog()
    signed_in_at = None
    if grant == CLIENT_CREDENTIALS:
        basic = _basic_credentials(request)
        client_id, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        found = catalog.find_principal_by_client(client_id) if client_id else None
        matches = secret_matches(found or _UNKNOWN_CLIENT, secret)
        if found is None or not matches:
            return _refusal(
                request,
                401,
                "invalid_client",
                "unknown client id or wrong client secret",
                client=client_id[:64],
                basic=basic is not None,
            )
        principal = found
    elif grant == TOKEN_EXCHANGE:
        if form.get("subject_token_type") != ACCESS_TOKEN_TYPE:
            return _refusal(
                request, 400, "invalid_request", f"subject_token_type must be {ACCESS_TOKEN_TYPE}"
            )
        try:
            claims = await verify_access_token(authority, catalog, form.get("subject_token", ""))
        except ApiError as refused:
            return _refusal(request, 400, "invalid_grant", f"the subject token: {refused.message}")
        if authority.now() - claims.signed_in_at > MAX_SESSION_S:
            return _refusal(
                request,
                400,
                "invalid_grant",
                "the sign-in this token comes from is older than a day: sign in with the secret",
            )
        principal, signed_in_at = catalog.principal(claims.subject), claims.signed_in_at
    else:
        return _refusal(
            request,
            400,
            "unsupported_grant_type",
            f"grant_type must be {CLIENT_CREDENTIALS} or {TOKEN_EXCHANGE}",
        )
    token, lifetime = await issue_access_token(authority, principal, scope, signed_in_at)
    answer = {
        "access_token": token,
        "token_type": "bearer",
        "expires_in": lifetime,
        "issued_token_type": ACCESS_TOKEN_TYPE,
        "scope": scope,
    }
    return JSONResponse(answer, headers=_NO_STORE)


def add_token_route(router: APIRouter) -> None:
    """Add ``POST /oauth/tokens`` to ``router`` (the server's ``/v1``, Iceberg's ``/v1``)."""
    router.add_api_route(
        "/oauth/tokens",
        token_endpoint,
        methods=["POST"],
        responses=_RESPONSES,
        summary="An access token for a principal's client id and secret (OAuth2)",
        openapi_extra={"requestBody": {"content": {_FORM: {}}}},
    )
