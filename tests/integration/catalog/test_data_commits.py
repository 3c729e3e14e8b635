"""Data commits through the node: numbered per table, idempotent, exact at a timestamp."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from catalog import CatalogError, ErrorCode
from catalog import commands as c
from catalog.data.files import DataCommit, DataFile, decode_data_commit
from catalog.data.log import DataCommitLog
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run
from updatelog.errors import FormatError


def _file(name: str, partition: int = 0) -> DataFile:
    return DataFile(path=f"p{partition}/{name}.parquet", partition=partition, rows=1, size=10)


@asynccontextmanager
async def two_nodes_with_a_table(
    store_url: str,
) -> AsyncIterator[tuple[CatalogNode, CatalogNode, int]]:
    """Open two nodes on one store, create table T; yield both and T's id."""
    async with (
        CatalogNode.open(store_url, "a", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as a,
        CatalogNode.open(store_url, "b", NodeOptions(delay_ms=0, max_clock_skew_ms=0)) as b,
    ):
        await a.manager.execute(create_table("T"))
        await b.service.catalog_ready(await a.log.latest_version())
        yield a, b, a.service.latest_catalog().table("PUBLIC", "T").id


def test_commits_are_visible_exactly_from_their_timestamp(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            await node.manager.execute(create_table("T"))
            table = node.service.latest_catalog().table("PUBLIC", "T")
            first = await node.data.commit(
                table.id, [_file("a")], schema_version=1, mode="append", request_id="w1"
            )
            between = node.clock.now()
            second = await node.data.commit(
                table.id, [_file("b", 1)], schema_version=1, mode="append", request_id="w2"
            )
            assert (first.seq, second.seq) == (1, 2)
            assert first.commit_ts < between < second.commit_ts
            assert await node.data.commits_at(table.id, first.commit_ts - 1) == []
            assert await node.data.commits_at(table.id, between) == [first]
            assert await node.data.commits_at(table.id, second.commit_ts) == [first, second]
            # A retry of a committed write returns it; nothing is committed twice.
            again = await node.data.commit(
                table.id, [_file("a")], schema_version=1, mode="append", request_id="w1"
            )
            assert again == first
            third = await node.data.commit(
                table.id, [_file("c")], schema_version=1, mode="overwrite", request_id="w3"
            )
            assert await node.data.commits_at(table.id, third.commit_ts) == [third]
            history = await node.data.commits_at(table.id, third.commit_ts, history=True)
            assert history == [first, second, third]
            # The earlier moments are unchanged by the overwrite.
            assert await node.data.commits_at(table.id, between) == [first]

    run(scenario())


def test_concurrent_writers_get_distinct_contiguous_numbers(store_url: str) -> None:
    async def scenario() -> None:
        async with two_nodes_with_a_table(store_url) as (a, b, table_id):
            commits = await asyncio.gather(
                *(
                    node.data.commit(
                        table_id,
                        [_file(f"f{i}")],
                        schema_version=1,
                        mode="append",
                        request_id=f"w{i}",
                    )
                    for i, node in enumerate([a, b] * 6)
                )
            )
            assert sorted(x.seq for x in commits) == list(range(1, 13))
            by_ts = sorted(commits, key=lambda x: x.commit_ts)
            assert [x.seq for x in by_ts] == list(range(1, 13))  # numbers follow time
            seen = await a.data.commits_at(table_id, a.clock.now())
            assert [x.seq for x in seen] == list(range(1, 13))

    run(scenario())


def test_a_commit_to_a_dropped_or_unknown_table_is_refused(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            await node.manager.execute(create_table("T"))
            table_id = node.service.latest_catalog().table("PUBLIC", "T").id
            with pytest.raises(CatalogError) as bad_version:
                await node.data.commit(
                    table_id, [_file("a")], schema_version=9, mode="append", request_id="w0"
                )
            assert bad_version.value.code is ErrorCode.VALIDATION_ERROR
            own = _file("a").model_copy(update={"schema_version": 1})
            with pytest.raises(CatalogError, match="leave it out") as own_version:
                await node.data.commit(
                    table_id, [own], schema_version=1, mode="append", request_id="w0"
                )
            assert own_version.value.code is ErrorCode.VALIDATION_ERROR
            for bad, reason in (
                ({"iceberg_partition": {"spec_id": 3, "values": []}}, "partition spec 3"),
                ({"iceberg_partition": {"spec_id": 0, "values": [1]}}, "names 1 partition"),
            ):
                named = DataFile.model_validate({**_file("a").model_dump(), **bad})
                with pytest.raises(CatalogError, match=reason) as refused:
                    await node.data.commit(
                        table_id, [named], schema_version=1, mode="append", request_id="w0"
                    )
                assert refused.value.code is ErrorCode.VALIDATION_ERROR
            await node.manager.execute(c.DropTable(name="T"))
            with pytest.raises(CatalogError) as gone:
                await node.data.commit(
                    table_id, [_file("a")], schema_version=1, mode="append", request_id="w1"
                )
            assert gone.value.code is ErrorCode.TABLE_NOT_FOUND
            assert await DataCommitLog(node.log).read(table_id) == []

    run(scenario())


def test_garbage_is_not_a_data_commit() -> None:
    for data in (b"", b"\x91\x01", b"\x81\xa1x\x01"):
        with pytest.raises(FormatError):
            decode_data_commit(data)


@pytest.mark.parametrize("path", ["../x.parquet", "/etc/passwd", "p0//x", "p0/./x", "", "p0/x y"])
def test_a_data_file_stays_inside_its_table_folder(path: str) -> None:
    with pytest.raises(CatalogError) as info:
        DataFile(path=path, partition=0, rows=1, size=1)
    assert info.value.code is ErrorCode.VALIDATION_ERROR


def test_compaction_drops_the_data_of_tables_no_retained_version_holds(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(
            store_url, "n1", NodeOptions(delay_ms=0, max_clock_skew_ms=0)
        ) as node:
            await node.manager.execute([create_table("GONE"), create_table("KEPT")])
            catalog = node.service.latest_catalog()
            gone, kept = catalog.table("PUBLIC", "GONE").id, catalog.table("PUBLIC", "KEPT").id
            for table_id in (gone, kept):
                await node.data.commit(
                    table_id,
                    [_file("a")],
                    schema_version=1,
                    mode="append",
                    request_id=f"w{table_id}",
                )
            dropped = await node.manager.execute(c.DropTable(schema="PUBLIC", name="GONE"))
            await node.manager.execute(create_table("AFTER"))
            # Snapshot at the drop's version - 1: a retained version still holds GONE.
            await node.manager.compact_to(dropped.version - 1)
            assert await DataCommitLog(node.log).tables() == sorted([gone, kept])
            await node.manager.compact_to(dropped.version)
            assert await DataCommitLog(node.log).tables() == [kept]
            assert await DataCommitLog(node.log).read(gone) == []
            assert len(await DataCommitLog(node.log).read(kept)) == 1

    run(scenario())


def test_a_commit_expecting_the_latest_commit_goes_through_only_while_it_is(
    store_url: str,
) -> None:
    async def scenario() -> None:
        async with two_nodes_with_a_table(store_url) as (a, b, table_id):

            async def commit(node: CatalogNode, name: str, expected: int | None) -> DataCommit:
                return await node.data.commit(
                    table_id,
                    [_file(name)],
                    schema_version=1,
                    mode="append",
                    request_id=name,
                    expected_seq=expected,
                )

            first = await commit(a, "w1", 0)
            assert first.seq == 1
            with pytest.raises(CatalogError) as stale:
                await commit(b, "w2", 0)
            assert stale.value.code is ErrorCode.PRECONDITION_FAILED
            assert "latest data commit of table" in stale.value.message
            assert "is 1, not 0" in stale.value.message
            # A retry of a committed write answers with it, whatever it expects now.
            assert await commit(b, "w1", 0) == first
            # Refused, nothing recorded: the same id commits once it expects the latest.
            assert (await commit(b, "w2", 1)).seq == 2
            with pytest.raises(CatalogError) as ahead:
                await commit(a, "w3", 5)
            assert ahead.value.code is ErrorCode.PRECONDITION_FAILED
            # Writers racing on the same expectation: exactly one wins, on either node.
            racing = await asyncio.gather(
                *(commit(node, f"r{i}", 2) for i, node in enumerate([a, b] * 4)),
                return_exceptions=True,
            )
            won = [r for r in racing if isinstance(r, DataCommit)]
            lost = [r for r in racing if not isinstance(r, DataCommit)]
            assert len(won) == 1 and won[0].seq == 3
            assert all(
                isinstance(e, CatalogError) and e.code is ErrorCode.PRECONDITION_FAILED
                for e in lost
            )
            seen = await a.data.commits_at(table_id, a.clock.now())
            assert [x.request_id for x in seen] == ["w1", "w2", won[0].request_id]

    run(scenario())


def test_a_commit_removes_visible_files_only(store_url: str) -> None:
    async def scenario() -> None:
        async with two_nodes_with_a_table(store_url) as (a, b, table_id):

            async def commit(
                name: str, removed: list[str], expected: int | None, files: list[DataFile]
            ) -> DataCommit:
                return await a.data.commit(
                    table_id,
                    files,
                    schema_version=1,
                    mode="append",
                    request_id=name,
                    expected_seq=expected,
                    removed=removed,
                )

            await commit("w1", [], None, [_file("a"), _file("b")])
            rewrite = await commit("w2", ["p0/a.parquet"], 1, [_file("c")])
            assert rewrite.removed == ("p0/a.parquet",)
            # A retry, whatever is visible now, answers with the commit it made.
            assert await commit("w2", ["p0/a.parquet"], 1, [_file("c")]) == rewrite
            visible = await b.data.commits_at(table_id, b.clock.now())
            assert [f.path for x in visible for f in x.files] == ["p0/b.parquet", "p0/c.parquet"]
            for removed, expected in ((["p0/a.parquet"], 2), (["p0/zz.parquet"], 2)):
                with pytest.raises(CatalogError) as gone:
                    await commit("w3", removed, expected, [])
                assert gone.value.code is ErrorCode.VALIDATION_ERROR
                assert f"no visible data file {removed[0]}" in gone.value.message
            with pytest.raises(CatalogError, match="names the commit it expects"):
                await commit("w3", ["p0/b.parquet"], None, [])
            history = await a.data.commits_at(table_id, a.clock.now(), history=True)
            assert len(history) == 2 and history[0].files == (_file("a"), _file("b"))

    run(scenario())
