"""P15: DuckDB's first ``count(*)`` after attaching our catalog ÷ ``iceberg_scan`` of the file.

One ``catalog serve`` on a fresh SQLite store; PyIceberg makes a table of 100 snapshots (one
append of 100 rows each). Each timed round opens a new DuckDB connection (extensions loaded,
untimed), then times either: ``ATTACH`` of the catalog's Iceberg REST endpoint and the first
``SELECT count(*)`` of the table through it; or ``SELECT count(*) FROM iceberg_scan(<the
metadata file the load names>)``, the same files read with no catalog at all. Both read the
same manifest list, manifests and Parquet footers; the ratio is what going through the catalog
(the attach, the load, its answer's size with 100 snapshots) adds. The two take turns.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from bench.harness import Figure, Sample, alternate, progress
from bench.servers import serve_catalog, stop

SNAPSHOTS = 100
ROWS = 100


def _connection() -> Any:
    import duckdb
    import duckdb_ext

    folder = str(next(iter(duckdb_ext.__path__))) + "/extensions"
    con = duckdb.connect(
        config={
            "extension_directory": folder,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    for extension in ("httpfs", "avro", "iceberg"):
        con.execute(f"LOAD {extension}")
    return con


def _table(uri: str, snapshots: int) -> str:
    """Make table BENCH.EVENTS of ``snapshots`` appends; return its metadata file."""
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog("c", type="rest", uri=uri)
    catalog.create_namespace("BENCH")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
    table = catalog.create_table("BENCH.EVENTS", schema)
    for k in range(snapshots):
        ids = list(range(k * ROWS, (k + 1) * ROWS))
        table.append(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, schema=schema))
    location = catalog.load_table("BENCH.EVENTS").metadata_location
    assert location is not None
    return location


def _counted(setup: str | None, query: str, expected: int) -> Callable[[], float]:
    """Return a round: on a new connection, time ``setup`` (if any) and ``query``'s count."""

    def once() -> float:
        con = _connection()
        try:
            start = time.perf_counter()
            if setup is not None:
                con.execute(setup)
            (count,) = con.execute(query).fetchone()
            took = time.perf_counter() - start
        finally:
            con.close()
        assert count == expected, count
        return took

    return once


def _through_catalog(uri: str, expected: int) -> Callable[[], float]:
    attach = f"ATTACH 'w' AS cat (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')"
    return _counted(attach, 'SELECT count(*) FROM cat."BENCH"."EVENTS"', expected)


def _from_file(metadata: str, expected: int) -> Callable[[], float]:
    return _counted(None, f"SELECT count(*) FROM iceberg_scan('{metadata}')", expected)


def run(quick: bool) -> list[Figure]:
    """Measure P15."""
    repeats = 5 if quick else 11
    with tempfile.TemporaryDirectory(prefix="bench-duckdb-") as tmp:
        progress("P15: starting our catalog")
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        try:
            uri = f"{url}/iceberg"
            progress(f"P15: a table of {SNAPSHOTS} snapshots through PyIceberg")
            metadata = _table(uri, SNAPSHOTS)
            expected = SNAPSHOTS * ROWS
            ours, bare = alternate(
                [_through_catalog(uri, expected), _from_file(metadata, expected)],
                repeats=repeats,
            )
        finally:
            stop(proc)
    return [
        Figure(
            "P15",
            f"DuckDB first count(*) after attach, {SNAPSHOTS} snapshots: catalog ÷ iceberg_scan",
            Sample.of([t * 1000 for t in ours], "ms"),
            Sample.of([t * 1000 for t in bare], "ms"),
            "<= 1.2",
            {"snapshots": SNAPSHOTS, "rows_per_snapshot": ROWS, "rounds_per_side": repeats},
        )
    ]
