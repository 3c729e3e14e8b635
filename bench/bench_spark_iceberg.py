"""P14: a Spark job with Iceberg's runtime through this catalog ÷ through Iceberg's JdbcCatalog.

One Spark session (PySpark 4.1 with Apache Iceberg 1.12's Spark runtime, ``local[2]``, in a
process of its own: the engine tests' Spark shell, ``tests/integration/engines``) holds two
Iceberg catalogs: ``cat``, this catalog's Iceberg REST endpoint (one ``catalog serve`` on a
fresh SQLite store, its warehouse beside it), and ``jdbc``, Iceberg's own ``JdbcCatalog`` on a
SQLite file (sqlite-jdbc) with a warehouse folder of its own. The same job runs through each:
create a table partitioned by ``part`` (16 values), insert 1,000,000 rows, 20 appends of 1,000
rows, one ``MERGE INTO`` that updates 1% of the rows (copy-on-write: every file is rewritten),
and read the table at its 10th snapshot. The two take turns, on a fresh table each round, so a
noisy neighbour or a warming JVM slows both alike; the ratio is what going through this catalog
(REST calls, commits recorded in its log, manifests read to record each snapshot's files,
metadata files written) costs the job. The quick run inserts 100,000 rows and appends 100.

What it needs beyond the ``test`` extra comes from ``make bench-tools`` (``make engines``'
Spark runtime and PySpark 4.1, and the sqlite-jdbc jar, in ``.cache/``); without them the
figure is skipped with a line saying so.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import Figure, Sample, alternate, progress
from bench.servers import ROOT, serve_catalog, stop

SQLITE_JDBC_JAR = ROOT / ".cache" / "jars" / "sqlite-jdbc-3.50.3.0.jar"

APPENDS = 20
PARTS = 16
"""Values of the partition column ``part`` (``id % 16``)."""
STEPS = ("create", "insert", "appends", "merge", "read")


def _rows(first: int, count: int, step: int = 1, salt: int = 0) -> str:
    """Return a SELECT of rows with ids ``first``, ``first + step``, ... below first + count.

    The values are a function of the id (``MERGE INTO`` takes no random source); ``salt``
    changes ``v``.
    """
    return (
        f"SELECT id, cast(id % {PARTS} AS INT) AS part, cast((id + {salt}) % 997 AS DOUBLE) "
        f"AS v, concat('n', id) AS name FROM range({first}, {first + count}, {step})"
    )


def job(
    sql: Callable[[str], list[list[Any]]], table: str, rows: int, append_rows: int
) -> dict[str, float]:
    """Run the job on new table ``table`` with ``sql``; return each step's seconds.

    Raises:
        RuntimeError: the read at the 10th snapshot did not count the rows written by then.
    """
    steps = dict.fromkeys(STEPS, 0.0)

    def timed(step: str, statement: str) -> list[list[Any]]:
        start = time.perf_counter()
        result = sql(statement)
        steps[step] += time.perf_counter() - start
        return result

    timed(
        "create",
        f"CREATE TABLE {table} (id BIGINT, part INT, v DOUBLE, name STRING) USING iceberg "
        "PARTITIONED BY (part) TBLPROPERTIES ('write.merge.mode'='copy-on-write')",
    )
    timed("insert", f"INSERT INTO {table} {_rows(0, rows)}")
    for k in range(APPENDS):
        timed("appends", f"INSERT INTO {table} {_rows(rows + k * append_rows, append_rows)}")
    timed(
        "merge",
        f"MERGE INTO {table} AS target USING ({_rows(0, rows, 100, salt=1)}) AS source "
        "ON target.id = source.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    )
    ids = timed("read", f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at")
    ((count,),) = timed("read", f"SELECT count(*) FROM {table} VERSION AS OF {ids[9][0]}")
    expected = rows + 9 * append_rows  # the 10th snapshot: the insert and 9 appends
    if count != expected:
        raise RuntimeError(f"{table} read {count} rows at its 10th snapshot, not {expected}")
    return steps


def run(quick: bool) -> list[Figure]:
    """Measure P14, or skip it with a line where the Spark runtime or sqlite-jdbc is missing."""
    from tests.integration.engines.conftest import ICEBERG_PYSPARK, ICEBERG_SPARK_JAR, SparkShell

    needed = (ICEBERG_SPARK_JAR, SQLITE_JDBC_JAR, ICEBERG_PYSPARK)
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        progress(f"P14 skipped: {', '.join(missing)} missing (`make bench-tools` fetches them)")
        return []
    rows, append_rows = (100_000, 100) if quick else (1_000_000, 1_000)
    repeats = 2 if quick else 3
    steps: dict[str, dict[str, list[float]]] = {"cat": {}, "jdbc": {}}
    with tempfile.TemporaryDirectory(prefix="bench-spark-iceberg-") as tmp:
        folder = Path(tmp)
        progress("P14: starting our catalog and Spark with Iceberg's runtime")
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        jdbc = "spark.sql.catalog.jdbc"
        extra = {
            "spark.master": "local[2]",
            "spark.jars": f"{ICEBERG_SPARK_JAR},{SQLITE_JDBC_JAR}",
            "spark.driver.memory": "3g",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            jdbc: "org.apache.iceberg.spark.SparkCatalog",
            f"{jdbc}.type": "jdbc",
            f"{jdbc}.uri": f"jdbc:sqlite:{folder / 'iceberg.db'}",
            f"{jdbc}.warehouse": f"file://{folder / 'jdbc-warehouse'}",
        }
        shell = SparkShell(f"{url}/iceberg", folder, extra)
        numbers = iter(range(1_000_000))
        try:
            for catalog in steps:
                shell.sql(f"CREATE NAMESPACE {catalog}.bench")

            def side(catalog: str) -> Callable[[], float]:
                def once() -> float:
                    table = f"{catalog}.bench.e{next(numbers)}"
                    progress(f"P14: the job on {table} ({rows:,} rows)")
                    seconds = job(shell.sql, table, rows, append_rows)
                    for step, taken in seconds.items():
                        steps[catalog].setdefault(step, []).append(taken)
                    progress("P14: " + ", ".join(f"{k} {v:.2f} s" for k, v in seconds.items()))
                    return sum(seconds.values())

                return once

            for catalog in steps:  # a small job on each side warms its JVM code paths
                job(shell.sql, f"{catalog}.bench.warm", append_rows, append_rows)
            sides = [side("cat"), side("jdbc")]
            ours, theirs = alternate(sides, repeats=repeats, warmup=0)
        finally:
            shell.stop()
            stop(proc)
    extra_figures: dict[str, Any] = {"rows": rows, "appends": APPENDS, "append_rows": append_rows}
    for catalog, by_step in steps.items():
        for step, taken in by_step.items():
            extra_figures[f"{catalog}_{step}_s"] = round(Sample.of(taken, "s").median, 3)
    return [
        Figure(
            "P14",
            f"Spark+Iceberg job ({rows:,} rows, {APPENDS} appends, MERGE 1%, read at snapshot 10): "
            "catalog ÷ JdbcCatalog",
            Sample.of(ours, "s"),
            Sample.of(theirs, "s"),
            "<= 1.1",
            extra_figures,
        )
    ]
