"""P12: a Spark read after upserting 1% of a table's rows ÷ the same read of a table never upserted.

Two tables get the same rows from one Spark job each (1,000,000 rows in 100 files; the quick
run 300,000 in 30, the same 10,000 rows a file). One of them then takes an upsert of 1% of its
keys, spread over every file, each with a new value: every file holding one of them is written
again without its rows (copy-on-write) and the upserted rows land in a file of their own. The
figure is one aggregate over every column of the upserted table ÷ the same aggregate over the
other, run in turn in one local Spark session (``local[2]``): what reading a table rewritten
by an upsert costs against the table as first written.
"""

from __future__ import annotations

from api.client import CatalogClient
from bench.harness import Figure, Sample, alternate, progress, timed
from bench.spark_session import (
    ROWS_PER_FILE,
    aggregate_all,
    facts_frame,
    facts_session,
    size_label,
)

UPSERTED = 0.01


def run(quick: bool) -> list[Figure]:
    """Measure P12."""
    files = 30 if quick else 100
    rows = files * ROWS_PER_FILE
    repeats = 3 if quick else 5
    with facts_session("bench-upserts", ["PLAIN", "UPSERTED"]) as (spark, url):
        progress(f"P12: write {rows} rows in {files} files, twice")
        frame = facts_frame(spark, files)
        for name in ("PLAIN", "UPSERTED"):
            write = frame.write.format("catalog").option("catalog_url", url)
            write.mode("append").save(f"PUBLIC.{name}")
        every = int(1 / UPSERTED)
        progress(f"P12: upsert {rows // every} rows, one in {every}")
        changed = spark.range(0, rows, every, 2).selectExpr(
            "id as ID", "cast(-1 as double) as V1", "-1 as V2", "'upserted' as NAME"
        )
        upsert = changed.write.format("catalog").option("catalog_url", url)
        upsert.option("write", "upsert").mode("append").save("PUBLIC.UPSERTED")
        with CatalogClient(url) as client:
            table_id = client.table("PUBLIC", "UPSERTED").id
            visible = client.data_commits(table_id).commits
        files_after = sum(len(commit.files) for commit in visible)

        def aggregate(name: str) -> None:
            read = spark.read.format("catalog").option("catalog_url", url)
            aggregate_all(read.load(f"PUBLIC.{name}"))

        progress(f"P12: reads of both tables in turn ({files_after} files after the upsert)")
        after, before = alternate(
            [timed(lambda: aggregate("UPSERTED")), timed(lambda: aggregate("PLAIN"))],
            repeats=repeats,
        )
    return [
        Figure(
            "P12",
            f"read after upserting 1% ÷ read of the table as written, {size_label(files, quick)}",
            Sample.of(after, "s"),
            Sample.of(before, "s"),
            "<= 1.5",
            {"rows": rows, "files_before": files, "files_after": files_after},
        )
    ]
