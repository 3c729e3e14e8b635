"""``Claims``: what a verified bearer token says, whichever kind of token it is."""

from __future__ import annotations

from dataclasses import dataclass

from api.wire.roles import Role


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says."""

    subject: str
    role: Role
    issued_at: int
    expires_at: int
