"""Bearer tokens with roles, signed with keys every node shares through the update-log store.

A token is ``ct1.<key id>.<payload>.<signature>``: the payload is base64url JSON
``{"sub", "role", "iat", "exp"}`` (seconds) and the signature base64url HMAC-SHA256 of
``ct1.<key id>.<payload>``. As Kudu keeps its token-signing keys in its system catalog, the keys
live in the store (``catalog.auth.keys``), so a token issued by any node verifies on every node.
Rotation adds a new signing key and keeps the previous ones until the longest-lived token they
may have signed has expired.

What the store holds is not enough to sign: each key signs as HMAC-SHA256(token secret, stored
key), where the token secret is a file given to every server (``CATALOG_TOKEN_SECRET_FILE``)
and never stored. Whoever can only read the store reads the catalog but cannot mint tokens. The
stored keys carry a check value of the secret, so a server given another secret says so at
start-up instead of refusing every token.

Roles (``api.wire.roles``) nest: ``reader`` reads and follows events, ``writer`` also runs DDL and
commits data, ``admin`` may do everything (issue tokens, rotate keys). Tokens are never logged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import jwt
import msgpack
from fastapi import Request

from api.server.access_tokens import ISSUER, verify_access_token
from api.server.audit import record_denial
from api.server.claims import Claims
from api.server.errors import ApiError
from api.server.outside_tokens import OutsideTokens
from api.server.signing_keys import load_signing_keys, swap_signing_keys
from api.wire.codes import Code
from api.wire.roles import MAX_TTL_S, Role
from catalog.errors import ErrorCode
from updatelog.log import UpdateLog

TOKEN_PREFIX = "ct1"
KEYS_REFRESH_S = 5.0
"""How often a node re-reads the keys, so a revocation made on another node reaches it."""

MIN_SECRET_BYTES = 32
"""The shortest token secret accepted (after surrounding whitespace is stripped)."""

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_CHECK_LABEL = b"catalog token secret check"

_logger = logging.getLogger(__name__)


class TokenSecretError(ValueError):
    """The token secret is missing, unreadable, too short, or not the cluster's."""


