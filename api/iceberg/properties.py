"""A table's properties as Iceberg table properties, and Iceberg property changes as commands.

The catalog's tables have two properties (Ignite's statistics settings); they are served as
``stale-rows-fraction`` and ``min-stale-rows-count``. Removing one sets it back to its
default. Any other property is refused: the catalog has nowhere to keep it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from api.iceberg.errors import bad_request
from catalog.commands.tables import AlterTablePropertiesCommand
from catalog.descriptors import TableDescriptor
from catalog.descriptors.tables import DEFAULT_MIN_STALE_ROWS_COUNT, DEFAULT_STALE_ROWS_FRACTION

STALE_ROWS_FRACTION = "stale-rows-fraction"
MIN_STALE_ROWS_COUNT = "min-stale-rows-count"

_FIELDS: dict[str, tuple[str, Callable[[str], float | int], float | int]] = {
    STALE_ROWS_FRACTION: ("stale_rows_fraction", float, DEFAULT_STALE_ROWS_FRACTION),
    MIN_STALE_ROWS_COUNT: ("min_stale_rows_count", int, DEFAULT_MIN_STALE_ROWS_COUNT),
}
"""Each served property: the catalog field it is, how its text is read, its default."""


def table_properties(table: TableDescriptor) -> dict[str, str]:
    """Return ``table``'s properties as Iceberg table properties."""
    return {name: str(getattr(table, field)) for name, (field, _, _) in _FIELDS.items()}


def _check_known(names: Iterable[str]) -> None:
    unknown = sorted(set(names) - set(_FIELDS))
    if unknown:
        raise bad_request(
            f"this catalog keeps no table property {', '.join(unknown)}; its tables take "
            f"{' and '.join(_FIELDS)}"
        )


def property_fields(
    updates: Mapping[str, str], removals: Iterable[str] = ()
) -> dict[str, float | int]:
    """Return the catalog fields that property updates and removals set.

    Raises:
        IcebergError: BadRequestException for an unknown property or a value that is not
            a number of the property's kind.
    """
    removals = list(removals)
    _check_known([*updates, *removals])
    fields: dict[str, float | int] = {}
    for name in removals:
        field, _, default = _FIELDS[name]
        fields[field] = default
    for name, text in updates.items():
        field, read, _ = _FIELDS[name]
        try:
            fields[field] = read(text)
        except ValueError as e:
            raise bad_request(f"table property {name} takes a {read.__name__}, not {text!r}") from e
    return fields


def properties_command(
    schema: str, table: str, updates: Mapping[str, str], removals: Iterable[str]
) -> AlterTablePropertiesCommand | None:
    """Return the command making Iceberg property changes, or None when there are none.

    Raises:
        IcebergError: BadRequestException as ``property_fields``.
        ValidationError: a value out of its range.
    """
    fields = property_fields(updates, removals)
    if not fields:
        return None
    return AlterTablePropertiesCommand(**{"schema": schema, "table": table, **fields})
