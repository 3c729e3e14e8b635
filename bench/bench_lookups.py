"""P6: in-process lookups by name, ``active_catalog(T).table(schema, name)``, at 100,000 tables.

A node on SQLite holds N tables of 6 columns (created in batches of 1,000). Two access patterns,
each printed against the 500,000 lookups/s goal, with a plain dict lookup of the same names in
the same run beside them:

- P6u: names drawn uniformly from all N tables, with the node's ``descriptor_cache`` sized to
  N (the setting a node serving every table alike runs with). Descriptors are kept as their
  stored bytes and decoded on first read; the rate with the default cache (4,096, so most of
  these lookups decode) and the resident bytes the sized cache adds per table are in ``extra``.
- P6h: names drawn from a hot set of 2,000 tables (a job or a dashboard reading the tables it
  uses), which the default cache holds.

Quick mode: N = 20,000; full mode: N = 100,000.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from functools import partial

from bench.bench_scale import BATCH, _node_options, _rss_bytes, _table
from bench.harness import Figure, Sample, measure, progress
from catalog.runtime.node import CatalogNode
from catalog.storage.descriptor_cache import CACHE

GOAL_PER_S = 500_000
LOOKUPS = 200_000
HOT_TABLES = 2_000


async def _rates(url: str, tables: int, repeats: int) -> dict[str, Sample]:
    async with CatalogNode.open(url, "lookups", _node_options()) as node:
        for first in range(0, tables, BATCH):
            await node.manager.execute([_table(i) for i in range(first, first + BATCH)])
        service = node.service
        at = service.latest_catalog().activation_ts
        rng = random.Random(6)
        patterns = {
            "uniform": [f"T{rng.randrange(tables)}" for _ in range(LOOKUPS)],
            "hot": [f"T{rng.randrange(min(HOT_TABLES, tables))}" for _ in range(LOOKUPS)],
        }
        plain = {f"T{i}": i for i in range(tables)}

        def catalog_rate(names: list[str]) -> float:
            started = time.perf_counter()
            for name in names:
                service.active_catalog(at).table("PUBLIC", name)
            return len(names) / (time.perf_counter() - started)

        def dict_rate(names: list[str]) -> float:
            started = time.perf_counter()
            for name in names:
                plain[name]
            return len(names) / (time.perf_counter() - started)

        rates: dict[str, Sample] = {}
        for pattern, names in patterns.items():
            rates[pattern] = measure(partial(catalog_rate, names), repeats=repeats, unit="/s")
            rates[f"{pattern}_dict"] = measure(
                partial(dict_rate, names), repeats=repeats, unit="/s"
            )
        capacity = CACHE.capacity
        rates["uniform_default"] = rates["uniform"]
        try:
            before = _rss_bytes()
            CACHE.reserve(tables)
            rates["uniform"] = measure(
                partial(catalog_rate, patterns["uniform"]), repeats=repeats, unit="/s"
            )
            added = (_rss_bytes() - before) / tables
            rates["cache_bytes_per_table"] = Sample(added, added, added, "B")
        finally:  # the benchmarks after this one run with the default cache
            CACHE.capacity = capacity
            CACHE.clear()
        return rates


def run(quick: bool) -> list[Figure]:
    """Measure P6u and P6h."""
    tables, repeats = (20_000, 3) if quick else (100_000, 5)
    progress(f"P6: {tables} tables, {LOOKUPS} lookups per repeat")
    with tempfile.TemporaryDirectory(prefix="bench-lookups-") as folder:
        rates = asyncio.run(_rates(f"sqlite:///{folder}/catalog.db", tables, repeats))
    goal = Sample(GOAL_PER_S, GOAL_PER_S, GOAL_PER_S, "/s")
    return [
        Figure(
            f"P6{pattern[0]}",
            f"active_catalog(T).table(), {what}, {tables} tables ÷ 500,000/s",
            rates[pattern],
            goal,
            ">= 1",
            extra={"plain_dict_lookups_per_s": rates[f"{pattern}_dict"].median, **extra},
        )
        for pattern, what, extra in (
            (
                "uniform",
                f"uniform, cache {tables}",
                {
                    "default_cache_lookups_per_s": rates["uniform_default"].median,
                    "cache_bytes_per_table": rates["cache_bytes_per_table"].median,
                },
            ),
            ("hot", f"{HOT_TABLES} hot tables", {}),
        )
    ]