def read_token_secret(path: str | None) -> bytes:
    """Return the token secret kept in the file at ``path``.

    Raises:
        TokenSecretError: no path, an unreadable file, or fewer than 32 bytes in it.
    """
    if not path:
        raise TokenSecretError(
            "tokens need the token secret every server shares: set CATALOG_TOKEN_SECRET_FILE "
            f"(or --token-secret-file) to a file holding at least {MIN_SECRET_BYTES} random "
            "bytes, e.g. made with `openssl rand -base64 48 > token.secret`; without it, "
            "whoever can read the store could mint tokens"
        )
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as e:
        raise TokenSecretError(f"cannot read the token secret file {path}: {e.strerror}") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise TokenSecretError(
            f"the token secret file {path} holds {len(secret)} bytes; it needs at least "
            f"{MIN_SECRET_BYTES} random ones (e.g. `openssl rand -base64 48`)"
        )
    return secret


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One signing key; ``retires_at`` (seconds) is set once a newer key replaced it."""

    key_id: str
    secret: bytes
    created_at: int
    retires_at: int | None = None


def is_loopback(host: str) -> bool:
    """Return whether ``host`` is a loopback bind address."""
    return host in _LOOPBACK


def auth_enabled(host: str, setting: str) -> bool:
    """Return whether a server on ``host`` checks tokens: ``on``, ``off`` or ``auto``.

    ``auto`` (the default) turns auth on for every bind address except loopback.
    """
    if setting == "on":
        return True
    if setting == "off":
        return False
    return not is_loopback(host)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _unb64(text: str) -> bytes:
    """Decode unpadded URL-safe base64, strictly: one spelling per value, nothing else.

    Raises:
        ValueError: padding, characters outside the alphabet, or non-zero unused bits.
    """
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded URL-safe base64")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not the canonical base64 of its value")
    return data


def _encode_keys(keys: list[SigningKey], check: bytes) -> bytes:
    rows = [[k.key_id, k.secret, k.created_at, k.retires_at] for k in keys]
    return msgpack.packb({"keys": rows, "check": check})


def _decode_keys(data: bytes) -> tuple[list[SigningKey], bytes | None]:
    """Return the stored keys and the check value of the secret they sign with.

    Keys stored as a bare list were made without a token secret: their check is None.
    """
    body = msgpack.unpackb(data)
    rows, check = (body, None) if isinstance(body, list) else (body["keys"], body["check"])
    return [SigningKey(str(k), bytes(s), int(c), r) for k, s, c, r in rows], check


class TokenAuthority:
    """Issues and verifies tokens with the signing keys kept in the update-log store.

    Args:
        log: the update log holding the keys.
        secret: the token secret every server shares (``read_token_secret``).
        now: the wall clock in seconds (tests pass their own).
    """

    def __init__(
        self, log: UpdateLog, secret: bytes, *, now: Callable[[], float] = time.time
    ) -> None:
        if len(secret) < MIN_SECRET_BYTES:
            raise TokenSecretError(f"a token secret has at least {MIN_SECRET_BYTES} bytes")
        self._log = log
        self._secret = secret
        self._check = hmac.new(secret, _CHECK_LABEL, hashlib.sha256).digest()[:16]
        self._now = now
        self._stored: bytes | None = None
        self._keys: dict[str, SigningKey] = {}
        self._macs: dict[str, bytes] = {}
        self._loaded_at = float("-inf")

    async def load(self) -> None:
        """Read the keys from the store, creating the first key if there is none.

        Keys stored without a token secret are replaced (every token they signed stops
        working): anyone who could read the store could sign with them.

        Raises:
            TokenSecretError: the stored keys sign with another token secret.
        """
        while True:
            stored = await load_signing_keys(self._log)
            keys, check = ([], None) if stored is None else _decode_keys(stored)
            if stored is not None and check == self._check:
                self._use(stored, keys)
                return
            if check is not None:
                raise TokenSecretError(
                    "this server's token secret is not the one the store's signing keys "
                    "were made with: give every server the same CATALOG_TOKEN_SECRET_FILE"
                )
            if stored is not None:
                _logger.warning("replacing signing keys stored without a token secret")
            first = SigningKey(secrets.token_hex(8), secrets.token_bytes(32), int(self._now()))
            await swap_signing_keys(self._log, stored, _encode_keys([first], self._check))

    def _use(self, stored: bytes, keys: list[SigningKey]) -> None:
        self._loaded_at = time.monotonic()
        self._stored = stored
        self._keys = {k.key_id: k for k in keys}
        self._macs = {
            k.key_id: hmac.new(self._secret, k.secret, hashlib.sha256).digest() for k in keys
        }

    def _current(self) -> SigningKey:
        live = [k for k in self._keys.values() if k.retires_at is None]
        return max(live, key=lambda k: k.created_at)

    async def issue(self, role: Role, ttl_s: int, subject: str = "catalog") -> tuple[str, int]:
        """Return a new token for ``role`` valid ``ttl_s`` seconds, and its expiry (seconds).

        Raises:
            ApiError: VALIDATION_ERROR for a ttl outside 1 s .. 30 days.
        """
        if not 1 <= ttl_s <= MAX_TTL_S:
            raise ApiError(ErrorCode.VALIDATION_ERROR, f"a token lives 1..{MAX_TTL_S} seconds")
        if not self._keys:
            await self.load()
        key = self._current()
        issued = int(self._now())
        claims = {"sub": subject, "role": str(role), "iat": issued, "exp": issued + ttl_s}
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signed = f"{TOKEN_PREFIX}.{key.key_id}.{payload}"
        signature = hmac.new(self._macs[key.key_id], signed.encode(), hashlib.sha256).digest()
        return f"{signed}.{_b64(signature)}", issued + ttl_s

    async def verify(self, token: str) -> Claims:
        """Return the claims of a valid token.

        Raises:
            ApiError: UNAUTHENTICATED for a malformed, forged or expired token, or one signed
                by a key that was retired long enough ago.
        """
        parts = token.split(".")
        if len(parts) != 4 or parts[0] != TOKEN_PREFIX:
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token is malformed")
        _, key_id, payload, signature = parts
        mac = await self.verifying_key(key_id)
        expected = hmac.new(
            mac, f"{TOKEN_PREFIX}.{key_id}.{payload}".encode(), hashlib.sha256
        ).digest()
        try:
            given = _unb64(signature)
            claims: Any = json.loads(_unb64(payload))
            role = Role(claims["role"])
            parsed = Claims(str(claims["sub"]), role, int(claims["iat"]), int(claims["exp"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token is malformed") from None
        if not hmac.compare_digest(expected, given):
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token's signature does not match")
        if parsed.expires_at <= self.now():
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token has expired")
        return parsed

    def now(self) -> int:
        """Return the wall clock in whole seconds, as tokens count time."""
        return int(self._now())

    async def signing_key(self) -> tuple[str, bytes]:
        """Return the current key's id and the secret it signs with (access tokens use it)."""
        if not self._keys:
            await self.load()
        key = self._current()
        return key.key_id, self._macs[key.key_id]

    async def verifying_key(self, key_id: str) -> bytes:
        """Return the secret key ``key_id`` signs with, if it may still verify.

        Raises:
            ApiError: UNAUTHENTICATED for an unknown key, or one retired long enough ago.
        """
        if time.monotonic() - self._loaded_at > KEYS_REFRESH_S:
            await self.load()  # another node may have rotated or revoked
        key = self._keys.get(key_id)
        if key is None and time.monotonic() - self._loaded_at > 1.0:
            # A key made on another node since; at most one read a second, so that tokens
            # with made-up key ids cannot turn into a stream of store reads.
            await self.load()
            key = self._keys.get(key_id)
        if key is None:
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token was signed by an unknown key")
        if key.retires_at is not None and key.retires_at <= self.now():
            raise ApiError(Code.UNAUTHENTICATED, "the bearer token's signing key was retired")
        return self._macs[key_id]

    async def rotate(self, *, revoke: bool = False) -> str:
        """Add a new signing key; the others stay valid until their tokens have expired.

        Args:
            revoke: retire the other keys at once instead: every token issued so far stops
                working (for a leaked token; there is no per-token revocation list).

        Returns:
            The new key id.
        """
        while True:
            await self.load()
            now = int(self._now())
            retire_at = now if revoke else now + MAX_TTL_S
            kept = [
                k
                if k.retires_at is not None and not revoke
                else SigningKey(k.key_id, k.secret, k.created_at, retire_at)
                for k in self._keys.values()
                if k.retires_at is None or k.retires_at > now
            ]
            new = SigningKey(secrets.token_hex(8), secrets.token_bytes(32), now)
            replaced = _encode_keys([*kept, new], self._check)
            if await swap_signing_keys(self._log, self._stored, replaced):
                await self.load()
                return new.key_id


