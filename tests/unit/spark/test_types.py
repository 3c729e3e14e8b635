"""Catalog types to Spark and Arrow types; as_of parsing; names."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from catalog import ColumnType, ValidationError
from catalog.column_types import normalize_default, resolve_params
from catalog.descriptors import ColumnDescriptor
from schemasync.clock import hlc
from spark.evolution import DataMismatchError, conform, project
from spark.schema import Pin, parse_as_of, split_name
from spark.types import FIELD_ID, accepts, arrow_type, default_scalar, spark_field


def column(ctype: ColumnType, cid: int = 1, **params: object) -> ColumnDescriptor:
    p = resolve_params(ctype, params.get("precision"), params.get("scale"), params.get("length"))  # type: ignore[arg-type]
    default = params.get("default")
    return ColumnDescriptor(
        id=cid,
        name=f"C{cid}",
        type=ctype,
        nullable=bool(params.get("nullable", True)),
        precision=p.precision,
        scale=p.scale,
        length=p.length,
        default=None if default is None else normalize_default(p, default),
    )


EXPECTED = [
    (ColumnType.BOOLEAN, {}, T.BooleanType(), pa.bool_()),
    (ColumnType.INT8, {}, T.ByteType(), pa.int8()),
    (ColumnType.INT16, {}, T.ShortType(), pa.int16()),
    (ColumnType.INT32, {}, T.IntegerType(), pa.int32()),
    (ColumnType.INT64, {}, T.LongType(), pa.int64()),
    (ColumnType.FLOAT32, {}, T.FloatType(), pa.float32()),
    (ColumnType.FLOAT64, {}, T.DoubleType(), pa.float64()),
    (ColumnType.DECIMAL, {"precision": 12, "scale": 3}, T.DecimalType(12, 3), pa.decimal128(12, 3)),
    (ColumnType.STRING, {"length": 5}, T.StringType(), pa.string()),
    (ColumnType.BYTES, {"length": 5}, T.BinaryType(), pa.binary()),
    (ColumnType.DATE, {}, T.DateType(), pa.date32()),
    (ColumnType.TIME, {"precision": 3}, T.LongType(), pa.int64()),
    (ColumnType.TIMESTAMP, {}, T.TimestampNTZType(), pa.timestamp("us")),
    (ColumnType.TIMESTAMP_TZ, {}, T.TimestampType(), pa.timestamp("us", tz="UTC")),
    (ColumnType.UUID, {}, T.StringType(), pa.string()),
]


NESTED_EXPECTED = [
    (
        ColumnType.STRUCT,
        T.StructType(
            [T.StructField("A", T.IntegerType(), False, {"column_id": 8, "catalog_type": "INT32"})]
        ),
        pa.struct([pa.field("A", pa.int32(), nullable=False)]),
    ),
    (
        ColumnType.ARRAY,
        T.ArrayType(T.StringType(), containsNull=False),
        pa.list_(pa.field("element", pa.string(), nullable=False)),
    ),
    (
        ColumnType.MAP,
        T.MapType(T.StringType(), T.LongType(), valueContainsNull=True),
        pa.map_(pa.string(), pa.int64()),
    ),
]


def nested(ctype: ColumnType) -> ColumnDescriptor:
    """Return a NOT NULL nested column (id 7) whose one or two fields are of plain types."""
    fields = {
        ColumnType.STRUCT: (
            column(ColumnType.INT32, 8, nullable=False).model_copy(update={"name": "A"}),
        ),
        ColumnType.ARRAY: (
            column(ColumnType.STRING, 8, nullable=False).model_copy(update={"name": "element"}),
        ),
        ColumnType.MAP: (
            column(ColumnType.STRING, 8, nullable=False).model_copy(update={"name": "key"}),
            column(ColumnType.INT64, 9).model_copy(update={"name": "value"}),
        ),
    }[ctype]
    return ColumnDescriptor(id=7, name="N", type=ctype, nullable=False, fields=fields)


def test_every_catalog_type_is_mapped() -> None:
    mapped = {ctype for ctype, *_ in EXPECTED} | {ctype for ctype, *_ in NESTED_EXPECTED}
    assert mapped == set(ColumnType)


@pytest.mark.parametrize(("ctype", "spark", "arrow"), NESTED_EXPECTED)
def test_nested_type_mapping(ctype: ColumnType, spark: T.DataType, arrow: pa.DataType) -> None:
    col = nested(ctype)
    field = spark_field(col)
    assert field.dataType == spark
    assert field.nullable is False
    assert field.metadata["column_id"] == 7
    assert field.metadata["catalog_type"].startswith(str(ctype))
    assert arrow_type(col) == arrow
    assert accepts(col, arrow)


@pytest.mark.parametrize(("ctype", "params", "spark", "arrow"), EXPECTED)
def test_type_mapping(
    ctype: ColumnType, params: dict[str, int], spark: T.DataType, arrow: pa.DataType
) -> None:
    col = column(ctype, 7, nullable=False, **params)
    field = spark_field(col)
    assert field.dataType == spark
    assert field.nullable is False
    assert field.metadata["column_id"] == 7
    assert field.metadata["catalog_type"].startswith(str(ctype))
    assert arrow_type(col) == arrow
    assert accepts(col, arrow)


@pytest.mark.parametrize(
    ("ctype", "default", "value"),
    [
        (ColumnType.DECIMAL, "1.5", decimal.Decimal("1.500")),
        (ColumnType.BYTES, "00ff", b"\x00\xff"),
        (ColumnType.DATE, "2026-01-02", dt.date(2026, 1, 2)),
        (ColumnType.TIME, "01:02:03.5", 3_723_500_000),
        (ColumnType.TIMESTAMP, "2026-01-02T03:04:05", dt.datetime(2026, 1, 2, 3, 4, 5)),
        (ColumnType.INT32, 7, 7),
    ],
)
def test_defaults_become_arrow_values(ctype: ColumnType, default: object, value: object) -> None:
    params = {
        ColumnType.DECIMAL: {"precision": 10, "scale": 3},
        ColumnType.TIME: {"precision": 6},
    }.get(ctype, {})
    col = column(ctype, default=default, **params)
    assert default_scalar(col) == value
    pa.scalar(default_scalar(col), type=arrow_type(col))  # fits its Arrow type


def test_widenings_accepted_on_write() -> None:
    assert accepts(column(ColumnType.INT64), pa.int32())
    assert accepts(column(ColumnType.FLOAT64), pa.float32())
    assert accepts(column(ColumnType.DECIMAL, precision=10, scale=2), pa.decimal128(8, 2))
    assert not accepts(column(ColumnType.INT32), pa.int64())
    assert not accepts(column(ColumnType.DECIMAL, precision=10, scale=2), pa.decimal128(10, 3))
    assert not accepts(column(ColumnType.STRING, length=3), pa.int32())


def test_project_matches_by_id_casts_and_fills() -> None:
    old = pa.table(
        {"A": pa.array([1, 2], pa.int32()), "GONE": ["x", "y"]},
        schema=pa.schema(
            [
                pa.field("A", pa.int32(), metadata={FIELD_ID: b"1"}),
                pa.field("GONE", pa.string(), metadata={FIELD_ID: b"2"}),
            ]
        ),
    )
    renamed = column(ColumnType.INT64, 1).model_copy(update={"name": "A2"})
    added = column(ColumnType.INT16, 3, default=9)
    bare = column(ColumnType.STRING, 4, length=3)
    out = project(old, [renamed, added, bare])
    assert out.column_names == ["A2", "C3", "C4"]
    assert out.to_pylist() == [
        {"A2": 1, "C3": 9, "C4": None},
        {"A2": 2, "C3": 9, "C4": None},
    ]
    assert out.schema.field("A2").type == pa.int64()


def test_conform_checks_nulls_and_lengths() -> None:
    key = column(ColumnType.INT64, 1, nullable=False)
    name = column(ColumnType.STRING, 2, length=2)
    ok = pa.record_batch({"id": [1], "n": ["ab"]})
    table = conform(ok, [key, name], {1: "id", 2: "n"}, (1,))
    assert table.schema.field("C1").metadata[FIELD_ID] == b"1"
    with pytest.raises(DataMismatchError, match="NOT NULL"):
        conform(pa.record_batch({"id": [None], "n": ["a"]}), [key, name], {1: "id", 2: "n"}, (1,))
    with pytest.raises(DataMismatchError, match="at most 2 characters"):
        conform(pa.record_batch({"id": [1], "n": ["abc"]}), [key, name], {1: "id", 2: "n"}, (1,))


def test_conform_gives_a_left_out_rand_uuid_key_a_new_uuid_per_row() -> None:
    key = column(ColumnType.UUID, 1, nullable=False).model_copy(
        update={"default_function": "RAND_UUID"}
    )
    kind = column(ColumnType.STRING, 2)
    table = conform(pa.record_batch({"k": ["a", "b", "c"]}), [key, kind], {2: "k"}, (1,))
    keys = [uuid.UUID(k) for k in table.column("C1").to_pylist()]
    assert len(set(keys)) == 3 and all(k.version == 4 for k in keys)
    assert table.column("C2").to_pylist() == ["a", "b", "c"]


def test_as_of_forms() -> None:
    assert parse_as_of(None) == Pin()
    assert parse_as_of(12345) == Pin(ts=12345)
    assert parse_as_of("12345") == Pin(ts=12345)
    assert parse_as_of("version=4") == Pin(version=4)
    moment = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert parse_as_of("2026-01-02T03:04:05Z") == Pin(ts=hlc(int(moment.timestamp() * 1000)))
    assert parse_as_of(moment) == parse_as_of("2026-01-02T03:04:05+00:00")
    for bad in ("version=0", "version=x", "yesterday", dt.datetime(2026, 1, 1), True, -1):
        with pytest.raises(ValidationError):
            parse_as_of(bad)


def test_table_names_are_read_as_typed_in_sql() -> None:
    assert split_name("SALES.ORDERS") == ("SALES", "ORDERS")
    assert split_name("ORDERS") == ("PUBLIC", "ORDERS")
    assert split_name("sales.orders") == ("SALES", "ORDERS")
    assert split_name('"Sales"."my.orders"') == ("Sales", "my.orders")
    for bad in ("", ".T", "S.", "A.B.C", 'S."T'):
        with pytest.raises(ValidationError):
            split_name(bad)
