"""``EtcdCredentials``: how a client checks etcd's servers and proves who it is to them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class EtcdCredentials:
    """TLS files and an etcd user; all None is a plain, anonymous connection.

    Attributes:
        ca: CA bundle that verifies the servers (turns TLS on).
        cert: client certificate, for TLS client authentication (with ``key``).
        key: the client certificate's private key.
        user: etcd user name (with ``password``).
        password: that user's password.

    Raises:
        ValueError: a certificate without its key, or a user without a password (or the
            other way round).
    """

    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("give a client certificate with its key")
        if (self.user is None) != (self.password is None):
            raise ValueError("give an etcd user with its password")

    @property
    def tls(self) -> tuple[str | None, str | None, str | None] | None:
        """Return ``(ca, cert, key)`` when TLS is on, else None."""
        return (
            (self.ca, self.cert, self.key) if self.ca is not None or self.cert is not None else None
        )

    @property
    def auth(self) -> tuple[str, str] | None:
        """Return ``(user, password)`` when a user is given, else None."""
        if self.user is None or self.password is None:
            return None
        return self.user, self.password


ANONYMOUS = EtcdCredentials()
"""No TLS and no user: a plain connection."""
