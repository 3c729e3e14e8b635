"""P6: in-process lookups by name, ``active_catalog(T).table(schema, name)``, at 100,000 tables.

A node on SQLite holds N tables of 6 columns (created in batches of 1,000). Two access patterns,
each printed against the 500,000 lookups/s goal, with a plain dict lookup of the same names in
the same run beside them:

- P6u: names drawn uniformly from all N tables. Descriptors are kept as their stored bytes and
  decoded on first read into a bounded cache (4,096 by default), so most of these lookups decode.
- P6h: names drawn from a hot set of 2,000 tables (a job or a dashboard reading the tables it
  uses), which the cache holds.

Quick mode: N = 20,000; full mode: N = 100,000.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from functools import partial

from bench.bench_scale import BATCH, _node_options, _table
from bench.harness import Figure, Sample, measure, progress
from catalog.node import CatalogNode

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
            extra={"plain_dict_lookups_per_s": rates[f"{pattern}_dict"].median},
        )
        for pattern, what in (("uniform", "uniform names"), ("hot", f"{HOT_TABLES} hot tables"))
    ]
