"""``Role``: what a token may do, and how long a token may live.

Roles nest: ``none`` may do only what grants allow (``catalog.access``), ``reader`` reads and
follows events, ``writer`` also runs DDL and commits data,
``admin`` may do everything (issue tokens, rotate keys). Shared by the server's token checks
and the request and response models, which the client uses too.
"""

from __future__ import annotations

import enum

MAX_TTL_S = 30 * 24 * 3600
"""The longest a token may live; a retired key is kept this long after its last use."""


class Role(enum.StrEnum):
    """What a token may do; each role may do what the ones before it may."""

    NONE = "none"
    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """Return the role's rank: none 0 < reader 1 < writer 2 < admin 3."""
        return list(Role).index(self)
