"""Data no read can reach any more is deleted when the catalog is compacted."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import uuid
from pathlib import Path

import pytest

from catalog import CatalogError, ColumnType, ErrorCode
from catalog import commands as c
from catalog.data.expiry import dead_files
from catalog.data.files import DataCommit, DataFile, DataMode, decode_data_commit
from catalog.data.iceberg_identity import snapshot_id_of
from catalog.data.keys import DataKeys
from catalog.data.log import DataCommitLog
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from schemasync.clock import physical_of
from tests.integration.catalog.support import create_table, run
from updatelog import envelope, requests
from updatelog.envelope import Kind
from updatelog.errors import StoreQuotaExceededError
from updatelog.kv import Get, Put


def _commit(seq: int, ts: int, paths: list[str], **kw: object) -> DataCommit:
    return DataCommit.model_validate(
        {
            "table_id": 1,
            "seq": seq,
            "commit_ts": ts,
            "schema_version": 1,
            "mode": "append",
            "files": [{"path": p, "partition": 0, "rows": 1, "size": 1} for p in paths],
            "request_id": f"r{seq}",
            **kw,
        }
    )


def test_dead_files_are_those_removed_or_overwritten_by_the_horizon() -> None:
    commits = [
        _commit(1, 10, ["a", "b"]),
        _commit(2, 20, ["c"], removed=["a"]),
        _commit(3, 30, ["d"], mode="overwrite"),
        _commit(4, 40, ["e"], removed=["d"]),
        _commit(5, 50, ["b"]),  # a path added again later is not dead
    ]
    assert dead_files(commits, 5) == []
    assert dead_files(commits, 20) == ["a"]
    assert dead_files(commits, 30) == ["a", "c"]  # b comes back at 50
    assert dead_files(commits, 40) == ["a", "c", "d"]
    assert dead_files(commits[:4], 40) == ["a", "b", "c", "d"]


def test_files_a_tagged_snapshot_holds_are_not_dead() -> None:
    commits = [
        _commit(1, 10, ["a", "b"]),
        _commit(2, 20, ["c"], removed=["a"]),
        _commit(3, 30, ["d"], mode="overwrite"),
    ]
    tagged = {snapshot_id_of(commits[0])}
    assert dead_files(commits, 30, tagged) == ["c"]  # a and b are what tag v1 reads
    assert dead_files(commits, 30, {snapshot_id_of(commits[1])}) == ["a"]


def _touch(folder: Path, name: str) -> DataFile:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"parquet")
    return DataFile(path=name, partition=0, rows=1, size=7)


def _node(
    store_url: str, tmp_path: Path, name: str = "n1"
) -> contextlib.AbstractAsyncContextManager[CatalogNode]:
    """Open a node (no delay, no skew) whose warehouse is ``tmp_path / "wh"``."""
    options = NodeOptions(delay_ms=0, max_clock_skew_ms=0, warehouse=str(tmp_path / "wh"))
    return CatalogNode.open(store_url, name, options)


async def _tables(node: CatalogNode, *names: str) -> list[tuple[int, Path]]:
    """Create tables ``names`` in one batch; return each one's id and folder."""
    await node.manager.execute([create_table(name) for name in names])
    catalog = node.service.latest_catalog()
    found = []
    for name in names:
        table = catalog.table("PUBLIC", name)
        assert table.location is not None
        found.append((table.id, Path(table.location)))
    return found


async def _write(
    node: CatalogNode,
    table_id: int,
    files: list[DataFile],
    mode: DataMode = "append",
    removed: tuple[str, ...] = (),
) -> DataCommit:
    expected = None
    if removed:
        expected = (await node.data.recorded(table_id))[-1].seq
    return await node.data.commit(
        table_id,
        files,
        schema_version=1,
        mode=mode,
        request_id=f"w{files[0].path}",
        expected_seq=expected,
        removed=removed,
    )


