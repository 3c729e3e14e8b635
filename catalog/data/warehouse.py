"""Where a table's data lives: the warehouse, and each table's folder in it.

The warehouse is a local folder or an S3 prefix (``s3://bucket/prefix``); which one is a
cluster setting, fixed when the cluster is created. Layout: ``<warehouse>/table_<id>/...``,
and ``<warehouse>/metadata/table_<id>/`` for each table's Iceberg metadata files. Each table
records its folder (``TableDescriptor.location``) when it is created: its ``table_<id>``, or
the folder of the warehouse an engine asked for (``catalog.data.locations`` has the rules),
which ``set-location`` may move. A table re-created under the same name has a new id, hence a
new folder: it never sees the old files. The Spark source reads and writes there
(``data_folder``), and the Iceberg REST catalog gives it as each table's location.

A folder is named by a string: an absolute local path (``/data/warehouse/table_3``) or an S3
URI (``s3://bucket/prefix/table_3``), never with a trailing slash. ``catalog.data.table_files``
reads and writes the files in either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from catalog.descriptors import TableDescriptor
from catalog.errors import ValidationError

WAREHOUSE_ENV = "CATALOG_WAREHOUSE"
"""The environment variable naming the warehouse (a folder, or ``s3://bucket/prefix``)."""
DEFAULT_WAREHOUSE = "./warehouse"
"""The warehouse folder, relative to the working directory, when nothing names one."""
S3 = "s3://"
"""How the folders of an S3 warehouse start (``s3a://`` and ``s3n://`` name the same)."""
_S3_SYNONYMS = ("s3a", "s3n")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def warehouse_root(option: str | None) -> str:
    """Return the warehouse: ``option``, $CATALOG_WAREHOUSE or ./warehouse, as a folder name.

    A local folder is made absolute; an S3 warehouse is checked and kept as ``s3://...``.

    Raises:
        ValidationError: a location no folder can be made of (``folder_of``).
    """
    named = option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE
    if _SCHEME.match(named) is None:
        return str(Path(named).resolve())
    return folder_of(named)


def on_s3(folder: str) -> bool:
    """Return whether a folder (as ``folder_of`` gives it) is on S3."""
    return folder.startswith(S3)


def table_folder(warehouse: str, table_id: int) -> str:
    """Return the folder of table ``table_id``'s files."""
    return f"{warehouse}/table_{table_id}"


METADATA_FOLDER = "metadata"
"""The warehouse's folder of the tables' Iceberg metadata files, beside the table folders."""


def metadata_folder(warehouse: str, table_id: int) -> str:
    """Return the folder of the Iceberg metadata files of table ``table_id``.

    That is ``<warehouse>/metadata/table_<id>``, wherever the table's location is: not in the
    table's folder, so a table no engine has written to has an empty location (Trino refuses
    to create a table on a location that holds files).
    """
    return f"{warehouse}/{METADATA_FOLDER}/table_{table_id}"


def table_location(warehouse: str, table_id: int) -> str:
    """Return the location a new table records: its folder in the cluster's warehouse."""
    return table_folder(warehouse, table_id)


def _checked_path(location: str, path: str) -> str:
    trimmed = path.rstrip("/") or "/"
    if not trimmed.startswith("/") or any(p in (".", "..") for p in trimmed.split("/")):
        raise ValidationError(
            f"location {location}: an absolute path without . or .. parts is needed"
        )
    return os.path.normpath(trimmed)


def folder_of(location: str) -> str:
    """Return the folder a location names: a local path, or ``s3://bucket/key`` on S3.

    A local location is a path or a ``file:`` URI; an S3 one is ``s3://`` (or ``s3a://``,
    ``s3n://``) with a bucket. Either is normalized: no trailing slash, no doubled one.

    Raises:
        ValidationError: another scheme, a relative path, a path naming ``.`` or ``..``, or
            an S3 URI without a valid bucket.
    """
    scheme = _SCHEME.match(location)
    if scheme is None:
        return _checked_path(location, location)
    kind = scheme.group(1).lower()
    rest = location[len(scheme.group(0)) :]
    if kind == "file":
        path = rest
        if path.startswith("//"):
            host, _, after = path[2:].partition("/")
            if host:
                raise ValidationError(
                    f"location {location}: a file: URI names no host (file:///path)"
                )
            path = "/" + after
        return _checked_path(location, path)
    if kind == "s3" or kind in _S3_SYNONYMS:
        if not rest.startswith("//"):
            raise ValidationError(f"location {location}: an S3 location is s3://bucket/path")
        bucket, _, key = rest[2:].partition("/")
        if _BUCKET.fullmatch(bucket) is None:
            raise ValidationError(
                f"location {location}: {bucket!r} is not an S3 bucket name (3 to 63 lowercase "
                "letters, digits, dots and hyphens)"
            )
        path = _checked_path(location, "/" + key)
        return f"{S3}{bucket}{'' if path == '/' else path}"
    raise ValidationError(
        f"location {location}: this catalog keeps tables in a local folder or on S3; give a "
        "path, a file: URI or an s3:// URI"
    )


def local_folder(location: str) -> str:
    """Return the local path a location names (``folder_of``, refusing an S3 location).

    Raises:
        ValidationError: an S3 location, or a location ``folder_of`` refuses.
    """
    folder = folder_of(location)
    if on_s3(folder):
        raise ValidationError(f"location {location}: a local folder is needed here, not S3")
    return folder


def inside(path: str, folder: str) -> bool:
    """Return whether ``path`` is below ``folder`` (both as ``folder_of`` gives them)."""
    return path.startswith(folder.rstrip("/") + "/")


def overlaps(a: str, b: str) -> bool:
    """Return whether two folders are one, or one holds the other."""
    return a == b or inside(a, b) or inside(b, a)


def data_folder(table: TableDescriptor, warehouse: str | None) -> str:
    """Return the folder of ``table``'s data.

    That is its recorded location (a path, a ``file:`` URI or an S3 URI, as an engine asked
    for it), or, for a table created without one, its folder in ``warehouse``
    (``warehouse_root``).
    """
    if table.location is not None:
        return folder_of(table.location)
    return table_folder(warehouse_root(warehouse), table.id)


def table_folders(table: TableDescriptor, warehouse: str | None) -> tuple[str, str]:
    """Return a table's folders: its location, and its folder of metadata files."""
    return data_folder(table, warehouse), metadata_folder(warehouse_root(warehouse), table.id)
