"""S1-S5: the update log at scale, on SQLite and on etcd (a 1-member etcd with default flags).

S1  tables/s creating N tables of 6 columns in batches of 1,000 through a node.
S2  resident bytes per table of the node that created them (every version kept).
S3  snapshot write time at N tables (and the latency of commits made while it is written).
S4  a fresh node's time to be ready at N tables (after the snapshot).
S5  store bytes in use after many DDL with the automatic compaction policy on, ÷ after 1,000
    (with the file size and the catalog's key count at each tenth beside it). Both sides are
    medians of several checkpoints (the last four tenths; 1,000, 1,250 and 1,500 DDL), with
    their min and max: etcd's bytes in use move by a third from one checkpoint to the next,
    as its compactions and free pages fall, so one reading on each side decided the figure.

S1-S4 have absolute goals (>= 3,000 tables/s, <= 2 KB, <= 30 s, <= 10 s): each figure is
printed as a ratio against its goal, with what the bare store does with the same bytes in the
same run beside it (appending the same updates, putting and reading the snapshot's bytes in
request-sized pieces, the marshalled bytes per table). The filling node and the fresh node each
run in their own process, so their memory is their own. S5 runs with a 1 s request-id window,
so that expiry is part of what keeps the store flat: the store holds the request records of one
window (DDL rate times window, bounded by time, not by the count of DDL), and with a window shorter
than the first 1,000 DDL take, the baseline is already in that steady state.

Quick mode: N = 100,000 and 20,000 DDL for S5; full mode: N = 1,000,000 and 100,000 DDL.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.harness import Figure, Sample, progress
from catalog import ColumnType
from catalog import commands as c
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import CompactionPolicy, NodeOptions
from deploy.etcd_server import EtcdServer
from updatelog import KvUpdateLog, open_log
from updatelog.kv import Put

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


def _node_options() -> NodeOptions:
    # A warehouse as a served cluster has one: every table records its folder in it.
    warehouse = f"{tempfile.gettempdir()}/bench-scale-warehouse"
    return NodeOptions(
        delay_ms=0, max_clock_skew_ms=0, registry_ttl_s=None, default_warehouse=warehouse
    )


async def _fill(url: str, tables: int) -> dict[str, float]:
    """Create ``tables`` tables through a node; return timings, memory and sizes."""
    before = _rss_bytes()
    async with CatalogNode.open(url, "filler", _node_options()) as node:
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


async def _timed_commits(
    node: CatalogNode, first: int, limit: int, done: asyncio.Event
) -> list[float]:
    """Commit one-table batches (tables ``first``, ``first + 1``, ...) one after the other,
    until ``limit`` did or ``done`` is set; return each commit's seconds."""
    latencies: list[float] = []
    while len(latencies) < limit and not done.is_set():
        command = _table(first + len(latencies))
        started = time.perf_counter()
        await node.manager.execute([command])
        latencies.append(time.perf_counter() - started)
    return latencies


async def _snapshot(url: str) -> dict[str, float]:
    """Compact the log at ``url`` to its latest version while commits go on; return figures.

    The figures: the snapshot's time and size, and the latency (median, worst) of one-table
    commits made one after the other during the snapshot, and of 50 made just before it.
    """
    async with CatalogNode.open(url, "compactor", _node_options()) as node:
        before = await _timed_commits(node, 10_000_000, 50, asyncio.Event())
        done = asyncio.Event()
        during = asyncio.create_task(_timed_commits(node, 20_000_000, 100_000, done))
        started = time.perf_counter()
        version = await node.manager.compact(1)
        snapshot_s = time.perf_counter() - started
        done.set()
        latencies = await during
        entries = await node.log.read(version or 1)
        return {
            "snapshot_s": snapshot_s,
            "snapshot_bytes": len(entries[0].payload),
            "commit_p50_ms_before": statistics.median(before) * 1000,
            "commit_p50_ms_during": statistics.median(latencies) * 1000,
            "commit_max_ms_during": max(latencies) * 1000,
            "commits_during": len(latencies),
        }


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


