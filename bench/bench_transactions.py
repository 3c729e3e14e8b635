"""T1: a 10-table transaction ÷ 10 single-table commits; T2: a pinned load ÷ a load of the latest.

One ``catalog serve`` on a fresh SQLite store, one client.

T1: each round, PyIceberg writes one append to each of 10 tables (data file, manifest,
manifest list: not timed) and keeps each table's commit request (its transaction's
requirements and updates) unsent. Then the ten requests are sent either as one
``POST /v1/transactions/commit`` or one by one to each table's commit route; the time of the
sending is measured. The two take turns, on fresh appends each round.

T2: a table of 10 snapshots, then 100,000 catalog versions of history made after it (an
``ALTER TABLE ... SET`` of one of 1,000 other tables each, in turn, written by an in-process
node before the server starts). Each round loads the table through a catalog pinned at a
moment in the middle of that history (``warehouse=bench@<time>``: its own prefix, config and
load) or through an unpinned catalog (config and load); the two take turns.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import tempfile
import time
from collections.abc import Callable
from typing import Any

import httpx
import pyarrow as pa

from bench.harness import Figure, Sample, alternate, progress
from bench.servers import serve_catalog, stop
from bench.tables import create_command

TABLES = 10
HISTORY = 100_000
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])


def _catalog(uri: str, **options: str) -> Any:
    from pyiceberg.catalog import load_catalog

    return load_catalog("bench", type="rest", uri=uri, **options)


def _staged(catalog: Any, name: str, round_: int) -> dict[str, Any]:
    """Write one append to ``name``; return its commit request, not sent."""
    from pyiceberg.table import CommitTableRequest, TableIdentifier

    table = catalog.load_table(name)
    ids = list(range(round_ * 10, round_ * 10 + 10))
    tx = table.transaction()
    tx.append(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, schema=SCHEMA))
    namespace, table_name = name.split(".")
    request = CommitTableRequest(
        identifier=TableIdentifier(namespace=[namespace], name=table_name),
        requirements=tx._requirements,
        updates=tx._updates,
    )
    return dict(request.model_dump(mode="json", by_alias=True, exclude_none=True))


def _t1_sides(uri: str) -> list[Callable[[], float]]:
    catalog = _catalog(uri)
    catalog.create_namespace("BENCH")
    names = [f"BENCH.T{i}" for i in range(TABLES)]
    for name in names:
        catalog.create_table(name, SCHEMA)
    http = httpx.Client(base_url=uri, timeout=60)
    rounds = iter(range(1, 10_000))

    def together() -> float:
        staged = [_staged(catalog, name, next(rounds)) for name in names]
        start = time.perf_counter()
        answer = http.post("/v1/transactions/commit", json={"table-changes": staged})
        took = time.perf_counter() - start
        assert answer.status_code == 204, answer.text
        return took

    def one_by_one() -> float:
        staged = [_staged(catalog, name, next(rounds)) for name in names]
        start = time.perf_counter()
        for body in staged:
            path = f"/v1/namespaces/BENCH/tables/{body['identifier']['name']}"
            answer = http.post(path, json=body)
            assert answer.status_code == 200, answer.text
        return time.perf_counter() - start

    return [together, one_by_one]


NOISE_TABLES = 1000
"""The tables the history alters in turn (a table's own history grows with each change)."""


async def _history(store: str, versions: int, *, first: bool) -> None:
    """Append ``versions`` catalog versions: an ALTER TABLE of one of the NOISE tables each
    (made first, in one version), in turn."""
    from catalog import commands as c
    from catalog.runtime.node import CatalogNode
    from catalog.runtime.options import NodeOptions

    options = NodeOptions(delay_ms=0, max_clock_skew_ms=0, registry_ttl_s=None)
    async with CatalogNode.open(store, "history", options) as node:
        if first:
            await node.manager.execute([create_command(f"NOISE{i}") for i in range(NOISE_TABLES)])
        for n in range(versions):
            fraction = 0.1 + (n // NOISE_TABLES % 800) / 1000
            table = f"NOISE{n % NOISE_TABLES}"
            command = c.AlterTableProperties(table=table, stale_rows_fraction=fraction)
            await node.manager.execute([command])


def _t2_sides(uri: str, pin: str) -> list[Callable[[], float]]:
    def load(**options: str) -> Callable[[], float]:
        def once() -> float:
            start = time.perf_counter()
            table = _catalog(uri, **options).load_table("BENCH.EVENTS")
            took = time.perf_counter() - start
            assert len(table.snapshots()) == 10
            return took

        return once

    return [load(warehouse=pin), load()]


def run(quick: bool) -> list[Figure]:
    """Measure T1 and T2."""
    repeats = 5 if quick else 15
    history = 10_000 if quick else HISTORY
    with tempfile.TemporaryDirectory(prefix="bench-transactions-") as tmp:
        store = f"sqlite:///{tmp}/catalog.db"
        progress("T1: starting our catalog")
        proc, url = serve_catalog(store)
        try:
            uri = f"{url}/iceberg"
            together, single = alternate(_t1_sides(uri), repeats=repeats)
            progress("T2: a table of 10 snapshots")
            catalog = _catalog(uri)
            table = catalog.create_table("BENCH.EVENTS", SCHEMA)
            for k in range(10):
                table.append(pa.table({"id": [k], "v": [str(k)]}, schema=SCHEMA))
        finally:
            stop(proc)
        progress(f"T2: {history} catalog versions of history (in-process writer)")
        start = time.monotonic()
        asyncio.run(_history(store, history // 2, first=True))
        middle = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        asyncio.run(_history(store, history - history // 2, first=False))
        progress(f"T2: history written in {time.monotonic() - start:.0f} s")
        proc, url = serve_catalog(store)
        try:
            pinned, latest = alternate(
                _t2_sides(f"{url}/iceberg", f"bench@{middle}"), repeats=repeats
            )
        finally:
            stop(proc)
    return [
        Figure(
            "T1",
            f"{TABLES}-table transaction commit ÷ {TABLES} single-table commits (one client)",
            Sample.of([t * 1000 for t in together], "ms"),
            Sample.of([t * 1000 for t in single], "ms"),
            "<= 0.3",
            {"tables": TABLES, "rounds_per_side": repeats},
        ),
        Figure(
            "T2",
            f"pinned table load, {history} versions of history ÷ load of the latest",
            Sample.of([t * 1000 for t in pinned], "ms"),
            Sample.of([t * 1000 for t in latest], "ms"),
            "<= 1.2",
            {"versions": history, "snapshots": 10, "rounds_per_side": repeats},
        ),
    ]
