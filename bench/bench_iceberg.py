"""P13: a PyIceberg append through our Iceberg REST catalog ÷ through a bare in-memory one.

Both servers run as their own process on loopback, one uvicorn worker each: ours is a real
``catalog serve`` on a fresh SQLite store (its warehouse beside it), the bare one
``bench.iceberg_bare``, which keeps each table's metadata in a dict and applies a commit
with PyIceberg's own ``TableRequirement.validate`` and ``update_table_metadata``. One
PyIceberg client creates a namespace on each; each timed batch creates a fresh table keyed by
``ID`` (untimed), then times N ``table.append`` calls of 100 rows with new keys to it; the
two sides take batches in turn (``alternate``). The figure is the mean time of one append
within a batch, median over the batches.

The client's work is the same on both sides: it writes the Parquet file, the manifest and
the manifest list to the local disk and sends the same commit; only the server's answer to
it differs. So the ratio is what our commit costs on top of the least an Iceberg REST
commit can do: reading the new manifests, checking the requirements against the table's
data commits and recording one in the update log (with the log's durability). Every batch
starts from an empty table on both sides, so each side's appends see the same history
(snapshots, manifests carried over by each append), and a batch measures the same thing
whenever it runs: an append costs more as its table's history grows, on both sides.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable
from itertools import count

import pyarrow as pa

from bench.harness import Figure, Sample, alternate, progress
from bench.servers import serve_catalog, start, stop
from deploy.etcd_server import free_port

ROWS = 100
"""Rows in each append."""


def serve_bare(warehouse: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``bench.iceberg_bare`` with its tables under ``warehouse``; return it and its URL."""
    port = free_port()
    return start(["-m", "bench.iceberg_bare", str(port), warehouse], port, "/v1/config")


def appender(uri: str) -> Callable[[int], float]:
    """Connect PyIceberg to the catalog at ``uri`` and create namespace ``BENCH`` there.

    Returns a function that creates a fresh table in it (untimed) and returns the seconds
    that N appends to that table take, each of ``ROWS`` rows.
    """
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    catalog = load_catalog("c", type="rest", uri=uri)
    catalog.create_namespace("BENCH")
    schema = Schema(
        NestedField(1, "ID", LongType(), required=True),
        NestedField(2, "V", StringType(), required=False),
        identifier_field_ids=[1],
    )
    tables = count()

    def appends(times: int) -> float:
        table = catalog.create_table(f"BENCH.EVENTS_{next(tables)}", schema)
        arrow_schema = table.schema().as_arrow()
        batches = []
        for k in range(times):
            ids = list(range(k * ROWS, (k + 1) * ROWS))
            rows = {"ID": ids, "V": [f"value-{i}" for i in ids]}
            batches.append(pa.Table.from_pydict(rows, schema=arrow_schema))
        start = time.perf_counter()
        for batch in batches:
            table.append(batch)
        return time.perf_counter() - start

    return appends


def run(quick: bool) -> list[Figure]:
    """Measure P13."""
    appends = 20 if quick else 50
    repeats = 7 if quick else 9
    with tempfile.TemporaryDirectory(prefix="bench-iceberg-") as tmp:
        progress("P13: starting our catalog and the bare Iceberg REST server")
        ours_proc, ours_url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        try:
            bare_proc, bare_url = serve_bare(f"{tmp}/bare-warehouse")
            try:
                ours_append = appender(f"{ours_url}/iceberg")
                bare_append = appender(bare_url)
                progress(f"P13: {repeats} + 1 batches of {appends} appends on each side in turn")
                ours, bare = alternate(
                    [
                        lambda: ours_append(appends),
                        lambda: bare_append(appends),
                    ],
                    repeats=repeats,
                )
            finally:
                stop(bare_proc)
        finally:
            stop(ours_proc)
    per_append = 1000 / appends
    return [
        Figure(
            "P13",
            f"PyIceberg append: our REST ÷ bare REST, {appends} per new table",
            Sample.of([t * per_append for t in ours], "ms"),
            Sample.of([t * per_append for t in bare], "ms"),
            "<= 2",
            {
                "rows_per_append": ROWS,
                "appends_per_batch": appends,
                "batches_per_side": repeats + 1,
                "tables_per_side": repeats + 1,
            },
        )
    ]
