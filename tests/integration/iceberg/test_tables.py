"""Tables through PyIceberg: created, loaded, listed, renamed and dropped in the catalog."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (
    BadRequestError,
    NoSuchNamespaceError,
    NoSuchTableError,
    RESTError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from api.client import CatalogClient
from catalog import ColumnType
from catalog import commands as c
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import ORDERS

pytestmark = pytest.mark.timeout(60)


def test_a_created_table_has_the_identifier_fields_as_its_primary_key(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    created = iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    table = client.table("PUBLIC", "ORDERS")
    assert table.column_names(table.primary_key) == ["ID", "REGION"]
    assert [(col.name, col.type, col.nullable) for col in table.columns] == [
        ("ID", ColumnType.INT64, False),
        ("REGION", ColumnType.STRING, False),
        ("AMOUNT", ColumnType.DECIMAL, True),
        ("NOTE", ColumnType.STRING, True),
    ]
    loaded = iceberg.load_table("PUBLIC.ORDERS")
    for answer in (created, loaded):
        fields = answer.schema().fields
        assert [(f.field_id, f.name) for f in fields] == [
            (col.id, col.name) for col in table.columns
        ]
        assert answer.schema().identifier_field_ids == list(table.primary_key)
        assert answer.schema().schema_id == table.schema_version
        assert answer.metadata.last_column_id == table.next_column_id - 1
        assert answer.metadata.current_snapshot_id is None
        assert answer.spec().is_unpartitioned()
        warehouse = Path(str(iceberg_server.settings.warehouse)).resolve()
        assert answer.location() == f"file://{warehouse}/table_{table.id}"
    assert created.metadata.table_uuid == loaded.metadata.table_uuid
    assert loaded.schema().find_field("AMOUNT").field_type == DecimalType(12, 2)
    assert loaded.properties == {"stale-rows-fraction": "0.2", "min-stale-rows-count": "500"}
    assert iceberg.list_tables("PUBLIC") == [("PUBLIC", "ORDERS")]
    assert iceberg.table_exists("PUBLIC.ORDERS")


def test_every_catalog_type_loads_as_its_iceberg_type(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    types = {
        "B": (ColumnType.BOOLEAN, BooleanType()),
        "I8": (ColumnType.INT8, IntegerType()),
        "I16": (ColumnType.INT16, IntegerType()),
        "I32": (ColumnType.INT32, IntegerType()),
        "I64": (ColumnType.INT64, LongType()),
        "F": (ColumnType.FLOAT32, FloatType()),
        "D": (ColumnType.FLOAT64, DoubleType()),
        "S": (ColumnType.STRING, StringType()),
        "BIN": (ColumnType.BYTES, BinaryType()),
        "DT": (ColumnType.DATE, DateType()),
        "T": (ColumnType.TIME, TimeType()),
        "TS": (ColumnType.TIMESTAMP, TimestampType()),
        "TSZ": (ColumnType.TIMESTAMP_TZ, TimestamptzType()),
        "U": (ColumnType.UUID, UUIDType()),
    }
    columns = [c.Column(name="K", type=ColumnType.INT64, nullable=False)]
    columns += [c.Column(name=name, type=t) for name, (t, _) in types.items()]
    client.execute([c.CreateTable(name="ALL", columns=columns, primary_key=["K"])])
    schema = iceberg.load_table("PUBLIC.ALL").schema()
    assert {f.name: f.field_type for f in schema.fields if f.name != "K"} == {
        name: served for name, (_, served) in types.items()
    }


def test_a_column_iceberg_cannot_hold_refuses_the_load_by_name(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    columns = [
        c.Column(name="K", type=ColumnType.INT64, nullable=False),
        c.Column(name="AT", type=ColumnType.TIMESTAMP, precision=9),
    ]
    client.execute([c.CreateTable(name="NANOS", columns=columns, primary_key=["K"])])
    with pytest.raises(BadRequestError) as refused:
        iceberg.load_table("PUBLIC.NANOS")
    message = str(refused.value)
    assert "table NANOS" in message and "column AT" in message and "TIMESTAMP(9)" in message


def test_creation_refuses_what_the_catalog_does_not_keep(iceberg: RestCatalog) -> None:
    with pytest.raises(BadRequestError, match="is not inside the warehouse"):
        iceberg.create_table("PUBLIC.PLACED", ORDERS, location="/tmp/elsewhere")
    spec = PartitionSpec(PartitionField(2, 1000, BucketTransform(4), "REGION_B"))
    no_bucket = Schema(NestedField(1, "ID", LongType()), NestedField(2, "OK", BooleanType()))
    with pytest.raises(BadRequestError, match=r"bucket\[4\] does not apply to column OK"):
        iceberg.create_table("PUBLIC.PARTED", no_bucket, partition_spec=spec)
    assert iceberg.list_tables("PUBLIC") == []


def test_table_errors_are_pyicebergs_own(iceberg: RestCatalog) -> None:
    iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    with pytest.raises(TableAlreadyExistsError, match=r"Table already exists: PUBLIC\.ORDERS"):
        iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    with pytest.raises(NoSuchTableError, match=r"Table does not exist: PUBLIC\.NOPE"):
        iceberg.load_table("PUBLIC.NOPE")
    with pytest.raises(NoSuchTableError):
        iceberg.drop_table("PUBLIC.NOPE")
    with pytest.raises(NoSuchNamespaceError, match="Namespace does not exist: NOPE"):
        iceberg.create_table("NOPE.ORDERS", ORDERS)
    with pytest.raises(NoSuchNamespaceError):
        iceberg.list_tables("NOPE")
    assert not iceberg.table_exists("PUBLIC.NOPE")


def test_tables_are_renamed_within_their_namespace_and_dropped(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    iceberg.create_namespace("OTHER")
    created = iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    renamed = iceberg.rename_table("PUBLIC.ORDERS", "PUBLIC.SALES")
    assert renamed.metadata.table_uuid == created.metadata.table_uuid
    assert client.tables("PUBLIC") == ["SALES"]
    with pytest.raises(RESTError, match=r"^UnsupportedOperationException: .*its schema only"):
        iceberg.rename_table("PUBLIC.SALES", "OTHER.SALES")
    iceberg.drop_table("PUBLIC.SALES")
    assert client.tables("PUBLIC") == []
    again = iceberg.create_table("PUBLIC.SALES", ORDERS)
    assert again.metadata.table_uuid != created.metadata.table_uuid
