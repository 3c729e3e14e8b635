"""``PrincipalDescriptor``: a service principal, who signs in with a client id and secret.

Engines sign in the way the Iceberg REST standard has them do: OAuth2 client credentials
(``credential=<client id>:<secret>``) exchanged for a short-lived access token. The catalog
keeps each principal in its log like any other object, so who could sign in, with which role,
is known at every version. The secret itself is never kept: only a salted SHA-256 of it. The
secret is 32 random bytes, so the hash cannot be reversed by guessing; a slow password hash
would only slow every sign-in.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets

from pydantic import Field

from catalog.model import Model

SECRET_HASH_SCHEME = "sha256"
"""How ``secret_hash`` is made: ``sha256$<salt hex>$<digest of salt + secret, hex>``."""


class PrincipalRole(enum.StrEnum):
    """What a principal may do, cluster-wide: each role may do what the ones before it may.

    Grants (``catalog.access``) add to it, object by object.
    """

    NONE = "none"
    """Only what its grants allow."""
    READER = "reader"
    """Reads the catalog and its tables' data, follows events."""
    WRITER = "writer"
    """Also changes the catalog and commits data."""
    ADMIN = "admin"
    """Also manages principals, tokens, backups."""


class PrincipalDescriptor(Model):
    """A service principal: its name, role and the hash of its current secret.

    ``credential_version`` counts the secrets it has had: a rotation makes a new one, and the
    access tokens signed for an earlier secret stop working.
    """

    id: int
    name: str
    role: PrincipalRole
    client_id: str
    secret_hash: str = Field(exclude=True, repr=False)
    """Never in an answer, an event or a diff: only the sign-in compares with it."""
    credential_version: int = 1
    update_ts: int = 0
    """The activation timestamp of the version that last changed it."""


def hash_secret(secret: str, salt: bytes | None = None) -> str:
    """Return the stored form of ``secret``: a fresh random salt unless one is given."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.sha256(salt + secret.encode()).hexdigest()
    return f"{SECRET_HASH_SCHEME}${salt.hex()}${digest}"


def secret_matches(principal: PrincipalDescriptor, secret: str) -> bool:
    """Return whether ``secret`` is the principal's current secret (in constant time)."""
    scheme, _, rest = principal.secret_hash.partition("$")
    salt_hex, _, _ = rest.partition("$")
    if scheme != SECRET_HASH_SCHEME:
        return False
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    return hmac.compare_digest(hash_secret(secret, salt), principal.secret_hash)