@pytest.mark.parametrize("grace_ms", [0, 3_600_000])
def test_compaction_deletes_the_files_only_compacted_reads_reached(
    store_url: str, tmp_path: Path, grace_ms: int
) -> None:
    async def scenario() -> None:
        async with _node(store_url, tmp_path) as node:
            (table_id, folder), (gone_id, gone_folder) = await _tables(node, "T", "GONE")
            await _write(node, gone_id, [_touch(gone_folder, "g.parquet")])
            await _write(node, table_id, [_touch(folder, "a.parquet")])
            await _write(node, table_id, [_touch(folder, "b.parquet")], removed=("a.parquet",))
            before = node.clock.now()
            await _write(node, table_id, [_touch(folder, "c.parquet")], mode="overwrite")
            await node.manager.execute(c.DropTable(schema="PUBLIC", name="GONE"))
            horizon = await node.manager.execute(create_table("LATER"))
            await _write(node, table_id, [_touch(folder, "d.parquet")], removed=("c.parquet",))

            assert await node.manager.compact_to(horizon.version, file_grace_ms=grace_ms)
            left = sorted(p.name for p in folder.glob("*.parquet"))
            if grace_ms:  # the compaction is recorded; its files go a grace later
                assert left == ["a.parquet", "b.parquet", "c.parquet", "d.parquet"]
                assert gone_folder.exists()
            else:  # a and b were gone by the horizon; c was removed after it
                assert left == ["c.parquet", "d.parquet"]
                assert node.manager.expiry.stats["files_deleted"] == 2
                # Their request ids still answer (24 hours): the commits are not merged.
                assert node.manager.expiry.stats["commits_merged"] == 0
                assert not gone_folder.exists(), "a dropped table's folder goes"
            assert node.manager.expiry.stats["tables_dropped"] == 1
            visible = await node.data.commits_at(table_id, node.clock.now())
            assert [f.path for commit in visible for f in commit.files] == ["d.parquet"]
            with pytest.raises(CatalogError) as refused:
                await node.data.commits_at(table_id, before)
            assert refused.value.code is ErrorCode.VERSION_COMPACTED

    run(scenario())


def test_files_go_once_the_compaction_that_made_them_unreachable_is_a_grace_old(
    store_url: str, tmp_path: Path
) -> None:
    grace_ms = 400

    async def scenario() -> None:
        async with _node(store_url, tmp_path) as node:
            ((table_id, folder),) = await _tables(node, "T")
            await _write(node, table_id, [_touch(folder, "a.parquet")])
            await _write(node, table_id, [_touch(folder, "b.parquet")], removed=("a.parquet",))
            first = await node.manager.execute(create_table("MARK1"))
            await _write(node, table_id, [_touch(folder, "c.parquet")], removed=("b.parquet",))
            assert await node.manager.compact_to(first.version, file_grace_ms=grace_ms)
            assert len(list(folder.glob("*.parquet"))) == 3  # recorded, nothing deleted yet
            await asyncio.sleep(grace_ms / 1000 + 0.1)
            second = await node.manager.execute(create_table("MARK2"))
            assert await node.manager.compact_to(second.version, file_grace_ms=grace_ms)
            # The first compaction is a grace old: what it made unreachable (a) goes; what
            # only the second did (b) stays until that one is a grace old too.
            assert sorted(p.name for p in folder.glob("*.parquet")) == ["b.parquet", "c.parquet"]

    run(scenario())


def test_a_sweep_reads_again_only_the_tables_that_committed_since_the_last(
    store_url: str, tmp_path: Path
) -> None:

    async def scenario() -> None:
        async with _node(store_url, tmp_path) as node:
            (quiet, quiet_folder), (busy, busy_folder) = await _tables(node, "QUIET", "BUSY")
            await _write(node, quiet, [_touch(quiet_folder, "q1.parquet")])
            await _write(node, quiet, [_touch(quiet_folder, "q2.parquet")], mode="overwrite")
            await _write(node, busy, [_touch(busy_folder, "b1.parquet")])
            await _write(node, busy, [_touch(busy_folder, "b2.parquet")], mode="overwrite")
            first = await node.manager.execute(create_table("MARK1"))
            assert await node.manager.compact_to(first.version, file_grace_ms=0)
            assert sorted(p.name for p in quiet_folder.glob("*")) == ["q2.parquet"]
            assert sorted(p.name for p in busy_folder.glob("*")) == ["b2.parquet"]

            # Files the first sweep deleted, put back by hand: no sweep looks for them again.
            _touch(quiet_folder, "q1.parquet")
            _touch(busy_folder, "b1.parquet")
            await _write(node, busy, [_touch(busy_folder, "b3.parquet")], mode="overwrite")
            second = await node.manager.execute(create_table("MARK2"))
            assert await node.manager.compact_to(second.version, file_grace_ms=0)
            # QUIET has not committed since: it is not read again. BUSY is, and only b2, dead
            # since the first sweep, goes.
            assert sorted(p.name for p in quiet_folder.glob("*")) == ["q1.parquet", "q2.parquet"]
            assert sorted(p.name for p in busy_folder.glob("*")) == ["b1.parquet", "b3.parquet"]
            assert node.manager.expiry.stats["files_deleted"] == 3

    run(scenario())