def _child(step: str, url: str, *args: str) -> dict[str, float]:
    """Run ``step`` (``--fill`` or ``--fresh-node``) in a new process; return its figures."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_scale", step, url, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


async def _fresh_node_here(url: str) -> dict[str, float]:
    before = _rss_bytes()
    started = time.perf_counter()
    async with CatalogNode.open(url, f"fresh-{os.getpid()}", _node_options()) as node:
        ready_s = time.perf_counter() - started
        cat = node.service.latest_catalog()
        found = cat.table("PUBLIC", "T0").name
        return {"ready_s": ready_s, "resident": _rss_bytes() - before, "found": len(found)}


async def _ddl_loop(url: str, count: int) -> list[tuple[int, dict[str, int]]]:
    """Run ``count`` DDL (create, drop, ...) with automatic compaction; sizes at checkpoints.

    The checkpoints: after 1,000 DDL, then after each tenth of ``count``.
    """
    policy = CompactionPolicy(retain_versions=500, retain_ms=1, check_interval_s=0.2)
    checkpoints = {*_S5_START, *(count * k // 10 for k in range(1, 11))}
    sizes: list[tuple[int, dict[str, int]]] = []
    options = dataclasses.replace(_node_options(), compaction=policy, follow_interval_s=0.2)
    async with CatalogNode.open(url, "looper", options) as node:
        for i in range(count):
            command: Any = (
                _table(i % 50)
                if (i // 50) % 2 == 0
                else c.DropTable(schema="PUBLIC", name=f"T{i % 50}")
            )
            await node.manager.execute([command], request_id=f"ddl-{i}")
            if i + 1 in checkpoints:
                await asyncio.sleep(1.0)  # let the policy run once at this point
                sizes.append((i + 1, await _store_size(url, node.log)))
                progress(f"S5: {i + 1} DDL, {sizes[-1][1]}")
    return sizes


async def _store_size(url: str, log: Any) -> dict[str, int]:
    """Return the store's bytes in use, its file bytes, and the catalog's key count."""
    prefix = log.keys.request_prefix.removesuffix("request.")
    keys = len(await log.store.keys(prefix, prefix + "~"))
    if url.startswith("sqlite:"):
        path = Path(url.removeprefix("sqlite:///").split("?")[0])
        file = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            pages, free, size = (
                db.execute(f"PRAGMA {p}").fetchone()[0]
                for p in ("page_count", "freelist_count", "page_size")
            )
        return {"in_use": (pages - free) * size, "file": file, "keys": keys}
    # etcd's JSON gateway answers the status with the bytes in use (the file keeps its
    # freed pages for reuse, so its size says how large the store once was).
    endpoint = url.removeprefix("etcd://").split("/")[0]
    async with httpx.AsyncClient() as http:
        status = (await http.post(f"http://{endpoint}/v3/maintenance/status", json={})).json()
    return {"in_use": int(status["dbSizeInUse"]), "file": int(status["dbSize"]), "keys": keys}


_S5_START = (1000, 1250, 1500)
"""The DDL counts whose sizes make S5's baseline (a store past its first compactions)."""


