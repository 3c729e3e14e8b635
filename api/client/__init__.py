"""The Python client of the catalog REST API: ``CatalogClient`` (sync) and ``AsyncCatalogClient``.

Both speak the same calls, return the catalog's own typed objects (``Catalog``,
``TableDescriptor``, ``ApplyResult``) and raise ``CatalogApiError`` subclasses carrying the
server's ``code``. Modules: ``calls`` (one request spec per endpoint, retry policy, failover;
no I/O), ``endpoint`` and ``client_base`` (each call a method of both clients, defined once),
``events`` (the event model and resumable SSE), ``errors``, ``sync``, ``aio``.

Installs alone (the ``client`` extra). May import: httpx, pydantic, api.wire (bodies and
error codes it shares with the server) and the catalog's models. Never the server, FastAPI,
the SQL parser or the Iceberg protocol (``tests/unit/api/test_client_stands_alone.py``).
"""

from api.client.aio import AsyncCatalogClient, AsyncEventStream
from api.client.calls import Commands, ReadyStatus, Timestamp
from api.client.errors import (
    AlreadyExistsError,
    CatalogApiError,
    CompactedError,
    ConflictError,
    EventStreamError,
    InvalidRequestError,
    NotFoundError,
    ResponseFormatError,
    ServerError,
    UnavailableError,
    UnreachableError,
    WaitTimeoutError,
)
from api.client.events import CatalogEventMessage
from api.client.retries import RetryPolicy
from api.client.sync import CatalogClient, EventStream
from catalog.apply_result import ApplyResult

__all__ = [
    "AlreadyExistsError",
    "ApplyResult",
    "AsyncCatalogClient",
    "AsyncEventStream",
    "CatalogApiError",
    "CatalogClient",
    "CatalogEventMessage",
    "Commands",
    "CompactedError",
    "ConflictError",
    "EventStream",
    "EventStreamError",
    "InvalidRequestError",
    "NotFoundError",
    "ReadyStatus",
    "ResponseFormatError",
    "RetryPolicy",
    "ServerError",
    "Timestamp",
    "UnavailableError",
    "UnreachableError",
    "WaitTimeoutError",
]
