"""Data commits of many tables at once: sent together, each writer still gets its own answer."""

from __future__ import annotations

import asyncio

import pytest

from catalog import CatalogError, ErrorCode
from catalog.data.files import DataCommit, DataFile
from catalog.data.log import DataCommitLog
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from deploy.etcd_server import EtcdServer
from tests.integration.catalog.support import create_table, run
from tests.integration.updatelog.etcd_support import etcd_log
from tests.integration.updatelog.faultproxy import FaultProxy

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)


def _file(name: str) -> list[DataFile]:
    return [DataFile(path=f"{name}.parquet", partition=0, rows=1, size=10)]


async def _tables(node: CatalogNode, count: int) -> list[int]:
    for i in range(count):
        await node.manager.execute(create_table(f"T{i}"))
    catalog = node.service.latest_catalog()
    return [catalog.table("PUBLIC", f"T{i}").id for i in range(count)]


async def _append(
    node: CatalogNode, table_id: int, name: str, expected_seq: int | None = None
) -> DataCommit:
    return await node.data.commit(
        table_id,
        _file(name),
        schema_version=1,
        mode="append",
        request_id=name,
        expected_seq=expected_seq,
    )


def test_concurrent_commits_of_many_tables_share_transactions(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n", _OPTIONS) as node:
            tables = await _tables(node, 24)

            async def writer(table_id: int) -> list[DataCommit]:
                return [await _append(node, table_id, f"w{table_id}-{i}") for i in range(5)]

            written = await asyncio.gather(*(writer(t) for t in tables))
            stats = node.data.group_stats
            assert stats["together"] > 0
            assert stats["transactions"] < 24 * 5
            now = node.clock.now()
            for table_id, commits in zip(tables, written, strict=True):
                assert [c.seq for c in commits] == [1, 2, 3, 4, 5]
                stamps = [c.commit_ts for c in commits]
                assert stamps == sorted(set(stamps)), "a table's commits have growing stamps"
                visible = await node.data.commits_at(table_id, now)
                assert visible == commits

    run(scenario())


def test_a_refused_commit_in_a_group_answers_its_writer_alone(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n", _OPTIONS) as node:
            tables = await _tables(node, 6)
            first = await _append(node, tables[0], "again")
            await _append(node, tables[1], "moved")
            results = await asyncio.gather(
                _append(node, tables[0], "again"),  # a retry: answered with its commit
                _append(node, tables[1], "stale", expected_seq=0),  # the table moved on
                *(_append(node, t, f"new{t}") for t in tables[2:]),
                return_exceptions=True,
            )
            assert results[0] == first
            stale = results[1]
            assert isinstance(stale, CatalogError)
            assert stale.code is ErrorCode.PRECONDITION_FAILED
            for table_id, result in zip(tables[2:], results[2:], strict=True):
                assert isinstance(result, DataCommit)
                assert (result.table_id, result.seq) == (table_id, 1)
            assert [c.request_id for c in await node.data.recorded(tables[1])] == ["moved"]

    run(scenario())


def test_tables_committed_to_from_two_nodes_at_once_keep_their_order(store_url: str) -> None:
    async def scenario() -> None:
        async with (
            CatalogNode.open(store_url, "a", _OPTIONS) as a,
            CatalogNode.open(store_url, "b", _OPTIONS) as b,
        ):
            tables = await _tables(a, 8)
            await b.service.catalog_ready(a.service.latest_version)

            async def writer(node: CatalogNode, table_id: int) -> None:
                for i in range(4):
                    await _append(node, table_id, f"{node.node_name}{table_id}-{i}")

            await asyncio.gather(*(writer(node, t) for node in (a, b) for t in tables))
            for table_id in tables:
                commits = await a.data.recorded(table_id)
                assert [c.seq for c in commits] == list(range(1, 9))
                stamps = [c.commit_ts for c in commits]
                assert stamps == sorted(set(stamps))

    run(scenario())


@pytest.mark.etcd
def test_a_group_whose_answer_was_lost_gives_each_writer_its_commit_once(
    etcd_server: EtcdServer,
) -> None:
    """etcd commits a group but its answer never arrives: each writer learns it committed."""

    async def scenario() -> None:
        with FaultProxy(etcd_server.endpoint) as proxy:
            log = etcd_log(proxy.endpoint, timeout_s=8.0)
            direct = etcd_log(etcd_server.endpoint, log.keys.prefix)
            async with CatalogNode.open(log, "n", _OPTIONS) as node:
                tables = await _tables(node, 8)
                for table_id in tables:  # the node now knows where each table's numbers are
                    await _append(node, table_id, f"first{table_id}")
                proxy.drop_responses = True
                writes = [asyncio.create_task(_append(node, t, f"second{t}")) for t in tables]
                commits = DataCommitLog(direct)
                for _ in range(100):  # the group reaches etcd and commits
                    if all([await commits.latest(t) == 2 for t in tables]):
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(2.5)  # longer than one RPC's timeout: the answer is lost
                assert not any(w.done() for w in writes)
                proxy.heal()
                written = await asyncio.gather(*writes)
                assert [(c.table_id, c.seq) for c in written] == [(t, 2) for t in tables]
                assert len({c.commit_ts for c in written}) == 1, "they landed as one group"
                for table_id, commit in zip(tables, written, strict=True):
                    recorded = await node.data.recorded(table_id)
                    assert [c.request_id for c in recorded] == [
                        f"first{table_id}",
                        f"second{table_id}",
                    ]
                    assert recorded[1] == commit
                assert node.data.group_stats["one_by_one"] == 8
            await log.close()
            await direct.close()

    run(scenario(), timeout_s=90)


def test_one_request_id_for_two_tables_at_once_commits_one_of_them(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n", _OPTIONS) as node:
            tables = await _tables(node, 3)

            async def write(table_id: int, request_id: str) -> DataCommit:
                return await node.data.commit(
                    table_id,
                    _file(f"{request_id}-{table_id}"),
                    schema_version=1,
                    mode="append",
                    request_id=request_id,
                )

            results = await asyncio.gather(
                write(tables[0], "same"),
                write(tables[1], "same"),
                write(tables[2], "other"),
                return_exceptions=True,
            )
            landed = [r for r in results if isinstance(r, DataCommit)]
            refused = [r for r in results if isinstance(r, CatalogError)]
            assert len(landed) == 2 and len(refused) == 1, results
            assert "already used for a different request" in refused[0].message
            recorded = [len(await node.data.recorded(t)) for t in tables[:2]]
            assert sorted(recorded) == [0, 1]

    run(scenario())
