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
cluster-wide role through ``CATALOG_OIDC_ROLES`` (``reader=analysts,writer=etl,admin=platform``):
the highest role any of its groups maps to, or ``none`` when no group maps to one. Each group
is also the catalog role of the same name (``GRANT ... TO ROLE``, matched ignoring case and a
group path's leading ``/``), so the grants to it apply: a token in no mapped group may do what
its groups' roles are granted, and nothing else.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

import jwt

from api.server.access_tokens import decoded
from api.server.claims import Claims
from api.server.errors import ApiError
from api.wire.codes import Code
from api.wire.roles import Role

JWKS_LIFETIME_S = 300.0
"""How long a fetched key set is used without asking the provider again."""
JWKS_REFETCH_S = 10.0
"""The least time between two fetches for a key id the kept set lacks."""
FETCH_TIMEOUT_S = 5.0
MAX_DOCUMENT_BYTES = 1024 * 1024
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


@dataclass(frozen=True, slots=True)
class _Key:
    """A published key and the algorithm the provider says it signs with (if it says)."""

    key: jwt.PyJWK
    algorithm: str | None


class OutsideTokens:
    """Verifies the outside provider's access tokens with its published keys."""

    def __init__(self, settings: OidcSettings) -> None:
        self.settings = settings
        self._keys: dict[str, _Key] = {}
        self._fetched_at = float("-inf")
        self._tried_at = float("-inf")
        self._fetching: asyncio.Task[dict[str, _Key]] | None = None
        self.jwks_lifetime_s = JWKS_LIFETIME_S

    def trusts(self, issuer: object) -> bool:
        """Return whether ``issuer`` is the provider this catalog trusts."""
        return issuer == self.settings.issuer

    async def verify(self, token: str, header: dict[str, Any]) -> Claims:
        """Return who a valid outside token stands for and the role its groups give.

        Raises:
            ApiError: UNAUTHENTICATED (a bad, expired, foreign or unverifiable token).
        """
        algorithm, key_id = header.get("alg"), header.get("kid")
        if algorithm not in ALGORITHMS or not isinstance(key_id, str):
            raise ApiError(
                Code.UNAUTHENTICATED,
                "the bearer token is not signed with a key of the identity provider "
                f"({', '.join(ALGORITHMS)} with a key id)",
            )
        found = await self._key(key_id)
        if found.key.key_type == "oct" or found.algorithm not in (None, algorithm):
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token's algorithm is not its key's")
        claims = decoded(
            token,
            found.key.key,
            [algorithm],
            issuer=self.settings.issuer,
            audience=self.settings.audience,
        )
        subject = claims.get(self.settings.subject_claim)
        if not isinstance(subject, str) or not subject:
            raise ApiError(
                Code.UNAUTHENTICATED,
                f"the bearer token has no {self.settings.subject_claim} claim to name its caller",
            )
        groups = self._groups(claims)
        return Claims(
            subject,
            self._role(groups),
            int(claims["iat"]),
            int(claims["exp"]),
            key=f"oidc:{subject}",
            groups=groups,
        )

    def _groups(self, claims: dict[str, Any]) -> tuple[str, ...]:
        """Return the token's groups, as names (a path's leading ``/`` left out)."""
        groups = claims.get(self.settings.groups_claim)
        listed = [groups] if isinstance(groups, str) else groups
        if not isinstance(listed, list):
            return ()
        return tuple(sorted({g.removeprefix("/") for g in listed if isinstance(g, str) and g}))

    def _role(self, groups: tuple[str, ...]) -> Role:
        """Return the highest cluster role a group maps to; ``none`` (grants only) if none."""
        held = [role for group, role in self.settings.roles if group.removeprefix("/") in groups]
        return max(held, key=lambda role: role.rank, default=Role.NONE)

    async def _key(self, key_id: str) -> _Key:
        """Return the published key ``key_id``, fetching the key set when it is due.

        Known keys are answered without waiting; one fetch runs at a time, and after one the
        next waits ``JWKS_REFETCH_S``, so tokens with made-up key ids cannot turn into a
        stream of requests to the provider.
        """
        if time.monotonic() - self._fetched_at <= self.jwks_lifetime_s and key_id in self._keys:
            return self._keys[key_id]
        if self._fetching is None and time.monotonic() - self._tried_at > JWKS_REFETCH_S:
            self._tried_at = time.monotonic()
            self._fetching = asyncio.ensure_future(asyncio.to_thread(self._fetch))
        failure = ""
        fetching = self._fetching
        if fetching is not None:
            try:
                self._keys = await asyncio.shield(fetching)
                self._fetched_at = time.monotonic()
            except (OSError, ValueError, KeyError, TypeError, jwt.PyJWTError) as e:
                failure = f" ({type(e).__name__})"
            finally:
                if self._fetching is fetching and fetching.done():
                    self._fetching = None
        if time.monotonic() - self._fetched_at > self.jwks_lifetime_s:
            self._keys = {}  # fail closed: the kept keys have lived their time
        found = self._keys.get(key_id)
        if found is not None:
            return found
        raise ApiError(
            Code.UNAUTHENTICATED,
            "the bearer token was signed by a key the provider does not publish"
            if self._keys and not failure
            else "cannot check the bearer token: the identity provider's keys cannot be "
            f"fetched from {self.settings.issuer}{failure}",
        )

    def _fetch(self) -> dict[str, _Key]:
        """Read the issuer's discovery document and its key set (in a worker thread)."""
        discovery = _json(f"{self.settings.issuer.rstrip('/')}/.well-known/openid-configuration")
        if discovery.get("issuer") != self.settings.issuer:
            raise ValueError("the discovery document names another issuer")
        published = _json(str(discovery["jwks_uri"])).get("keys")
        keys: dict[str, _Key] = {}
        for data in published if isinstance(published, list) else []:
            if not isinstance(data, dict) or data.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK.from_dict(data)
            except jwt.PyJWTError:
                continue  # a key of a kind this catalog does not verify with
            if key.key_id:
                alg = data.get("alg")
                keys[key.key_id] = _Key(key, alg if isinstance(alg, str) else None)
        return keys


def _json(url: str) -> dict[str, Any]:
    """Return the JSON object at ``url`` (the server's own HTTP client is the standard one)."""
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"not an http(s) URL: {url}")
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as answer:
        body = json.loads(answer.read(MAX_DOCUMENT_BYTES))
    if not isinstance(body, dict):
        raise ValueError(f"{url} holds no JSON object")
    return body
