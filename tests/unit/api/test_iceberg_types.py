"""The type table between catalog columns and Iceberg types, both ways."""

from __future__ import annotations

import pytest

from api.iceberg.types import (
    TYPE_TABLE,
    CatalogType,
    NoCounterpartError,
    catalog_type,
    iceberg_type,
)
from catalog import ColumnType
from catalog.column_types import PLAIN_TYPES
from catalog.commands.column_definitions import Column


def _served(type_: ColumnType, **params: int) -> str:
    served = iceberg_type(Column(name="C", type=type_, **params).to_descriptor(0))
    assert isinstance(served, str)
    return served


def test_every_catalog_type_has_one_row() -> None:
    assert sorted(m.column_type for m in TYPE_TABLE) == sorted(ColumnType)


def test_nested_types_are_the_rows_of_icebergs_nested_type_objects() -> None:
    nested = {m.column_type: m.iceberg for m in TYPE_TABLE if m.nested}
    assert nested == {
        ColumnType.STRUCT: "struct",
        ColumnType.ARRAY: "list",
        ColumnType.MAP: "map",
    }
    assert [m.column_type for m in TYPE_TABLE if not m.nested] == list(PLAIN_TYPES)
    for kind, type_ in (("struct", ColumnType.STRUCT), ("list", ColumnType.ARRAY)):
        assert catalog_type({"type": kind}) == CatalogType(type_)
    assert catalog_type({"type": "map"}) == CatalogType(ColumnType.MAP)


@pytest.mark.parametrize(
    ("type_", "served"),
    [
        (ColumnType.BOOLEAN, "boolean"),
        (ColumnType.INT8, "int"),
        (ColumnType.INT16, "int"),
        (ColumnType.INT32, "int"),
        (ColumnType.INT64, "long"),
        (ColumnType.FLOAT32, "float"),
        (ColumnType.FLOAT64, "double"),
        (ColumnType.STRING, "string"),
        (ColumnType.BYTES, "binary"),
        (ColumnType.DATE, "date"),
        (ColumnType.TIME, "time"),
        (ColumnType.TIMESTAMP, "timestamp"),
        (ColumnType.TIMESTAMP_TZ, "timestamptz"),
        (ColumnType.UUID, "uuid"),
    ],
)
def test_catalog_types_are_served_as_their_iceberg_types(type_: ColumnType, served: str) -> None:
    assert _served(type_) == served


def test_a_decimal_keeps_its_precision_and_scale_both_ways() -> None:
    assert _served(ColumnType.DECIMAL, precision=12, scale=3) == "decimal(12, 3)"
    assert catalog_type("decimal(12, 3)") == CatalogType(ColumnType.DECIMAL, 12, 3)
    assert catalog_type("decimal(12,3)") == CatalogType(ColumnType.DECIMAL, 12, 3)


def test_iceberg_types_read_back_as_the_widest_catalog_type_they_stand_for() -> None:
    assert catalog_type("int") == CatalogType(ColumnType.INT32)
    assert catalog_type("long") == CatalogType(ColumnType.INT64)
    assert catalog_type("timestamptz") == CatalogType(ColumnType.TIMESTAMP_TZ, 6)
    assert catalog_type("time") == CatalogType(ColumnType.TIME, 6)
    assert catalog_type("string") == CatalogType(ColumnType.STRING)


def test_times_finer_than_microseconds_have_no_iceberg_counterpart() -> None:
    assert _served(ColumnType.TIMESTAMP, precision=6) == "timestamp"
    with pytest.raises(NoCounterpartError, match=r"TIMESTAMP\(9\) has no Iceberg counterpart"):
        _served(ColumnType.TIMESTAMP, precision=9)


@pytest.mark.parametrize(
    ("iceberg", "refusal"),
    [
        ("fixed[16]", r"the Iceberg type fixed\[16\] has no counterpart"),
        ("timestamp_ns", "the Iceberg type timestamp_ns has no counterpart"),
        ({"type": "variant-struct"}, "nested Iceberg type variant-struct has no counterpart"),
        (["int"], "nested Iceberg type given has no counterpart"),
    ],
)
def test_iceberg_types_without_a_catalog_counterpart_are_refused(
    iceberg: object, refusal: str
) -> None:
    with pytest.raises(NoCounterpartError, match=refusal):
        catalog_type(iceberg)
