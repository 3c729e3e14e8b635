"""S1-S5: the update log at scale, on SQLite and on etcd (a 1-member etcd with default flags).

S1  tables/s creating N tables of 6 columns in batches of 1,000 through a node, ÷ the same
    update bytes appended straight to the log (what the catalog adds over the store).
S2  resident bytes per table of the node that created them (every version kept), ÷ the
    marshalled bytes per table in the snapshot (the data itself).
S3  snapshot write time at N tables, ÷ putting the same bytes raw, in request-sized pieces.
S4  a fresh node's time to be ready at N tables (after the snapshot), ÷ reading the snapshot's
    bytes raw from the store.
S5  store size after many DDL with the automatic compaction policy on, ÷ after 1,000.

Quick mode: N = 100,000 and 20,000 DDL for S5; full mode: N = 1,000,000 and 100,000 DDL. The
absolute goals (S1 >= 3,000 tables/s, S2 <= 2 KB, S3 <= 30 s, S4 <= 10 s) are printed beside
the ratios. The fresh node of S2/S4 runs in its own process, so its memory is its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from pyetcd import etcdrpc

from bench.harness import Figure, Sample, progress
from catalog import ColumnType
from catalog import commands as c
from catalog.node import CatalogNode, CompactionPolicy
from deploy.etcd_server import EtcdServer
from updatelog import KvUpdateLog, open_log
from updatelog.kv import Put
from updatelog.kv_etcd import EtcdKvStore

BATCH = 1000
_COLUMNS = [("ID", ColumnType.INT64), ("NAME", ColumnType.STRING), ("PRICE", ColumnType.DECIMAL)]
_COLUMNS += [("QTY", ColumnType.INT32), ("AT", ColumnType.TIMESTAMP), ("OK", ColumnType.BOOLEAN)]


def _table(i: int) -> c.CreateTableCommand:
    columns = [
        c.Column(name=name, type=kind, nullable=name != "ID", length=64)
        if kind is ColumnType.STRING
        else c.Column(name=name, type=kind, nullable=name != "ID", precision=18, scale=2)
        if kind is ColumnType.DECIMAL
        else c.Column(name=name, type=kind, nullable=name != "ID")
        for name, kind in _COLUMNS
    ]
    return c.CreateTable(schema="PUBLIC", name=f"T{i}", columns=columns, primary_key=["ID"])


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _node_options() -> dict[str, Any]:
    return {"delay_ms": 0, "max_clock_skew_ms": 0, "registry_ttl_s": None}


async def _fill(url: str, tables: int) -> dict[str, float]:
    """Create ``tables`` tables through a node; return timings, memory and sizes."""
    before = _rss_bytes()
    async with CatalogNode.open(url, "filler", **_node_options()) as node:
        fill_s = 0.0
        for first in range(0, tables, BATCH):
            # Commands arrive built (a client's or the REST layer's work): not timed.
            batch = [_table(i) for i in range(first, first + BATCH)]
            started = time.perf_counter()
            await node.manager.execute(batch)
            fill_s += time.perf_counter() - started
            if (first // BATCH) % 100 == 99:
                progress(f"S1: {first + BATCH} tables")
        resident = _rss_bytes() - before
    return {"fill_s": fill_s, "resident": resident}


async def _snapshot(url: str) -> dict[str, float]:
    """Compact the log at ``url`` to its latest version; return the time and snapshot size."""
    async with CatalogNode.open(url, "compactor", **_node_options()) as node:
        started = time.perf_counter()
        version = await node.manager.compact(1)
        snapshot_s = time.perf_counter() - started
        entries = await node.log.read(version or 1)
        return {"snapshot_s": snapshot_s, "snapshot_bytes": len(entries[0].payload)}


async def _log_only(url: str, source: str) -> float:
    """Append the updates ``source`` holds to an empty log at ``url``; return seconds."""
    src, dst = open_log(source), open_log(url)
    try:
        latest = await src.latest_version()
        started = time.perf_counter()
        for first in range(1, latest + 1, 64):
            for entry in await src.read(first, min(latest, first + 63)):
                await dst.append(entry.version, entry.payload, entry.version * 1000)
        return time.perf_counter() - started
    finally:
        await src.close()
        await dst.close()


async def _raw_put_and_read(url: str, size: int) -> tuple[float, float]:
    """Put ``size`` random bytes raw in request-sized pieces, then read them; (put s, read s)."""
    log = open_log(url)
    assert isinstance(log, KvUpdateLog)
    try:
        step = log.chunks.chunk_bytes
        data = os.urandom(step)
        prefix = f"raw-{uuid.uuid4().hex}/"
        started = time.perf_counter()
        for i in range(0, size, step):
            await log.store.txn([], [Put(f"{prefix}{i:012d}", data)])
        put_s = time.perf_counter() - started
        started = time.perf_counter()
        got, start = 0, prefix
        while True:
            page = await log.store.range(start, prefix + "~", limit=8)
            got += sum(len(kv.value) for kv in page.kvs)
            if not page.more:
                break
            start = page.kvs[-1].key + "\x00"
        return put_s, time.perf_counter() - started
    finally:
        await log.close()


def _fresh_node(url: str) -> dict[str, float]:
    """Start a fresh node in a new process; return its ready time and resident growth."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_scale", "--fresh-node", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


async def _fresh_node_here(url: str) -> dict[str, float]:
    before = _rss_bytes()
    started = time.perf_counter()
    async with CatalogNode.open(url, f"fresh-{os.getpid()}", **_node_options()) as node:
        ready_s = time.perf_counter() - started
        cat = node.service.latest_catalog()
        found = cat.table("PUBLIC", "T0").name
        return {"ready_s": ready_s, "resident": _rss_bytes() - before, "found": len(found)}


