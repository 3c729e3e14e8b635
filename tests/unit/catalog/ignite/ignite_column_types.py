"""Ignite's column-type rules, as the ALTER COLUMN ports check this project against them.

Ignite's types by this project's names: ``FLOAT`` is FLOAT32, ``DOUBLE`` FLOAT64,
``BYTE_ARRAY`` BYTES, ``DATETIME`` TIMESTAMP and ``TIMESTAMP`` (an instant) TIMESTAMP_TZ.
Ignite's ``NULL``, ``PERIOD`` and ``DURATION`` cannot be column types here (nor persisted there).
"""

from __future__ import annotations

from typing import Any

from catalog import ColumnType
from catalog import commands as c

T = ColumnType

WIDENINGS: dict[ColumnType, frozenset[ColumnType]] = {
    T.INT8: frozenset({T.INT16, T.INT32, T.INT64}),
    T.INT16: frozenset({T.INT32, T.INT64}),
    T.INT32: frozenset({T.INT64}),
    T.FLOAT32: frozenset({T.FLOAT64}),
}
"""Ignite's ``ALTER_COLUMN_TYPE_TRANSITIONS`` (``CatalogUtils``) without the type itself."""

PRECISION_TYPES = frozenset({T.DECIMAL, T.TIME, T.TIMESTAMP, T.TIMESTAMP_TZ})
"""The types whose ``precisionAllowed()``."""
SCALE_TYPES = frozenset({T.DECIMAL})
"""The types whose ``scaleAllowed()``."""
LENGTH_TYPES = frozenset({T.STRING, T.BYTES})
"""The types whose ``lengthAllowed()``."""


def is_supported_column_type_change(source: ColumnType, target: ColumnType) -> bool:
    """Ignite's ``CatalogUtils.isSupportedColumnTypeChange`` for two different types."""
    return target in WIDENINGS.get(source, frozenset())


def column_with_defaults(name: str, ctype: ColumnType, **kw: Any) -> c.Column:
    """Ignite's ``initializeColumnWithDefaults``: precision 4, scale 0, length 32 where taken.

    ``kw`` overrides or adds fields (``scale=3`` on a type that takes none, ...).
    """
    fields: dict[str, Any] = {}
    if ctype in PRECISION_TYPES:
        fields["precision"] = 4
    if ctype in SCALE_TYPES:
        fields["scale"] = 0
    if ctype in LENGTH_TYPES:
        fields["length"] = 1 << 5
    return c.Column(name=name, type=ctype, **{**fields, **kw})
