"""What both clients share: one ``Call`` per endpoint, and the attempts that send it.

A ``Call`` says what to send and how to decode the answer; it holds no I/O, so the sync and
the async client differ only in how they send it and how they sleep between attempts.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import pydantic

from api.client.errors import (
    BAD_RESPONSE,
    UNREACHABLE,
    CatalogApiError,
    ResponseFormatError,
    UnreachableError,
    error_from_response,
)
from api.client.retries import Failover, RetryPolicy, describe, is_retryable, retry_after
from api.wire.models import (
    ApplyResultBody,
    CatalogBody,
    DataCommitRequest,
    DataCommitsBody,
    DiffBody,
    IndexBody,
    IndexesBody,
    NodeInfo,
    NodesBody,
    ReadyBody,
    SchemaBody,
    SchemasBody,
    SchemaSyncBody,
    TableBody,
    TimeBody,
    TokenBody,
    VersionsBody,
    ZoneBody,
    ZonesBody,
)
from api.wire.storage import TableKeysBody
from catalog.apply_result import ApplyResult
from catalog.catalog import Catalog
from catalog.commands import CommandBase, dump
from catalog.data.files import DataCommit, DataFile, DataMode
from catalog.descriptors import IndexDescriptor

T = TypeVar("T")
_M = TypeVar("_M", bound=pydantic.BaseModel)

Timestamp = int | dt.datetime | str
"""A point in time for ``at=``: a hybrid timestamp, an aware datetime, or RFC 3339 text."""

Commands = CommandBase | Mapping[str, Any] | Sequence[CommandBase | Mapping[str, Any]]
"""Commands for ``execute``: command objects or their JSON dicts, one or a list."""

DEFAULT_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request to the API and how to decode its answer."""

    method: str
    path: str
    decode: Callable[[httpx.Response], T]
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None
    extra_read_s: float = 0.0
    """Added to the read timeout: the server waits this long on purpose."""
    ok_statuses: frozenset[int] = frozenset()
    """Non-2xx statuses ``decode`` handles itself (not errors, not retried)."""


class Attempts(Generic[T]):
    """One call's attempts, without I/O: both clients send what it asks and report back.

    Iterating gives each attempt's URL and the pause to take before it; the client reports a
    transport failure with ``failed`` or an answer with ``answered`` (True: ``result`` is set),
    and raises ``error()`` once the attempts are spent.
    """

    def __init__(
        self, call: Call[T], failover: Failover, retry: RetryPolicy, base: httpx.Timeout
    ) -> None:
        self.call = call
        self.timeout = timeout_for(base, call.extra_read_s)
        self._failover = failover
        self._retry = retry
        self._urls = failover.order(retry.max_attempts)
        self._attempt = 0
        self._pause = 0.0
        self._failures: list[str] = []
        self._refused: CatalogApiError | None = None
        self.result: T

    def __iter__(self) -> Iterator[tuple[str, float]]:
        for attempt, url in enumerate(self._urls):
            self._attempt = attempt
            yield url, self._pause if attempt else 0.0

    def request(self, url: str) -> dict[str, Any]:
        """Return the arguments of ``httpx``'s ``request`` for the attempt at ``url``."""
        call = self.call
        return {
            "method": call.method,
            "url": url + call.path,
            "params": call.params,
            "json": call.body,
            "timeout": self.timeout,
        }

    def failed(self, url: str, error: httpx.TransportError) -> httpx.Response | None:
        """Record a transport failure (re-raised when no other attempt can help).

        Returns None, the attempt's answer: there is none, and ``answered`` moves on.
        """
        if not is_retryable(error):
            raise error
        self._failures.append(describe(url, error))
        # A refused connection never reached the server: try the next URL at once.
        fresh = isinstance(error, httpx.ConnectError) and self._attempt + 1 < len(
            self._failover.urls
        )
        self._pause = 0.0 if fresh else self._retry.pause(self._attempt + 1)
        return None

    def answered(self, url: str, response: httpx.Response | None) -> bool:
        """Take an answer: True with ``result`` set, False when it says "try again" or is None."""
        if response is None:
            return False
        call = self.call
        wait = None if response.status_code in call.ok_statuses else retry_after(response)
        if wait is not None:
            self._refused = error_from_response(response)
            self._failures.append(f"{url}: {self._refused}")
            self._pause = self._retry.pause(self._attempt + 1, wait)
            return False
        self._failover.answered(url)
        self.result = decode(call, response)
        return True

    def error(self) -> Exception:
        """Return what to raise once every attempt was spent."""
        return self._refused or unreachable(self.call, self._failures)


