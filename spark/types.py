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
==============  ==========================  =====================  ============================

Files hold TIME and UUID as the Iceberg spec maps them to Parquet, so Iceberg readers
(PyIceberg) read the Spark source's files. Files the source wrote before it did so hold
TIME as int64 and UUID as its text: reads take both (``spark.evolution.project``), and a
write checks what the file form cannot hold (a time outside the day, a text that is not a
UUID). Every Spark field carries ``{"column_id": <id>, "catalog_type": "<TYPE(params)>"}`` in
its metadata, and every Arrow field written to Parquet carries ``PARQUET:field_id = <column
id>``: files are read back by column id, never by name.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from catalog.column_types import ColumnType
from catalog.descriptors import ColumnDescriptor, TableDescriptor

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
    """Return the column's type as SQL spells it, e.g. ``DECIMAL(10, 2)``."""
    if column.type is ColumnType.DECIMAL:
        return f"DECIMAL({column.precision}, {column.scale})"
    if column.type in (ColumnType.STRING, ColumnType.BYTES):
        return f"{column.type}({column.length})"
    if column.type in (ColumnType.TIME, ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ):
        return f"{column.type}({column.precision})"
    return str(column.type)


def spark_type(column: ColumnDescriptor) -> T.DataType:
    """Return the Spark type of a column."""
    if column.type is ColumnType.DECIMAL:
        assert column.precision is not None and column.scale is not None
        return T.DecimalType(column.precision, column.scale)
    return _SPARK_SIMPLE[column.type]


def arrow_type(column: ColumnDescriptor) -> pa.DataType:
    """Return the Arrow type of a column in batches, those Spark hands over and is handed."""
    if column.type is ColumnType.DECIMAL:
        assert column.precision is not None and column.scale is not None
        return pa.decimal128(column.precision, column.scale)
    return _ARROW_SIMPLE[column.type]


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
    return _FILE_TYPES.get(column.type) or arrow_type(column)


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