def test_a_sweep_that_could_not_delete_a_file_is_done_again(store_url: str, tmp_path: Path) -> None:

    async def scenario() -> None:
        async with _node(store_url, tmp_path) as node:
            ((table, folder),) = await _tables(node, "T")
            await _write(node, table, [_touch(folder, "a.parquet")])
            await _write(node, table, [_touch(folder, "b.parquet")], mode="overwrite")
            (folder / "a.parquet").unlink()
            _touch(folder, "a.parquet/inside")  # a folder in its place: unlink fails
            first = await node.manager.execute(create_table("MARK1"))
            assert await node.manager.compact_to(first.version, file_grace_ms=0)
            assert (folder / "a.parquet").is_dir()

            shutil.rmtree(folder / "a.parquet")
            _touch(folder, "a.parquet")
            second = await node.manager.execute(create_table("MARK2"))
            assert await node.manager.compact_to(second.version, file_grace_ms=0)
            # T has not committed since, but the first sweep did not finish: it goes again.
            assert sorted(p.name for p in folder.glob("*")) == ["b.parquet"]

    run(scenario())


def test_the_tables_with_data_and_their_latest_commits_are_read_in_pages(
    store_url: str, tmp_path: Path
) -> None:

    async def scenario() -> None:
        async with _node(store_url, tmp_path) as node:
            ids = [table_id for table_id, _ in await _tables(node, *(f"T{i}" for i in range(140)))]
            # One table with more commits than a page of keys, every other one with one (more
            # than a transaction's worth of reads), each with a request record under the same
            # prefix.
            for i in range(300):
                await node.data.commit(
                    ids[0], [], schema_version=1, mode="append", request_id=f"long-{i}"
                )
            for table_id in ids[1::2]:
                await node.data.commit(
                    table_id, [], schema_version=1, mode="append", request_id=f"one-{table_id}"
                )
            commits = DataCommitLog(node.log)
            assert await commits.tables() == sorted([ids[0], *ids[1::2]])
            latest = await commits.latest_commits(ids)
            assert {t: e.version for t, e in latest.items()} == {
                ids[0]: 300,
                **{t: 1 for t in ids[1::2]},
            }
            assert decode_data_commit(latest[ids[0]].payload).request_id == "long-299"

    run(scenario())


def _read(commits: list[DataCommit]) -> list[tuple[str, int]]:
    """Each visible file of ``commits`` with the schema version it was written with."""
    return [(f.path, c.schema_version_of(f)) for c in commits for f in c.files]


def test_a_sweep_merges_the_commits_no_read_tells_apart(store_url: str, tmp_path: Path) -> None:
    """Once a table's dead files are gone and the request ids of its commits expired, its
    commits at or before the horizon become one; every node reads what it read before: the
    writer, a node that had read only the first commits, and one that never read the table."""
    url = f"{store_url}?request_ttl=0.05"

    async def scenario() -> None:
        async with _node(url, tmp_path) as node, _node(url, tmp_path, "early") as early:
            ((table_id, folder),) = await _tables(node, "T")
            for name in ("a", "b", "c"):
                await _write(node, table_id, [_touch(folder, f"{name}.parquet")])
            assert len(await early.data.recorded(table_id)) == 3
            await _write(node, table_id, [_touch(folder, "d.parquet")], removed=("a.parquet",))
            x = c.Column(name="X", type=ColumnType.INT32)
            await node.manager.execute(c.AddColumns(schema="PUBLIC", table="T", columns=[x]))
            e = _touch(folder, "e.parquet")
            await node.data.commit(table_id, [e], schema_version=2, mode="append", request_id="e")
            horizon = await node.manager.execute(create_table("LATER"))
            await _write(node, table_id, [_touch(folder, "f.parquet")])  # after the horizon
            now = node.clock.now()
            before = _read(await node.data.commits_at(table_id, now))
            await asyncio.sleep(1.1)  # the request ids expire (a second's allowance)
            assert await node.manager.compact_to(horizon.version, file_grace_ms=0)

            assert node.manager.expiry.stats["commits_merged"] == 5
            entries = await DataCommitLog(node.log).read(table_id)
            assert [entry.version for entry in entries] == [5, 6]
            base = decode_data_commit(entries[0].payload)
            assert base.merged and _read([base]) == [
                ("b.parquet", 1),
                ("c.parquet", 1),
                ("d.parquet", 1),
                ("e.parquet", 2),
            ]
            left = sorted(p.name for p in folder.glob("*.parquet"))
            assert left == ["b.parquet", "c.parquet", "d.parquet", "e.parquet", "f.parquet"]
            for reader in (node, early):
                assert _read(await reader.data.commits_at(table_id, now)) == before
            assert [commit.seq for commit in await early.data.recorded(table_id)] == [5, 6]
            async with _node(url, tmp_path, "fresh") as fresh:
                assert _read(await fresh.data.commits_at(table_id, now)) == before
                with pytest.raises(CatalogError) as stale:  # a writer that read commit 3
                    await fresh.data.commit(
                        table_id,
                        [_touch(folder, "h.parquet")],
                        schema_version=2,
                        mode="append",
                        request_id="stale",
                        expected_seq=3,
                        removed=("b.parquet",),
                    )
                assert stale.value.code is ErrorCode.PRECONDITION_FAILED
            g = await _write(node, table_id, [_touch(folder, "g.parquet")])
            assert g.seq == 7

    run(scenario())


