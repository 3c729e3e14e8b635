"""``CatalogClient``: the blocking client (``httpx.Client``)."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from typing import Any, TypeVar

import httpx

from api.client import calls
from api.client.calls import Call, ReadyStatus, Timestamp
from api.client.client_base import ClientBase
from api.client.closing import ClosedOnExit
from api.client.errors import UnreachableError
from api.client.events import CatalogEventMessage, EventCursor, StreamAttempts
from api.client.schema_versions import SchemaVersionPages
from catalog.descriptors import TableDescriptor, TableVersion

T = TypeVar("T")


class CatalogClient(ClientBase[httpx.BaseTransport, httpx.Client, "EventStream"], ClosedOnExit):
    """A client of the catalog REST API, with failover between base URLs and safe retries.

    Every call is retried on connection errors, timeouts and "try again" answers (503),
    with backoff, moving on to the next base URL. DDL calls carry a request id (a new uuid4
    when none is given) that every retry reuses, so a change is applied once even when the
    first answer was lost::

        with CatalogClient(["http://a:8000", "http://b:8000"]) as client:
            result = client.sql("CREATE TABLE t (id INT PRIMARY KEY)")
            table = client.table("PUBLIC", "T", version=result.version)

    Lookups read names as SQL does: unquoted they fold to upper case (``client.table("public",
    "t")`` finds ``PUBLIC.T``), double-quoted they stay exact (``client.table("SALES",
    '"orders"')``; ``catalog.identifiers.quote_name`` quotes an exact name). Commands carry
    exact names.

    Args:
        urls: base URLs, as a list or one comma-separated string.
        timeout: seconds (or an ``httpx.Timeout``) for each attempt.
        retry: attempts, backoff and event-stream reconnections.
        stream_timeout_s: the longest silence of an event stream before it reconnects (the
            server sends a keep-alive every 15 s).
        transport: an ``httpx`` transport to send through (tests, proxies, custom TLS).
        headers: extra headers for every request.
        token: a bearer token (``catalog token create``) for servers that check tokens.
        credential: a principal's ``<client id>:<secret>`` (``catalog principal create``):
            the client signs in with it and keeps its access token fresh.
    """

    def _open(self, transport: httpx.BaseTransport | None, **options: Any) -> httpx.Client:
        return httpx.Client(transport=transport, **options)

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def send(self, call: Call[T]) -> T:
        """Send ``call`` with retries and failover; return its decoded answer.

        Raises:
            CatalogApiError: the server refused the request (a typed subclass).
            UnreachableError: no base URL answered within the attempts.
        """
        attempts = calls.Attempts(call, self._failover, self._retry, self._timeout)
        for url, pause in attempts:
            time.sleep(pause)
            response: httpx.Response | None
            try:
                response = self._http.request(**attempts.request(url))
            except httpx.TransportError as e:
                response = attempts.failed(url, e)
            if attempts.answered(url, response):
                return attempts.result
        raise attempts.error()

    # -- reads that take more than one call, or read "unreachable" as an answer ---------

    def table(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> TableDescriptor:
        """Return one table's descriptor."""
        return self.table_info(schema, name, version, at).table

    def schema_versions(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> list[TableVersion]:
        """Return every schema version of a table (its columns at each), oldest first."""
        pages = SchemaVersionPages(schema, name, version, at)
        while pages.next is not None:
            pages.take(self.send(pages.next))
        return pages.found

    def now(self) -> int:
        """Return the server's hybrid clock reading (pin a job's timestamp with it)."""
        return self.time().now

    def health(self) -> bool:
        """Return True if a server answers ``/healthz``, False if none can be reached."""
        try:
            return self.send(calls.health_call())
        except UnreachableError:
            return False

    def ready(self) -> ReadyStatus:
        """Return whether a server is ready (recovered, following the log, reachable)."""
        try:
            return self.send(calls.readiness_call())
        except UnreachableError as e:
            return ReadyStatus(False, None, e.detail)

    # -- events ---------------------------------------------------------------------------

    def _event_stream(self, cursor: EventCursor) -> EventStream:
        # Pinned now, so that events of changes made after ``events()`` are never missed.
        if cursor.needs_pin:
            cursor.pin(self.versions().latest)
        return EventStream(self, cursor)

    def _stream_events(self, cursor: EventCursor) -> Generator[CatalogEventMessage, None, None]:
        attempts = StreamAttempts(cursor, self._failover, self._retry)
        while True:
            if cursor.needs_pin:
                cursor.pin(self.versions().latest)
            url, params, headers = attempts.connect()
            try:
                with self._http.stream(
                    "GET", url, params=params, headers=headers, timeout=self._stream_timeout
                ) as response:
                    if not response.is_success:
                        response.read()
                        attempts.refused(response)
                    else:
                        attempts.opened()
                        for line in response.iter_lines():
                            message = attempts.feed(line)
                            if message is not None:
                                yield message
            except httpx.TransportError as e:
                attempts.broken(e)
            time.sleep(attempts.pause())


class EventStream(Iterator[CatalogEventMessage], ClosedOnExit):
    """Catalog events from ``CatalogClient.events``: iterate, then ``close()`` (or ``with``)."""

    def __init__(self, client: CatalogClient, cursor: EventCursor) -> None:
        self._cursor = cursor
        self._events = client._stream_events(cursor)

    @property
    def last_event_id(self) -> str | None:
        """Return the id of the last event delivered (save it to resume later)."""
        return self._cursor.last_event_id

    def __next__(self) -> CatalogEventMessage:
        return next(self._events)

    def close(self) -> None:
        """Close the connection."""
        self._events.close()