@dataclass(frozen=True, slots=True)
class ReadyStatus:
    """``GET /readyz``: whether the node serves, and why not."""

    ready: bool
    latest_version: int | None
    detail: str


def auth_headers(headers: Mapping[str, str] | None, token: str | None) -> dict[str, str]:
    """Return ``headers`` with ``Authorization: Bearer <token>`` when a token is given."""
    merged = dict(headers or {})
    if token:
        merged["Authorization"] = f"Bearer {token}"
    return merged


def timeout_for(base: httpx.Timeout, extra_read_s: float) -> httpx.Timeout:
    """Return ``base`` with ``extra_read_s`` more to read (for calls that wait server-side)."""
    if not extra_read_s or base.read is None:
        return base
    return httpx.Timeout(
        connect=base.connect, read=base.read + extra_read_s, write=base.write, pool=base.pool
    )


def unreachable(call: Call[Any], failures: list[str]) -> UnreachableError:
    """Return the error raised when every attempt failed without a response."""
    return UnreachableError(
        UNREACHABLE,
        f"{call.method} {call.path}: no catalog server answered after {len(failures)} "
        f"attempt(s): {'; '.join(failures)}",
    )


def decode(call: Call[T], response: httpx.Response) -> T:
    """Decode ``response`` for ``call``.

    Raises:
        CatalogApiError: the typed error of a refused request.
        ResponseFormatError: a 2xx body of the wrong shape.
    """
    if response.is_success or response.status_code in call.ok_statuses:
        try:
            return call.decode(response)
        except (pydantic.ValidationError, ValueError, KeyError, TypeError) as e:
            raise ResponseFormatError(
                BAD_RESPONSE,
                f"{call.method} {call.path}: unexpected response: {e}",
                status=response.status_code,
                url=str(response.request.url),
            ) from e
    raise error_from_response(response)


# -- the calls ----------------------------------------------------------------------------


def segment(text: str) -> str:
    """Quote one path segment (an object name)."""
    return quote(text, safe="")


def timestamp_param(at: Timestamp) -> str:
    """Return ``at=`` as the server reads it.

    Raises:
        ValueError: a naive datetime (its offset would be a guess), or a negative timestamp.
    """
    if isinstance(at, dt.datetime):
        if at.tzinfo is None:
            raise ValueError("at= needs an aware datetime (with tzinfo)")
        return at.isoformat()
    if isinstance(at, int):
        if at < 0:
            raise ValueError("a hybrid timestamp is not negative")
        return str(at)
    return at


def read_params(version: int | None, at: Timestamp | None) -> dict[str, str]:
    """Return the query of a read: ``version=`` or ``at=`` (not both), or nothing for latest.

    Raises:
        ValueError: both were given.
    """
    if version is not None and at is not None:
        raise ValueError("give either version= or at=, not both")
    if version is not None:
        return {"version": str(version)}
    if at is not None:
        return {"at": timestamp_param(at)}
    return {}


def json_of(model: type[_M]) -> Callable[[httpx.Response], _M]:
    """Return a decoder of an answer's JSON body into ``model``."""
    return lambda r: model.model_validate_json(r.content)


