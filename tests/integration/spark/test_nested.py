"""STRUCT, ARRAY and MAP columns through the ``catalog`` format: a real server and local Spark.

A table with nested columns is created through ``/v1/ddl``, rows with structs, arrays and maps
(nulls, empty arrays and maps among them) are written and read back equal; then fields inside
a struct are added, dropped, renamed, widened and made nullable, and the old files read in the
new shape while a read as of the first version still has the first shape.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import ArrayType, StructType

from api.client import CatalogClient
from catalog import ColumnType
from catalog import commands as c
from spark.schema import schema_at
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

CREATE = {
    "op": "create_table",
    "name": "EV",
    "zone": "TWO",
    "columns": [
        {"name": "ID", "type": "INT64", "nullable": False},
        {
            "name": "PAYLOAD",
            "type": "STRUCT",
            "fields": [
                {"name": "SOURCE", "type": "STRING", "length": 10},
                {"name": "N", "type": "INT32"},
                {
                    "name": "ITEMS",
                    "type": "ARRAY",
                    "fields": [
                        {
                            "name": "element",
                            "type": "STRUCT",
                            "fields": [
                                {"name": "SKU", "type": "STRING"},
                                {
                                    "name": "PRICE",
                                    "type": "DECIMAL",
                                    "precision": 10,
                                    "scale": 2,
                                    "nullable": False,
                                },
                            ],
                        }
                    ],
                },
            ],
        },
        {
            "name": "ATTRS",
            "type": "MAP",
            "fields": [
                {"name": "key", "type": "STRING", "nullable": False},
                {"name": "value", "type": "INT64"},
            ],
        },
        {"name": "TAGS", "type": "ARRAY", "fields": [{"name": "element", "type": "UUID"}]},
    ],
    "primary_key": ["ID"],
}

UUID_1 = "0f8fad5b-d9cb-469f-a165-70867728950e"
ROWS: list[dict[str, Any]] = [
    {
        "ID": 1,
        "PAYLOAD": {
            "SOURCE": "web",
            "N": 7,
            "ITEMS": [{"SKU": "a", "PRICE": decimal.Decimal("1.50")}, None],
        },
        "ATTRS": {"x": 1, "none": None},
        "TAGS": [UUID_1, None],
    },
    {"ID": 2, "PAYLOAD": None, "ATTRS": None, "TAGS": None},
    {"ID": 3, "PAYLOAD": {"SOURCE": None, "N": None, "ITEMS": []}, "ATTRS": {}, "TAGS": []},
]


class Events:
    """PUBLIC.EV in a zone of two partitions, written and read through Spark."""

    def __init__(self, spark: SparkSession, client: CatalogClient, url: str) -> None:
        self.spark, self.client, self.url = spark, client, url
        client.sql("CREATE ZONE TWO WITH PARTITIONS=2, STORAGE_PROFILES='default'")
        self.created = client.execute([CREATE]).version

    def ddl(self, *commands: c.CommandBase) -> int:
        return self.client.execute(list(commands)).version

    def schema(self) -> StructType:
        return schema_at(self.client, "PUBLIC.EV")

    def write(
        self, rows: list[dict[str, Any]], schema: StructType | str, kind: str = "append"
    ) -> None:
        frame = self.spark.createDataFrame(rows, schema)
        writer = frame.write.format("catalog").option("catalog_url", self.url)
        writer.option("write", kind).mode("append").save("PUBLIC.EV")

    def read(self, as_of: object = None) -> DataFrame:
        reader = self.spark.read.format("catalog").option("catalog_url", self.url)
        if as_of is not None:
            reader = reader.option("as_of", str(as_of))
        return reader.load("PUBLIC.EV")

    def rows(self, as_of: object = None) -> list[dict[str, Any]]:
        found = [r.asDict(recursive=True) for r in self.read(as_of).collect()]
        return sorted(found, key=lambda r: r["ID"])


@pytest.fixture
def events(spark: SparkSession, catalog_server: RunningServer) -> Iterator[Events]:
    with CatalogClient(catalog_server.url) as client:
        yield Events(spark, client, catalog_server.url)


def test_nested_rows_read_back_as_written(events: Events) -> None:
    schema = events.schema()
    events.write(ROWS, schema)
    df = events.read()
    assert df.schema == schema
    assert [f.dataType.simpleString() for f in df.schema.fields[1:]] == [
        "struct<SOURCE:string,N:int,ITEMS:array<struct<SKU:string,PRICE:decimal(10,2)>>>",
        "map<string,bigint>",
        "array<string>",
    ]
    payload = df.schema["PAYLOAD"].dataType
    assert isinstance(payload, StructType)
    items = payload["ITEMS"].dataType
    assert isinstance(items, ArrayType) and isinstance(items.elementType, StructType)
    assert items.containsNull and not items.elementType["PRICE"].nullable
    assert events.rows() == ROWS
    # A filter on a nested field is Spark's; one on a plain column still skips and filters.
    assert [r.ID for r in df.where("PAYLOAD.SOURCE = 'web'").collect()] == [1]
    assert [r.ID for r in df.where("ID >= 2 AND size(ATTRS) = 0").collect()] == [3]


def test_a_missing_value_in_a_not_null_field_fails_naming_its_path(events: Events) -> None:
    events.write(ROWS[:1], events.schema())
    loose = (
        "ID long, PAYLOAD struct<SOURCE:string, ITEMS:array<struct<SKU:string, "
        "PRICE:decimal(10,2)>>>"
    )
    bad = [{"ID": 9, "PAYLOAD": {"SOURCE": "s", "ITEMS": [{"SKU": "b", "PRICE": None}]}}]
    with pytest.raises(PySparkException) as info:
        events.write(bad, loose)
    assert "field PAYLOAD.ITEMS.element.PRICE is NOT NULL, but 1 value(s) have none" in str(
        info.value
    )
    with pytest.raises(PySparkException) as info:
        events.write(
            [{"ID": 9, "PAYLOAD": {"ITEMS": [{"SKU": "b"}]}}],
            "ID long, PAYLOAD struct<ITEMS:array<struct<SKU:string>>>",
        )
    assert "field PAYLOAD.ITEMS.element.PRICE is NOT NULL: it is missing" in str(info.value)
    assert [r["ID"] for r in events.rows()] == [1]


def test_old_files_read_in_each_versions_shape_after_nested_evolution(events: Events) -> None:
    events.write(ROWS, events.schema())
    written = events.client.now()
    events.ddl(
        c.AddColumns(
            table="EV",
            parent=["PAYLOAD"],
            columns=[c.Column(name="ORIGIN", type=ColumnType.STRING)],
        )
    )
    renamed = events.ddl(
        c.RenameColumn(table="EV", column="PAYLOAD", path=["SOURCE"], new_name="CHANNEL")
    )
    events.ddl(
        c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], type=ColumnType.INT64),
        c.DropColumns(table="EV", fields=[["PAYLOAD", "ITEMS", "element", "SKU"]]),
        c.AlterColumn(
            table="EV", column="PAYLOAD", path=["ITEMS", "element", "PRICE"], nullable=True
        ),
    )
    new = {
        "ID": 4,
        "PAYLOAD": {"CHANNEL": "app", "N": 2**40, "ITEMS": [{"PRICE": None}], "ORIGIN": "eu"},
        "ATTRS": {},
        "TAGS": [],
    }
    events.write([new], events.schema())

    assert events.read().schema["PAYLOAD"].dataType.simpleString() == (
        "struct<CHANNEL:string,N:bigint,ITEMS:array<struct<PRICE:decimal(10,2)>>,ORIGIN:string>"
    )
    now = events.rows()
    assert [r["PAYLOAD"] for r in now] == [
        {
            "CHANNEL": "web",
            "N": 7,
            "ITEMS": [{"PRICE": decimal.Decimal("1.50")}, None],
            "ORIGIN": None,
        },
        None,
        {"CHANNEL": None, "N": None, "ITEMS": [], "ORIGIN": None},
        new["PAYLOAD"],
    ]
    assert events.rows(written) == ROWS  # in the first version's shape
    assert events.read(f"version={events.created}").schema == events.read(written).schema
    after_rename = events.rows(f"version={renamed}")
    assert after_rename[0]["PAYLOAD"] == {
        "CHANNEL": "web",
        "N": 7,
        "ITEMS": [{"SKU": "a", "PRICE": decimal.Decimal("1.50")}, None],
        "ORIGIN": None,
    }
    assert len(after_rename) == 3


def test_an_upsert_replaces_nested_values_by_key(events: Events) -> None:
    schema = events.schema()
    events.write(ROWS, schema)
    changed = {**ROWS[0], "PAYLOAD": None, "ATTRS": {"y": 2}, "TAGS": []}
    events.write([changed], schema, kind="upsert")
    assert events.rows() == [changed, *ROWS[1:]]
    events.write([{"ID": 3}], "ID long", kind="delete")
    assert events.rows() == [changed, ROWS[1]]
