"""Iceberg's single-value serialization of bounds, decoded as a data commit stores them.

The bytes come from PyIceberg's own encoder (``pyiceberg.conversions.to_bytes``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg import types as ice
from pyiceberg.conversions import from_bytes, to_bytes

from api.iceberg.bounds import (
    MAX_STRING_BOUND,
    BoundError,
    column_stats,
    decode_bound,
    encode_bound,
)
from catalog.column_types import ColumnType
from catalog.data.files import ColumnStats, DataFile, StatValue
from catalog.descriptors import ColumnDescriptor
from spark.pruning import Bounds
from spark.statistics import bounds_of_file


def _column(kind: ColumnType, column_id: int = 1, **params: int) -> ColumnDescriptor:
    return ColumnDescriptor(id=column_id, name="C", type=kind, **params)


EPOCH = dt.datetime(1970, 1, 1)
MOMENT = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
MOMENT_US = (MOMENT - EPOCH) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("kind", "params", "iceberg", "value", "stored"),
    [
        (ColumnType.BOOLEAN, {}, ice.BooleanType(), True, True),
        (ColumnType.INT16, {}, ice.IntegerType(), -7, -7),
        (ColumnType.INT32, {}, ice.IntegerType(), 2**31 - 1, 2**31 - 1),
        (ColumnType.INT64, {}, ice.LongType(), -(2**63), -(2**63)),
        (ColumnType.FLOAT32, {}, ice.FloatType(), 1.5, 1.5),
        (ColumnType.FLOAT64, {}, ice.DoubleType(), -2.25, -2.25),
        (ColumnType.DATE, {}, ice.DateType(), 19_000, 19_000),
        (ColumnType.TIME, {"precision": 6}, ice.TimeType(), 3_600_000_001, 3_600_000_001),
        (ColumnType.TIMESTAMP, {"precision": 6}, ice.TimestampType(), MOMENT_US, MOMENT_US),
        (ColumnType.TIMESTAMP_TZ, {"precision": 6}, ice.TimestamptzType(), -1, -1),
        (ColumnType.STRING, {}, ice.StringType(), "zürich", "zürich"),
        (
            ColumnType.DECIMAL,
            {"precision": 12, "scale": 2},
            ice.DecimalType(12, 2),
            decimal.Decimal("-1234.50"),
            "-1234.50",
        ),
        (
            ColumnType.DECIMAL,
            {"precision": 38, "scale": 0},
            ice.DecimalType(38, 0),
            decimal.Decimal(10**37),
            str(10**37),
        ),
    ],
)
def test_a_bound_decodes_to_the_stored_form(
    kind: ColumnType,
    params: dict[str, int],
    iceberg: ice.PrimitiveType,
    value: Any,
    stored: StatValue,
) -> None:
    assert decode_bound(_column(kind, **params), to_bytes(iceberg, value)) == stored


def test_a_uuid_bound_is_its_canonical_text() -> None:
    value = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    assert decode_bound(_column(ColumnType.UUID), to_bytes(ice.UUIDType(), value)) == str(value)


def test_bytes_keep_no_bound_and_infinities_none() -> None:
    assert decode_bound(_column(ColumnType.BYTES), b"\x00\x01") is None
    assert (
        decode_bound(_column(ColumnType.FLOAT64), to_bytes(ice.DoubleType(), float("inf"))) is None
    )


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        (ColumnType.INT64, b"\x01\x02\x03\x04"),
        (ColumnType.BOOLEAN, b"\x02"),
        (ColumnType.UUID, b"\x00" * 15),
        (ColumnType.STRING, b"\xff\xfe"),
        (ColumnType.DECIMAL, b""),
    ],
)
def test_bytes_of_another_shape_are_refused(kind: ColumnType, data: bytes) -> None:
    params = {"precision": 10, "scale": 2} if kind is ColumnType.DECIMAL else {}
    with pytest.raises(BoundError, match="bound"):
        decode_bound(_column(kind, **params), data)


def test_file_stats_keep_what_is_sure_per_column() -> None:
    columns = [
        _column(ColumnType.INT64, 0),
        _column(ColumnType.FLOAT64, 1),
        _column(ColumnType.FLOAT64, 2),
        _column(ColumnType.STRING, 3),
    ]
    long_text = "x" * (MAX_STRING_BOUND + 1)
    stats = column_stats(
        columns,
        null_counts={0: 0, 1: 1, 2: 0, 3: 2},
        nan_counts={1: 0},
        lower={
            0: to_bytes(ice.LongType(), 3),
            1: to_bytes(ice.DoubleType(), 0.5),
            2: to_bytes(ice.DoubleType(), 1.0),
            3: to_bytes(ice.StringType(), long_text),
        },
        upper={
            0: to_bytes(ice.LongType(), 9),
            1: to_bytes(ice.DoubleType(), 2.5),
            2: to_bytes(ice.DoubleType(), 2.0),
            3: to_bytes(ice.StringType(), long_text),
        },
    )
    assert stats == (
        ColumnStats(column_id=0, nulls=0, lower=3, upper=9),
        ColumnStats(column_id=1, nulls=1, lower=0.5, upper=2.5),
        ColumnStats(column_id=2, nulls=0),  # NaN count unknown: no bound is safe
        ColumnStats(column_id=3, nulls=2, lower="x" * MAX_STRING_BOUND),
    )


def test_a_file_missing_a_null_count_keeps_no_statistics() -> None:
    columns = [_column(ColumnType.INT64, 0), _column(ColumnType.INT64, 1)]
    assert column_stats(columns, {0: 0}, {}, {}, {}) is None


def _nested(column_id: int, nullable: bool) -> ColumnDescriptor:
    field = ColumnDescriptor(id=column_id + 10, name="X", type=ColumnType.INT64)
    return ColumnDescriptor(
        id=column_id, name="S", type=ColumnType.STRUCT, nullable=nullable, fields=(field,)
    )


def test_a_nested_column_keeps_its_null_count_only_and_its_fields_metrics_are_not_read() -> None:
    columns = [_column(ColumnType.INT64, 0), _nested(1, nullable=False), _nested(2, True)]
    field_bytes = {11: b"not a long", 12: to_bytes(ice.LongType(), 5)}  # nested fields' own
    stats = column_stats(
        columns,
        null_counts={0: 0, 2: 4, 11: 1, 12: 0},
        nan_counts={},
        lower={0: to_bytes(ice.LongType(), 1), 2: b"?", **field_bytes},
        upper={0: to_bytes(ice.LongType(), 8), 2: b"?", **field_bytes},
    )
    assert stats == (
        ColumnStats(column_id=0, nulls=0, lower=1, upper=8),
        ColumnStats(column_id=1, nulls=0),  # NOT NULL: none, though Iceberg gives no count
        ColumnStats(column_id=2, nulls=4),  # a count given is kept, a bound never
    )


def test_a_nullable_nested_column_without_a_null_count_leaves_the_others_their_statistics() -> None:
    columns = [_column(ColumnType.INT64, 0), _nested(1, nullable=True)]
    lower, upper = {0: (5).to_bytes(8, "little")}, {0: (9).to_bytes(8, "little")}
    stats = column_stats(columns, {0: 0, 11: 0}, {}, lower, upper)
    assert stats == (ColumnStats(column_id=0, nulls=0, lower=5, upper=9),)
    # A reader knows nothing of the nested column (it never takes it for one the file lacks).
    written = DataFile(path="f.parquet", partition=0, rows=3, size=1, stats=stats)
    assert bounds_of_file(written, columns[1]) is None
    assert bounds_of_file(written, columns[0]) == Bounds(3, 0, 5, 9)


@pytest.mark.parametrize(
    ("kind", "params", "stored"),
    [
        (ColumnType.BOOLEAN, {}, False),
        (ColumnType.INT8, {}, -3),
        (ColumnType.INT64, {}, 2**62),
        (ColumnType.FLOAT32, {}, 0.25),
        (ColumnType.FLOAT64, {}, -1e300),
        (ColumnType.DATE, {}, -5),
        (ColumnType.TIMESTAMP_TZ, {"precision": 6}, MOMENT_US),
        (ColumnType.DECIMAL, {"precision": 10, "scale": 2}, "-0.01"),
        (ColumnType.DECIMAL, {"precision": 10, "scale": 2}, "128.00"),
        (ColumnType.DECIMAL, {"precision": 38, "scale": 3}, "-" + "9" * 35 + ".999"),
        (ColumnType.UUID, {}, "0f8fad5b-d9cb-469f-a165-70867728950e"),
        (ColumnType.STRING, {}, "zürich"),
    ],
)
def test_a_stored_bound_encodes_as_iceberg_decodes_it(
    kind: ColumnType, params: dict[str, int], stored: StatValue
) -> None:
    column = _column(kind, **params)
    encoded = encode_bound(column, stored)
    assert encoded is not None
    assert decode_bound(column, encoded) == stored
    iceberg = {
        ColumnType.DECIMAL: ice.DecimalType(params.get("precision", 1), params.get("scale", 0)),
        ColumnType.UUID: ice.UUIDType(),
        ColumnType.STRING: ice.StringType(),
        ColumnType.BOOLEAN: ice.BooleanType(),
    }.get(kind)
    if iceberg is not None:  # PyIceberg's own encoder gives the same bytes
        value = from_bytes(iceberg, encoded)
        assert to_bytes(iceberg, value) == encoded


def test_a_bound_that_is_not_of_the_type_has_no_encoding() -> None:
    assert encode_bound(_column(ColumnType.INT32), "7") is None
    assert encode_bound(_column(ColumnType.INT32), 2**40) is None
    assert encode_bound(_column(ColumnType.DECIMAL, precision=5, scale=1), "1.25") is None
    assert encode_bound(_column(ColumnType.UUID), "not a uuid") is None
    assert encode_bound(_column(ColumnType.BYTES), "00") is None


def test_a_decimal_bound_is_at_most_16_bytes_within_the_columns_precision() -> None:
    column = _column(ColumnType.DECIMAL, precision=10, scale=2)
    widest = _column(ColumnType.DECIMAL, precision=38, scale=0)
    assert decode_bound(widest, (10**38 - 1).to_bytes(16, "big", signed=True)) == "9" * 38
    for data, reason in [
        (b"\x7f" + b"\xff" * 60_000, "1 to 16 bytes, got 60001"),  # decoded in quadratic time
        (b"", "1 to 16 bytes, got 0"),
        ((10**10).to_bytes(8, "big", signed=True), "more than the column's 10 digits"),
    ]:
        with pytest.raises(BoundError, match=reason):
            decode_bound(column, data)


def test_a_long_string_bound_is_decoded_only_as_far_as_it_is_kept() -> None:
    column = _column(ColumnType.STRING)
    long = ("é" * 10_000).encode()
    cut = decode_bound(column, long)
    assert isinstance(cut, str) and set(cut) == {"é"}
    assert MAX_STRING_BOUND < len(cut) <= 4 * (MAX_STRING_BOUND + 1)  # then cut or dropped
    stats = column_stats([column], {1: 0}, {}, {1: long}, {1: long})
    assert stats == (ColumnStats(column_id=1, nulls=0, lower="é" * MAX_STRING_BOUND, upper=None),)
    with pytest.raises(BoundError, match="not UTF-8"):
        decode_bound(column, b"\xff" * 1_000)


_KINDS = [
    _column(ColumnType.BOOLEAN),
    _column(ColumnType.INT32),
    _column(ColumnType.INT64),
    _column(ColumnType.FLOAT64),
    _column(ColumnType.DATE),
    _column(ColumnType.TIMESTAMP, precision=6),
    _column(ColumnType.STRING),
    _column(ColumnType.BYTES),
    _column(ColumnType.UUID),
    _column(ColumnType.DECIMAL, precision=38, scale=10),
    _column(ColumnType.DECIMAL, precision=5, scale=0),
]


@settings(max_examples=300, deadline=None)
@given(
    column=st.sampled_from(_KINDS),
    low=st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=1000, max_size=5000)),
    high=st.one_of(st.none(), st.binary(max_size=40)),
)
def test_any_bound_bytes_are_a_bound_or_a_bound_error_naming_the_field(
    column: ColumnDescriptor, low: bytes | None, high: bytes | None
) -> None:
    lower = {} if low is None else {1: low}
    upper = {} if high is None else {1: high}
    try:
        column_stats([column], {1: 0}, {1: 0}, lower, upper)
    except BoundError as e:
        assert "bound of field 1 (C) cannot be read" in str(e)
