"""The Iceberg schema ids of a table's schema versions.

The catalog makes every column change a new schema version, numbered from 1. Iceberg gives a
schema equal to an earlier one that earlier schema's id: a change that gives back an earlier
schema (a column added, then dropped) makes that schema current again, as Java's
``TableMetadata.Builder`` does, and engines count and remove schemas by those ids. So a
version whose columns equal those of an earlier version still served is served under the
earlier version's id; every other version under its own number. An id an engine removed
(``remove-schemas``, kept in ``IcebergTableState.removed_schemas``) hides every version
served under it when it is removed (they are kept as removed versions); a version made later
with the same columns is served under its own number.

A served id is always the number of a version with the same columns, so a data file written
"with schema id N" is a file written with schema version N.
"""

from __future__ import annotations

from collections.abc import Collection

from catalog.descriptors import ColumnDescriptor, TableDescriptor


def served_schema_ids(table: TableDescriptor) -> dict[int, int]:
    """Return the Iceberg schema id of each schema version of ``table`` that is served.

    A version an engine removed is left out (the current one cannot be removed).
    """
    removed = set(table.iceberg.removed_schemas) if table.iceberg is not None else set()
    first: dict[tuple[ColumnDescriptor, ...], int] = {}
    ids: dict[int, int] = {}
    for version in table.versions:
        if version.version not in removed:
            ids[version.version] = first.setdefault(version.columns, version.version)
    return ids


def versions_served_as(table: TableDescriptor, schema_ids: Collection[int]) -> set[int]:
    """Return the schema versions of ``table`` served under any of ``schema_ids``."""
    return {v for v, served in served_schema_ids(table).items() if served in schema_ids}


def current_schema_id(table: TableDescriptor) -> int:
    """Return the Iceberg schema id ``table``'s current schema is served under."""
    return served_schema_ids(table)[table.schema_version]
