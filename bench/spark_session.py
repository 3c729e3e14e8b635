"""The local Spark session every Spark benchmark runs in: ``local[2]``, quiet, on loopback."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from api.client import CatalogClient
from bench.servers import serve_catalog, stop
from catalog import commands as c


def local_session(app_name: str) -> Any:
    """Return a new local Spark session (two cores, 3 GiB driver) with format ``catalog``.

    Python workers run this interpreter; the UI and progress bars are off.
    """
    from pyspark.sql import SparkSession

    from spark.source import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


ROWS_PER_FILE = 10_000
"""Rows in each file a facts table is written in."""

FACTS_COLUMNS = "(ID BIGINT PRIMARY KEY, V1 DOUBLE, V2 INT, NAME VARCHAR(32))"
"""The columns of a facts table (after its name in CREATE TABLE)."""


def facts_frame(spark: Any, files: int, rows_per_file: int = ROWS_PER_FILE) -> Any:
    """Return ``files * rows_per_file`` facts rows in ``files`` Spark partitions of consecutive
    ids, so one write makes one file of each."""
    return spark.range(0, files * rows_per_file, 1, files).selectExpr(
        "id as ID",
        "rand() * 1000 as V1",
        "cast(id % 1000 as int) as V2",
        "concat('name-', id % 977) as NAME",
    )


def aggregate_all(frame: Any) -> None:
    """Run one aggregate over every column of ``frame`` (a read that touches every value)."""
    from pyspark.sql import functions as F

    cols = [F.col(name) for name in frame.columns]
    frame.agg(F.count("*"), F.sum(F.xxhash64(*cols) % 1024)).collect()


def size_label(files: int, quick: bool, rows_per_file: int = ROWS_PER_FILE) -> str:
    """Return ``"<rows> rows in <files> files"``, marked as scaled down in a quick run."""
    rows = files * rows_per_file
    return f"{rows:,} rows in {files} files" + (" (quick: scaled down)" if quick else "")


@contextmanager
def facts_session(app_name: str, tables: Sequence[str]) -> Iterator[tuple[Any, str]]:
    """Serve a catalog on a fresh SQLite file with facts ``tables`` (PUBLIC, a one-partition
    zone) and open a local Spark session; yield the session and the catalog's URL."""
    with tempfile.TemporaryDirectory(prefix=f"{app_name}-") as tmp:
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        spark = local_session(app_name)
        try:
            with CatalogClient(url) as client:
                client.execute(c.CreateZone(name="ONE", partitions=1, replicas=1))
                for name in tables:
                    client.sql(f"CREATE TABLE {name} {FACTS_COLUMNS} ZONE ONE")
            yield spark, url
        finally:
            spark.stop()
            stop(proc)
