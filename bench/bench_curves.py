"""Curves for the pictures: commits/s against concurrent clients, and a node against its size.

- C1: DDL commits/s of one node on a real etcd (delay 0, skew 0) with 1 to 64 concurrent
  clients (asyncio tasks, each executing one small CREATE TABLE after another), beside the
  raw etcd CAS transaction rate of one client measured on the same etcd in the same run (the
  physical limit of a serialized log; ``bench_updatelog_etcd``'s raw loop). Group commit lets
  commands that arrive during an append ride in the next version, so many clients commit more
  DDL per second than one raw CAS loop. The figure is the rate at 64 clients ÷ the raw rate;
  goal >= 1.
- The scale curve (no figure of its own; S1 and the million-table notes have the goals):
  resident memory and a fresh node's start time (snapshot decode until a lookup answers)
  against the number of tables, from ``bench.bench_scale_catalog`` in child processes at
  10k and 100k tables, and 1M in the full mode.

``python -m bench`` draws both into ``docs/`` (see ``bench.pictures``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import time
import uuid
from typing import Any

import pyetcd

from bench.bench_scale_catalog import measure_in_child
from bench.bench_updatelog_etcd import _host_port, _RawSide
from bench.harness import Figure, Sample, progress
from bench.tables import create_command
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from deploy.etcd_server import EtcdServer

_names = itertools.count()


async def _commits_per_s(node: CatalogNode, clients: int, seconds: float) -> float:
    """Return the commands committed per second by ``clients`` tasks during ``seconds``."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await node.manager.execute(create_command(f"C{next(_names)}"))
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return done / (time.perf_counter() - start)


async def _sweep(server: EtcdServer, clients: list[int], seconds: float) -> dict[str, Any]:
    url = server.url(f"bench-curves-{uuid.uuid4().hex[:8]}")
    node = await CatalogNode.start(url, "n0", NodeOptions(delay_ms=0, max_clock_skew_ms=0))
    raw_client = pyetcd.client(*_host_port(server.endpoint))
    raw = _RawSide(raw_client, 300, payload=os.urandom(300))
    ours: dict[int, list[float]] = {k: [] for k in clients}
    raws: list[float] = []
    try:
        await _commits_per_s(node, 4, 1.0)  # warm-up
        for _ in range(2):  # both sides in turn, so a noisy neighbour slows both alike
            raws.append(await asyncio.to_thread(raw.run))
            for k in clients:
                progress(f"C1: {k} concurrent clients")
                ours[k].append(await _commits_per_s(node, k, seconds))
        versions = node.service.latest_version
    finally:
        raw_client.close()
        await node.close()
    return {
        "clients": clients,
        "commits_per_s": [statistics.median(ours[k]) for k in clients],
        "commits_per_s_min": [min(ours[k]) for k in clients],
        "commits_per_s_max": [max(ours[k]) for k in clients],
        "raw_txn_per_s": statistics.median(raws),
        "raw_txn_per_s_all": raws,
        "versions": versions,
    }


def _scale_point(tables: int) -> dict[str, Any]:
    progress(f"scale curve: {tables} tables")
    return measure_in_child(tables, ["--rss"])


def run(quick: bool) -> list[Figure]:
    """Measure C1 and the scale curve."""
    clients = [1, 4, 16, 64] if quick else [1, 2, 4, 8, 16, 32, 64]
    server = EtcdServer()
    try:
        server.start()
        sweep = asyncio.run(_sweep(server, clients, 2.0 if quick else 5.0))
    finally:
        server.stop()
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    scale = [_scale_point(n) for n in sizes]
    at64 = sweep["commits_per_s"][-1]
    value = Sample(at64, sweep["commits_per_s_min"][-1], sweep["commits_per_s_max"][-1], "DDL/s")
    raws = sweep["raw_txn_per_s_all"]
    baseline = Sample(sweep["raw_txn_per_s"], min(raws), max(raws), "txn/s")
    return [
        Figure(
            "C1",
            f"DDL commits/s, {clients[-1]} concurrent clients ÷ raw etcd CAS txn/s",
            value,
            baseline,
            ">= 1",
            {"sweep": sweep, "scale": scale},
        )
    ]
