"""``CatalogClient``: the blocking client (``httpx.Client``)."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

import httpx

from api import models
from api.client import calls
from api.client.calls import Call, Commands, ReadyStatus, Timestamp
from api.client.client_base import ClientBase
from api.client.closing import ClosedOnExit
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


class CatalogClient(ClientBase, ClosedOnExit):
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
    """

    def __init__(
        self,
        urls: str | Sequence[str] = calls.DEFAULT_URL,
        *,
        timeout: float | httpx.Timeout = 10.0,
        retry: RetryPolicy | None = None,
        stream_timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
    ) -> None:
        super().__init__(urls, timeout, retry, stream_timeout_s, headers, token)
        self._http = httpx.Client(transport=transport, **self._http_options())

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

    # -- writes ---------------------------------------------------------------------------

    def execute(
        self,
        commands: Commands,
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
        message: str | None = None,
    ) -> ApplyResult:
        """Apply commands as one atomic batch; return once the change is visible everywhere.

        Args:
            commands: command objects (``catalog.commands``) or their JSON dicts.
            request_id: makes retries safe; a new uuid4 when None (reused by every retry). An
                id names one attempt: once committed or refused, every request under it gets
                that same answer, even after the catalog changed.
            wait_for_nodes: also wait, at most this many seconds (up to 60), until every live
                registered node has applied the new version; the result's ``nodes_synced``
                and ``nodes_lagging`` say which did.
            message: why, in your words (at most 1,000 characters); the new version records
                it with who asked and from which client (``versions()``, the events).

        Raises:
            CatalogApiError: the batch was refused (e.g. ``AlreadyExistsError``).
        """
        return self.send(calls.execute_call(commands, request_id, wait_for_nodes, message))

    def sql(
        self,
        text: str,
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
        message: str | None = None,
    ) -> ApplyResult:
        """Apply DDL statements (``;``-separated) as one atomic batch (see ``execute``)."""
        return self.send(calls.sql_call(text, request_id, wait_for_nodes, message))

    # -- reads ----------------------------------------------------------------------------

    def catalog(self, version: int | None = None, at: Timestamp | None = None) -> Catalog:
        """Return the whole catalog at ``version``, as of ``at``, or the latest."""
        return self.send(calls.catalog_call(version, at))

    def table(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> TableDescriptor:
        """Return one table's descriptor."""
        return self.table_info(schema, name, version, at).table

    def table_info(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.TableBody:
        """Return one table with its indexes, zone and the version read."""
        return self.send(calls.table_call(schema, name, version, at))

    def schema_versions(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> list[TableVersion]:
        """Return every schema version of a table (its columns at each), oldest first."""
        pages = SchemaVersionPages(schema, name, version, at)
        while pages.next is not None:
            pages.take(self.send(pages.next))
        return pages.found

    def tables(
        self, schema: str = "PUBLIC", version: int | None = None, at: Timestamp | None = None
    ) -> list[str]:
        """Return the names of a schema's tables."""
        return self.send(calls.tables_call(schema, version, at))

    def index(
        self, schema: str, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> IndexDescriptor:
        """Return one (alive) index."""
        return self.send(calls.index_call(schema, name, version, at))

    def zone(
        self, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.ZoneBody:
        """Return one zone with the ids of its tables."""
        return self.send(calls.zone_call(name, version, at))

    def schemas(
        self, version: int | None = None, at: Timestamp | None = None
    ) -> models.SchemasBody:
        """Return every schema."""
        return self.send(calls.schemas_call(version, at))

    def schema(
        self, name: str, version: int | None = None, at: Timestamp | None = None
    ) -> models.SchemaBody:
        """Return one schema with the names of its tables and indexes."""
        return self.send(calls.schema_call(name, version, at))

    def indexes(
        self,
        schema: str | None = None,
        table: str | None = None,
        version: int | None = None,
        at: Timestamp | None = None,
    ) -> list[IndexDescriptor]:
        """Return the alive indexes: all, a schema's, or a table's (in PUBLIC without schema)."""
        return self.send(calls.indexes_call(schema, table, version, at))

    def zones(self, version: int | None = None, at: Timestamp | None = None) -> models.ZonesBody:
        """Return every zone and the name of the default one."""
        return self.send(calls.zones_call(version, at))

    # -- versions and time ----------------------------------------------------------------

    def versions(
        self, from_version: int | None = None, limit: int | None = None
    ) -> models.VersionsBody:
        """Return the retained versions (a page of them) with earliest and latest."""
        return self.send(calls.versions_call(from_version, limit))

    def wait_ready(self, version: int, timeout: float = 30.0) -> models.ReadyBody:
        """Wait until ``version`` is applied on the server.

        Raises:
            WaitTimeoutError: not within ``timeout`` seconds.
        """
        return self.send(calls.ready_call(version, timeout))

    def wait_for_metadata_completeness(self, ts: Timestamp) -> int:
        """Wait until the catalog is complete at ``ts``; return the version active then."""
        return self.send(calls.completeness_call(ts))

    # -- security -------------------------------------------------------------------------

    def create_token(
        self, role: str, ttl_s: int = 3600, subject: str = "catalog"
    ) -> models.TokenBody:
        """Issue a bearer token for ``role`` (reader, writer, admin); needs an admin token."""
        return self.send(calls.token_call(role, ttl_s, subject))

    # -- data commits ---------------------------------------------------------------------

    def commit_data(
        self,
        table_id: int,
        files: Sequence[DataFile],
        *,
        schema_version: int,
        mode: DataMode = "append",
        request_id: str,
    ) -> DataCommit:
        """Make written files of a table visible at one new timestamp (idempotent by id)."""
        return self.send(
            calls.commit_data_call(
                table_id, files, schema_version=schema_version, mode=mode, request_id=request_id
            )
        )

    def data_commits(
        self, table_id: int, at: Timestamp | None = None, *, history: bool = False
    ) -> models.DataCommitsBody:
        """Return the table's data commits visible at ``at`` (default: the server's now).

        With ``history``, every commit up to ``at``, also those an overwrite hid.
        """
        return self.send(calls.data_commits_call(table_id, at, history))

    def time(self) -> models.TimeBody:
        """Return the server's hybrid clock reading and its physical milliseconds."""
        return self.send(calls.time_call())

    def now(self) -> int:
        """Return the server's hybrid clock reading (pin a job's timestamp with it)."""
        return self.time().now

    def diff(self, from_version: int, to_version: int) -> models.DiffBody:
        """Return the objects added, dropped or altered between two versions."""
        return self.send(calls.diff_call(from_version, to_version))

    # -- operations -----------------------------------------------------------------------

    def nodes(self) -> list[models.NodeInfo]:
        """Return the live catalog nodes (the node registry) and their applied versions."""
        return self.send(calls.nodes_call())

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

    def events(
        self,
        from_version: int | None = None,
        *,
        last_event_id: str | None = None,
        schema: str | None = None,
        table: str | None = None,
        kinds: Iterable[CatalogEvent | str] | None = None,
    ) -> EventStream:
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
        (it asks ``versions()`` now), so events of later changes are never missed, even
        before the first one is read.
        """
        cursor = EventCursor(from_version, last_event_id, filter_params(schema, table, kinds))
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