async def _ddl_loop(url: str, count: int) -> list[tuple[int, int]]:
    """Run ``count`` DDL (create, drop, ...) with automatic compaction; sizes at checkpoints."""
    policy = CompactionPolicy(retain_versions=500, retain_ms=1, check_interval_s=0.2)
    sizes: list[tuple[int, int]] = []
    options = {**_node_options(), "compaction": policy, "follow_interval_s": 0.2}
    async with CatalogNode.open(url, "looper", **options) as node:
        for i in range(count):
            command: Any = (
                _table(i % 50)
                if (i // 50) % 2 == 0
                else c.DropTable(schema="PUBLIC", name=f"T{i % 50}")
            )
            await node.manager.execute([command], request_id=f"ddl-{i}")
            if i + 1 in (1000, count):
                await asyncio.sleep(1.0)  # let the policy run once at this point
                sizes.append((i + 1, await _store_size(url)))
            if (i + 1) % 10_000 == 0:
                progress(f"S5: {i + 1} DDL")
    return sizes


async def _store_size(url: str) -> int:
    if url.startswith("sqlite:"):
        path = Path(url.removeprefix("sqlite:///").split("?")[0])
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    log = open_log(url)
    try:
        assert isinstance(log, KvUpdateLog) and isinstance(log.store, EtcdKvStore)
        client = log.store.client()
        status = client.maintenancestub.Status(etcdrpc.StatusRequest(), 10)
        return int(status.dbSizeInUse)
    finally:
        await log.close()


def _one(value: float, unit: str) -> Sample:
    return Sample(value, value, value, unit)


def _figures(store: str, url: str, fresh_url: str, tables: int, ddl: int) -> list[Figure]:
    progress(f"S1-S3 on {store}: {tables} tables")
    fill = asyncio.run(_fill(url, tables))
    log_only_s = asyncio.run(_log_only(fresh_url, url))
    fill.update(asyncio.run(_snapshot(url)))
    raw_put_s, raw_read_s = asyncio.run(_raw_put_and_read(fresh_url, int(fill["snapshot_bytes"])))
    progress(f"S4 on {store}")
    fresh = _fresh_node(url)
    per_table = fill["snapshot_bytes"] / tables
    s1 = tables / fill["fill_s"]
    figures = [
        Figure(
            f"S1{store[0]}",
            f"{store}: tables/s created ÷ same updates appended to the log",
            _one(s1, "tables/s"),
            _one(tables / log_only_s, "tables/s"),
            ">= 0.5",
            extra={"tables": tables, "absolute_goal": ">= 3000 tables/s", "met": s1 >= 3000},
        ),
        Figure(
            f"S2{store[0]}",
            f"{store}: resident bytes/table (all versions) ÷ marshalled",
            _one(fill["resident"] / tables, "B"),
            _one(per_table, "B"),
            "<= 8",
            extra={"absolute_goal": "<= 2048 B", "met": fill["resident"] / tables <= 2048},
        ),
        Figure(
            f"S3{store[0]}",
            f"{store}: snapshot write at {tables} tables ÷ raw puts of its bytes",
            _one(fill["snapshot_s"], "s"),
            _one(raw_put_s, "s"),
            "<= 3",
            extra={"absolute_goal": "<= 30 s", "met": fill["snapshot_s"] <= 30},
        ),
        Figure(
            f"S4{store[0]}",
            f"{store}: fresh node ready at {tables} tables ÷ raw read of the snapshot",
            _one(fresh["ready_s"], "s"),
            _one(raw_read_s, "s"),
            "<= 10",
            extra={
                "absolute_goal": "<= 10 s",
                "met": fresh["ready_s"] <= 10,
                "fresh_node_resident_bytes_per_table": fresh["resident"] / tables,
            },
        ),
    ]
    progress(f"S5 on {store}: {ddl} DDL")
    sizes = asyncio.run(_ddl_loop(_fresh_store(store, fresh_url), ddl))
    figures.append(
        Figure(
            f"S5{store[0]}",
            f"{store}: store size after {ddl} DDL ÷ after 1,000 (auto compaction)",
            _one(sizes[-1][1], "B"),
            _one(sizes[0][1], "B"),
            "<= 1.5",
        )
    )
    return figures


def _fresh_store(store: str, url: str) -> str:
    if store == "sqlite":
        folder = tempfile.mkdtemp(prefix="bench-s5-")
        return f"sqlite:///{folder}/catalog.db"
    return url.rsplit("/", 1)[0] + f"/s5-{uuid.uuid4().hex}"


def run(quick: bool) -> list[Figure]:
    """Measure S1-S5 on both stores (N = 100,000 quick, 1,000,000 full)."""
    tables = 100_000 if quick else 1_000_000
    ddl = 20_000 if quick else 100_000
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
        url = f"sqlite:///{folder}/catalog.db"
        figures += _figures("sqlite", url, f"sqlite:///{folder}/raw.db", tables, ddl)
    with EtcdServer() as server:
        base = f"etcd://{server.endpoint}"
        figures += _figures("etcd", f"{base}/scale", f"{base}/raw", tables, ddl)
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--fresh-node":
        print(json.dumps(asyncio.run(_fresh_node_here(sys.argv[2]))))
    else:
        for figure in run(quick="--quick" in sys.argv):
            print(json.dumps(figure.as_dict()))
