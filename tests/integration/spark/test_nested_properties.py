"""Random nested tables, evolved at random, through a real server and a real local Spark.

A few examples only (each is a table, a handful of Spark writes and reads): the same model as
the source's pyarrow property test (``tests/unit/spark/nested_model``), which checks many more.
After the last change, a read as of the moment after each version's write has that version's
Spark schema and every row written by then in that shape.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from api.client import CatalogApiError, CatalogClient
from catalog import commands as c
from catalog.descriptors import ColumnDescriptor
from spark.schema import resolve_table
from spark.types import spark_field, struct_type
from tests.integration.api.servers import RunningServer
from tests.unit.spark.nested_model import (
    Step,
    as_spark,
    create,
    nested_columns,
    read_rows,
    rows,
    step,
    steps,
)

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

_tables = itertools.count()


def _spark_rows(written: list[dict[str, Any]], columns: tuple[ColumnDescriptor, ...]) -> list[Any]:
    return [{col.name: as_spark(row[col.name], col) for col in columns} for row in written]


@settings(
    max_examples=3,
    deadline=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: each try runs Spark jobs
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(columns=nested_columns(2), changes=steps(3), seed=st.integers(0, 2**32 - 1))
def test_each_version_reads_through_spark_in_its_own_shape(
    spark: SparkSession,
    catalog_server: RunningServer,
    columns: list[c.Column],
    changes: list[Step],
    seed: int,
) -> None:
    name = f"EV{next(_tables)}"
    rng = random.Random(seed)
    url = catalog_server.url
    with CatalogClient(url) as client:
        client.execute([create(columns, name)])
        versions: list[tuple[int, tuple[ColumnDescriptor, ...], list[dict[str, Any]]]] = []

        def write() -> None:
            pinned = resolve_table(client, name)
            table = pinned.table
            written = rows(rng, table.columns, sum(len(v[2]) for v in versions))
            frame = spark.createDataFrame(_spark_rows(written, table.columns), struct_type(table))
            frame.write.format("catalog").option("catalog_url", url).mode("append").save(name)
            versions.append((client.now(), table.columns, written))

        write()
        for change in changes:
            command = step(client.table("PUBLIC", name), *change)
            if command is None:
                continue
            try:
                client.execute([command])
            except CatalogApiError:
                continue  # a change the catalog refuses
            write()
        for at, shape, _ in versions:
            reader = spark.read.format("catalog").option("catalog_url", url)
            df = reader.option("as_of", str(at)).load(name)
            assert df.schema == T.StructType([spark_field(col) for col in shape])
            expected = [
                row
                for was_at, was, written in versions
                if was_at <= at
                for row in _spark_rows(read_rows(written, was, shape), shape)
            ]
            found = [r.asDict(recursive=True) for r in df.collect()]
            assert sorted(found, key=lambda r: r["ID"]) == expected
