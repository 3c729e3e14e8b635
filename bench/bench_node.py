"""Catalog node figures: the whole command path against one real etcd (P1-P3), and restart (P7).

One etcd is started here (default settings, so every commit is fsynced) and always stopped;
each figure uses its own key prefix on it, so each is its own cluster with its own settings.

- P1: sequential ``execute`` commits/s (delay 0, skew 0, one node with its safe-time ticker on,
  as production runs; small CREATE TABLE, every tenth a CREATE SCHEMA, the commands built
  before the clock starts) ÷ raw etcd CAS
  transactions/s. The baseline is the raw pyetcd loop of ``bench_updatelog_etcd`` (If
  version == N-1 AND safe_time < u, Then put update, version, safe_time) on a synchronous
  pyetcd client of its own, from one thread, with a payload as large as the node's average
  stored update. Both sides alternate, so a noisy neighbour slows both alike. Goal >= 0.7.
- P2: 64 concurrent CREATE TABLE spread over 3 nodes (delay 500 ms, skew 500 ms): wall time
  until every ``execute`` returned ÷ (delay + skew = 1 s), a floor of 1.0 no commit can beat.
  Goal <= 1.2 (Ignite 3, sequential, needs about 64). The number of versions the 64 creates
  produced is in the title and extra.
- P3: commit → applied on all of 5 nodes (delay 0). Node 0 appends a properly encoded
  ``VersionedUpdate`` (one small CREATE TABLE) with ``log.append``; the latency runs from
  the moment that append returned committed (the writer knows the version is durable) to the
  moment ``catalog_ready(v)`` resolved on the slowest of the 5 nodes (applied, listeners
  done). Sequential appends, each after the previous one was applied everywhere. The
  goal is a budget (p99 <= 10 ms), so P3p50 and P3p99 divide by a constant 10 ms and the goal
  is "<= 1". P3w divides the p99 by its real baseline, measured on the same etcd in the same
  run: a raw put's answer to the moment 5 raw pyetcd watchers (5 clients, as 5 nodes) all
  received it; the 5 nodes share one interpreter here and apply in turn, while the raw
  watchers are gRPC's own threads, so its goal is <= 2. The median of a figure is the
  percentile over every sample pooled; min/max are that percentile per repeat. A raw etcd get
  round trip is in ``extra`` for scale, with the time of the append itself.
- P7: restart with 100k versions (quick: 20k) on SQLite: filling etcd with 100k fsynced
  transactions takes too long for a benchmark and the restart path (range read, decode,
  apply) is the same code on both backends. Versions are one small CREATE TABLE each (every
  tenth a CREATE SCHEMA), appended through ``UpdateLog.append``; the file is then copied and
  the copy compacted into a snapshot at latest - 100. Measured: ``CatalogNode.start`` until
  it returns (recovered, following the log) on the snapshot + 100-version tail ÷ on the full
  log replayed from version 1. Goal <= 0.1; the absolute snapshot + tail seconds (with
  their own goal, < 2 s) are in the title and extra. Every version adds an object, so the
  snapshot holds about as many objects as there are versions: the hardest case for a
  snapshot, whose load cost grows with the objects alive, not with the history.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pyetcd

from bench.bench_updatelog_etcd import _host_port, _RawSide
from bench.harness import Figure, Sample, progress
from catalog import Catalog, ColumnType, prepare
from catalog import commands as c
from catalog.marshalling import encode_update
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.snapshots import encode_snapshot
from catalog.update import VersionedUpdate, initial_update
from deploy.etcd_server import EtcdServer
from schemasync.clock import HybridClock
from updatelog.etcd import EtcdUpdateLog
from updatelog.log import ClusterSettings
from updatelog.sqlite import SqliteUpdateLog

_names = itertools.count()


def _create_table(name: str) -> c.CreateTableCommand:
    return c.CreateTable(
        schema="PUBLIC",
        name=name,
        columns=[
            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
            c.Column(name="V", type=ColumnType.STRING, length=20),
        ],
        primary_key=["ID"],
    )


def _small_ddl(i: int) -> c.CreateTableCommand | c.CreateSchemaCommand:
    """Return a fresh small DDL: every tenth a CREATE SCHEMA, otherwise a CREATE TABLE."""
    n = next(_names)
    return c.CreateSchema(name=f"S{n}") if i % 10 == 9 else _create_table(f"T{n}")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _etcd_url(server: EtcdServer, figure: str) -> str:
    return server.url(f"bench-node-{figure}-{uuid.uuid4().hex[:8]}")


async def _start_nodes(url: str, count: int, **options: Any) -> list[CatalogNode]:
    nodes: list[CatalogNode] = []
    try:
        for i in range(count):
            nodes.append(await CatalogNode.start(url, f"n{i}", NodeOptions(**options)))
    except BaseException:
        await _close(nodes)
        raise
    return nodes


async def _close(nodes: list[CatalogNode]) -> None:
    for node in nodes:
        await node.close()


# -- P1 ---------------------------------------------------------------------------------


async def p1_sequential(server: EtcdServer, count: int, repeats: int) -> Figure:
    """Sequential ``execute`` commits/s ÷ raw etcd CAS txn/s of the same payload size."""
    progress(f"P1: sequential execute vs raw etcd CAS txn, x{count} each, {repeats} repeats")
    (node,) = await _start_nodes(_etcd_url(server, "p1"), 1, delay_ms=0, max_clock_skew_ms=0)
    try:
        log = node.log
        assert isinstance(log, EtcdUpdateLog)

        async def commits() -> float:
            # Built beforehand: the figure is about execute, not about building commands.
            batch = [_small_ddl(i) for i in range(count)]
            start = time.perf_counter()
            for command in batch:
                await node.manager.execute(command)
            return count / (time.perf_counter() - start)

        await commits()  # warm-up, and stored updates to size the raw payload from
        latest = node.service.latest_version
        stored = [len(e.payload) for e in await log.read(latest - count + 1)]
        payload_bytes = round(statistics.mean(stored))
        client = pyetcd.client(*_host_port(server.endpoint))
        raw = _RawSide(client, count, payload=os.urandom(payload_bytes))
        await asyncio.to_thread(raw.run)  # warm-up
        raws: list[float] = []
        ours: list[float] = []
        for _ in range(repeats):
            raws.append(await asyncio.to_thread(raw.run))
            ours.append(await commits())
        client.close()
        stats = dict(node.manager.stats)
    finally:
        await node.close()
    return Figure(
        "P1",
        f"sequential execute/s ÷ raw etcd CAS txn/s ({payload_bytes} B, fsync)",
        Sample.of(ours, "commits/s"),
        Sample.of(raws, "txn/s"),
        ">= 0.7",
        extra={
            "commits_per_repeat": count,
            "repeats": repeats,
            "payload_bytes": payload_bytes,
            "manager_stats": stats,
        },
    )


# -- P2 ---------------------------------------------------------------------------------


async def p2_concurrent(server: EtcdServer, repeats: int) -> Figure:
    """64 concurrent CREATE TABLE over 3 nodes (delay 500, skew 500): wall ÷ 1 s."""
    progress(f"P2: 64 concurrent CREATE TABLE on 3 nodes, delay 500 + skew 500, {repeats} repeats")
    nodes = await _start_nodes(_etcd_url(server, "p2"), 3, delay_ms=500, max_clock_skew_ms=500)
    try:

        async def burst() -> tuple[float, int]:
            before = await nodes[0].log.latest_version()
            start = time.perf_counter()
            await asyncio.gather(
                *(
                    nodes[i % 3].manager.execute(_create_table(f"T{next(_names)}"))
                    for i in range(64)
                )
            )
            wall = time.perf_counter() - start
            return wall, await nodes[0].log.latest_version() - before

        await burst()  # warm-up
        walls: list[float] = []
        versions: list[int] = []
        for i in range(repeats):
            wall, produced = await burst()
            progress(f"P2: repeat {i + 1}: {wall:.2f} s, {produced} versions")
            walls.append(wall)
            versions.append(produced)
        stats = [dict(n.manager.stats) for n in nodes]
    finally:
        await _close(nodes)
    median_versions = statistics.median(versions)
    return Figure(
        "P2",
        f"64 CREATE TABLE on 3 nodes: wall ÷ delay+skew ({median_versions:g} versions)",
        Sample.of(walls, "s"),
        Sample(1.0, 1.0, 1.0, "s"),
        "<= 1.2",
        extra={"versions": median_versions, "versions_per_repeat": versions, "stats": stats},
    )


# -- P3 ---------------------------------------------------------------------------------


async def _when_ready(node: CatalogNode, version: int) -> float:
    await node.service.catalog_ready(version)
    return time.perf_counter()


P3_BUDGET_MS = 10.0


def _raw_put_to_watchers(endpoint: str, samples: int, watchers: int = 5) -> list[float]:
    """Raw etcd: ms from a put's answer until ``watchers`` clients all received it (>= 0)."""
    host, port = _host_port(endpoint)
    key = f"bench/p3-raw/{uuid.uuid4().hex}"
    writer = pyetcd.client(host, port)
    clients = [pyetcd.client(host, port) for _ in range(watchers)]
    lock = threading.Lock()
    seen: dict[int, float] = {}
    everyone = threading.Event()

    def watcher(index: int) -> Callable[[object], None]:
        def on_response(_: object) -> None:
            now = time.perf_counter()
            with lock:
                seen.setdefault(index, now)
                if len(seen) == watchers:
                    everyone.set()

        return on_response

    ids = [c.add_watch_callback(key, watcher(i)) for i, c in enumerate(clients)]
    latencies: list[float] = []
    try:
        for i in range(samples + 10):  # the first 10 warm up
            with lock:
                seen.clear()
                everyone.clear()
            writer.put(key, str(i))
            answered = time.perf_counter()
            if not everyone.wait(10):
                raise RuntimeError("a raw etcd watcher missed a put")
            if i >= 10:
                latencies.append(max(0.0, max(seen.values()) - answered) * 1000)
    finally:
        for client, watch_id in zip(clients, ids, strict=True):
            client.cancel_watch(watch_id)
        for client in (writer, *clients):
            client.close()
    return latencies


