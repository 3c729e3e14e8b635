"""P11: a Spark read of ``WHERE ID = 42`` ÷ a full read of the same table, in the same session.

The table holds 1,000,000 rows in 100 files (the quick run: 300,000 rows in 30 files, the same
10,000 rows a file), written by one Spark job whose tasks each write one file of consecutive
ids, as batches of a growing key land. The filtered read is planned from the files' column
statistics: one file is opened, and in it only the row groups that may hold the id. Both
reads run one aggregate over every column in one local Spark session (``local[2]``), in turn,
so the ratio is what pushdown and pruning save; the fixed cost of a job (planning through a
Python worker, resolving the table) stays in both.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from api.client import CatalogClient
from bench.harness import Figure, Sample, alternate, progress, timed
from bench.servers import serve_catalog, stop
from bench.spark_session import local_session
from catalog import commands as c

ROWS_PER_FILE = 10_000


def run(quick: bool) -> list[Figure]:
    """Measure P11."""
    from pyspark.sql import functions as F
    from pyspark.sql.datasource import EqualTo

    from spark.source import CatalogDataSource

    files = 30 if quick else 100
    rows = files * ROWS_PER_FILE
    repeats = 3 if quick else 5
    with tempfile.TemporaryDirectory(prefix="bench-pruning-") as tmp:
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        spark = local_session("bench-pruning")
        options = {
            "catalog_url": url,
            "table": "PUBLIC.FACTS",
            "warehouse": str(Path(tmp) / "warehouse"),
        }
        try:
            with CatalogClient(url) as client:
                client.execute(c.CreateZone(name="ONE", partitions=1, replicas=1))
                client.sql(
                    "CREATE TABLE FACTS (ID BIGINT PRIMARY KEY, V1 DOUBLE, V2 INT,"
                    " NAME VARCHAR(32)) ZONE ONE"
                )
            progress(f"P11: write {rows} rows in {files} files")
            frame = spark.range(0, rows, 1, files).selectExpr(
                "id as ID",
                "rand() * 1000 as V1",
                "cast(id % 1000 as int) as V2",
                "concat('name-', id % 977) as NAME",
            )
            frame.write.format("catalog").options(**options).mode("append").save()

            def aggregate(where: str | None) -> None:
                read = spark.read.format("catalog").options(**options).load()
                if where is not None:
                    read = read.where(where)
                cols = [F.col(name) for name in read.columns]
                read.agg(F.count("*"), F.sum(F.xxhash64(*cols) % 1024)).collect()

            source = CatalogDataSource(options)
            reader = source.reader(source.schema())
            written = len(reader.planned_files())
            list(reader.pushFilters([EqualTo(("ID",), 42)]))
            opened = len(reader.planned_files())
            progress(f"P11: filtered and full reads in turn ({opened} of {written} files read)")
            filtered, full = alternate(
                [timed(lambda: aggregate("ID = 42")), timed(lambda: aggregate(None))],
                repeats=repeats,
            )
        finally:
            spark.stop()
            stop(proc)
    label = f"{rows:,} rows in {files} files" + (" (quick: scaled down)" if quick else "")
    return [
        Figure(
            "P11",
            f"read WHERE ID = 42 ÷ full read, {label}",
            Sample.of(filtered, "s"),
            Sample.of(full, "s"),
            "<= 0.1",
            {"rows": rows, "files": written, "files_read_filtered": opened},
        )
    ]
