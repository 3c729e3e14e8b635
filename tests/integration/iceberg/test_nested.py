"""Nested tables through PyIceberg: created, written, read and registered with the catalog's ids.

A table of struct, list<struct> and map<string, struct> columns is a table of STRUCT, ARRAY and
MAP columns in the catalog; the ids a load answers are the ids the catalog stored, at every
depth.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema, index_by_id
from pyiceberg.table import StaticTable, Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

from api.client import CatalogClient
from catalog import ColumnType
from catalog.descriptors.nested import walk

pytestmark = pytest.mark.timeout(90)

EVENTS = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(
        2,
        "PAYLOAD",
        StructType(
            NestedField(3, "SOURCE", StringType(), required=False),
            NestedField(4, "N", IntegerType(), required=True),
        ),
        required=False,
    ),
    NestedField(
        5,
        "ITEMS",
        ListType(
            6,
            StructType(NestedField(7, "PRICE", DecimalType(10, 2), required=False)),
            element_required=False,
        ),
        required=False,
    ),
    NestedField(
        8,
        "ATTRS",
        MapType(9, StringType(), 10, StructType(NestedField(11, "V", IntegerType())), False),
        required=False,
    ),
    NestedField(12, "AT", TimestampType(), required=False),
    identifier_field_ids=[1],
)
"""Ids as a client gives them (depth first); the catalog numbers as Iceberg does on create."""

ROWS: list[dict[str, Any]] = [
    {
        "ID": 1,
        "PAYLOAD": {"SOURCE": "web", "N": 3},
        "ITEMS": [{"PRICE": decimal.Decimal("1.50")}, None, {"PRICE": None}],
        "ATTRS": {"a": {"V": 1}, "b": None},
        "AT": dt.datetime(2026, 1, 2, 3, 4, 5, 6),
    },
    {"ID": 2, "PAYLOAD": None, "ITEMS": [], "ATTRS": {}, "AT": None},
    {
        "ID": 3,
        "PAYLOAD": {"SOURCE": None, "N": -1},
        "ITEMS": [],
        "ATTRS": {"z": {"V": None}},
        "AT": None,
    },
]
"""Rows of every shape; no null list or map (PyIceberg's writer stores one as empty)."""


def field_ids(table: Table) -> dict[str, int]:
    """Return the id of every field and nested field of ``table``'s schema, by path."""
    schema = table.schema()
    return {schema.find_column_name(i) or "": i for i in index_by_id(schema)}


def catalog_ids(client: CatalogClient, name: str) -> dict[str, int]:
    """Return the id of every column and nested field the catalog stored, by path."""
    columns = client.table("PUBLIC", name).columns
    return {".".join(path): column.id for path, column in walk(columns)}


def read(table: Table, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    """Return the rows a scan reads, by id, maps as dicts."""
    data = table.scan(snapshot_id=snapshot_id).to_arrow()
    maps = [f.name for f in data.schema if pa.types.is_map(f.type)]
    rows = data.to_pylist()
    for row in rows:
        for name in maps:
            if row[name] is not None:
                row[name] = dict(row[name])
    return sorted(rows, key=lambda r: r["ID"])


def test_a_nested_table_is_created_written_and_read_with_the_catalogs_ids(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    created = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    described = client.table("PUBLIC", "EVENTS")
    assert [(col.name, col.type) for col in described.columns] == [
        ("ID", ColumnType.INT64),
        ("PAYLOAD", ColumnType.STRUCT),
        ("ITEMS", ColumnType.ARRAY),
        ("ATTRS", ColumnType.MAP),
        ("AT", ColumnType.TIMESTAMP),
    ]
    stored = catalog_ids(client, "EVENTS")
    assert stored == {
        "ID": 1,
        "PAYLOAD": 2,
        "ITEMS": 3,
        "ATTRS": 4,
        "AT": 5,  # every top-level field first
        "PAYLOAD.SOURCE": 6,
        "PAYLOAD.N": 7,
        "ITEMS.element": 8,
        "ITEMS.element.PRICE": 9,
        "ATTRS.key": 10,
        "ATTRS.value": 11,
        "ATTRS.value.V": 12,
    }
    created.append(pa.Table.from_pylist(ROWS, schema=created.schema().as_arrow()))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert field_ids(created) == field_ids(loaded) == stored
    assert loaded.metadata.last_column_id == 12 == described.next_column_id - 1
    assert loaded.schema().identifier_field_ids == [1]
    payload = loaded.schema().find_field("PAYLOAD")
    assert payload.field_type == StructType(
        NestedField(6, "SOURCE", StringType(), required=False),
        NestedField(7, "N", IntegerType(), required=True),
    )
    assert read(loaded) == ROWS
    [commit] = client.data_commits(described.id).commits
    [file] = commit.files
    assert file.rows == 3
    # The optional nested columns have no null count in Iceberg: they have no statistics, the
    # plain columns keep theirs.
    plain = {c.name: c.id for c in described.columns if c.name in ("ID", "AT")}
    assert file.stats is not None
    assert {s.column_id for s in file.stats} == set(plain.values())
    [key] = [s for s in file.stats if s.column_id == plain["ID"]]
    assert (key.nulls, key.lower, key.upper) == (0, 1, 3)
    assert loaded.metadata_location is not None
    static = StaticTable.from_metadata(loaded.metadata_location)  # the file engines may read
    assert static.schema() == loaded.schema()
    assert read(static) == ROWS


def test_a_create_transaction_writes_nested_data_under_the_ids_it_was_staged_with(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    with iceberg.create_table_transaction("PUBLIC.STAGED", EVENTS) as tx:
        staged = {tx.table_metadata.schema().find_column_name(i): i for i in range(1, 13)}
        tx.append(pa.Table.from_pylist(ROWS, schema=tx.table_metadata.schema().as_arrow()))
    assert catalog_ids(client, "STAGED") == staged
    assert read(iceberg.load_table("PUBLIC.STAGED")) == ROWS


def test_a_registered_nested_table_keeps_its_ids_and_reads_its_rows(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    with table.update_schema() as update:  # ids a create would not give: kept by the register
        update.add_column(("PAYLOAD", "ORIGIN"), StringType())
        update.delete_column("AT")
    table.append(
        pa.Table.from_pylist(
            [{"ID": 7, "PAYLOAD": {"N": 1, "ORIGIN": "x"}}], schema=table.schema().as_arrow()
        )
    )
    original = iceberg.load_table("PUBLIC.EVENTS")
    assert original.metadata_location is not None
    iceberg.drop_table("PUBLIC.EVENTS")
    registered = iceberg.register_table(("PUBLIC", "AGAIN"), original.metadata_location)
    assert registered.schema() == original.schema()
    assert field_ids(registered) == catalog_ids(client, "AGAIN") == field_ids(original)
    assert field_ids(registered)["PAYLOAD.ORIGIN"] == 13
    assert registered.metadata.last_column_id == original.metadata.last_column_id == 13
    [row] = read(registered)
    assert row["PAYLOAD"] == {"SOURCE": None, "N": 1, "ORIGIN": "x"}


def test_nested_identifier_fields_and_partitions_of_nested_fields_are_refused(
    iceberg: RestCatalog,
) -> None:
    payload = EVENTS.find_field("PAYLOAD")
    required = NestedField(payload.field_id, payload.name, payload.field_type, required=True)
    keyed = Schema(EVENTS.fields[0], required, identifier_field_ids=[1, 4])  # PAYLOAD.N
    with pytest.raises(BadRequestError, match=r"identifier field PAYLOAD\.N \(id 4\) is a nested"):
        iceberg.create_table("PUBLIC.KEYED", keyed)
    spec = PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "SOURCE"))  # sent as 6
    with pytest.raises(
        BadRequestError,
        match=r"source-id 6 is the nested field PAYLOAD\.SOURCE; this catalog partitions and "
        "sorts by top-level fields only",
    ):
        iceberg.create_table("PUBLIC.PARTED", EVENTS, partition_spec=spec)
    assert iceberg.list_tables("PUBLIC") == []
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    nested = r"nested field PAYLOAD\.{}; this catalog partitions and sorts by top-level"
    with (
        pytest.raises(BadRequestError, match=nested.format("SOURCE")),
        table.update_spec() as spec,
    ):
        spec.add_identity("PAYLOAD.SOURCE")
    with pytest.raises(BadRequestError, match=nested.format("N")), table.update_sort_order() as by:
        by.asc("PAYLOAD.N", IdentityTransform())
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert loaded.spec().is_unpartitioned() and loaded.sort_order().is_unsorted
