"""STRUCT, ARRAY and MAP columns in the Spark source: types, field ids, writes and their checks."""

from __future__ import annotations

import decimal
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from catalog import Catalog, ColumnType, prepare
from catalog import commands as c
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import path_words, walk
from spark.evolution import DataMismatchError, conform, for_file, project
from spark.table_folder import TableFolder
from spark.types import (
    FIELD_ID,
    arrow_schema,
    catalog_type_name,
    file_type,
    mismatch,
    spark_field,
)
from spark.warehouse import write_partitions
from tests.unit.catalog.helpers import catalog_with_default_zone

CT = ColumnType


def field(name: str, ctype: ColumnType, *fields: c.Column, **kw: Any) -> c.Column:
    return c.Column(name=name, type=ctype, fields=fields, **kw)


def events() -> Catalog:
    """EV (ID, PAYLOAD STRUCT<SOURCE, N, ITEMS ARRAY<STRUCT<SKU, PRICE NOT NULL, U>>>, ATTRS)."""
    item = field(
        "element",
        CT.STRUCT,
        field("SKU", CT.STRING, length=8),
        field("PRICE", CT.DECIMAL, precision=10, scale=2, nullable=False),
        field("U", CT.UUID),
    )
    payload = field(
        "PAYLOAD",
        CT.STRUCT,
        field("SOURCE", CT.STRING, length=10),
        field("N", CT.INT32),
        field("ITEMS", CT.ARRAY, item),
    )
    attrs = field("ATTRS", CT.MAP, field("key", CT.STRING, nullable=False), field("value", CT.TIME))
    tags = field("TAGS", CT.ARRAY, field("element", CT.INT64, nullable=False))
    key = c.Column(name="ID", type=CT.INT64, nullable=False)
    create = c.CreateTable(name="EV", columns=[key, payload, attrs, tags], primary_key=["ID"])
    return prepare(catalog_with_default_zone(), [create]).catalog


def columns_of(cat: Catalog) -> tuple[ColumnDescriptor, ...]:
    return cat.table("PUBLIC", "EV").columns


def evolved(cat: Catalog, *commands: c.CommandBase) -> Catalog:
    return prepare(cat, list(commands)).catalog


ROWS: list[dict[str, Any]] = [
    {
        "ID": 1,
        "PAYLOAD": {
            "SOURCE": "web",
            "N": 7,
            "ITEMS": [
                {"SKU": "a", "PRICE": 1, "U": "0f8fad5b-d9cb-469f-a165-70867728950e"},
                None,
            ],
        },
        "ATTRS": [("at", 5), ("none", None)],
        "TAGS": [1, 2],
    },
    {"ID": 2, "PAYLOAD": None, "ATTRS": None, "TAGS": None},
    {"ID": 3, "PAYLOAD": {"SOURCE": None, "N": None, "ITEMS": []}, "ATTRS": [], "TAGS": []},
    {"ID": 4, "PAYLOAD": {"SOURCE": "app", "N": -1, "ITEMS": None}, "ATTRS": None, "TAGS": [3]},
]


def conformed(columns: tuple[ColumnDescriptor, ...], rows: list[dict[str, Any]]) -> pa.Table:
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(columns))
    return conform(batch, columns, {col.id: col.name for col in columns}, (0,))


def test_nested_columns_map_to_spark_types_with_their_fields_nullability() -> None:
    payload, attrs, tags = columns_of(events())[1:]
    assert spark_field(payload).dataType.simpleString() == (
        "struct<SOURCE:string,N:int,ITEMS:array<struct<SKU:string,PRICE:decimal(10,2),U:string>>>"
    )
    struct = spark_field(payload).dataType
    assert isinstance(struct, T.StructType)
    items = struct["ITEMS"]
    assert items.metadata["column_id"] == payload.fields[2].id
    element = items.dataType
    assert isinstance(element, T.ArrayType) and element.containsNull
    assert isinstance(element.elementType, T.StructType)
    assert element.elementType["PRICE"].nullable is False
    assert spark_field(attrs).dataType == T.MapType(T.StringType(), T.LongType(), True)
    assert spark_field(tags).dataType == T.ArrayType(T.LongType(), containsNull=False)
    assert catalog_type_name(payload) == (
        "STRUCT<SOURCE: STRING(10), N: INT32, ITEMS: ARRAY<STRUCT<SKU: STRING(8), "
        "PRICE: DECIMAL(10, 2) NOT NULL, U: UUID>>>"
    )
    assert catalog_type_name(tags) == "ARRAY<INT64 NOT NULL>"
    assert catalog_type_name(attrs) == "MAP<STRING(65536), TIME(0)>"


