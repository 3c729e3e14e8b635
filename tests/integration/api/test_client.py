"""The Python client against real servers: every call, typed errors, failover, exactly once."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest

from api.client import (
    AlreadyExistsError,
    ApplyResult,
    AsyncCatalogClient,
    CatalogApiError,
    CatalogClient,
    CompactedError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RetryPolicy,
    UnreachableError,
    WaitTimeoutError,
)
from catalog import ErrorCode, IndexStatus, TableDescriptor
from catalog import commands as c
from catalog.identifiers import quote_name
from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.options import NodeOptions
from schemasync.clock import hlc, physical_of
from tests.integration.api.servers import RunningServer, ServerFactory, free_port
from tests.integration.api.support import RecordingTransport, create_table, request_ids_in_log

FAST = RetryPolicy(max_attempts=3, backoff_s=0.02, backoff_cap_s=0.1)


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def test_every_read_and_write(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client:
        assert client.health() is True
        ready = client.ready()
        assert ready.ready and ready.latest_version == 1

        result = client.execute(
            [create_table("T"), c.CreateIndex(table="T", name="T_V", columns=["V"])]
        )
        assert isinstance(result, ApplyResult)
        assert result.version == 2 and result.applied == (True, True)
        again = client.execute({**create_table("T").model_dump(mode="json"), "if_not_exists": True})
        assert again.applied == (False,)
        by_sql = client.sql("CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(10))")
        assert by_sql.applied == (True,) and by_sql.version > result.version

        # The catalog is rebuilt into the very object the server holds.
        cat = client.catalog()
        assert cat.version == by_sql.version
        assert cat.digest() == api_server.node.service.latest_catalog().digest()
        assert client.catalog(version=1).digest() == api_server.node.service.catalog(1).digest()
        assert client.catalog(version=result.version).table("PUBLIC", "T").name == "T"

        table = client.table("PUBLIC", "T")
        assert isinstance(table, TableDescriptor)
        assert table == api_server.node.service.latest_catalog().table("PUBLIC", "T")
        info = client.table_info("PUBLIC", "T", version=result.version)
        assert info.version == result.version and info.schema_ == "PUBLIC"
        assert {i.name for i in info.indexes} == {"T_PK", "T_V"}
        assert info.zone.id == table.zone_id
        assert sorted(client.tables("PUBLIC")) == ["T", "U"]
        assert client.tables("PUBLIC", version=result.version) == ["T"]
        index = client.index("PUBLIC", "T_V")
        assert index.table_id == table.id and index.status is IndexStatus.AVAILABLE
        zone = client.zone(quote_name(info.zone.name))  # names are read as typed in SQL
        assert table.id in zone.table_ids

        versions = client.versions()
        assert versions.earliest == 1 and versions.latest == by_sql.version
        assert [v.version for v in versions.versions] == list(range(1, by_sql.version + 1))
        assert [v.version for v in client.versions(from_version=2, limit=1).versions] == [2]
        ready_body = client.wait_ready(by_sql.version, timeout=5)
        assert ready_body.ready and ready_body.activation_ts == by_sql.activation_ts

        changes = client.diff(1, result.version)
        assert {(ch.object_type, ch.name, ch.change) for ch in changes.changes} == {
            ("zone", "Default", "added"),  # with the first table
            ("table", "T", "added"),
            ("index", "T_PK", "added"),
            ("index", "T_V", "added"),
        }

        now = client.now()
        assert client.time().now > now
        assert client.wait_for_metadata_completeness(now) == by_sql.version
        # at= as a hybrid timestamp or an aware datetime reads the catalog active then.
        assert client.catalog(at=now).version == by_sql.version
        before = hlc(physical_of(result.activation_ts) - 1)
        assert client.table_info("PUBLIC", "U", at=client.now()).version == by_sql.version
        assert client.catalog(at=before).version == 1
        moment = dt.datetime.fromtimestamp(physical_of(now) / 1000, tz=dt.UTC)
        assert client.catalog(at=moment).version == by_sql.version
        assert client.catalog(at=moment.isoformat()).version == by_sql.version

        nodes = client.nodes()
        assert [n.name for n in nodes] == ["n1"] and nodes[0].applied_version == by_sql.version


def test_errors_are_typed_with_the_servers_code(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url, retry=FAST) as client:
        client.execute([create_table("T"), c.CreateSchema(name="S"), create_table("X", "S")])
        cases: list[tuple[type[CatalogApiError], str, int, object]] = [
            (NotFoundError, "TABLE_NOT_FOUND", 404, lambda: client.table("PUBLIC", "NOPE")),
            (NotFoundError, "SCHEMA_NOT_FOUND", 404, lambda: client.tables("NOPE")),
            (NotFoundError, "INDEX_NOT_FOUND", 404, lambda: client.index("PUBLIC", "NOPE")),
            (NotFoundError, "ZONE_NOT_FOUND", 404, lambda: client.zone("NOPE")),
            (NotFoundError, "VERSION_NOT_FOUND", 404, lambda: client.catalog(version=99)),
            (NotFoundError, "VERSION_NOT_FOUND", 404, lambda: client.diff(1, 99)),
            (AlreadyExistsError, "TABLE_EXISTS", 409, lambda: client.execute(create_table("T"))),
            (
                ConflictError,
                "SCHEMA_NOT_EMPTY",
                409,
                lambda: client.execute(c.DropSchema(name="S")),
            ),
            (
                InvalidRequestError,
                "VALIDATION_ERROR",
                422,
                lambda: client.execute({"op": "create_table", "name": "X"}),
            ),
            (
                InvalidRequestError,
                "VALIDATION_ERROR",
                422,
                lambda: client.execute({"op": "no_such_op"}),
            ),
            (InvalidRequestError, "VALIDATION_ERROR", 422, lambda: client.execute([])),
            (InvalidRequestError, "VALIDATION_ERROR", 422, lambda: client.sql("SELECT 1")),
            (
                InvalidRequestError,
                "TIMESTAMP_IN_FUTURE",
                422,
                lambda: client.catalog(at=hlc(physical_of(client.now()) + 3_600_000)),
            ),
            (WaitTimeoutError, "TIMEOUT", 504, lambda: client.wait_ready(99, timeout=0.2)),
        ]
        for kind, code, status, call in cases:
            with pytest.raises(kind) as info:
                call()  # type: ignore[operator]
            assert (info.value.code, info.value.status) == (code, status), info.value
            assert info.value.detail and info.value.url
        with pytest.raises(InvalidRequestError) as bad:
            client.execute({"op": "create_table", "name": "X"})
        assert bad.value.errors and all("loc" in e for e in bad.value.errors)
        # Codes compare equal to the domain's ErrorCode.
        with pytest.raises(AlreadyExistsError) as exists:
            client.execute(create_table("T"))
        assert exists.value.code == ErrorCode.TABLE_EXISTS
        # Arguments the client refuses itself, before any request.
        with pytest.raises(ValueError, match="either"):
            client.catalog(version=1, at=1)
        with pytest.raises(ValueError, match="aware"):
            client.catalog(at=dt.datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="base URL"):
        CatalogClient("ftp://example")


def test_compacted_versions_raise_compacted_error(
    api_servers: ServerFactory, store_url: str
) -> None:
    server = api_servers.start(store_url)
    with CatalogClient(server.url, retry=FAST) as client:
        for name in ("A", "B", "C"):
            client.execute(create_table(name))
        # Compact through a second node on the same store; the server notices the snapshot.
        with SyncCatalogNode.open(
            store_url, "compactor", NodeOptions(delay_ms=20, max_clock_skew_ms=10)
        ) as n:
            assert n._run(n.node.manager.compact(keep_versions=1)) == 4
        deadline = time.monotonic() + 15
        while client.versions().earliest != 4:
            assert time.monotonic() < deadline, "the server never noticed the snapshot"
            time.sleep(0.1)
        with pytest.raises(CompactedError) as info:
            client.catalog(version=2)
        assert (info.value.code, info.value.status) == ("VERSION_COMPACTED", 410)
        with pytest.raises(CompactedError):
            next(client.events(from_version=1))
        assert client.catalog(version=4).version == 4


def test_unreachable_when_no_url_answers() -> None:
    started = time.monotonic()
    with (
        CatalogClient([dead_url(), dead_url()], retry=FAST) as client,
        pytest.raises(UnreachableError) as info,
    ):
        client.versions()
    assert info.value.code == "UNREACHABLE" and info.value.status is None
    assert info.value.detail.count("ConnectError") == 3
    assert time.monotonic() - started < 5
    with CatalogClient(dead_url(), retry=FAST) as client:
        # The probes answer rather than raise.
        assert client.health() is False
        assert client.ready().ready is False


def test_failover_to_the_next_url(api_servers: ServerFactory, store_url: str) -> None:
    a = api_servers.start(store_url, node_name="a")
    b = api_servers.start(store_url, node_name="b")
    transport = RecordingTransport()
    with CatalogClient([dead_url(), a.url, b.url], retry=FAST, transport=transport) as client:
        first = client.execute(create_table("T"))
        assert client.table("PUBLIC", "T").name == "T"
        a.stop()
        # A read at now through the other node right after the write contains it.
        second = client.execute(create_table("U"))
        assert second.version == first.version + 1
        assert set(client.tables("PUBLIC", at=client.now())) == {"T", "U"}
        assert client.nodes()[0].name == "b"
    assert b.node.service.latest_version == second.version


def test_a_retry_after_a_lost_response_is_applied_once(
    api_servers: ServerFactory, store_url: str
) -> None:
    """The first attempt times out after the server committed; the retry gets the same result."""
    server = api_servers.start(store_url, delay_ms=800)
    transport = RecordingTransport()
    policy = RetryPolicy(max_attempts=8, backoff_s=0.1, backoff_cap_s=0.3)
    with CatalogClient(server.url, timeout=0.3, retry=policy, transport=transport) as client:
        before = client.versions().latest
        result = client.execute(create_table("T"))
        assert result.version == before + 1 and result.applied == (True,)
        posts = [body for method, path, body in transport.sent if path == "/v1/ddl"]
        assert len(posts) >= 2, "the first attempt should have timed out"
        request_ids = {body["request_id"] for body in posts}  # type: ignore[index]
        assert len(request_ids) == 1
        (request_id,) = request_ids
        assert client.versions().latest == before + 1
        # Asked again with the same id, the server answers from the log.
        assert client.execute(create_table("T"), request_id=request_id) == result
    assert request_ids_in_log(store_url)[request_id] == [result.version]
    tables = [t.name for t in server.node.service.latest_catalog().tables()]
    assert tables.count("T") == 1


def test_sql_retries_reuse_the_request_id(api_servers: ServerFactory, store_url: str) -> None:
    server = api_servers.start(store_url, delay_ms=800)
    transport = RecordingTransport()
    policy = RetryPolicy(max_attempts=8, backoff_s=0.1, backoff_cap_s=0.3)
    with CatalogClient(server.url, timeout=0.3, retry=policy, transport=transport) as client:
        result = client.sql("CREATE TABLE t (id INT PRIMARY KEY)", request_id="job-42")
    posts = [body for _, path, body in transport.sent if path == "/v1/sql"]
    assert len(posts) >= 2 and all(b["request_id"] == "job-42" for b in posts)  # type: ignore[index]
    assert request_ids_in_log(store_url)["job-42"] == [result.version]


def test_async_client(api_servers: ServerFactory, store_url: str) -> None:
    server = api_servers.start(store_url)

    async def scenario() -> None:
        async with AsyncCatalogClient([dead_url(), server.url], retry=FAST) as client:
            assert await client.health() is True
            assert (await client.ready()).ready
            result = await client.execute(create_table("T"))
            assert result.version == 2 and result.applied == (True,)
            by_sql = await client.sql("CREATE INDEX t_v ON t (v)")
            cat = await client.catalog()
            assert cat.digest() == server.node.service.latest_catalog().digest()
            assert (await client.table("PUBLIC", "T")).name == "T"
            assert (await client.table_info("PUBLIC", "T")).version == by_sql.version
            assert await client.tables() == ["T"]
            assert (await client.index("PUBLIC", "T_V")).name == "T_V"
            assert (
                await client.zone(quote_name(cat.zone_by_id(cat.table("PUBLIC", "T").zone_id).name))
            ).table_ids
            assert (await client.versions()).latest == by_sql.version
            assert (await client.wait_ready(by_sql.version, 5)).ready
            now = await client.now()
            assert await client.wait_for_metadata_completeness(now) == by_sql.version
            assert (await client.catalog(at=now)).version == by_sql.version
            assert [ch.name for ch in (await client.diff(2, 3)).changes] == ["T_V"]
            assert (await client.nodes())[0].applied_version == by_sql.version
            with pytest.raises(AlreadyExistsError):
                await client.execute(create_table("T"))
            with pytest.raises(WaitTimeoutError):
                await client.wait_ready(99, 0.1)
            async with client.events(from_version=2) as events:
                got = [await anext(events) for _ in range(5)]
                assert [e.id for e in got] == ["2.0", "2.1", "2.3", "2.4", "3.0"]
                live = asyncio.create_task(anext(events))
                await client.execute(create_table("U"))
                assert (await asyncio.wait_for(live, 10)).id == "4.0"
                assert events.last_event_id == "4.0"

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_schema_versions_follow_every_page(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client:
        client.execute(create_table("WIDE"))
        for i in range(24):  # 25 schema versions: two pages of at most 20
            client.execute(
                c.AddColumns(table="WIDE", columns=[c.Column(name=f"C{i}", type="INT32")])
            )
        versions = client.schema_versions("PUBLIC", "wide")
        assert [v.version for v in versions] == list(range(1, 26))
        assert [col.name for col in versions[-1].columns][-1] == "C23"
        earlier = client.schema_versions("PUBLIC", "WIDE", version=3)  # as of catalog version 3
        assert [v.version for v in earlier] == [1, 2]

    async def from_the_async_client() -> list[int]:
        async with AsyncCatalogClient(api_server.url) as client:
            return [v.version for v in await client.schema_versions("PUBLIC", "WIDE")]

    assert asyncio.run(from_the_async_client()) == list(range(1, 26))
