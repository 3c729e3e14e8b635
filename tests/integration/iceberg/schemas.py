"""The Iceberg schemas the tests create tables with."""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, FloatType, IntegerType, LongType, NestedField, StringType

ORDERS = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(2, "REGION", StringType(), required=True),
    NestedField(3, "AMOUNT", DecimalType(12, 2), required=False),
    NestedField(4, "NOTE", StringType(), required=False),
    identifier_field_ids=[1, 2],
)
"""A table keyed by two fields."""

EVENTS = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(2, "COUNT", IntegerType(), required=True),
    NestedField(3, "RATIO", FloatType(), required=False),
    NestedField(4, "PRICE", DecimalType(10, 2), required=False),
    identifier_field_ids=[1],
)
"""A table with a field of each widening kind (int, float, decimal)."""