def test_files_carry_a_field_id_on_every_nested_field_as_iceberg_writes_them(
    tmp_path: Path,
) -> None:
    columns = columns_of(events())
    (file,) = write_partitions(
        conformed(columns, ROWS), columns, TableFolder(str(tmp_path)), [0], 1, "w"
    )
    schema = pq.read_schema(tmp_path / file.path)
    found: dict[str, int] = {}

    def ids(name: str, kind: pa.DataType, arrow: pa.Field) -> None:
        found[name] = int(arrow.metadata[FIELD_ID])
        if pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                child = kind.field(i)
                ids(f"{name}.{child.name}", child.type, child)
        elif pa.types.is_map(kind):
            ids(f"{name}.key", kind.key_type, kind.key_field)
            ids(f"{name}.value", kind.item_type, kind.item_field)
        elif pa.types.is_list(kind):
            ids(f"{name}.element", kind.value_type, kind.value_field)

    for top in schema:
        ids(top.name, top.type, top)
    assert found == {path_words(p): f.id for p, f in walk(columns)}
    # Iceberg's Parquet layout: LIST of list.element, MAP of key_value.key and .value.
    text = str(pq.read_metadata(tmp_path / file.path).schema)
    assert "repeated group field_id=-1 list" in text
    assert "repeated group field_id=-1 key_value" in text
    # The file holds TIME and UUID as Iceberg has them, inside nested columns too.
    assert schema.field("ATTRS").type.item_type == pa.time64("us")
    assert schema.field("PAYLOAD").type == file_type(columns[1])


def test_rows_with_nested_values_read_back_as_written(tmp_path: Path) -> None:
    columns = columns_of(events())
    data = conformed(columns, ROWS)
    assert data.to_pylist() == [{**r, "PAYLOAD": _priced(r["PAYLOAD"])} for r in ROWS]
    pq.write_table(for_file(data, columns), tmp_path / "f.parquet")
    assert project(pq.read_table(tmp_path / "f.parquet"), columns).to_pylist() == data.to_pylist()
    # A slice of a batch (as Spark hands them) keeps exactly its rows.
    batch = pa.RecordBatch.from_pylist(ROWS, schema=arrow_schema(columns)).slice(1, 2)
    sliced = conform(batch, columns, {col.id: col.name for col in columns}, (0,))
    assert sliced.to_pylist() == data.slice(1, 2).to_pylist()


def _priced(payload: dict[str, Any] | None) -> dict[str, Any] | None:
    """PRICE reads as a decimal of its scale."""
    if payload is None or not payload["ITEMS"]:
        return payload
    items = [
        None if i is None else {**i, "PRICE": pa.scalar(i["PRICE"], pa.decimal128(10, 2)).as_py()}
        for i in payload["ITEMS"]
    ]
    return {**payload, "ITEMS": items}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"ID": 1, "PAYLOAD": {"ITEMS": [{"SKU": "a", "PRICE": None}]}},
            "field PAYLOAD.ITEMS.element.PRICE is NOT NULL, but 1 value(s) have none",
        ),
        ({"ID": 1, "TAGS": [1, None, None]}, "field TAGS.element is NOT NULL, but 2 value"),
        ({"ID": 1, "PAYLOAD": {"SOURCE": "x" * 11}}, "field PAYLOAD.SOURCE holds at most 10"),
        (
            {"ID": 1, "PAYLOAD": {"ITEMS": [{"PRICE": 1, "U": "nope"}]}},
            "field PAYLOAD.ITEMS.element.U is a UUID, and 'nope' is not one",
        ),
        (
            {"ID": 1, "ATTRS": [("t", 86_400_000_000)]},
            "field ATTRS.value is a TIME: microseconds since midnight",
        ),
    ],
)
def test_a_write_checks_nested_values_naming_the_fields_path(
    row: dict[str, Any], message: str
) -> None:
    with pytest.raises(DataMismatchError, match=re.escape(message)):
        conformed(columns_of(events()), [row])