async def p3_latency(server: EtcdServer, per_repeat: int, repeats: int) -> list[Figure]:
    """Commit → applied on all of 5 nodes: p50 and p99 against the budget and raw etcd."""
    progress(f"P3: commit -> applied on 5 nodes, {repeats} x {per_repeat} appends")
    nodes = await _start_nodes(_etcd_url(server, "p3"), 5, delay_ms=0, max_clock_skew_ms=0)
    writer = nodes[0]
    try:
        for node in nodes:
            await node.wait_ready()

        async def one() -> tuple[float, float]:
            base = writer.service.latest_catalog()
            entries = prepare(base, [_create_table(f"T{next(_names)}")]).entries
            update = VersionedUpdate(
                version=base.version + 1,
                proposal_ts=writer.clock.now(),
                delay_ms=0,
                entries=tuple(entries),
            )
            payload = encode_update(update)
            waiters = [
                asyncio.create_task(_when_ready(n, update.version)) for n in nodes
            ]  # waiting before the append, so no wake-up is missed
            sent = time.perf_counter()
            result = await writer.log.append(update.version, payload, update.proposal_ts)
            committed = time.perf_counter()
            if not result.committed:
                raise RuntimeError(f"benchmark append lost a CAS: {result}")
            applied = await asyncio.gather(*waiters)
            return max(applied) - committed, committed - sent

        for _ in range(10):  # warm-up
            await one()
        per_repeat_ms: list[list[float]] = []
        append_ms: list[float] = []
        for _ in range(repeats):
            samples = []
            for _ in range(per_repeat):
                latency, append = await one()
                samples.append(latency * 1000)
                append_ms.append(append * 1000)
            per_repeat_ms.append(samples)
        log = writer.log
        assert isinstance(log, EtcdUpdateLog)
        client = pyetcd.client(*_host_port(server.endpoint))
        key = log.keys.version
        gets = []
        for _ in range(50):
            start = time.perf_counter()
            await asyncio.to_thread(client.get, key)
            gets.append((time.perf_counter() - start) * 1000)
        client.close()
    finally:
        await _close(nodes)
    raw = await asyncio.to_thread(_raw_put_to_watchers, server.endpoint, per_repeat * repeats)
    pooled = [s for samples in per_repeat_ms for s in samples]
    extra = {
        "samples": len(pooled),
        "etcd_get_roundtrip_ms": statistics.median(gets),
        "raw_put_to_5_watchers_ms_p50": _percentile(raw, 0.5),
        "raw_put_to_5_watchers_ms_p99": _percentile(raw, 0.99),
        "append_call_ms_p50": statistics.median(append_ms),
        "max_ms": max(pooled),
    }
    budget = Sample(P3_BUDGET_MS, P3_BUDGET_MS, P3_BUDGET_MS, "ms")
    figures = []
    p99s = [_percentile(samples, 0.99) for samples in per_repeat_ms]
    p99 = Sample(_percentile(pooled, 0.99), min(p99s), max(p99s), "ms")
    for label, q in (("p50", 0.5), ("p99", 0.99)):
        each = [_percentile(samples, q) for samples in per_repeat_ms]
        value = Sample(_percentile(pooled, q), min(each), max(each), "ms")
        figures.append(
            Figure(
                f"P3{label}",
                f"commit -> applied on all 5 nodes, {label} ÷ {P3_BUDGET_MS:g} ms budget",
                value,
                budget,
                "<= 1",
                extra=extra,
            )
        )
    raw_p99 = _percentile(raw, 0.99)
    figures.append(
        Figure(
            "P3w",
            "commit -> applied on 5 nodes p99 ÷ raw etcd put -> 5 watchers p99",
            p99,
            Sample(raw_p99, raw_p99, raw_p99, "ms"),
            "<= 2",
            extra=extra,
        )
    )
    return figures


