"""P10: a Spark read at T of an evolved table ÷ plain ``spark.read.parquet`` of the same files.

A table goes through 5 schema versions (add, widen, rename, drop, add), with an equal share of
the rows written under each; the read at "now" projects every file onto the latest schema by
column id. The baseline reads the very same Parquet files with Spark's own reader. Both run
one aggregate over every column in one local Spark session (``local[2]``), in turn, so the
ratio is the cost of the Python data source (Python workers, Arrow hand-off, projection by
id) and a noisy neighbour slows both sides alike.

P10s: schema resolution per job — ``schema_at(client, table)`` (pin "now" on the server,
wait for completeness at it, fetch the table) — against a 50 ms budget. The whole
``load()`` of the source on a warm session (Spark's planner round trip to a Python worker,
which then does the same resolution) is reported beside it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from api.client import CatalogClient
from bench.harness import Figure, Sample, alternate, measure, progress, timed
from bench.servers import serve_catalog, stop
from bench.spark_session import local_session
from catalog import ColumnType
from catalog import commands as c

SCHEMA_BUDGET_S = 0.050


def _evolve(client: CatalogClient, step: int) -> None:
    steps = [
        c.AddColumns(table="FACTS", columns=[c.Column(name="E1", type=ColumnType.INT32)]),
        c.AlterColumn(table="FACTS", column="E1", type=ColumnType.INT64),
        c.RenameColumn(table="FACTS", column="NAME", new_name="LABEL"),
        c.DropColumns(table="FACTS", columns=["V2"]),
    ]
    client.execute(steps[step])


def run(quick: bool) -> list[Figure]:
    """Measure P10 and the schema resolution time."""
    from pyspark.sql import functions as F

    from spark.schema import schema_at

    rows = 300_000 if quick else 1_000_000
    repeats = 3 if quick else 5
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db")
        spark = local_session("bench-spark")
        warehouse = str(Path(tmp) / "warehouse")
        options = {"catalog_url": url, "table": "PUBLIC.FACTS", "warehouse": warehouse}
        try:
            with CatalogClient(url) as client:
                client.execute(c.CreateZone(name="BENCH", partitions=4, replicas=1))
                client.execute(
                    c.CreateTable(
                        name="FACTS",
                        zone="BENCH",
                        columns=[
                            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                            c.Column(name="V1", type=ColumnType.FLOAT64),
                            c.Column(name="V2", type=ColumnType.INT32),
                            c.Column(name="NAME", type=ColumnType.STRING, length=32),
                        ],
                        primary_key=["ID"],
                    )
                )
                share = rows // 5
                for step in range(5):
                    progress(f"P10: write {share} rows under schema version {step + 1}")
                    table = client.table("PUBLIC", "FACTS")
                    exprs = {
                        "ID": f"id + {step * share}",
                        "V1": "rand() * 1000",
                        "V2": "cast(id % 1000 as int)",
                        "NAME": "concat('name-', id % 977)",
                        "LABEL": "concat('label-', id % 977)",
                        "E1": "cast(id * 3 % 1000000 as int)",
                    }
                    columns = [f"{exprs[col.name]} as {col.name}" for col in table.columns]
                    frame = spark.range(share).selectExpr(*columns)
                    frame.write.format("catalog").options(**options).mode("append").save()
                    if step < 4:
                        _evolve(client, step)
                written = Path(warehouse).rglob("*.parquet")
                newest_first = sorted(written, key=lambda p: p.stat().st_mtime_ns, reverse=True)
                files = [str(p) for p in newest_first]
                # A plain read takes its schema from one file; the older files hold columns
                # since widened (INT32, now INT64), so it reads with the newest file's schema.
                final = spark.read.parquet(files[0]).schema

                def aggregate(frame: object) -> None:
                    cols = [F.col(name) for name in frame.columns]  # type: ignore[attr-defined]
                    frame.agg(F.count("*"), F.sum(F.xxhash64(*cols) % 1024)).collect()  # type: ignore[attr-defined]

                def catalog_read() -> None:
                    aggregate(spark.read.format("catalog").options(**options).load())

                def parquet_read() -> None:
                    aggregate(spark.read.schema(final).parquet(*files))

                progress(f"P10: read {rows} rows in {len(files)} files, the two reads in turn")
                ours, parquet = alternate(
                    [timed(catalog_read), timed(parquet_read)], repeats=repeats
                )
                value, baseline = Sample.of(ours, "s"), Sample.of(parquet, "s")
                progress("P10s: schema resolution per job (pin now, resolve at it)")
                resolve = measure(
                    timed(lambda: schema_at(client, "PUBLIC.FACTS")), repeats=repeats * 5, unit="s"
                )
                load = measure(
                    timed(lambda: spark.read.format("catalog").options(**options).load()),
                    repeats=repeats * 3,
                    unit="s",
                )
        finally:
            spark.stop()
            stop(proc)
    budget = Sample(SCHEMA_BUDGET_S, SCHEMA_BUDGET_S, SCHEMA_BUDGET_S, "s")
    return [
        Figure(
            "P10",
            f"Spark read at T, evolved 5x ({rows} rows) ÷ read.parquet",
            value,
            baseline,
            "<= 1.1",
            {"rows": rows, "files": len(files)},
        ),
        Figure(
            "P10s",
            "schema resolution per job (schema_at now) ÷ 50 ms budget",
            resolve,
            budget,
            "<= 1",
            {"spark_load_s": load.median, "spark_load_min_s": load.low},
        ),
    ]