def read_call(
    path: str, decode: Callable[[httpx.Response], T], version: int | None, at: Timestamp | None
) -> Call[T]:
    """Return a ``GET`` of ``path`` at ``version``, as of ``at``, or the latest."""
    return Call("GET", path, decode, params=read_params(version, at))


def command_dicts(commands: Commands) -> list[Any]:
    """Return the JSON of ``commands``: command objects are dumped, dicts are sent as they are.

    Dicts are not parsed here: the server is the one authority on what a command is, so a
    client older than the server can still send the newer server's commands.
    """
    many: Sequence[CommandBase | Mapping[str, Any]] = (
        [commands] if isinstance(commands, CommandBase | Mapping) else commands
    )
    return [dump([c])[0] if isinstance(c, CommandBase) else dict(c) for c in many]


def _apply_result(response: httpx.Response) -> ApplyResult:
    body = ApplyResultBody.model_validate_json(response.content)
    return ApplyResult(
        body.version,
        tuple(body.applied),
        body.activation_ts,
        nodes_synced=None if body.nodes_synced is None else tuple(body.nodes_synced),
        nodes_lagging=None if body.nodes_lagging is None else tuple(body.nodes_lagging),
    )


def _ddl_call(
    path: str, body: dict[str, Any], wait_for_nodes: float | None, message: str | None
) -> Call[ApplyResult]:
    if message is not None:
        body = {**body, "message": message}
    if wait_for_nodes is None:
        return Call("POST", path, _apply_result, body=body)
    if not 0 <= wait_for_nodes < float("inf"):
        raise ValueError(f"wait_for_nodes must be finite and >= 0, got {wait_for_nodes}")
    body = {**body, "wait_for_nodes_s": float(wait_for_nodes)}
    return Call("POST", path, _apply_result, body=body, extra_read_s=float(wait_for_nodes))


