"""Where a table's data lives: the warehouse folder, and each table's folder in it.

Layout: ``<warehouse>/table_<id>/...``. The warehouse is a cluster setting, fixed when the
cluster is created; each table records its folder (``TableDescriptor.location``) when it is
created. A table re-created under the same name has a new id, hence a new folder: it never
sees the old files. The Spark source reads and writes there, and the Iceberg REST catalog
gives it as each table's location.
"""

from __future__ import annotations

import os
from pathlib import Path

from catalog.descriptors import TableDescriptor

WAREHOUSE_ENV = "CATALOG_WAREHOUSE"
"""The environment variable naming the warehouse folder."""
DEFAULT_WAREHOUSE = "./warehouse"
"""The warehouse folder, relative to the working directory, when nothing names one."""


def warehouse_path(option: str | None) -> Path:
    """Return the warehouse folder, absolute: ``option``, $CATALOG_WAREHOUSE or ./warehouse."""
    return Path(option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE).resolve()


def table_folder(warehouse: Path, table_id: int) -> Path:
    """Return the folder of table ``table_id``'s files."""
    return warehouse / f"table_{table_id}"


METADATA_FOLDER = "metadata"
"""The warehouse's folder of the tables' Iceberg metadata files, beside the table folders."""


def metadata_folder(location: str) -> str:
    """Return the folder of the Iceberg metadata files of the table at ``location``.

    That is ``<warehouse>/metadata/table_<id>`` for ``<warehouse>/table_<id>`` (a path or a
    URI alike): beside the table's folder, not in it, so a table no engine has written to has
    an empty location (Trino refuses to create a table on a location that holds files).
    """
    head, _, name = location.rstrip("/").rpartition("/")
    return f"{head}/{METADATA_FOLDER}/{name}"


def table_location(warehouse: str, table_id: int) -> str:
    """Return the location a new table records: its folder in the cluster's warehouse."""
    return str(table_folder(Path(warehouse), table_id))


def data_folder(table: TableDescriptor, warehouse: str | None) -> Path:
    """Return the folder of ``table``'s data.

    That is its recorded location, or, for a table created without one, its folder in
    ``warehouse`` (``warehouse_path``).
    """
    if table.location is not None:
        return Path(table.location)
    return table_folder(warehouse_path(warehouse), table.id)