def require(role: Role) -> Callable[[Request], Awaitable[Claims | None]]:
    """Return a FastAPI dependency admitting requests whose token has at least ``role``.

    With auth off (no ``app.state.authority``) every request is admitted.
    """

    async def check(request: Request) -> Claims | None:
        authority: TokenAuthority | None = getattr(request.app.state, "authority", None)
        if authority is None:
            return None
        claims: Claims | None = None
        try:
            claims = await _bearer_claims(request, authority)
            if claims.role.rank < role.rank:
                raise ApiError(
                    Code.FORBIDDEN,
                    f"{claims.subject} has the {claims.role} role and may not do this; it "
                    f"needs the {role} role",
                )
        except ApiError as refused:
            subject = None if claims is None else claims.subject
            record_denial(request, refused.code, refused.message, subject)
            raise
        request.state.claims = claims
        return claims

    return check


async def _bearer_claims(request: Request, authority: TokenAuthority) -> Claims:
    """Return the claims of the request's bearer token."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(Code.UNAUTHENTICATED, "this endpoint needs an Authorization: Bearer token")
    return await _verified(request, authority, token.strip())


async def _verified(request: Request, authority: TokenAuthority, token: str) -> Claims:
    """Return the claims of the catalog's own token or of a principal's access token."""
    if token.startswith(f"{TOKEN_PREFIX}."):
        return await authority.verify(token)
    try:
        header, issuer = jwt.get_unverified_header(token), _unverified_issuer(token)
    except (jwt.PyJWTError, ValueError):
        raise ApiError(Code.UNAUTHENTICATED, "the bearer token is malformed") from None
    outside: OutsideTokens | None = getattr(request.app.state, "outside_tokens", None)
    if outside is not None and outside.trusts(issuer):
        return await outside.verify(token, header)
    if issuer != ISSUER:
        raise ApiError(
            Code.UNAUTHENTICATED, "the bearer token is of an issuer this catalog does not trust"
        )
    node = getattr(request.app.state, "node", None)
    if node is None:
        raise ApiError(Code.NOT_READY, "the catalog node is starting")
    return await verify_access_token(authority, node.service.latest_catalog(), token, header)


def _unverified_issuer(token: str) -> object:
    """Return a JWT's ``iss`` before its signature is checked (to know who checks it)."""
    claims = jwt.decode(token, options={"verify_signature": False})
    return claims.get("iss") if isinstance(claims, dict) else None


def caller_of(request: Request) -> str:
    """Return the key that tells the caller apart (``Claims.caller``), or "" with auth off."""
    claims: Claims | None = getattr(request.state, "claims", None)
    return "" if claims is None else claims.caller


def principal_of(request: Request) -> str:
    """Return who is calling: the token's subject, or "" for everyone alike with auth off."""
    claims: Claims | None = getattr(request.state, "claims", None)
    return "" if claims is None else claims.subject


@overload
def scoped_request_id(request: Request, request_id: str) -> str: ...


@overload
def scoped_request_id(request: Request, request_id: None) -> None: ...


@overload
def scoped_request_id(request: Request, request_id: str | None) -> str | None: ...


def scoped_request_id(request: Request, request_id: str | None) -> str | None:
    """Return the request id as the log keeps it: within the caller's principal.

    With auth on, two principals using the same id make two requests, so nobody can claim
    another's id (and have that one's later request answered without running). With auth
    off there is one principal and the id is kept as given.
    """
    claims: Claims | None = getattr(request.state, "claims", None)
    if request_id is None or claims is None:
        return request_id
    principal = hashlib.sha256(claims.caller.encode()).hexdigest()[:16]
    return f"{principal}:{request_id}"