def execute_call(
    commands: Commands,
    request_id: str | None = None,
    *,
    wait_for_nodes: float | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Apply commands as one atomic batch; return once the change is visible everywhere.

    ``POST /v1/ddl``; with ``wait_for_nodes`` the read timeout grows by that wait.

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
    body = {"commands": command_dicts(commands), "request_id": request_id or uuid.uuid4().hex}
    return _ddl_call("/v1/ddl", body, wait_for_nodes, message)


def sql_call(
    text: str,
    request_id: str | None = None,
    *,
    wait_for_nodes: float | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Apply DDL statements (``;``-separated) as one atomic batch (see ``execute``).

    ``POST /v1/sql``, with a request id (a new uuid4 when none is given).
    """
    body = {"sql": text, "request_id": request_id or uuid.uuid4().hex}
    return _ddl_call("/v1/sql", body, wait_for_nodes, message)


def catalog_from_body(body: CatalogBody) -> Catalog:
    """Rebuild the typed ``Catalog`` the server holds from its JSON."""
    return Catalog.from_parts(**dict(body))


def catalog_call(version: int | None = None, at: Timestamp | None = None) -> Call[Catalog]:
    """Return the whole catalog at ``version``, as of ``at``, or the latest.

    ``GET /v1/catalog``.
    """
    decode = json_of(CatalogBody)
    return read_call("/v1/catalog", lambda r: catalog_from_body(decode(r)), version, at)


def table_call(
    schema: str, name: str, version: int | None = None, at: Timestamp | None = None
) -> Call[TableBody]:
    """Return one table with its indexes, zone and the version read.

    ``GET /v1/schemas/{schema}/tables/{name}``.
    """
    return read_call(
        f"/v1/schemas/{segment(schema)}/tables/{segment(name)}", json_of(TableBody), version, at
    )


_NAMES: pydantic.TypeAdapter[list[str]] = pydantic.TypeAdapter(list[str])


def tables_call(
    schema: str = "PUBLIC", version: int | None = None, at: Timestamp | None = None
) -> Call[list[str]]:
    """Return the names of a schema's tables (``GET /v1/schemas/{schema}/tables``)."""
    path = f"/v1/schemas/{segment(schema)}/tables"
    return read_call(path, lambda r: _NAMES.validate_json(r.content), version, at)


def index_call(
    schema: str, name: str, version: int | None = None, at: Timestamp | None = None
) -> Call[IndexDescriptor]:
    """Return one (alive) index (``GET /v1/schemas/{schema}/indexes/{name}``)."""
    decode = json_of(IndexBody)
    path = f"/v1/schemas/{segment(schema)}/indexes/{segment(name)}"
    return read_call(path, lambda r: decode(r).index, version, at)


def zone_call(name: str, version: int | None = None, at: Timestamp | None = None) -> Call[ZoneBody]:
    """Return one zone with the ids of its tables (``GET /v1/zones/{name}``)."""
    return read_call(f"/v1/zones/{segment(name)}", json_of(ZoneBody), version, at)


def schemas_call(version: int | None = None, at: Timestamp | None = None) -> Call[SchemasBody]:
    """Return every schema (``GET /v1/schemas``)."""
    return read_call("/v1/schemas", json_of(SchemasBody), version, at)


def schema_call(
    name: str, version: int | None = None, at: Timestamp | None = None
) -> Call[SchemaBody]:
    """Return one schema with the names of its tables and indexes (``GET /v1/schemas/{name}``)."""
    return read_call(f"/v1/schemas/{segment(name)}", json_of(SchemaBody), version, at)


def indexes_call(
    schema: str | None = None,
    table: str | None = None,
    version: int | None = None,
    at: Timestamp | None = None,
) -> Call[list[IndexDescriptor]]:
    """Return the alive indexes: all, a schema's, or a table's (in PUBLIC without schema).

    ``GET /v1/indexes``.
    """
    decode = json_of(IndexesBody)
    params = read_params(version, at)
    params.update({k: v for k, v in (("schema", schema), ("table", table)) if v is not None})
    return Call("GET", "/v1/indexes", lambda r: decode(r).indexes, params=params)


def zones_call(version: int | None = None, at: Timestamp | None = None) -> Call[ZonesBody]:
    """Return every zone and the name of the default one (``GET /v1/zones``)."""
    return read_call("/v1/zones", json_of(ZonesBody), version, at)


def versions_call(from_version: int | None = None, limit: int | None = None) -> Call[VersionsBody]:
    """Return the retained versions (a page of them) with earliest and latest.

    ``GET /v1/versions``.
    """
    params = {"from_version": str(from_version)} if from_version is not None else {}
    if limit is not None:
        params["limit"] = str(limit)
    return Call("GET", "/v1/versions", json_of(VersionsBody), params=params)


def ready_call(version: int, timeout: float = 30.0) -> Call[ReadyBody]:
    """Wait until ``version`` is applied on the server.

    ``GET /v1/versions/{N}/ready?timeout=``: the read timeout grows by the wait.

    Raises:
        WaitTimeoutError: not within ``timeout`` seconds.
    """
    return Call(
        "GET",
        f"/v1/versions/{version}/ready",
        json_of(ReadyBody),
        params={"timeout": repr(float(timeout))},
        extra_read_s=timeout,
    )


def completeness_call(ts: Timestamp) -> Call[int]:
    """Wait until the catalog is complete at ``ts``; return the version active then.

    ``POST /v1/schema-sync/wait?at=``.
    """
    return Call(
        "POST",
        "/v1/schema-sync/wait",
        lambda r: SchemaSyncBody.model_validate_json(r.content).version,
        params={"at": timestamp_param(ts)},
    )


def commit_data_call(
    table_id: int,
    files: Sequence[DataFile],
    *,
    schema_version: int,
    mode: DataMode = "append",
    request_id: str,
    expected_seq: int | None = None,
    removed: Sequence[str] = (),
) -> Call[DataCommit]:
    """Make written files of a table visible at one new timestamp (idempotent by id).

    With ``expected_seq``, only if the table's latest data commit is still that one (0: none
    yet); otherwise ``ConflictError`` PRECONDITION_FAILED and nothing is committed.
    ``removed`` names files visible as of ``expected_seq`` that the commit removes.
    ``POST /v1/data/commits``.
    """
    body = DataCommitRequest(
        table_id=table_id,
        schema_version=schema_version,
        mode=mode,
        files=list(files),
        request_id=request_id,
        expected_seq=expected_seq,
        removed=list(removed),
    )
    dumped = body.model_dump(mode="json")
    if expected_seq is None:
        del dumped["expected_seq"]  # the body an older server takes
    if not removed:
        del dumped["removed"]
    return Call("POST", "/v1/data/commits", json_of(DataCommit), body=dumped)


def data_commits_call(
    table_id: int, at: Timestamp | None = None, *, history: bool = False
) -> Call[DataCommitsBody]:
    """Return the table's data commits visible at ``at`` (default: the server's now).

    With ``history``, every commit up to ``at``, also those an overwrite hid (those merged
    at expiry stand as the one they were merged into)
    (``GET /v1/data/commits?table_id=&at=&history=``).
    """
    params = {"table_id": str(table_id), "history": str(history).lower()}
    if at is not None:
        params["at"] = timestamp_param(at)
    return Call(
        "GET",
        "/v1/data/commits",
        json_of(DataCommitsBody),
        params=params,
    )


def token_call(role: str, ttl_s: int = 3600, subject: str = "catalog") -> Call[TokenBody]:
    """Issue a bearer token for ``role`` (reader, writer, admin); needs an admin token.

    ``POST /v1/tokens``.
    """
    return Call(
        "POST",
        "/v1/tokens",
        json_of(TokenBody),
        body={"role": role, "ttl_s": ttl_s, "subject": subject},
    )


def time_call() -> Call[TimeBody]:
    """Return the server's hybrid clock reading and its physical milliseconds (``GET /v1/time``)."""
    return Call("GET", "/v1/time", json_of(TimeBody))


def diff_call(from_version: int, to_version: int) -> Call[DiffBody]:
    """Return the objects added, dropped or altered between two versions (``GET /v1/diff``)."""
    return Call(
        "GET",
        "/v1/diff",
        json_of(DiffBody),
        params={"from": str(from_version), "to": str(to_version)},
    )


def nodes_call() -> Call[list[NodeInfo]]:
    """Return the live catalog nodes (the node registry) and their applied versions.

    ``GET /v1/cluster/nodes``.
    """
    return Call(
        "GET", "/v1/cluster/nodes", lambda r: NodesBody.model_validate_json(r.content).nodes
    )


def health_call() -> Call[bool]:
    """``GET /healthz``."""
    return Call("GET", "/healthz", lambda r: r.json().get("status") == "ok")


def _ready_status(response: httpx.Response) -> ReadyStatus:
    body = response.json()
    if response.status_code == 200:
        return ReadyStatus(True, int(body["latest_version"]), str(body.get("status", "ready")))
    return ReadyStatus(False, None, str(body.get("detail", "not ready")))


def readiness_call() -> Call[ReadyStatus]:
    """``GET /readyz``: a 503 is an answer (not ready), not an error."""
    return Call("GET", "/readyz", _ready_status, ok_statuses=frozenset({503}))


def table_keys_call(table_id: int, *, write: bool = False) -> Call[TableKeysBody]:
    """Return the table's folder and, on S3, short-lived keys for it (``GET /v1/data/keys``).

    Read-only keys take ``SELECT``; ``write`` takes ``MODIFY``.
    """
    params = {"table_id": str(table_id), "write": str(write).lower()}
    return Call("GET", "/v1/data/keys", json_of(TableKeysBody), params=params)