# -- P7 ---------------------------------------------------------------------------------


async def _build_log(path: Path, versions: int, snapshot_at: int) -> tuple[int, bytes, int]:
    """Append ``versions`` small DDL versions to a new SQLite log.

    Returns:
        ``snapshot_at``, the encoded snapshot of that version, and its number of tables.
    """
    log = SqliteUpdateLog(path)
    try:
        await log.init_settings(ClusterSettings(delay_ms=0, max_clock_skew_ms=0))
        clock = HybridClock()
        first = initial_update(clock.now())
        await log.append(1, encode_update(first), first.proposal_ts)
        catalog = first.apply_to(Catalog())
        kept = catalog
        for version in range(2, versions + 1):
            entries = prepare(catalog, [_small_ddl(version)]).entries
            update = VersionedUpdate(
                version=version, proposal_ts=clock.now(), delay_ms=0, entries=tuple(entries)
            )
            result = await log.append(version, encode_update(update), update.proposal_ts)
            if not result.committed:
                raise RuntimeError(f"building the log lost a CAS: {result}")
            catalog = update.apply_to(catalog)
            if version == snapshot_at:
                kept = catalog
            if version % 10_000 == 0:
                progress(f"P7: built {version} versions")
        return kept.version, encode_snapshot(kept), len(kept.tables())
    finally:
        await log.close()


