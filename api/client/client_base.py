"""``ClientBase``: the settings both clients hold (base URLs, timeouts, retries, headers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx

from api.client import calls
from api.client.calls import RetryPolicy


class ClientBase:
    """What the sync and the async client share: they differ only in their ``httpx`` client.

    Args:
        urls: base URLs, as a list or one comma-separated string.
        timeout: seconds (or an ``httpx.Timeout``) for each attempt.
        retry: attempts, backoff and event-stream reconnections.
        stream_timeout_s: the longest silence of an event stream before it reconnects.
        headers: extra headers for every request.
        token: a bearer token for servers that check tokens.
    """

    def __init__(
        self,
        urls: str | Sequence[str],
        timeout: float | httpx.Timeout,
        retry: RetryPolicy | None,
        stream_timeout_s: float,
        headers: Mapping[str, str] | None,
        token: str | None,
    ) -> None:
        self._failover = calls.Failover(calls.base_urls(urls))
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._retry = retry or RetryPolicy()
        self._stream_timeout = httpx.Timeout(self._timeout.connect, read=stream_timeout_s)
        self._headers = calls.auth_headers(headers, token)

    @property
    def urls(self) -> list[str]:
        """Return the base URLs, in configured order."""
        return list(self._failover.urls)
