"""How catalog column types map to Spark and to Arrow/Parquet.

==============  ==========================  =====================  ============================
catalog         Spark                       Arrow (in batches)     Parquet files (Iceberg's)
==============  ==========================  =====================  ============================
BOOLEAN         BooleanType                 bool                   the same as in batches
INT8..INT64     Byte/Short/Integer/LongType int8..int64            the same
FLOAT32/64      FloatType / DoubleType      float32 / float64      the same
DECIMAL(p,s)    DecimalType(p, s)           decimal128(p, s)       the same
STRING(n)       StringType                  string (the length     the same
                                            is checked on write)
BYTES(n)        BinaryType                  binary (likewise)      the same
DATE            DateType                    date32                 the same
TIME(p)         LongType: microseconds      int64                  time64[us]: INT64,
                since midnight (Spark 4's                          TIME(MICROS, not adjusted
                TIME type is not in Python                         to UTC)
                data sources; this keeps
                it exact to µs)
TIMESTAMP(p)    TimestampNTZType            timestamp[us]          the same
TIMESTAMP_TZ(p) TimestampType               timestamp[us, tz=UTC]  the same
UUID            StringType (canonical:      string                 uuid: FIXED_LEN_BYTE_ARRAY(16)
                lower case, hyphens)                               with the UUID logical type
STRUCT          StructType                  struct                 a group of its fields
ARRAY           ArrayType(containsNull)     list<element>          LIST: list.element
MAP             MapType(valueContainsNull)  map<key, value>        MAP: key_value.key, .value
==============  ==========================  =====================  ============================

A nested column's fields map the same way, each with its own nullability: an array's
``containsNull`` is its ``element``'s ``nullable``, a map's ``valueContainsNull`` its
``value``'s (a key is never null). Spark struct fields carry the same metadata as columns.

Files hold TIME and UUID as the Iceberg spec maps them to Parquet, so Iceberg readers
(PyIceberg) read the Spark source's files. Files the source wrote before it did so hold
TIME as int64 and UUID as its text: reads take both (``spark.evolution.project``), and a
write checks what the file form cannot hold (a time outside the day, a text that is not a
UUID). Every Spark field carries ``{"column_id": <id>, "catalog_type": "<TYPE(params)>"}`` in
its metadata, and every Arrow field written to Parquet carries ``PARQUET:field_id = <column
id>``, nested fields too (a struct's fields, an array's element, a map's key and value, as
Iceberg writes them): files are read back by field id, never by name.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import Path, path_words

FIELD_ID = b"PARQUET:field_id"
"""The Arrow field metadata key that pyarrow writes as the Parquet field id."""

_SPARK_SIMPLE: dict[ColumnType, T.DataType] = {
    ColumnType.BOOLEAN: T.BooleanType(),
    ColumnType.INT8: T.ByteType(),
    ColumnType.INT16: T.ShortType(),
    ColumnType.INT32: T.IntegerType(),
    ColumnType.INT64: T.LongType(),
    ColumnType.FLOAT32: T.FloatType(),
    ColumnType.FLOAT64: T.DoubleType(),
    ColumnType.STRING: T.StringType(),
    ColumnType.BYTES: T.BinaryType(),
    ColumnType.DATE: T.DateType(),
    ColumnType.TIME: T.LongType(),
    ColumnType.TIMESTAMP: T.TimestampNTZType(),
    ColumnType.TIMESTAMP_TZ: T.TimestampType(),
    ColumnType.UUID: T.StringType(),
}

_ARROW_SIMPLE: dict[ColumnType, pa.DataType] = {
    ColumnType.BOOLEAN: pa.bool_(),
    ColumnType.INT8: pa.int8(),
    ColumnType.INT16: pa.int16(),
    ColumnType.INT32: pa.int32(),
    ColumnType.INT64: pa.int64(),
    ColumnType.FLOAT32: pa.float32(),
    ColumnType.FLOAT64: pa.float64(),
    ColumnType.STRING: pa.string(),
    ColumnType.BYTES: pa.binary(),
    ColumnType.DATE: pa.date32(),
    ColumnType.TIME: pa.int64(),
    ColumnType.TIMESTAMP: pa.timestamp("us"),
    ColumnType.TIMESTAMP_TZ: pa.timestamp("us", tz="UTC"),
    ColumnType.UUID: pa.string(),
}


def catalog_type_name(column: ColumnDescriptor) -> str:
    """Return the column's type as SQL spells it, e.g. ``DECIMAL(10, 2)``.

    A nested type spells its fields: ``STRUCT<SOURCE: STRING(10), N: INT64 NOT NULL>``,
    ``ARRAY<INT32>``, ``MAP<STRING(16), INT64>``.
    """
    if column.type is ColumnType.STRUCT:
        inner = ", ".join(f"{f.name}: {_nested_part(f)}" for f in column.fields)
        return f"STRUCT<{inner}>"
    if column.type is ColumnType.ARRAY:
        return f"ARRAY<{_nested_part(column.fields[0])}>"
    if column.type is ColumnType.MAP:
        key, value = column.fields
        return f"MAP<{catalog_type_name(key)}, {_nested_part(value)}>"
    if column.type is ColumnType.DECIMAL:
        return f"DECIMAL({column.precision}, {column.scale})"
    if column.type in (ColumnType.STRING, ColumnType.BYTES):
        return f"{column.type}({column.length})"
    if column.type in (ColumnType.TIME, ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ):
        return f"{column.type}({column.precision})"
    return str(column.type)


def _nested_part(field: ColumnDescriptor) -> str:
    return catalog_type_name(field) + ("" if field.nullable else " NOT NULL")


def spark_type(column: ColumnDescriptor) -> T.DataType:
    """Return the Spark type of a column (of a nested one, with its fields')."""
    if column.type is ColumnType.STRUCT:
        return T.StructType([spark_field(f) for f in column.fields])
    if column.type is ColumnType.ARRAY:
        element = column.fields[0]
        return T.ArrayType(spark_type(element), containsNull=element.nullable)
    if column.type is ColumnType.MAP:
        key, value = column.fields
        return T.MapType(spark_type(key), spark_type(value), valueContainsNull=value.nullable)
    if column.type is ColumnType.DECIMAL:
        assert column.precision is not None and column.scale is not None
        return T.DecimalType(column.precision, column.scale)
    return _SPARK_SIMPLE[column.type]


def arrow_type(column: ColumnDescriptor) -> pa.DataType:
    """Return the Arrow type of a column in batches, those Spark hands over and is handed.

    A nested type's fields carry their ids (``arrow_field``), as files hold them.
    """
    if column.type in NESTED_TYPES:
        return _nested_arrow(column, arrow_field)
    if column.type is ColumnType.DECIMAL:
        assert column.precision is not None and column.scale is not None
        return pa.decimal128(column.precision, column.scale)
    return _ARROW_SIMPLE[column.type]


def _nested_arrow(
    column: ColumnDescriptor, field_of: Callable[[ColumnDescriptor], pa.Field]
) -> pa.DataType:
    if column.type is ColumnType.STRUCT:
        return pa.struct([field_of(f) for f in column.fields])
    if column.type is ColumnType.ARRAY:
        return pa.list_(field_of(column.fields[0]))
    key, value = column.fields
    return pa.map_(field_of(key), field_of(value))


def spark_field(column: ColumnDescriptor) -> T.StructField:
    """Return the Spark field of a column, its id and catalog type in the metadata."""
    metadata = {"column_id": column.id, "catalog_type": catalog_type_name(column)}
    return T.StructField(column.name, spark_type(column), column.nullable, metadata)


def struct_type(table: TableDescriptor) -> T.StructType:
    """Return the Spark schema of a table's current columns, in column order."""
    return T.StructType([spark_field(c) for c in table.columns])


def arrow_field(column: ColumnDescriptor) -> pa.Field:
    """Return the Arrow field of a column, carrying its id as the Parquet field id."""
    return pa.field(
        column.name,
        arrow_type(column),
        nullable=column.nullable,
        metadata={FIELD_ID: str(column.id).encode()},
    )


def arrow_schema(columns: tuple[ColumnDescriptor, ...]) -> pa.Schema:
    """Return the Arrow schema of ``columns`` in batches (with Parquet field ids)."""
    return pa.schema([arrow_field(c) for c in columns])


_FILE_TYPES: dict[ColumnType, pa.DataType] = {
    ColumnType.TIME: pa.time64("us"),
    ColumnType.UUID: pa.uuid(),
}
"""The types whose Arrow type in files (Iceberg's) is not the one in batches."""


def file_type(column: ColumnDescriptor) -> pa.DataType:
    """Return the Arrow type a column is written to Parquet files with."""
    if column.type in NESTED_TYPES:
        return _nested_arrow(column, file_field)
    return _FILE_TYPES.get(column.type) or arrow_type(column)


def holds_file_types(column: ColumnDescriptor) -> bool:
    """Return True when a column is, or holds a field, whose file type is not its batch type."""
    return column.type in _FILE_TYPES or any(holds_file_types(f) for f in column.fields)


def file_field(column: ColumnDescriptor) -> pa.Field:
    """Return the Arrow field a column is written to Parquet files with, with its field id."""
    return arrow_field(column).with_type(file_type(column))


def default_scalar(column: ColumnDescriptor) -> Any:
    """Return the column's constant default as a Python value of its Arrow type, or None."""
    value = column.default
    if value is None:
        return None
    ctype = column.type
    if ctype is ColumnType.DECIMAL:
        return decimal.Decimal(str(value))
    if ctype is ColumnType.BYTES:
        return bytes.fromhex(str(value))
    if ctype is ColumnType.DATE:
        return dt.date.fromisoformat(str(value))
    if ctype is ColumnType.TIME:
        t = dt.time.fromisoformat(str(value))
        return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    if ctype is ColumnType.TIMESTAMP:
        return dt.datetime.fromisoformat(str(value))
    if ctype is ColumnType.TIMESTAMP_TZ:
        return dt.datetime.fromisoformat(str(value)).astimezone(dt.UTC)
    return value


# Arrow types a DataFrame column may have for a catalog type, besides its own: the widenings
# a write accepts (the values are cast up, never down).
_WIDER_INTS = {
    ColumnType.INT16: (pa.int8(),),
    ColumnType.INT32: (pa.int8(), pa.int16()),
    ColumnType.INT64: (pa.int8(), pa.int16(), pa.int32()),
    ColumnType.FLOAT64: (pa.float32(),),
}


def accepts(column: ColumnDescriptor, given: pa.DataType) -> bool:
    """Return True when values of Arrow type ``given`` may be written into ``column``."""
    return mismatch(column, given) is None


def mismatch(column: ColumnDescriptor, given: pa.DataType, prefix: Path = ()) -> str | None:
    """Return why values of Arrow type ``given`` cannot be written into ``column``, or None.

    A nested value fits when its shape does: a struct's fields are matched by name (exactly,
    else regardless of case; ``given_fields``), each must fit, and a field the value lacks
    must be nullable; an array's element and a map's key and value must fit. ``prefix`` is
    the path of the field ``column`` is in, for the words.
    """
    path = (*prefix, column.name)
    if column.type not in NESTED_TYPES:
        if _plain_fits(column, given):
            return None
        return f"{named(path)} is {arrow_type(column)} in the table; {given} does not fit it"
    if column.type is ColumnType.STRUCT and pa.types.is_struct(given):
        matched = given_fields(column, given)
        problems = [
            f"{named((*path, given.field(i).name))} is not in the table"
            for i in range(given.num_fields)
            if i not in matched.values()
        ]
        for field in column.fields:
            if field.id in matched:
                problem = mismatch(field, given.field(matched[field.id]).type, path)
                problems.extend([problem] if problem else [])
            elif not field.nullable:
                problems.append(f"{named((*path, field.name))} is NOT NULL: it is missing")
        return "; ".join(problems) or None
    if column.type is ColumnType.ARRAY and (
        pa.types.is_list(given) or pa.types.is_large_list(given)
    ):
        return mismatch(column.fields[0], given.value_type, path)
    if column.type is ColumnType.MAP and pa.types.is_map(given):
        key, value = column.fields
        found = (mismatch(key, given.key_type, path), mismatch(value, given.item_type, path))
        return "; ".join(p for p in found if p is not None) or None
    return f"{named(path)} is a {column.type} in the table; {given} does not fit it"


def named(path: Path) -> str:
    """Return how a message names a column (``column X``) or a nested field (``field X.Y``)."""
    return f"column {path[0]}" if len(path) == 1 else f"field {path_words(path)}"


def given_fields(column: ColumnDescriptor, given: pa.DataType) -> dict[int, int]:
    """Return, per field id of a STRUCT column, the position of its field in ``given``.

    Names match exactly, else regardless of case; a field ``given`` lacks is left out.
    """
    names: list[str] = [given.field(i).name for i in range(given.num_fields)]
    found: dict[int, int] = {}
    for folded in (False, True):  # every exact match first, then regardless of case
        for field in column.fields:
            wanted = field.name.upper() if folded else field.name
            taken = set(found.values())
            for i, name in enumerate(names):
                same = (name.upper() if folded else name) == wanted
                if same and field.id not in found and i not in taken:
                    found[field.id] = i
    return found


def _plain_fits(column: ColumnDescriptor, given: pa.DataType) -> bool:
    target = arrow_type(column)
    if given == target or given in _WIDER_INTS.get(column.type, ()):
        return True
    if column.type is ColumnType.DECIMAL and pa.types.is_decimal(given):
        assert column.precision is not None and column.scale is not None
        whole = column.precision - column.scale
        return bool(given.scale == column.scale and given.precision - given.scale <= whole)
    if column.type is ColumnType.TIMESTAMP_TZ and pa.types.is_timestamp(given):
        return bool(given.tz is not None)
    if pa.types.is_large_string(given) and pa.types.is_string(target):
        return True
    return bool(pa.types.is_large_binary(given) and pa.types.is_binary(target))