@pytest.mark.parametrize("store", ["sqlite", "etcd"])
def test_a_merge_the_store_would_refuse_leaves_the_commits_and_the_sweep_goes_on(
    request: pytest.FixtureRequest, tmp_path: Path, store: str
) -> None:
    """Commits whose merged record would be over the store's request limit stay as they are
    (SQLite knows its limit; this etcd refuses what its client takes for small enough), and
    the other tables' dead files still go."""
    if store == "sqlite":
        url = f"sqlite:///{tmp_path}/catalog.db?request_ttl=0.05&max_request_bytes=65536"
    else:
        server = request.getfixturevalue("etcd_small_server")
        prefix = f"test-{uuid.uuid4().hex}"
        url = f"etcd://{server.endpoint}/{prefix}?request_ttl=0.05&max_request_bytes=1048576"

    async def scenario() -> None:
        async with _node(url, tmp_path) as node:
            (big_id, _), (table_id, folder) = await _tables(node, "BIG", "T")
            for k in range(8):  # ~12 KB each, ~100 KB merged
                files = [
                    DataFile(path=f"c{k}-{i:03d}-{'x' * 40}.parquet", partition=0, rows=1, size=7)
                    for i in range(150)
                ]
                await node.data.commit(
                    big_id, files, schema_version=1, mode="append", request_id=f"big{k}"
                )
            await _write(node, table_id, [_touch(folder, "a.parquet")])
            await _write(node, table_id, [_touch(folder, "b.parquet")], mode="overwrite")
            horizon = await node.manager.execute(create_table("LATER"))
            await asyncio.sleep(1.1)  # the request ids expire (a second's allowance)
            assert await node.manager.compact_to(horizon.version, file_grace_ms=0)
            assert len(await DataCommitLog(node.log).read(big_id)) == 8
            assert sorted(p.name for p in folder.glob("*.parquet")) == ["b.parquet"]
            assert node.manager.expiry.stats["commits_merged"] == 2

    run(scenario())


def test_commits_merge_only_once_their_request_ids_expired_on_every_clock(
    store_url: str, tmp_path: Path
) -> None:
    """A commit is merged only once its request id has stopped answering on every node's
    clock (this one's less the skew bound); a table that has not committed since is read
    again for that, once."""
    url = f"{store_url}?request_ttl=0.05"

    async def scenario() -> None:
        async with _node(url, tmp_path) as node:
            ((table_id, folder),) = await _tables(node, "T")
            a = await _write(node, table_id, [_touch(folder, "a.parquet")])
            await _write(node, table_id, [_touch(folder, "b.parquet")])
            stored = await node.log.store.txn(
                [], [Get(DataKeys(node.log.keys).request(a.request_id))]
            )
            record = requests.decode_record(stored.reads[0].value or b"")
            assert physical_of(a.commit_ts) + 50 <= record.expires_ms
            settled_before = DataCommitLog(node.log).settled_before
            assert settled_before(record.expires_ms) <= a.commit_ts  # not as it expires
            assert a.commit_ts < settled_before(record.expires_ms + 1001)  # a second later
            await asyncio.sleep(1.1)  # the request ids expire (a second's allowance)
            expiry = node.manager.expiry
            for round_, (skew_ms, merged_count) in enumerate(((60_000, 0), (0, 2), (0, 2))):
                horizon = await node.manager.execute(create_table(f"ROUND{round_}"))
                expiry.max_clock_skew_ms = skew_ms
                assert await node.manager.compact_to(horizon.version, file_grace_ms=0)
                assert expiry.stats["commits_merged"] == merged_count
            assert [e.version for e in await DataCommitLog(node.log).read(table_id)] == [2]

    run(scenario())


