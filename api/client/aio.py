"""``AsyncCatalogClient``: the asyncio twin of ``CatalogClient`` (``httpx.AsyncClient``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar

import httpx

from api.client import calls
from api.client.calls import Call, ReadyStatus, Timestamp
from api.client.client_base import ClientBase
from api.client.closing import AsyncClosedOnExit
from api.client.errors import UnreachableError
from api.client.events import CatalogEventMessage, EventCursor, StreamAttempts
from api.client.schema_versions import SchemaVersionPages
from catalog.descriptors import TableDescriptor, TableVersion

T = TypeVar("T")


class AsyncCatalogClient(
    ClientBase[httpx.AsyncBaseTransport, httpx.AsyncClient, "AsyncEventStream"], AsyncClosedOnExit
):
    """The asyncio twin of ``CatalogClient``: same arguments, same calls, awaited.

    ::

        async with AsyncCatalogClient("http://127.0.0.1:8000") as client:
            result = await client.sql("CREATE TABLE t (id INT PRIMARY KEY)")
            async with client.events(from_version=result.version) as events:
                async for event in events:
                    ...
    """

    def _open(
        self, transport: httpx.AsyncBaseTransport | None, **options: Any
    ) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport, **options)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def send(self, call: Call[T]) -> T:
        """Send ``call`` with retries and failover (see ``CatalogClient.send``)."""
        attempts = calls.Attempts(call, self._failover, self._retry, self._timeout)
        for url, pause in attempts:
            await asyncio.sleep(pause)
            response: httpx.Response | None
            try:
                response = await self._http.request(**attempts.request(url))
            except httpx.TransportError as e:
                response = attempts.failed(url, e)
            if attempts.answered(url, response):
                return attempts.result
        raise attempts.error()

    # -- reads that take more than one call, or read "unreachable" as an answer ---------

    async def table(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> TableDescriptor:
        """Return one table's descriptor."""
        return (await self.table_info(schema, name, version, at)).table

    async def schema_versions(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> list[TableVersion]:
        """Return every schema version of a table (its columns at each), oldest first."""
        pages = SchemaVersionPages(schema, name, version, at)
        while pages.next is not None:
            pages.take(await self.send(pages.next))
        return pages.found

    async def now(self) -> int:
        """Return the server's hybrid clock reading."""
        return (await self.time()).now

    async def health(self) -> bool:
        """Return True if a server answers ``/healthz``, False if none can be reached."""
        try:
            return await self.send(calls.health_call())
        except UnreachableError:
            return False

    async def ready(self) -> ReadyStatus:
        """Return whether a server is ready (recovered, following the log, reachable)."""
        try:
            return await self.send(calls.readiness_call())
        except UnreachableError as e:
            return ReadyStatus(False, None, e.detail)

    # -- events ---------------------------------------------------------------------------

    def _event_stream(self, cursor: EventCursor) -> AsyncEventStream:
        # Pinned when the stream is entered or first read: this method cannot await.
        return AsyncEventStream(self, cursor)

    async def _stream_events(
        self, cursor: EventCursor
    ) -> AsyncGenerator[CatalogEventMessage, None]:
        attempts = StreamAttempts(cursor, self._failover, self._retry)
        while True:
            if cursor.needs_pin:
                cursor.pin((await self.versions()).latest)
            url, params, headers = attempts.connect()
            try:
                async with self._http.stream(
                    "GET", url, params=params, headers=headers, timeout=self._stream_timeout
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        attempts.refused(response)
                    else:
                        attempts.opened()
                        async for line in response.aiter_lines():
                            message = attempts.feed(line)
                            if message is not None:
                                yield message
            except httpx.TransportError as e:
                attempts.broken(e)
            await asyncio.sleep(attempts.pause())


class AsyncEventStream(AsyncIterator[CatalogEventMessage], AsyncClosedOnExit):
    """Catalog events from ``AsyncCatalogClient.events``: ``async for``, then ``aclose()``."""

    def __init__(self, client: AsyncCatalogClient, cursor: EventCursor) -> None:
        self._client = client
        self._cursor = cursor
        self._events = client._stream_events(cursor)

    @property
    def last_event_id(self) -> str | None:
        """Return the id of the last event delivered (save it to resume later)."""
        return self._cursor.last_event_id

    async def __anext__(self) -> CatalogEventMessage:
        return await anext(self._events)

    async def aclose(self) -> None:
        """Close the connection."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncEventStream:
        if self._cursor.needs_pin:
            self._cursor.pin((await self._client.versions()).latest)
        return self
