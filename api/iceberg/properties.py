"""A table's properties as Iceberg table properties, and Iceberg property changes as commands.

The catalog's tables have two properties of their own (Ignite's statistics settings); they
are served as ``stale-rows-fraction`` and ``min-stale-rows-count``, and removing one sets it
back to its default. Every other property is the engines': kept verbatim in the table's
Iceberg state (``alter_table_iceberg``). ``format-version`` is no property: on create it
names the table's format version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from api.iceberg.errors import bad_request
from catalog.commands.tables import AlterTablePropertiesCommand
from catalog.descriptors import TableDescriptor
from catalog.descriptors.tables import DEFAULT_MIN_STALE_ROWS_COUNT, DEFAULT_STALE_ROWS_FRACTION

STALE_ROWS_FRACTION = "stale-rows-fraction"
MIN_STALE_ROWS_COUNT = "min-stale-rows-count"
FORMAT_VERSION_PROPERTY = "format-version"

_FIELDS: dict[str, tuple[str, Callable[[str], float | int], float | int]] = {
    STALE_ROWS_FRACTION: ("stale_rows_fraction", float, DEFAULT_STALE_ROWS_FRACTION),
    MIN_STALE_ROWS_COUNT: ("min_stale_rows_count", int, DEFAULT_MIN_STALE_ROWS_COUNT),
}
"""Each property of the catalog's own: the catalog field it is, how its text is read, its
default."""


def table_properties(table: TableDescriptor) -> dict[str, str]:
    """Return ``table``'s properties as Iceberg table properties: the engines', then its own."""
    kept = table.iceberg.property_map() if table.iceberg is not None else {}
    return {**kept, **{name: str(getattr(table, f)) for name, (f, _, _) in _FIELDS.items()}}


def split_properties(values: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Return the catalog's own properties of ``values``, and the others."""
    own = {k: v for k, v in values.items() if k in _FIELDS}
    return own, {k: v for k, v in values.items() if k not in _FIELDS}


def property_fields(
    updates: Mapping[str, str], removals: Iterable[str] = ()
) -> dict[str, float | int]:
    """Return the catalog fields that changes of the catalog's own properties set.

    Other properties are left out (they are kept by ``alter_table_iceberg``).

    Raises:
        IcebergError: BadRequestException for a value that is not a number of the
            property's kind.
    """
    fields: dict[str, float | int] = {}
    for name in removals:
        if name in _FIELDS:
            field, _, default = _FIELDS[name]
            fields[field] = default
    for name, text in updates.items():
        if name not in _FIELDS:
            continue
        field, read, _ = _FIELDS[name]
        try:
            fields[field] = read(text)
        except ValueError as e:
            raise bad_request(f"table property {name} takes a {read.__name__}, not {text!r}") from e
    return fields


def properties_command(
    schema: str, table: str, updates: Mapping[str, str], removals: Iterable[str]
) -> AlterTablePropertiesCommand | None:
    """Return the command changing the catalog's own properties, or None when there are none.

    Raises:
        IcebergError: BadRequestException as ``property_fields``.
        ValidationError: a value out of its range.
    """
    fields = property_fields(updates, removals)
    if not fields:
        return None
    return AlterTablePropertiesCommand(**{"schema": schema, "table": table, **fields})