async def _two_settled_commits(node: CatalogNode) -> int:
    """Create table T with two data commits whose request ids have expired; return its id."""
    ((table_id, folder),) = await _tables(node, "T")
    await _write(node, table_id, [_touch(folder, "a.parquet")])
    await _write(node, table_id, [_touch(folder, "b.parquet")])
    await asyncio.sleep(1.1)  # the request ids expire (a second's allowance)
    return table_id


def test_a_merge_refused_for_a_full_store_is_tried_again_by_a_later_round(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full store is passing: the round does not finish, so the next one reads the quiet
    table again and merges it."""
    url = f"{store_url}?request_ttl=0.05"
    calls: list[int] = []
    real = DataCommitLog.merge

    async def full_once(log: DataCommitLog, table_id: int, *args: bytes | int) -> bool:
        calls.append(table_id)
        if len(calls) == 1:
            raise StoreQuotaExceededError("the store is full")
        return await real(log, table_id, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(DataCommitLog, "merge", full_once)

    async def scenario() -> None:
        async with _node(url, tmp_path) as node:
            table_id = await _two_settled_commits(node)
            for round_ in range(2):
                horizon = await node.manager.execute(create_table(f"ROUND{round_}"))
                assert await node.manager.compact_to(horizon.version, file_grace_ms=0)
            assert calls == [table_id, table_id]
            assert [e.version for e in await DataCommitLog(node.log).read(table_id)] == [2]

    run(scenario())


def test_a_table_without_a_location_has_its_commits_merged_and_its_files_left(
    store_url: str, tmp_path: Path
) -> None:
    """On a cluster without a warehouse a table records no location: its files are where each
    job put them, which the catalog does not own. Its dead files stay; its commits merge."""
    url = f"{store_url}?request_ttl=0.05"
    options = NodeOptions(delay_ms=0, max_clock_skew_ms=0)

    async def scenario() -> None:
        async with CatalogNode.open(url, "n1", options) as node:
            await node.manager.execute(create_table("T"))
            table = node.service.latest_catalog().table("PUBLIC", "T")
            assert table.location is None
            folder = tmp_path / "job-warehouse" / f"table_{table.id}"
            await _write(node, table.id, [_touch(folder, "a.parquet")])
            await _write(node, table.id, [_touch(folder, "b.parquet")])
            await _write(node, table.id, [_touch(folder, "c.parquet")], removed=("a.parquet",))
            horizon = await node.manager.execute(create_table("LATER"))
            now = node.clock.now()
            before = _read(await node.data.commits_at(table.id, now))
            await asyncio.sleep(1.1)  # the request ids expire (a second's allowance)
            assert await node.manager.compact_to(horizon.version, file_grace_ms=0)

            assert node.manager.expiry.stats["commits_merged"] == 3
            assert node.manager.expiry.stats["files_deleted"] == 0
            assert [e.version for e in await DataCommitLog(node.log).read(table.id)] == [3]
            assert _read(await node.data.commits_at(table.id, now)) == before
            left = sorted(p.name for p in folder.glob("*.parquet"))
            assert left == ["a.parquet", "b.parquet", "c.parquet"]

    run(scenario())


def test_mergeable_commits_a_round_left_are_merged_though_the_marks_passed_them(
    store_url: str, tmp_path: Path
) -> None:
    """Marks that passed a quiet table's unmerged commits (a round that left them) do not keep
    them unmerged for ever: the next round reads the table again."""
    url = f"{store_url}?request_ttl=0.05"

    async def scenario() -> None:
        async with _node(url, tmp_path) as node:
            table_id = await _two_settled_commits(node)
            keys, mark = (
                DataKeys(node.log.keys),
                envelope.encode_int(Kind.SAFE_TIME, node.clock.now()),
            )
            await node.log.store.txn([], [Put(keys.swept, mark), Put(keys.merged, mark)])
            horizon = await node.manager.execute(create_table("LATER"))
            assert await node.manager.compact_to(horizon.version, file_grace_ms=0)
            assert [e.version for e in await DataCommitLog(node.log).read(table_id)] == [2]

    run(scenario())
