"""OAuth2 access tokens: what a principal's client id and secret are exchanged for.

Engines configured with the Iceberg REST standard's ``credential=<client id>:<secret>`` post
it to ``/v1/oauth/tokens`` (OAuth2 client credentials) and send the answer as a bearer token.
The answer is a standard JWT (RFC 7519), HS256-signed with the cluster's current signing key
(``kid`` names it), so every node verifies it::

    {"iss": "event-catalog", "sub": "<principal>", "pid": <principal id>,
     "cv": <credential version>, "scope": "catalog", "iat": ..., "exp": ...}

A token says who it is for, not what it may do: each request takes the principal's role from
the node's latest catalog, so a changed role applies at once, and a token stops working as
soon as its principal is dropped or given a new secret (``cv`` no longer matches), on every
node as it applies that version.
"""

from __future__ import annotations

from typing import Any, Protocol

import jwt

from api.server.claims import Claims
from api.server.errors import ApiError
from api.wire.codes import Code
from api.wire.roles import Role
from catalog.catalog import Catalog
from catalog.descriptors.principals import PrincipalDescriptor

ISSUER = "event-catalog"
ALGORITHM = "HS256"
ACCESS_TOKEN_TTL_S = 3600
"""An access token's life: an hour, as most identity providers give; clients fetch another."""
MAX_SESSION_S = 24 * 3600
"""How long token exchanges may extend a sign-in before the secret is needed again."""
CLOCK_LEEWAY_S = 5
"""How far apart nodes' clocks (and a provider's) may be for a token's times: ten times the
default bound of the cluster's clock skew."""


class SigningKeys(Protocol):
    """The keys access tokens are signed with (the server's ``TokenAuthority``)."""

    def now(self) -> int:
        """Return the wall clock in whole seconds."""

    async def signing_key(self) -> tuple[str, bytes]:
        """Return the current key's id and the secret it signs with."""

    async def verifying_key(self, key_id: str) -> bytes:
        """Return the secret key ``key_id`` signs with, if it may still verify."""


async def issue_access_token(
    authority: SigningKeys,
    principal: PrincipalDescriptor,
    scope: str,
    signed_in_at: int | None = None,
) -> tuple[str, int]:
    """Return an access token for ``principal`` and how many seconds it lives.

    ``signed_in_at`` is when the principal gave its secret (now, unless a token exchange
    carries an earlier sign-in forward).
    """
    key_id, secret = await authority.signing_key()
    issued = authority.now()
    claims = {
        "iss": ISSUER,
        "sub": principal.name,
        "pid": principal.id,
        "cv": principal.credential_version,
        "scope": scope,
        "iat": issued,
        "exp": issued + ACCESS_TOKEN_TTL_S,
        "auth_time": issued if signed_in_at is None else signed_in_at,
    }
    token = jwt.encode(claims, secret, algorithm=ALGORITHM, headers={"kid": key_id})
    return token, ACCESS_TOKEN_TTL_S


async def verify_access_token(
    authority: SigningKeys,
    catalog: Catalog,
    token: str,
    header: dict[str, Any] | None = None,
) -> Claims:
    """Return what an access token stands for, with its principal's role in ``catalog``.

    ``header`` is the token's header when the caller has read it already.

    Raises:
        ApiError: UNAUTHENTICATED for a malformed, forged, expired or not-yet-valid token,
            one of another issuer or algorithm, an unknown or retired key, or a principal
            dropped or given a new secret since.
    """
    if header is None:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token is malformed") from None
    key_id = header.get("kid")
    if header.get("alg") != ALGORITHM or not isinstance(key_id, str):
        raise ApiError(
            Code.UNAUTHENTICATED,
            f"the bearer token is not one this catalog signs ({ALGORITHM} with a key id)",
        )
    secret = await authority.verifying_key(key_id)
    claims = decoded(token, secret, [ALGORITHM], issuer=ISSUER)
    shapes = (("pid", int), ("cv", int), ("sub", str), ("iat", int), ("exp", int))
    if any(type(claims.get(name)) is not kind for name, kind in shapes):
        raise ApiError(Code.UNAUTHENTICATED, "the bearer token is malformed")
    principal = catalog.find_principal_by_id(claims["pid"])
    if principal is None or principal.name != claims["sub"]:
        raise ApiError(
            Code.UNAUTHENTICATED, f"principal {claims['sub']} no longer exists: sign in again"
        )
    if principal.credential_version != claims["cv"]:
        raise ApiError(
            Code.UNAUTHENTICATED,
            f"principal {principal.name} was given a new secret since this token was issued: "
            "sign in with the new one",
        )
    signed_in = claims.get("auth_time")
    return Claims(
        principal.name,
        Role(principal.role),
        claims["iat"],
        claims["exp"],
        key=f"{principal.name}#{principal.id}",
        signed_in_at=signed_in if type(signed_in) is int else claims["iat"],
        principal_id=principal.id,
    )


def decoded(
    token: str, key: Any, algorithms: list[str], *, issuer: str, audience: str | None = None
) -> dict[str, Any]:
    """Return the claims of a JWT whose signature, issuer, times (and audience) check out.

    Raises:
        ApiError: UNAUTHENTICATED, in plain words: expired, not valid yet, another issuer,
            a signature that does not match, a required claim missing, or malformed.
    """
    required = ["exp", "iat", "iss", *(["aud"] if audience is not None else [])]
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=algorithms,
            issuer=issuer,
            audience=audience,
            options={"require": required},
            leeway=CLOCK_LEEWAY_S,
        )
    except jwt.ExpiredSignatureError:
        raise _refused("has expired") from None
    except jwt.ImmatureSignatureError:
        raise _refused("is not valid yet") from None
    except jwt.InvalidIssuerError:
        raise _refused("is of another issuer") from None
    except jwt.InvalidSignatureError:
        raise _refused("has a signature that does not match") from None
    except jwt.InvalidAudienceError:
        raise _refused(f"is not for this catalog (audience {audience})") from None
    except jwt.MissingRequiredClaimError as e:
        if e.claim == "aud":
            raise _refused(f"is not for this catalog (audience {audience})") from None
        raise _refused(f"has no {e.claim} claim") from None
    except jwt.PyJWTError:
        raise _refused("is malformed") from None
    return claims


def _refused(why: str) -> ApiError:
    return ApiError(Code.UNAUTHENTICATED, f"the bearer token {why}")
