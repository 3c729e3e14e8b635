"""Access tokens of an outside OpenID Connect provider (Keycloak, Okta, Entra ID, Dex, ...).

With ``CATALOG_OIDC_ISSUER`` set, a bearer JWT whose ``iss`` is that issuer is checked against
the provider's published keys: the issuer's discovery document names its JWKS, fetched when
first needed and kept for ``JWKS_LIFETIME_S``; a token signed by a key not in the kept set
fetches it again (the provider rotated), at most once every ``JWKS_REFETCH_S``. When the
provider cannot be reached, tokens signed by kept keys still verify until the set's lifetime
ends, and then every outside token is refused (fail closed), naming why.

A token must be signed with an asymmetric algorithm the key allows (RS*, PS*, ES*, EdDSA; never
``none`` nor HS*, so a public key cannot be used as a shared secret), name the catalog's
audience (``CATALOG_OIDC_AUDIENCE``), be unexpired and already valid. Its subject
(``CATALOG_OIDC_SUBJECT_CLAIM``, ``sub`` by default; ``preferred_username`` reads better) is the
principal the catalog records; its groups (``CATALOG_OIDC_GROUPS_CLAIM``, ``groups``) give its
role through ``CATALOG_OIDC_ROLES`` (``reader=analysts,writer=etl,admin=platform``): the highest
role any of its groups maps to. A token in no mapped group is refused with 403.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

from api.server.claims import Claims
from api.server.errors import ApiError
from api.wire.codes import Code
from api.wire.roles import Role

JWKS_LIFETIME_S = 300.0
"""How long a fetched key set is used without asking the provider again."""
JWKS_REFETCH_S = 10.0
"""The least time between two fetches for a key id the kept set lacks."""
FETCH_TIMEOUT_S = 5.0
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")


@dataclass(frozen=True, slots=True)
class OidcSettings:
    """Which outside provider the catalog trusts, and how its tokens map to roles."""

    issuer: str
    audience: str
    roles: tuple[tuple[str, Role], ...]
    """(group, role) pairs."""
    subject_claim: str = "sub"
    groups_claim: str = "groups"

    @classmethod
    def parse_roles(cls, text: str) -> tuple[tuple[str, Role], ...]:
        """Return the (group, role) pairs of ``reader=analysts,writer=etl``.

        Raises:
            ValueError: a pair is not ``role=group`` with a known role.
        """
        pairs = []
        for item in filter(None, (part.strip() for part in text.split(","))):
            role, equals, group = item.partition("=")
            if not equals or not group.strip() or role.strip() not in {str(r) for r in Role}:
                raise ValueError(
                    f"CATALOG_OIDC_ROLES: {item!r} is not ROLE=GROUP with ROLE one of "
                    "reader, writer, admin"
                )
            pairs.append((group.strip(), Role(role.strip())))
        return tuple(pairs)


class OutsideTokens:
    """Verifies the outside provider's access tokens with its published keys."""

    def __init__(self, settings: OidcSettings) -> None:
        self.settings = settings
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()
        self.jwks_lifetime_s = JWKS_LIFETIME_S

    def issues(self, issuer: object) -> bool:
        """Return whether ``issuer`` is the provider this catalog trusts."""
        return issuer == self.settings.issuer

    async def verify(self, token: str, header: dict[str, Any]) -> Claims:
        """Return who a valid outside token stands for and the role its groups give.

        Raises:
            ApiError: UNAUTHENTICATED (a bad, expired, foreign or unverifiable token) or
                FORBIDDEN (no group of the token maps to a role).
        """
        algorithm, key_id = header.get("alg"), header.get("kid")
        if algorithm not in ALGORITHMS or not isinstance(key_id, str):
            raise ApiError(
                Code.UNAUTHENTICATED,
                "the bearer token is not signed with a key of the identity provider "
                f"({', '.join(ALGORITHMS)} with a key id)",
            )
        key = await self._key(key_id)
        claims = self._decoded(token, key, algorithm)
        subject = claims.get(self.settings.subject_claim)
        if not isinstance(subject, str) or not subject:
            raise ApiError(
                Code.UNAUTHENTICATED,
                f"the bearer token has no {self.settings.subject_claim} claim to name its caller",
            )
        return Claims(subject, self._role(claims, subject), claims["iat"], claims["exp"])

    def _decoded(self, token: str, key: jwt.PyJWK, algorithm: str) -> dict[str, Any]:
        declared = key._jwk_data.get("alg")  # what the provider says the key signs with
        if key.key_type == "oct" or declared not in (None, algorithm):
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token's algorithm is not its key's")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                options={"require": ["exp", "iat", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token has expired") from None
        except jwt.ImmatureSignatureError:
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token is not valid yet") from None
        except jwt.MissingRequiredClaimError as e:
            if e.claim != "aud":
                raise ApiError(
                    Code.UNAUTHENTICATED, f"the bearer token has no {e.claim} claim"
                ) from None
            raise self._not_ours() from None
        except jwt.InvalidAudienceError:
            raise self._not_ours() from None
        except jwt.PyJWTError as e:
            raise ApiError(Code.UNAUTHENTICATED, f"the bearer token is refused: {e}") from None
        return claims

    def _not_ours(self) -> ApiError:
        return ApiError(
            Code.UNAUTHENTICATED,
            f"the bearer token is not for this catalog (audience {self.settings.audience})",
        )

    def _role(self, claims: dict[str, Any], subject: str) -> Role:
        groups = claims.get(self.settings.groups_claim)
        names = {groups} if isinstance(groups, str) else set(groups or ())
        held = [role for group, role in self.settings.roles if group in names]
        if not held:
            raise ApiError(
                Code.FORBIDDEN,
                f"{subject} is in no group the catalog gives a role "
                f"({', '.join(g for g, _ in self.settings.roles) or 'none is mapped'})",
            )
        return max(held, key=lambda role: role.rank)

    async def _key(self, key_id: str) -> jwt.PyJWK:
        async with self._lock:
            age = time.monotonic() - self._fetched_at
            missing = key_id not in self._keys and age > JWKS_REFETCH_S
            if age > self.jwks_lifetime_s or missing:
                try:
                    self._keys = await asyncio.to_thread(self._fetch)
                    self._fetched_at = time.monotonic()
                except (httpx.HTTPError, ValueError, KeyError, jwt.PyJWTError) as e:
                    if age > self.jwks_lifetime_s:
                        self._keys = {}  # fail closed: the kept keys have lived their time
                    if key_id not in self._keys:
                        raise ApiError(
                            Code.UNAUTHENTICATED,
                            "cannot check the bearer token: the identity provider's keys "
                            f"cannot be fetched from {self.settings.issuer} ({e})",
                        ) from None
        found = self._keys.get(key_id)
        if found is None:
            raise ApiError(
                Code.UNAUTHENTICATED,
                "the bearer token was signed by a key the provider does not publish",
            )
        return found

    def _fetch(self) -> dict[str, jwt.PyJWK]:
        """Read the issuer's discovery document and its key set (in a worker thread)."""
        discovery = _json(f"{self.settings.issuer.rstrip('/')}/.well-known/openid-configuration")
        if discovery.get("issuer") != self.settings.issuer:
            raise ValueError(
                f"the discovery document names another issuer: {discovery.get('issuer')}"
            )
        keys = jwt.PyJWKSet.from_dict(_json(str(discovery["jwks_uri"])))
        return {k.key_id: k for k in keys.keys if k.key_id and k.public_key_use in (None, "sig")}


def _json(url: str) -> dict[str, Any]:
    answer = httpx.get(url, timeout=FETCH_TIMEOUT_S)
    answer.raise_for_status()
    body: dict[str, Any] = answer.json()
    return body
