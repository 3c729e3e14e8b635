"""The one table between the catalog's column types and Iceberg's primitive types.

==================================  ==========================  ==============================
catalog type                        Iceberg type                back to the catalog
==================================  ==========================  ==============================
BOOLEAN                             ``boolean``                 BOOLEAN
INT8, INT16, INT32                  ``int``                     INT32
INT64                               ``long``                    INT64
FLOAT32                             ``float``                   FLOAT32
FLOAT64                             ``double``                  FLOAT64
DECIMAL(p, s)                       ``decimal(p, s)``           DECIMAL(p, s)
STRING (any length)                 ``string``                  STRING (default length)
BYTES (any length)                  ``binary``                  BYTES (default length)
DATE                                ``date``                    DATE
TIME (precision <= 6)               ``time``                    TIME(6)
TIMESTAMP (precision <= 6)          ``timestamp``               TIMESTAMP(6)
TIMESTAMP_TZ (precision <= 6)       ``timestamptz``             TIMESTAMP_TZ(6)
UUID                                ``uuid``                    UUID
==================================  ==========================  ==============================

Iceberg's times and timestamps hold microseconds, so a catalog time with more fractional
digits has no counterpart; Iceberg's ``fixed[n]``, nested types (struct, list, map) and the
format-3 types have none in the catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalog.column_types import ColumnType
from catalog.descriptors import ColumnDescriptor, ViewColumn

MICROSECONDS = 6
"""The fractional-second digits of Iceberg's time and timestamp types."""


@dataclass(frozen=True, slots=True)
class TypeMapping:
    """One row of the table: a catalog type and the Iceberg type it is served as.

    Attributes:
        column_type: the catalog type.
        iceberg: the Iceberg type name (``decimal`` takes its precision and scale).
        back: whether the Iceberg type reads back as this catalog type (INT8 and INT16 are
            served as ``int`` but ``int`` reads back as INT32).
        max_precision: the most fractional-second digits served, for time types.
    """

    column_type: ColumnType
    iceberg: str
    back: bool = True
    max_precision: int | None = None


TYPE_TABLE: tuple[TypeMapping, ...] = (
    TypeMapping(ColumnType.BOOLEAN, "boolean"),
    TypeMapping(ColumnType.INT8, "int", back=False),
    TypeMapping(ColumnType.INT16, "int", back=False),
    TypeMapping(ColumnType.INT32, "int"),
    TypeMapping(ColumnType.INT64, "long"),
    TypeMapping(ColumnType.FLOAT32, "float"),
    TypeMapping(ColumnType.FLOAT64, "double"),
    TypeMapping(ColumnType.DECIMAL, "decimal"),
    TypeMapping(ColumnType.STRING, "string"),
    TypeMapping(ColumnType.BYTES, "binary"),
    TypeMapping(ColumnType.DATE, "date"),
    TypeMapping(ColumnType.TIME, "time", max_precision=MICROSECONDS),
    TypeMapping(ColumnType.TIMESTAMP, "timestamp", max_precision=MICROSECONDS),
    TypeMapping(ColumnType.TIMESTAMP_TZ, "timestamptz", max_precision=MICROSECONDS),
    TypeMapping(ColumnType.UUID, "uuid"),
)
"""The type table itself; ``docs/iceberg.md`` shows it to users."""

_TO_ICEBERG = {m.column_type: m for m in TYPE_TABLE}
_FROM_ICEBERG = {m.iceberg: m for m in TYPE_TABLE if m.back}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")


class NoCounterpartError(ValueError):
    """A type has no counterpart on the other side; the message says which and why."""


@dataclass(frozen=True, slots=True)
class CatalogType:
    """A catalog type with the parameters an Iceberg type gives it (None: the default).

    Attributes:
        type: the catalog type.
        precision: DECIMAL's precision, or the fractional-second digits of a time type.
        scale: DECIMAL's scale.
    """

    type: ColumnType
    precision: int | None = None
    scale: int | None = None


def iceberg_type(column: ColumnDescriptor | ViewColumn) -> str:
    """Return the Iceberg type ``column`` is served as.

    Raises:
        NoCounterpartError: the column's type has none in Iceberg.
    """
    mapping = _TO_ICEBERG[column.type]
    if mapping.column_type is ColumnType.DECIMAL:
        return f"decimal({column.precision}, {column.scale})"
    limit = mapping.max_precision
    if limit is not None and column.precision is not None and column.precision > limit:
        raise NoCounterpartError(
            f"{column.type}({column.precision}) has no Iceberg counterpart: Iceberg's "
            f"{mapping.iceberg} holds at most {limit} fractional-second digits"
        )
    return mapping.iceberg


def catalog_type(iceberg: object) -> CatalogType:
    """Return the catalog type an Iceberg field type becomes.

    Args:
        iceberg: the field's ``type`` as sent: a primitive type name, or an object for a
            nested type.

    Raises:
        NoCounterpartError: the Iceberg type has none in the catalog.
    """
    if not isinstance(iceberg, str):
        kind = iceberg.get("type") if isinstance(iceberg, dict) else None
        raise NoCounterpartError(
            f"the nested Iceberg type {kind or 'given'} has no counterpart: this catalog's "
            "columns hold primitive types only"
        )
    name = iceberg.strip().lower()
    decimal = _DECIMAL.fullmatch(name)
    if decimal is not None:
        return CatalogType(ColumnType.DECIMAL, int(decimal[1]), int(decimal[2]))
    mapping = _FROM_ICEBERG.get(name)
    if mapping is None:
        known = ", ".join(sorted({*_FROM_ICEBERG, "decimal(p, s)"}))
        raise NoCounterpartError(
            f"the Iceberg type {iceberg} has no counterpart in this catalog (it takes {known})"
        )
    return CatalogType(mapping.column_type, mapping.max_precision)
