"""Where a table's data lives: the warehouse folder, and each table's folder in it.

Layout: ``<warehouse>/table_<id>/...``, and ``<warehouse>/metadata/table_<id>/`` for each
table's Iceberg metadata files. The warehouse is a cluster setting, fixed when the cluster is
created; each table records its folder (``TableDescriptor.location``) when it is created: its
``table_<id>``, or the folder of the warehouse an engine asked for (``catalog.data.locations``
has the rules), which ``set-location`` may move. A table re-created under the same name has a
new id, hence a new folder: it never sees the old files. The Spark source reads and writes
there (``data_folder``), and the Iceberg REST catalog gives it as each table's location.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from catalog.descriptors import TableDescriptor
from catalog.errors import ValidationError

WAREHOUSE_ENV = "CATALOG_WAREHOUSE"
"""The environment variable naming the warehouse folder."""
DEFAULT_WAREHOUSE = "./warehouse"
"""The warehouse folder, relative to the working directory, when nothing names one."""
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def warehouse_path(option: str | None) -> Path:
    """Return the warehouse folder, absolute: ``option``, $CATALOG_WAREHOUSE or ./warehouse."""
    return Path(option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE).resolve()


def table_folder(warehouse: Path, table_id: int) -> Path:
    """Return the folder of table ``table_id``'s files."""
    return warehouse / f"table_{table_id}"


METADATA_FOLDER = "metadata"
"""The warehouse's folder of the tables' Iceberg metadata files, beside the table folders."""


def metadata_folder(warehouse: Path, table_id: int) -> Path:
    """Return the folder of the Iceberg metadata files of table ``table_id``.

    That is ``<warehouse>/metadata/table_<id>``, wherever the table's location is: not in the
    table's folder, so a table no engine has written to has an empty location (Trino refuses
    to create a table on a location that holds files).
    """
    return warehouse / METADATA_FOLDER / f"table_{table_id}"


def table_location(warehouse: str, table_id: int) -> str:
    """Return the location a new table records: its folder in the cluster's warehouse."""
    return str(table_folder(Path(warehouse), table_id))


def local_folder(location: str) -> str:
    """Return the absolute local path a location names (a path or a ``file:`` URI).

    Raises:
        ValidationError: another scheme, a relative path, or a path naming ``.`` or ``..``.
    """
    scheme = _SCHEME.match(location)
    path = location
    if scheme is not None:
        if scheme.group(1).lower() != "file":
            raise ValidationError(
                f"location {location}: this catalog keeps tables on the warehouse's local "
                "filesystem; give a path or a file: URI"
            )
        path = location[len(scheme.group(0)) :]
        if path.startswith("//"):
            host, _, rest = path[2:].partition("/")
            if host:
                raise ValidationError(
                    f"location {location}: a file: URI names no host (file:///path)"
                )
            path = "/" + rest
    trimmed = path.rstrip("/") or "/"
    if not trimmed.startswith("/") or any(p in (".", "..") for p in trimmed.split("/")):
        raise ValidationError(
            f"location {location}: an absolute path without . or .. parts is needed"
        )
    return os.path.normpath(trimmed)


def data_folder(table: TableDescriptor, warehouse: str | None) -> Path:
    """Return the folder of ``table``'s data.

    That is its recorded location (a path, or a ``file:`` URI as an engine asked for it),
    or, for a table created without one, its folder in ``warehouse`` (``warehouse_path``).
    """
    if table.location is not None:
        return Path(local_folder(table.location))
    return table_folder(warehouse_path(warehouse), table.id)
