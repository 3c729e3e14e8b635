"""Views of tables with nested columns: files of every version read as the catalog has them.

Spark's own Parquet reader reads each file by the names it was written with; the view rebuilds
each STRUCT, ARRAY and MAP value field by field, so after fields inside them were added,
dropped, renamed and widened the view gives what the ``catalog`` format gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from api.client import CatalogClient
from catalog import ColumnType, ValidationError
from catalog import commands as c
from spark.schema import schema_at
from spark.views import register_views
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

T = ColumnType


def _field(name: str, ctype: ColumnType, *fields: c.Column, **kw: Any) -> c.Column:
    return c.Column(name=name, type=ctype, fields=fields, **kw)


@pytest.fixture
def client(catalog_server: RunningServer) -> Iterator[CatalogClient]:
    with CatalogClient(catalog_server.url) as own:
        yield own


def _write(spark: SparkSession, url: str, client: CatalogClient, rows: list[Any]) -> None:
    frame = spark.createDataFrame(rows, schema_at(client, "PUBLIC.EV"))
    frame.write.format("catalog").option("catalog_url", url).mode("append").save("PUBLIC.EV")


def _sorted(rows: list[Any]) -> list[dict[str, Any]]:
    return sorted((r.asDict(recursive=True) for r in rows), key=lambda r: r["ID"])


def test_a_view_reads_old_files_of_nested_columns_in_the_current_shape(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    url = catalog_server.url
    item = _field("element", T.STRUCT, _field("SKU", T.STRING), _field("QTY", T.INT32))
    payload = _field(
        "PAYLOAD", T.STRUCT, _field("SOURCE", T.STRING), _field("ITEMS", T.ARRAY, item)
    )
    attrs = _field(
        "ATTRS",
        T.MAP,
        _field("key", T.STRING, nullable=False),
        _field("value", T.STRUCT, _field("N", T.INT32), _field("GONE", T.STRING)),
    )
    key = c.Column(name="ID", type=T.INT64, nullable=False)
    client.execute([c.CreateTable(name="EV", columns=[key, payload, attrs], primary_key=["ID"])])
    first = [
        {
            "ID": 1,
            "PAYLOAD": {"SOURCE": "web", "ITEMS": [{"SKU": "a", "QTY": 2}, None]},
            "ATTRS": {"k": {"N": 1, "GONE": "g"}, "e": None},
        },
        {"ID": 2, "PAYLOAD": None, "ATTRS": None},
        {"ID": 3, "PAYLOAD": {"SOURCE": None, "ITEMS": []}, "ATTRS": {}},
    ]
    _write(spark, url, client, first)
    client.execute(
        [
            c.RenameColumn(table="EV", column="PAYLOAD", path=["SOURCE"], new_name="CHANNEL"),
            c.AlterColumn(
                table="EV", column="PAYLOAD", path=["ITEMS", "element", "QTY"], type=T.INT64
            ),
            c.AddColumns(
                table="EV",
                parent=["PAYLOAD", "ITEMS", "element"],
                columns=[c.Column(name="NOTE", type=T.STRING)],
            ),
            c.DropColumns(table="EV", fields=[["ATTRS", "value", "GONE"]]),
        ]
    )
    second = {
        "ID": 4,
        "PAYLOAD": {"CHANNEL": "app", "ITEMS": [{"SKU": "b", "QTY": 2**40, "NOTE": "n"}]},
        "ATTRS": {"z": {"N": 9}},
    }
    _write(spark, url, client, [second])

    ts = register_views(spark, url, schemas=["PUBLIC"])

    pinned = spark.read.format("catalog").option("catalog_url", url).option("as_of", str(ts))
    expected = _sorted(pinned.load("PUBLIC.EV").collect())
    assert _sorted(spark.sql("SELECT * FROM PUBLIC.EV").collect()) == expected
    assert expected[0]["PAYLOAD"] == {
        "CHANNEL": "web",
        "ITEMS": [{"SKU": "a", "QTY": 2, "NOTE": None}, None],
    }
    assert expected[0]["ATTRS"] == {"k": {"N": 1}, "e": None}
    assert spark.table("PUBLIC.EV").schema["PAYLOAD"].dataType.simpleString() == (
        "struct<CHANNEL:string,ITEMS:array<struct<SKU:string,QTY:bigint,NOTE:string>>>"
    )
    found = spark.sql("SELECT ID FROM PUBLIC.EV WHERE PAYLOAD.CHANNEL = 'web'").collect()
    assert [r.ID for r in found] == [1]


def test_a_time_or_uuid_field_inside_a_nested_column_is_refused_by_its_path(
    spark: SparkSession, catalog_server: RunningServer, client: CatalogClient
) -> None:
    inner = _field("INNER", T.STRUCT, _field("AT", T.TIME), _field("N", T.INT32))
    key = c.Column(name="ID", type=T.INT64, nullable=False)
    client.execute([c.CreateTable(name="EV", columns=[key, inner], primary_key=["ID"])])
    with pytest.raises(ValidationError, match=r"PUBLIC\.EV \(column INNER\.AT, TIME\)"):
        register_views(spark, catalog_server.url, schemas=["PUBLIC"])
