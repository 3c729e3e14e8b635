"""``ClientBase``: what both clients share: their settings and every call but the streams.

The two clients differ only in their ``httpx`` client and in how they send and sleep; each call
of the API is one ``Endpoint`` here, made of its ``Call`` builder (``api.client.calls``).
"""

from __future__ import annotations

import abc
import functools
import ssl
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import httpx

from api.client import (
    backup_calls,
    calls,
    grant_calls,
    lease_calls,
    principal_calls,
    view_calls,
)
from api.client.credentials import ClientCredentials
from api.client.endpoint import Endpoint
from api.client.events import EventCursor, filter_params
from api.client.retries import Failover, RetryPolicy, base_urls
from catalog.events import CatalogEvent
from catalog.origin import CLIENT_HEADER

PYTHON_CLIENT = "python-client"
"""How the Python client names itself to the server."""

TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)
HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
StreamT = TypeVar("StreamT")


@functools.cache
def shared_tls() -> ssl.SSLContext:
    """Return the TLS settings every client of the process shares: httpx's defaults, made once.

    Making them loads the trusted certificates, about 35 ms: most of the start of a
    short-lived client (a Spark read opens two, the CLI one per command).
    """
    return httpx.create_ssl_context()


class ClientBase(abc.ABC, Generic[TransportT, HttpT, StreamT]):
    """What the sync and the async client share: they differ only in their ``httpx`` client.

    Args:
        urls: base URLs, as a list or one comma-separated string.
        timeout: seconds (or an ``httpx.Timeout``) for each attempt.
        retry: attempts, backoff and event-stream reconnections.
        stream_timeout_s: the longest silence of an event stream before it reconnects.
        transport: an ``httpx`` transport to send through (tests, proxies, custom TLS).
        headers: extra headers for every request.
        token: a bearer token for servers that check tokens.
        credential: a principal's ``<client id>:<secret>``: the client signs in with it
            (``ClientCredentials``) instead of sending a fixed token.
    """

    def __init__(
        self,
        urls: str | Sequence[str] = calls.DEFAULT_URL,
        *,
        timeout: float | httpx.Timeout = 10.0,
        retry: RetryPolicy | None = None,
        stream_timeout_s: float = 60.0,
        transport: TransportT | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        credential: str | None = None,
    ) -> None:
        self._failover = Failover(base_urls(urls))
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._retry = retry or RetryPolicy()
        self._stream_timeout = httpx.Timeout(self._timeout.connect, read=stream_timeout_s)
        self._headers = calls.auth_headers(_named(headers), token)
        self._http: HttpT = self._open(
            transport,
            timeout=self._timeout,
            headers=self._headers,
            follow_redirects=False,
            verify=shared_tls(),
            auth=None if credential is None else ClientCredentials(credential),
        )

    @abc.abstractmethod
    def _open(self, transport: TransportT | None, **options: Any) -> HttpT:
        """Return the ``httpx`` client that sends every request (each client its own kind)."""

    @property
    def urls(self) -> list[str]:
        """Return the base URLs, in configured order."""
        return list(self._failover.urls)

    # -- writes ---------------------------------------------------------------------------

    execute = Endpoint(calls.execute_call)
    sql = Endpoint(calls.sql_call)

    # -- reads ----------------------------------------------------------------------------

    catalog = Endpoint(calls.catalog_call)
    table_info = Endpoint(calls.table_call)
    tables = Endpoint(calls.tables_call)
    index = Endpoint(calls.index_call)
    zone = Endpoint(calls.zone_call)
    schemas = Endpoint(calls.schemas_call)
    schema = Endpoint(calls.schema_call)
    indexes = Endpoint(calls.indexes_call)
    zones = Endpoint(calls.zones_call)

    # -- versions and time ----------------------------------------------------------------

    versions = Endpoint(calls.versions_call)
    wait_ready = Endpoint(calls.ready_call)
    wait_for_metadata_completeness = Endpoint(calls.completeness_call)
    time = Endpoint(calls.time_call)
    diff = Endpoint(calls.diff_call)

    # -- security, data commits, operations -----------------------------------------------

    create_token = Endpoint(calls.token_call)
    commit_data = Endpoint(calls.commit_data_call)
    data_commits = Endpoint(calls.data_commits_call)
    table_keys = Endpoint(calls.table_keys_call)
    nodes = Endpoint(calls.nodes_call)
    take_lease = Endpoint(lease_calls.take_lease_call)
    leases = Endpoint(lease_calls.leases_call)
    release_lease = Endpoint(lease_calls.release_lease_call)
    backup = Endpoint(backup_calls.backup_call)
    views = Endpoint(view_calls.views_call)
    view = Endpoint(view_calls.view_call)
    principals = Endpoint(principal_calls.principals_call)
    create_principal = Endpoint(principal_calls.create_principal_call)
    change_principal = Endpoint(principal_calls.change_principal_call)
    rotate_principal_secret = Endpoint(principal_calls.rotate_principal_secret_call)
    drop_principal = Endpoint(principal_calls.drop_principal_call)

    # -- grants and roles, and who could do what ------------------------------------------

    grant = Endpoint(grant_calls.grant_call)
    revoke = Endpoint(grant_calls.revoke_call)
    create_role = Endpoint(grant_calls.create_role_call)
    drop_role = Endpoint(grant_calls.drop_role_call)
    grants = Endpoint(grant_calls.grants_call)
    roles = Endpoint(grant_calls.roles_call)
    who_can = Endpoint(grant_calls.who_can_call)
    access_diff = Endpoint(grant_calls.access_diff_call)

    # -- events ---------------------------------------------------------------------------

    def events(
        self,
        from_version: int | None = None,
        *,
        last_event_id: str | None = None,
        schema: str | None = None,
        table: str | None = None,
        kinds: Iterable[CatalogEvent | str] | None = None,
    ) -> StreamT:
        """Return an iterator of catalog events that reconnects and resumes by id.

        Args:
            from_version: replay retained history from this version, then follow live
                events; None for live events only.
            last_event_id: resume right after this event id (``CatalogEventMessage.id``).
            schema: only events about this schema and what is in it.
            table: only events about tables of this name (also renamed from or to it) and
                their indexes.
            kinds: only these kinds of events.

        The server filters; positions stay those of the whole catalog, so a filtered stream
        resumes like any other.

        The iterator raises ``CompactedError`` when its resume point was compacted, and
        ``UnreachableError`` after ``retry.max_reconnects`` failed reconnections in a row.
        A live-only stream starts right after the latest version at the time of this call
        (it asks ``versions()`` now; the async client when the stream is entered with
        ``async with`` or first read, whichever comes first), so events of later changes are
        never missed, even before the first one is read.
        """
        cursor = EventCursor(from_version, last_event_id, filter_params(schema, table, kinds))
        return self._event_stream(cursor)

    @abc.abstractmethod
    def _event_stream(self, cursor: EventCursor) -> StreamT:
        """Return the stream of events from ``cursor`` (this client's kind of iterator)."""


def _named(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Return ``headers`` naming this client (``python-client``) unless they name one.

    The server records the name with each version a request makes; the CLI and Spark jobs
    pass their own (``cli``, ``spark:<application>``).
    """
    given = dict(headers or {})
    if not any(name.lower() == CLIENT_HEADER.lower() for name in given):
        given[CLIENT_HEADER] = PYTHON_CLIENT
    return given
