"""The one table between the catalog's column types and Iceberg's types.

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
STRUCT (its fields)                 ``struct`` (its fields)     STRUCT
ARRAY (its ``element``)             ``list``                    ARRAY
MAP (its ``key``, ``value``)        ``map``                     MAP
==================================  ==========================  ==============================

A nested type is an object, its fields each with the catalog's id of the field
(``catalog.descriptors.nested``): ``{"type": "struct", "fields": [{"id", "name",
"required", "type"}, ...]}``, ``{"type": "list", "element-id", "element",
"element-required"}``, ``{"type": "map", "key-id", "key", "value-id", "value",
"value-required"}`` (a map's key is always required). ``api.iceberg.nested_types`` reads
such objects back as the fields of a column.

Iceberg's times and timestamps hold microseconds, so a catalog time with more fractional
digits has no counterpart; Iceberg's ``fixed[n]`` and the format-3 types have none in the
catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.descriptors import ColumnDescriptor, ViewColumn
from catalog.descriptors.nested import ELEMENT, KEY, VALUE, Path, path_words

MICROSECONDS = 6
"""The fractional-second digits of Iceberg's time and timestamp types."""

IcebergType = str | dict[str, Any]
"""A field's ``type`` as the protocol carries it: a primitive's name, or a nested type object."""


@dataclass(frozen=True, slots=True)
class TypeMapping:
    """One row of the table: a catalog type and the Iceberg type it is served as.

    Attributes:
        column_type: the catalog type.
        iceberg: the Iceberg type name (``decimal`` takes its precision and scale; ``struct``,
            ``list`` and ``map`` are the ``type`` of a nested type object).
        back: whether the Iceberg type reads back as this catalog type (INT8 and INT16 are
            served as ``int`` but ``int`` reads back as INT32).
        max_precision: the most fractional-second digits served, for time types.
    """

    column_type: ColumnType
    iceberg: str
    back: bool = True
    max_precision: int | None = None

    @property
    def nested(self) -> bool:
        """Whether the Iceberg type is a nested type object (struct, list, map)."""
        return self.column_type in NESTED_TYPES


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
    TypeMapping(ColumnType.STRUCT, "struct"),
    TypeMapping(ColumnType.ARRAY, "list"),
    TypeMapping(ColumnType.MAP, "map"),
)
"""The type table itself; ``docs/iceberg.md`` shows it to users."""

_TO_ICEBERG = {m.column_type: m for m in TYPE_TABLE}
_FROM_ICEBERG = {m.iceberg: m for m in TYPE_TABLE if m.back and not m.nested}
_NESTED_FROM_ICEBERG = {m.iceberg: m for m in TYPE_TABLE if m.nested}
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


def iceberg_type(column: ColumnDescriptor | ViewColumn) -> IcebergType:
    """Return the Iceberg type ``column`` is served as: a name, or a nested type object.

    A nested column's fields are served with their ids, at any depth.

    Raises:
        NoCounterpartError: the column's type, or a nested field's, has none in Iceberg;
            a nested field's is named by its path.
    """
    return _served(column, (column.name,))


def _served(column: ColumnDescriptor | ViewColumn, path: Path) -> IcebergType:
    mapping = _TO_ICEBERG[column.type]
    if mapping.nested:
        fields = column.fields if isinstance(column, ColumnDescriptor) else ()
        if not fields:
            raise NoCounterpartError(
                f"{column.type} {path_words(path)} has no fields to serve as an Iceberg "
                f"{mapping.iceberg}"
            )
        return _nested(mapping, fields, path)
    if mapping.column_type is ColumnType.DECIMAL:
        return f"decimal({column.precision}, {column.scale})"
    limit = mapping.max_precision
    if limit is not None and column.precision is not None and column.precision > limit:
        where = f"field {path_words(path)}: " if len(path) > 1 else ""
        raise NoCounterpartError(
            f"{where}{column.type}({column.precision}) has no Iceberg counterpart: Iceberg's "
            f"{mapping.iceberg} holds at most {limit} fractional-second digits"
        )
    return mapping.iceberg


def _nested(
    mapping: TypeMapping, fields: tuple[ColumnDescriptor, ...], path: Path
) -> dict[str, Any]:
    """Return a nested column's Iceberg type object, from its fields (``fields``)."""
    by_name = {f.name: f for f in fields}
    if mapping.column_type is ColumnType.ARRAY:
        element = by_name[ELEMENT]
        return {
            "type": "list",
            "element-id": element.id,
            "element": _served(element, (*path, ELEMENT)),
            "element-required": not element.nullable,
        }
    if mapping.column_type is ColumnType.MAP:
        key, value = by_name[KEY], by_name[VALUE]
        return {
            "type": "map",
            "key-id": key.id,
            "key": _served(key, (*path, KEY)),
            "value-id": value.id,
            "value": _served(value, (*path, VALUE)),
            "value-required": not value.nullable,
        }
    return {
        "type": "struct",
        "fields": [
            {
                "id": f.id,
                "name": f.name,
                "required": not f.nullable,
                "type": _served(f, (*path, f.name)),
            }
            for f in fields
        ],
    }


def catalog_type(iceberg: object) -> CatalogType:
    """Return the catalog type an Iceberg field type becomes.

    A nested type object becomes STRUCT, ARRAY or MAP; its fields are read by
    ``api.iceberg.nested_types``.

    Args:
        iceberg: the field's ``type`` as sent: a primitive type name, or an object for a
            nested type.

    Raises:
        NoCounterpartError: the Iceberg type has none in the catalog.
    """
    if not isinstance(iceberg, str):
        kind = iceberg.get("type") if isinstance(iceberg, dict) else None
        nested = _NESTED_FROM_ICEBERG.get(kind) if isinstance(kind, str) else None
        if nested is None:
            known = ", ".join(sorted(_NESTED_FROM_ICEBERG))
            raise NoCounterpartError(
                f"the nested Iceberg type {kind or 'given'} has no counterpart in this catalog "
                f"(it takes {known})"
            )
        return CatalogType(nested.column_type)
    name = iceberg.strip().lower()
    decimal = _DECIMAL.fullmatch(name)
    if decimal is not None:
        return CatalogType(ColumnType.DECIMAL, int(decimal[1]), int(decimal[2]))
    mapping = _FROM_ICEBERG.get(name)
    if mapping is None:
        known = ", ".join(sorted({*_FROM_ICEBERG, "decimal(p, s)"}))
        raise NoCounterpartError(
            f"the Iceberg type {iceberg} has no counterpart in this catalog (it takes {known}, "
            "and struct, list and map of them)"
        )
    return CatalogType(mapping.column_type, mapping.max_precision)
