"""Retrying a call: the policy, the order of base URLs, and which failures are worth a retry."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from api.wire.codes import Code, Retry

RETRYABLE_CODES = frozenset(str(code) for code in Code if code.retry is Retry.AUTOMATIC)
"""The server's codes that mean "try again (maybe elsewhere)"; TIMEOUT is not one: it answers
a wait the caller bounded on purpose."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard a client tries before it gives up.

    Attributes:
        max_attempts: attempts per call, over all base URLs (at least one per URL is made).
        backoff_s: the first pause between attempts; it doubles per attempt.
        backoff_cap_s: the longest pause.
        max_reconnects: consecutive failed reconnections of an event stream before it raises.
    """

    max_attempts: int = 4
    backoff_s: float = 0.1
    backoff_cap_s: float = 2.0
    max_reconnects: int = 8

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.max_reconnects < 0:
            raise ValueError("max_attempts must be at least 1 and max_reconnects at least 0")
        if self.backoff_s < 0 or self.backoff_cap_s < 0:
            raise ValueError("backoff times are not negative")

    def pause(self, attempt: int, retry_after: float | None = None) -> float:
        """Return the pause before retry number ``attempt`` (1-based), with jitter."""
        ceiling = min(self.backoff_cap_s, self.backoff_s * 2.0 ** max(0, attempt - 1))
        if retry_after is not None:
            ceiling = min(self.backoff_cap_s, max(ceiling, retry_after))
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def base_urls(urls: str | Sequence[str]) -> list[str]:
    """Normalise base URLs: a list, or one string with commas; no trailing slash.

    Raises:
        ValueError: no URL, or one that is not ``http(s)://host[:port]``.
    """
    raw = urls.split(",") if isinstance(urls, str) else list(urls)
    found = [u.strip().rstrip("/") for u in raw if u.strip()]
    if not found:
        raise ValueError("give at least one base URL")
    for url in found:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s)://host:port base URL")
    return found


class Failover:
    """The base URLs in the order to try them: the one that answered last comes first."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = list(urls)
        self._preferred = 0

    def order(self, attempts: int) -> list[str]:
        """Return the URL of each attempt: round robin from the preferred one."""
        n = len(self.urls)
        return [self.urls[(self._preferred + i) % n] for i in range(max(attempts, n))]

    def answered(self, url: str) -> None:
        """Remember that ``url`` answered, so the next call starts there."""
        self._preferred = self.urls.index(url)

    def failed(self, url: str) -> None:
        """Move past ``url`` if it is the preferred one (for long-lived connections)."""
        if self.urls[self._preferred] == url:
            self._preferred = (self._preferred + 1) % len(self.urls)


def is_retryable(error: httpx.TransportError) -> bool:
    """Return True for failures a retry elsewhere may cure (not a malformed request)."""
    return isinstance(
        error, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError
    )


def retry_after(response: httpx.Response) -> float | None:
    """Return a retryable response's ``Retry-After`` in seconds, None if it is not retryable."""
    if response.status_code not in (429, 503):
        return None
    try:
        code = response.json().get("code")
    except (ValueError, AttributeError):
        return None
    if code not in RETRYABLE_CODES:
        return None
    header = response.headers.get("Retry-After", "")
    return float(header) if (header.isascii() and header.isdigit()) else 0.0


def describe(url: str, error: BaseException) -> str:
    """Return one line about a failed attempt."""
    return (
        f"{url}: {type(error).__name__}: {error}"
        if str(error)
        else f"{url}: {type(error).__name__}"
    )