async def _compact(path: Path, version: int, snapshot: bytes) -> None:
    log = SqliteUpdateLog(path)
    try:
        if not await log.save_snapshot(version, snapshot):
            raise RuntimeError("the benchmark snapshot was refused")
    finally:
        await log.close()


def _copy(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


async def _restart_seconds(path: Path, versions: int) -> float:
    start = time.perf_counter()
    node = await CatalogNode.start(
        f"sqlite:///{path}",
        "p7",
        NodeOptions(delay_ms=0, max_clock_skew_ms=0, safe_time_ticker=False),
    )
    elapsed = time.perf_counter() - start
    try:
        if node.service.latest_version != versions:
            raise RuntimeError(f"restart recovered {node.service.latest_version} of {versions}")
    finally:
        await node.close()
    return elapsed


def _interleaved(
    a: Callable[[], Coroutine[Any, Any, float]],
    b: Callable[[], Coroutine[Any, Any, float]],
    repeats: int,
) -> tuple[list[float], list[float]]:
    asyncio.run(a())  # warm-up: imports, page cache
    asyncio.run(b())
    first: list[float] = []
    second: list[float] = []
    for _ in range(repeats):
        first.append(asyncio.run(a()))
        second.append(asyncio.run(b()))
    return first, second


def p7_restart(versions: int, repeats: int) -> Figure:
    """Node start from snapshot + 100-version tail ÷ full replay from version 1 (SQLite)."""
    tail = 100
    progress(f"P7: building a SQLite log of {versions} versions")
    with tempfile.TemporaryDirectory(prefix="bench-node-p7-") as tmp:
        full, compacted = Path(tmp) / "full.db", Path(tmp) / "snapshot.db"
        start = time.perf_counter()
        gc.disable()  # the build keeps one catalog growing; only the restarts are measured
        try:
            at, snapshot, tables = asyncio.run(_build_log(full, versions, versions - tail))
        finally:
            gc.enable()
        _copy(full, compacted)
        asyncio.run(_compact(compacted, at, snapshot))
        del snapshot
        gc.collect()  # leave no build garbage for the restarts' collections to walk
        build_s = time.perf_counter() - start
        progress(f"P7: built in {build_s:.1f} s; restart snapshot+tail vs full, {repeats} repeats")
        with_snapshot, replay = _interleaved(
            lambda: _restart_seconds(compacted, versions),
            lambda: _restart_seconds(full, versions),
            repeats,
        )
    value = Sample.of(with_snapshot, "s")
    return Figure(
        "P7",
        f"restart {versions // 1000}k versions (SQLite): snap+tail {value.median:.2f}s ÷ replay",
        value,
        Sample.of(replay, "s"),
        "<= 0.1",
        extra={
            "versions": versions,
            "tail": tail,
            "tables_in_snapshot": tables,
            "snapshot_plus_tail_s": value.median,
            "under_2s": value.median < 2.0,
            "build_s": build_s,
        },
    )


# -- entry point ------------------------------------------------------------------------


async def _etcd_figures(server: EtcdServer, quick: bool) -> list[Figure]:
    figures = [
        await p1_sequential(server, 100 if quick else 300, 3 if quick else 5),
        await p2_concurrent(server, 3 if quick else 5),
    ]
    figures += await p3_latency(server, 20 if quick else 40, 3 if quick else 5)
    return figures


def run(quick: bool) -> list[Figure]:
    """Measure P1, P2 and P3 on one etcd started here, then P7 on SQLite."""
    server = EtcdServer()
    try:
        server.start()
        figures = asyncio.run(_etcd_figures(server, quick))
    finally:
        server.stop()
    figures.append(p7_restart(20_000 if quick else 100_000, 3))
    return figures
