"""``AsyncCatalogClient``: the asyncio twin of ``CatalogClient`` (``httpx.AsyncClient``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from typing import TypeVar

import httpx

from api import models
from api.client import calls
from api.client.calls import Call, Commands, ReadyStatus, Timestamp
from api.client.client_base import ClientBase
from api.client.closing import AsyncClosedOnExit
from api.client.errors import UnreachableError
from api.client.events import CatalogEventMessage, EventCursor, StreamAttempts, filter_params
from api.client.retries import RetryPolicy
from api.client.schema_versions import SchemaVersionPages
from catalog.apply_result import ApplyResult
from catalog.catalog import Catalog
from catalog.data_files import DataCommit, DataFile, DataMode
from catalog.descriptors import IndexDescriptor, TableDescriptor, TableVersion
from catalog.events import CatalogEvent

T = TypeVar("T")


class AsyncCatalogClient(ClientBase, AsyncClosedOnExit):
    """The asyncio twin of ``CatalogClient``: same arguments, same calls, awaited.

    ::

        async with AsyncCatalogClient("http://127.0.0.1:8000") as client:
            result = await client.sql("CREATE TABLE t (id INT PRIMARY KEY)")
            async with client.events(from_version=result.version) as events:
                async for event in events:
                    ...
    """

    def __init__(
        self,
        urls: str | Sequence[str] = calls.DEFAULT_URL,
        *,
        timeout: float | httpx.Timeout = 10.0,
        retry: RetryPolicy | None = None,
        stream_timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
    ) -> None:
        super().__init__(urls, timeout, retry, stream_timeout_s, headers, token)
        self._http = httpx.AsyncClient(transport=transport, **self._http_options())

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

    # -- writes ---------------------------------------------------------------------------

    async def execute(
        self,
        commands: Commands,
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
        message: str | None = None,
    ) -> ApplyResult:
        """Apply commands as one atomic batch (see ``CatalogClient.execute``)."""
        return await self.send(calls.execute_call(commands, request_id, wait_for_nodes, message))

    async def sql(
        self,
        text: str,
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
        message: str | None = None,
    ) -> ApplyResult:
        """Apply DDL statements as one atomic batch (see ``CatalogClient.sql``)."""
        return await self.send(calls.sql_call(text, request_id, wait_for_nodes, message))

    # -- reads ----------------------------------------------------------------------------

    async def catalog(self, version: int | None = None, at: Timestamp | None = None) -> Catalog:
        """Return the whole catalog at ``version``, as of ``at``, or the latest."""
        return await self.send(calls.catalog_call(version, at))

    async def table(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> TableDescriptor:
        """Return one table's descriptor."""
        return (await self.table_info(schema, name, version, at)).table

    async def table_info(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.TableBody:
        """Return one table with its indexes, zone and the version read."""
        return await self.send(calls.table_call(schema, name, version, at))

    async def schema_versions(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> list[TableVersion]:
        """Return every schema version of a table (its columns at each), oldest first."""
        pages = SchemaVersionPages(schema, name, version, at)
        while pages.next is not None:
            pages.take(await self.send(pages.next))
        return pages.found

    async def tables(
        self, schema: str = "PUBLIC", version: int | None = None, at: Timestamp | None = None
    ) -> list[str]:
        """Return the names of a schema's tables."""
        return await self.send(calls.tables_call(schema, version, at))

    async def index(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> IndexDescriptor:
        """Return one (alive) index."""
        return await self.send(calls.index_call(schema, name, version, at))

    async def zone(
        self, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.ZoneBody:
        """Return one zone with the ids of its tables."""
        return await self.send(calls.zone_call(name, version, at))

    async def schemas(
        self, version: int | None = None, at: Timestamp | None = None
    ) -> models.SchemasBody:
        """Return every schema."""
        return await self.send(calls.schemas_call(version, at))

    async def schema(
        self, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.SchemaBody:
        """Return one schema with the names of its tables and indexes."""
        return await self.send(calls.schema_call(name, version, at))

    async def indexes(
        self,
        schema: str | None = None,
        table: str | None = None,
        version: int | None = None,
        at: Timestamp | None = None,
    ) -> list[IndexDescriptor]:
        """Return the alive indexes: all, a schema's, or a table's (in PUBLIC without schema)."""
        return await self.send(calls.indexes_call(schema, table, version, at))

    async def zones(
        self, version: int | None = None, at: Timestamp | None = None
    ) -> models.ZonesBody:
        """Return every zone and the name of the default one."""
        return await self.send(calls.zones_call(version, at))

    # -- versions and time ----------------------------------------------------------------

    async def versions(
        self, from_version: int | None = None, limit: int | None = None
    ) -> models.VersionsBody:
        """Return the retained versions (a page of them) with earliest and latest."""
        return await self.send(calls.versions_call(from_version, limit))

    async def wait_ready(self, version: int, timeout: float = 30.0) -> models.ReadyBody:
        """Wait until ``version`` is applied on the server (``WaitTimeoutError`` if not)."""
        return await self.send(calls.ready_call(version, timeout))

    async def wait_for_metadata_completeness(self, ts: Timestamp) -> int:
        """Wait until the catalog is complete at ``ts``; return the version active then."""
        return await self.send(calls.completeness_call(ts))

    # -- security -------------------------------------------------------------------------

    async def create_token(
        self, role: str, ttl_s: int = 3600, subject: str = "catalog"
    ) -> models.TokenBody:
        """Issue a bearer token for ``role`` (reader, writer, admin); needs an admin token."""
        return await self.send(calls.token_call(role, ttl_s, subject))

    # -- data commits ---------------------------------------------------------------------

    async def commit_data(
        self,
        table_id: int,
        files: Sequence[DataFile],
        *,
        schema_version: int,
        mode: DataMode = "append",
        request_id: str,
    ) -> DataCommit:
        """Make written files of a table visible at one new timestamp (idempotent by id)."""
        return await self.send(
            calls.commit_data_call(
                table_id, files, schema_version=schema_version, mode=mode, request_id=request_id
            )
        )

    async def data_commits(
        self, table_id: int, at: Timestamp | None = None, *, history: bool = False
    ) -> models.DataCommitsBody:
        """Return the table's data commits visible at ``at`` (default: the server's now).

        With ``history``, every commit up to ``at``, also those an overwrite hid.
        """
        return await self.send(calls.data_commits_call(table_id, at, history))

    async def time(self) -> models.TimeBody:
        """Return the server's hybrid clock reading and its physical milliseconds."""
        return await self.send(calls.time_call())

    async def now(self) -> int:
        """Return the server's hybrid clock reading."""
        return (await self.time()).now

    async def diff(self, from_version: int, to_version: int) -> models.DiffBody:
        """Return the objects added, dropped or altered between two versions."""
        return await self.send(calls.diff_call(from_version, to_version))

    # -- operations -----------------------------------------------------------------------

    async def nodes(self) -> list[models.NodeInfo]:
        """Return the live catalog nodes (the node registry) and their applied versions."""
        return await self.send(calls.nodes_call())

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

    def events(
        self,
        from_version: int | None = None,
        *,
        last_event_id: str | None = None,
        schema: str | None = None,
        table: str | None = None,
        kinds: Iterable[CatalogEvent | str] | None = None,
    ) -> AsyncEventStream:
        """Return an async iterator of catalog events (see ``CatalogClient.events``).

        Filters as there. A live-only stream starts right after the latest version when it is
        entered (``async with``) or first read, whichever comes first.
        """
        cursor = EventCursor(from_version, last_event_id, filter_params(schema, table, kinds))
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