def test_a_not_null_field_may_lack_a_value_only_where_its_struct_is_null() -> None:
    columns = columns_of(events())
    rows: list[dict[str, Any]] = [
        {"ID": 1, "PAYLOAD": None},
        {"ID": 2, "PAYLOAD": {"ITEMS": [None]}},
    ]
    assert [r["PAYLOAD"] for r in conformed(columns, rows).to_pylist()] == [
        None,
        {"SOURCE": None, "N": None, "ITEMS": [None]},
    ]


def test_a_dataframes_struct_is_matched_by_name_in_any_order_and_case() -> None:
    columns = columns_of(events())
    payload = columns[1]
    price = pa.decimal128(8, 2)  # narrower decimals and integers widen into the table's
    given = pa.struct(
        [
            ("items", pa.list_(pa.struct([("price", price)]))),
            ("n", pa.int16()),
            ("Source", pa.string()),
        ]
    )
    assert mismatch(payload, given) is None
    value = {"items": [{"price": decimal.Decimal("3.50")}], "n": 2, "Source": "s"}
    batch = pa.record_batch({"id": [1], "p": pa.array([value], given)})
    data = conform(batch, columns, {0: "id", payload.id: "p"}, (0,))
    item = {"SKU": None, "PRICE": decimal.Decimal("3.50"), "U": None}
    assert data.column("PAYLOAD").to_pylist() == [{"SOURCE": "s", "N": 2, "ITEMS": [item]}]
    assert data.schema.field("PAYLOAD").type == arrow_schema(columns).field("PAYLOAD").type


def test_a_dataframes_struct_that_does_not_fit_is_refused_with_every_problem() -> None:
    payload = columns_of(events())[1]
    given = pa.struct(
        [
            ("SOURCE", pa.int64()),
            ("EXTRA", pa.string()),
            ("ITEMS", pa.list_(pa.struct([("SKU", pa.string())]))),
        ]
    )
    problems = mismatch(payload, given)
    assert problems is not None
    assert "field PAYLOAD.EXTRA is not in the table" in problems
    assert "field PAYLOAD.SOURCE is string in the table; int64 does not fit it" in problems
    assert "field PAYLOAD.ITEMS.element.PRICE is NOT NULL: it is missing" in problems
    assert mismatch(payload, pa.list_(pa.int32())) == (
        "column PAYLOAD is a STRUCT in the table; list<item: int32> does not fit it"
    )
    attrs = columns_of(events())[2]
    assert mismatch(attrs, pa.map_(pa.string(), pa.int64())) is None
    assert mismatch(attrs, pa.map_(pa.int32(), pa.int64())) == (
        "field ATTRS.key is string in the table; int32 does not fit it"
    )


def test_old_files_read_in_the_shape_of_each_later_version(tmp_path: Path) -> None:
    first = events()
    pq.write_table(
        for_file(conformed(columns_of(first), ROWS), columns_of(first)), tmp_path / "v1.parquet"
    )
    later = evolved(
        first,
        c.AddColumns(table="EV", parent=["PAYLOAD"], columns=[field("ORIGIN", CT.STRING)]),
        c.DropColumns(table="EV", fields=[["PAYLOAD", "ITEMS", "element", "SKU"]]),
        c.RenameColumn(table="EV", column="PAYLOAD", path=["SOURCE"], new_name="CHANNEL"),
        c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], type=CT.INT64),
        c.AlterColumn(
            table="EV", column="PAYLOAD", path=["ITEMS", "element", "PRICE"], nullable=True
        ),
    )
    stored = pq.read_table(tmp_path / "v1.parquet")
    read = project(stored, columns_of(later))
    assert read.schema.field("PAYLOAD").type.field("N").type == pa.int64()
    assert read.column("PAYLOAD").to_pylist()[0] == {
        "CHANNEL": "web",
        "N": 7,
        "ITEMS": [
            {
                "PRICE": pa.scalar(1, pa.decimal128(10, 2)).as_py(),
                "U": ROWS[0]["PAYLOAD"]["ITEMS"][0]["U"],
            },
            None,
        ],
        "ORIGIN": None,
    }
    assert read.column("PAYLOAD").to_pylist()[1:] == [
        None,
        {"CHANNEL": None, "N": None, "ITEMS": [], "ORIGIN": None},
        {"CHANNEL": "app", "N": -1, "ITEMS": None, "ORIGIN": None},
    ]
    # As of the first version, the same file reads in the first shape.
    assert (
        project(stored, columns_of(first)).to_pylist()
        == conformed(columns_of(first), ROWS).to_pylist()
    )
