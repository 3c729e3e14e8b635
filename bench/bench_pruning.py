"""P11: a Spark read of ``WHERE ID = 42`` ÷ a full read of the same table, in the same session.

The table holds 10,000,000 rows in 200 files of 50,000 rows (the quick run: 300,000 rows in 30
files of 10,000), written by one Spark job whose tasks each write one file of consecutive
ids, as batches of a growing key land. The filtered read is planned from the files' column
statistics: one file is opened, and in it only the row groups that may hold the id. Both
reads run one aggregate over every column in one local Spark session (``local[2]``), in turn,
so the ratio is what pushdown and pruning save; the fixed cost of a job (planning through a
Python worker, resolving the table) stays in both. For reference, the same run times Spark's own
Parquet reader on the same files (every file with the WHERE, the one file that holds the id,
and a full read): the floor a Spark job of one small file sets on this machine.
"""

from __future__ import annotations

from bench.harness import Figure, Sample, alternate, progress, timed
from bench.spark_session import (
    ROWS_PER_FILE,
    aggregate_all,
    facts_frame,
    facts_session,
    size_label,
)


def run(quick: bool) -> list[Figure]:
    """Measure P11."""
    from pyspark.sql.datasource import EqualTo

    from spark.source import CatalogDataSource

    files = 30 if quick else 200
    per_file = ROWS_PER_FILE if quick else 50_000
    rows = files * per_file
    repeats = 3 if quick else 5
    with facts_session("bench-pruning", ["FACTS"]) as (spark, url):
        options = {"catalog_url": url, "table": "PUBLIC.FACTS"}
        progress(f"P11: write {rows} rows in {files} files")
        write = facts_frame(spark, files, per_file).write.format("catalog").options(**options)
        write.mode("append").save()

        def aggregate(where: str | None) -> None:
            read = spark.read.format("catalog").options(**options).load()
            aggregate_all(read if where is None else read.where(where))

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
        paths = [f"{reader.folder}/{f.path}" for f in reader.files]
        wanted = [f"{reader.folder}/{f.path}" for f in reader.planned_files()]

        def parquet(files: list[str], where: str | None) -> None:
            read = spark.read.parquet(*files)
            aggregate_all(read if where is None else read.where(where))

        progress("P11: the same reads with Spark's own Parquet reader, for reference")
        own_filtered, own_one, own_full = alternate(
            [
                timed(lambda: parquet(paths, "ID = 42")),
                timed(lambda: parquet(wanted, "ID = 42")),
                timed(lambda: parquet(paths, None)),
            ],
            repeats=repeats,
        )
    reference = {
        "spark_parquet_where_s": Sample.of(own_filtered, "s").median,
        "spark_parquet_one_file_where_s": Sample.of(own_one, "s").median,
        "spark_parquet_full_s": Sample.of(own_full, "s").median,
    }
    progress(
        "P11 reference, Spark's own Parquet reader of the same files: WHERE ID = 42 "
        f"{reference['spark_parquet_where_s']:.3f} s, the one file that holds it "
        f"{reference['spark_parquet_one_file_where_s']:.3f} s, full read "
        f"{reference['spark_parquet_full_s']:.3f} s"
    )
    return [
        Figure(
            "P11",
            f"read WHERE ID = 42 ÷ full read, {size_label(files, quick, per_file)}",
            Sample.of(filtered, "s"),
            Sample.of(full, "s"),
            "<= 0.1",
            {"rows": rows, "files": written, "files_read_filtered": opened, **reference},
        )
    ]
