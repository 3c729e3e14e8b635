"""``Claims``: what a verified bearer token says, whichever kind of token it is."""

from __future__ import annotations

from dataclasses import dataclass

from api.wire.roles import Role


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says.

    ``subject`` is the caller's name as versions record it; ``key`` tells callers apart for
    request ids, per-caller limits and leases: a principal's id (two principals of one name,
    one dropped, are two callers), an outside provider's subject, or a catalog token's subject.
    """

    subject: str
    role: Role
    issued_at: int
    expires_at: int
    key: str = ""
    signed_in_at: int = 0
    """When the caller signed in with its secret (a token exchange keeps it)."""
    principal_id: int | None = None
    """The principal a catalog access token stands for (grants to it apply)."""
    groups: tuple[str, ...] = ()
    """An outside provider's groups: the grants to the roles of these names apply."""

    @property
    def caller(self) -> str:
        """Return the key that tells this caller apart from every other."""
        return self.key or self.subject
