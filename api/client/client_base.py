"""``ClientBase``: the settings both clients hold (base URLs, timeouts, retries, headers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from api.client import calls
from api.client.retries import Failover, RetryPolicy, base_urls
from catalog.origin import CLIENT_HEADER

PYTHON_CLIENT = "python-client"
"""How the Python client names itself to the server."""


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
        self._failover = Failover(base_urls(urls))
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._retry = retry or RetryPolicy()
        self._stream_timeout = httpx.Timeout(self._timeout.connect, read=stream_timeout_s)
        self._headers = calls.auth_headers(_named(headers), token)

    def _http_options(self) -> dict[str, Any]:
        """Return the options of the ``httpx`` client (the same for both clients)."""
        return {"timeout": self._timeout, "headers": self._headers, "follow_redirects": False}

    @property
    def urls(self) -> list[str]:
        """Return the base URLs, in configured order."""
        return list(self._failover.urls)


def _named(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Return ``headers`` naming this client (``python-client``) unless they name one.

    The server records the name with each version a request makes; the CLI and Spark jobs
    pass their own (``cli``, ``spark:<application>``).
    """
    given = dict(headers or {})
    if not any(name.lower() == CLIENT_HEADER.lower() for name in given):
        given[CLIENT_HEADER] = PYTHON_CLIENT
    return given