def _s5_sides(sizes: list[tuple[int, dict[str, int]]], ddl: int) -> tuple[Sample, Sample]:
    """Return S5's value (the last four tenths) and baseline (``_S5_START``), bytes in use."""
    late = [size["in_use"] for n, size in sizes if n >= ddl * 7 // 10]
    early = [size["in_use"] for n, size in sizes if n in _S5_START]
    return Sample.of(late, "B"), Sample.of(early, "B")


def _one(value: float, unit: str) -> Sample:
    return Sample(value, value, value, unit)


def _figures(
    store: str, url: str, fresh_url: str, s5_url: str, tables: int, ddl: int
) -> list[Figure]:
    progress(f"S1-S3 on {store}: {tables} tables")
    fill = _child("--fill", url, str(tables))
    log_only_s = asyncio.run(_log_only(fresh_url, url))
    fill.update(asyncio.run(_snapshot(url)))
    raw_put_s, raw_read_s = asyncio.run(_raw_put_and_read(fresh_url, int(fill["snapshot_bytes"])))
    progress(f"S4 on {store}")
    fresh = _child("--fresh-node", url)
    per_table = fill["snapshot_bytes"] / tables
    s1 = tables / fill["fill_s"]
    resident = fill["resident"] / tables
    figures = [
        Figure(
            f"S1{store[0]}",
            f"{store}: tables/s created in batches of 1,000 ÷ the 3,000/s goal",
            _one(s1, "tables/s"),
            _one(3000, "tables/s"),
            ">= 1",
            extra={"tables": tables, "same_updates_appended_to_the_log": tables / log_only_s},
        ),
        Figure(
            f"S2{store[0]}",
            f"{store}: resident B/table, every version kept ÷ the 2 KB goal",
            _one(resident, "B"),
            _one(2048, "B"),
            "<= 1",
            extra={"marshalled_bytes_per_table": per_table},
        ),
        Figure(
            f"S3{store[0]}",
            f"{store}: snapshot write at {tables} tables ÷ the 30 s goal",
            _one(fill["snapshot_s"], "s"),
            _one(30, "s"),
            "<= 1",
            extra={
                "snapshot_bytes": fill["snapshot_bytes"],
                "raw_puts_of_its_bytes_s": raw_put_s,
                **{k: v for k, v in fill.items() if k.startswith("commit")},
            },
        ),
        Figure(
            f"S4{store[0]}",
            f"{store}: fresh node ready at {tables} tables ÷ the 10 s goal",
            _one(fresh["ready_s"], "s"),
            _one(10, "s"),
            "<= 1",
            extra={
                "raw_read_of_the_snapshot_s": raw_read_s,
                "fresh_node_resident_bytes_per_table": fresh["resident"] / tables,
            },
        ),
    ]
    for figure in figures:
        progress(json.dumps(figure.as_dict()))
    progress(f"S5 on {store}: {ddl} DDL")
    sizes = asyncio.run(_ddl_loop(s5_url, ddl))
    first, last = dict(sizes)[1000], sizes[-1][1]
    late, early = _s5_sides(sizes, ddl)
    figures.append(
        Figure(
            f"S5{store[0]}",
            f"{store}: store bytes in use after {ddl * 7 // 10}-{ddl} DDL ÷ after 1,000-1,500",
            late,
            early,
            "<= 1.5",
            extra={
                "file_bytes_after": last["file"],
                "file_bytes_at_1000": first["file"],
                "keys_after": last["keys"],
                "keys_at_1000": first["keys"],
                "largest_in_use": max(size["in_use"] for _, size in sizes),
                "checkpoints": {n: size for n, size in sizes},
            },
        )
    )
    progress(json.dumps(figures[-1].as_dict()))
    return figures


def run(quick: bool) -> list[Figure]:
    """Measure S1-S5 on both stores (N = 100,000 quick, 1,000,000 full)."""
    tables = 100_000 if quick else 1_000_000
    ddl = 20_000 if quick else 100_000
    figures: list[Figure] = []
    window = "?request_ttl=1"
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
        url, raw = f"sqlite:///{folder}/catalog.db", f"sqlite:///{folder}/raw.db"
        s5 = f"sqlite:///{folder}/s5.db{window}"
        figures += _figures("sqlite", url, raw, s5, tables, ddl)
    # S5 gets an etcd of its own, so that its size is its own.
    with EtcdServer() as server, EtcdServer() as s5_server:
        base, s5 = f"etcd://{server.endpoint}", f"etcd://{s5_server.endpoint}/s5{window}"
        figures += _figures("etcd", f"{base}/scale", f"{base}/raw", s5, tables, ddl)
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--fresh-node":
        print(json.dumps(asyncio.run(_fresh_node_here(sys.argv[2]))))
    elif len(sys.argv) == 4 and sys.argv[1] == "--fill":
        print(json.dumps(asyncio.run(_fill(sys.argv[2], int(sys.argv[3])))))
    else:
        for figure in run(quick="--quick" in sys.argv):
            print(json.dumps(figure.as_dict()))
