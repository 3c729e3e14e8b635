r"""Example pipeline: ingest CSV, evolve the schema through the catalog, ingest more, time-travel.

Run it against a catalog server (``make run`` serves one on http://127.0.0.1:8000)::

    spark-submit spark/jobs/pipeline.py --catalog-url http://127.0.0.1:8000

The job names only the catalog and the table: the table's data goes to the folder it records
in the cluster's warehouse.

Stages (each prints its progress and the timestamp it ends at):

1. create the table ``PUBLIC.PIPELINE_ORDERS`` (ID, QTY INT32, CUSTOMER) in a 4-partition
   zone, dropping the one an earlier run made, so that every run starts over;
2. ingest ``data/orders_1.csv``;
3. evolve it: add CHANNEL (default 'shop'), widen QTY to INT64, rename CUSTOMER to CLIENT;
4. ingest ``data/orders_2.csv`` (a QTY that needs 64 bits, the new names);
5. read the table back as of the end of each stage and print schema and rows.

Every read is pinned: the answer for a stage never changes, whatever runs later.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from api.client import CatalogClient
from catalog import ColumnType
from catalog import commands as c
from catalog.origin import CLIENT_HEADER
from spark.source import register

DATA = Path(__file__).parent / "data"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--catalog-url", default=os.environ.get("CATALOG_URL", "http://127.0.0.1:8000")
    )
    parser.add_argument(
        "--table",
        default="PIPELINE_ORDERS",
        help="table name in the PUBLIC schema (dropped first if it exists)",
    )
    parser.add_argument("--master", default=None, help="Spark master when not run by spark-submit")
    return parser.parse_args(argv)


def stage(number: int, text: str) -> None:
    """Print a stage header."""
    print(f"[stage {number}] {text}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pipeline; return the exit status."""
    args = parse_args(argv)
    builder = SparkSession.builder.appName("catalog-pipeline")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    register(spark)
    name = f"PUBLIC.{args.table}"

    def write(df: DataFrame) -> None:
        df.write.format("catalog").option("catalog_url", args.catalog_url).mode("append").save(name)

    def read(at: int) -> DataFrame:
        reader = spark.read.format("catalog").option("catalog_url", args.catalog_url)
        return reader.option("as_of", str(at)).load(name)

    marks: list[tuple[str, int]] = []
    # The catalog records which Spark application made each version.
    who = {CLIENT_HEADER: f"spark:{spark.sparkContext.appName}"}
    with CatalogClient(args.catalog_url, headers=who) as client:
        stage(1, f"create {name}")
        if client.catalog().find_zone("PIPELINE") is None:
            client.execute(c.CreateZone(name="PIPELINE", partitions=4, replicas=1))
        dropped = client.execute(c.DropTable(name=args.table, if_exists=True))
        if any(dropped.applied):
            print(f"  dropped the {name} of an earlier run", flush=True)
        client.execute(
            c.CreateTable(
                name=args.table,
                zone="PIPELINE",
                columns=[
                    c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                    c.Column(name="QTY", type=ColumnType.INT32),
                    c.Column(name="CUSTOMER", type=ColumnType.STRING, length=40),
                ],
                primary_key=["ID"],
            )
        )
        marks.append(("created", client.now()))

        stage(2, f"ingest {DATA / 'orders_1.csv'}")
        first = spark.read.csv(
            str(DATA / "orders_1.csv"), header=True, schema="ID long, QTY int, CUSTOMER string"
        )
        write(first)
        marks.append(("first ingest", client.now()))
        print(f"  {first.count()} rows committed", flush=True)

        stage(3, "evolve: add CHANNEL, widen QTY to INT64, rename CUSTOMER to CLIENT")
        result = client.execute(
            [
                c.AddColumns(
                    table=args.table,
                    columns=[
                        c.Column(name="CHANNEL", type=ColumnType.STRING, length=10, default="shop")
                    ],
                ),
                c.AlterColumn(table=args.table, column="QTY", type=ColumnType.INT64),
                c.RenameColumn(table=args.table, column="CUSTOMER", new_name="CLIENT"),
            ],
            message="orders now come from more than one channel",
        )
        marks.append(("evolved", client.now()))
        print(f"  catalog version {result.version}", flush=True)

        stage(4, f"ingest {DATA / 'orders_2.csv'}")
        second = spark.read.csv(
            str(DATA / "orders_2.csv"),
            header=True,
            schema="ID long, QTY long, CLIENT string, CHANNEL string",
        )
        write(second)
        marks.append(("second ingest", client.now()))
        print(f"  {second.count()} rows committed", flush=True)

    stage(5, "read back as of each stage")
    for label, at in marks:
        df = read(at)
        columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in df.schema.fields)
        rows = sorted(tuple(r) for r in df.collect())
        print(f"  as of {label} ({at}): {len(rows)} rows; columns: {columns}", flush=True)
        for row in rows:
            print(f"    {row}", flush=True)
    spark.stop()
    print("pipeline finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
