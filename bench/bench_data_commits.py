"""Data commits: many tables committing at once, and a table with a long history.

- D1: data commits/s of one node on a real etcd with 64 tables committing at once (a task per
  table, each committing one small file after another through ``CatalogNode.data.commit``,
  as Spark jobs and PyIceberg clients do through the REST API) ÷ the raw etcd CAS
  transaction rate of one client on the same etcd in the same run (``bench_updatelog_etcd``'s
  raw loop, the physical limit of a serialized log). Both sides in turn. Commits of different
  tables that meet go in one transaction, so the goal is that of C1: >= 1. ``extra`` has the
  rate with 1 and 8 tables, and DDL commits/s with 64 clients on the same node (every command
  a catalog version, group-committed by the manager): what the data commits would reach as
  catalog versions.
- D2: one table's commit time once it has 5,000 data commits (quick: 2,000) ÷ its first
  commits, on SQLite (median of 100 commits each): a commit costs what it writes, not the
  table's history. Goal <= 1.2.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import pyetcd

from bench.bench_curves import _commits_per_s
from bench.bench_updatelog_etcd import _host_port, _RawSide
from bench.harness import Figure, Sample, progress
from bench.tables import create_command
from catalog.data.files import ColumnStats, DataFile
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from deploy.etcd_server import EtcdServer

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
_names = itertools.count()


def _file() -> list[DataFile]:
    n = next(_names)
    stats = (ColumnStats(column_id=0, nulls=0, lower=n * 100, upper=n * 100 + 99),)
    return [DataFile(path=f"f{n}.parquet", partition=0, rows=100, size=4096, stats=stats)]


async def _tables(node: CatalogNode, count: int) -> list[int]:
    names = [f"D{next(_names)}" for _ in range(count)]
    for name in names:
        await node.manager.execute(create_command(name))
    catalog = node.service.latest_catalog()
    return [catalog.table("PUBLIC", name).id for name in names]


async def _commit(node: CatalogNode, table_id: int) -> None:
    await node.data.commit(
        table_id, _file(), schema_version=1, mode="append", request_id=uuid.uuid4().hex
    )


async def _data_commits_per_s(node: CatalogNode, tables: list[int], seconds: float) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def writer(table_id: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await _commit(node, table_id)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(writer(t) for t in tables))
    return done / (time.perf_counter() - start)


async def d1_many_tables(server: EtcdServer, repeats: int, seconds: float) -> Figure:
    progress(f"D1: data commits of 64 tables at once vs raw etcd CAS, {repeats} repeats")
    node = await CatalogNode.start(server.url(f"bench-data-{uuid.uuid4().hex[:8]}"), "n", _OPTIONS)
    client = pyetcd.client(*_host_port(server.endpoint))
    raw = _RawSide(client, 300, payload=os.urandom(300))
    try:
        tables = await _tables(node, 64)
        await _data_commits_per_s(node, tables, 0.5)  # warm-up
        ours: list[float] = []
        raws: list[float] = []
        for _ in range(repeats):
            raws.append(await asyncio.to_thread(raw.run))
            ours.append(await _data_commits_per_s(node, tables, seconds))
        one = await _data_commits_per_s(node, tables[:1], seconds)
        eight = await _data_commits_per_s(node, tables[:8], seconds)
        ddl = await _commits_per_s(node, 64, seconds)
        stats = node.data.group_stats
    finally:
        client.close()
        await node.close()
    return Figure(
        "D1",
        "data commits/s, 64 tables at once ÷ raw etcd CAS txn/s",
        Sample.of(ours, "commits/s"),
        Sample.of(raws, "txn/s"),
        ">= 1",
        {
            "one_table_commits_per_s": one,
            "eight_tables_commits_per_s": eight,
            "ddl_commits_per_s_64_clients": ddl,
            "group_stats": stats,
        },
    )


async def _commit_times(node: CatalogNode, table_id: int, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await _commit(node, table_id)
        times.append(time.perf_counter() - start)
    return times


async def d2_long_history(history: int) -> Figure:
    progress(f"D2: one table's commits after {history} data commits vs its first")
    with tempfile.TemporaryDirectory(prefix="bench-data-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'catalog.db'}"
        async with CatalogNode.open(url, "n", _OPTIONS) as node:
            (table_id,) = await _tables(node, 1)
            first = await _commit_times(node, table_id, 100)
            await _commit_times(node, table_id, history - 200)
            last = await _commit_times(node, table_id, 100)
    return Figure(
        "D2",
        f"commit after {history} data commits of the table ÷ its first (SQLite)",
        Sample(statistics.median(last) * 1000, min(last) * 1000, max(last) * 1000, "ms"),
        Sample(statistics.median(first) * 1000, min(first) * 1000, max(first) * 1000, "ms"),
        "<= 1.2",
        {"commits": history},
    )


def run(quick: bool) -> list[Figure]:
    """Measure D1 on an etcd started here, then D2 on SQLite."""
    server = EtcdServer()
    try:
        server.start()
        d1 = asyncio.run(d1_many_tables(server, 3 if quick else 5, 2.0 if quick else 4.0))
    finally:
        server.stop()
    return [d1, asyncio.run(d2_long_history(2_000 if quick else 5_000))]
