"""A table's files: read, checked, written and deleted in a local folder or on S3, one seam.

Every part of the catalog that touches a table's files (the Iceberg server's manifests and
metadata files, data expiry, the Spark source's orphan removal) does it through these
functions, which take the folder as ``catalog.data.warehouse`` names it and send the call to
``catalog.data.local_files`` or ``catalog.data.s3_files``. Both treat a file a commit names
as untrusted input: regular files (objects) only, inside the folder, read within a size
limit and a deadline; both answer a ``FileStatus`` and refuse with a ``TableFileError`` in
words. The Spark source reads and writes Parquet through ``arrow_filesystem``: pyarrow's own
filesystem of the same folder.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from catalog.data import local_files, s3_files
from catalog.data.file_status import (
    FileStatus,
    ReadDeadlineError,
    StoreUnavailableError,
    TableFileError,
)
from catalog.data.warehouse import on_s3

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

    from catalog.data.s3_store import S3Endpoint, S3Keys

__all__ = [
    "FileStatus",
    "ReadDeadlineError",
    "StoreUnavailableError",
    "TableFileError",
    "arrow_filesystem",
    "entries",
    "file_status",
    "is_folder",
    "read_file",
    "remove_file",
    "remove_folder",
    "write_file",
]


def _of(folder: str) -> ModuleType:
    return s3_files if on_s3(folder) else local_files


def file_status(folder: str, relative: str, what: str, shown: str) -> FileStatus:
    """Return the status of a regular file ``relative`` to ``folder``, reached through no link.

    Args:
        folder: the table's folder (an absolute local path, or ``s3://bucket/key``).
        relative: the file's path in it.
        what: what the file is, for messages ("data file").
        shown: how messages name it (the location the commit gave).

    Raises:
        TableFileError: it is missing, reached through a link, or not a regular file.
        StoreUnavailableError: the store could not be reached.
    """
    status: FileStatus = _of(folder).file_status(folder, relative, what, shown)
    return status


def read_file(
    folder: str, relative: str, what: str, shown: str, *, limit: int, deadline: float
) -> tuple[FileStatus, bytes]:
    """Read a regular file ``relative`` to ``folder`` whole, reached through no link.

    Args:
        folder: the folder the file must be under.
        relative: the file's path in it.
        what: what the file is, for messages ("manifest").
        shown: how messages name it.
        limit: the most bytes the file may have.
        deadline: the ``time.monotonic()`` by which the read must end.

    Raises:
        TableFileError: missing, reached through a link, not a regular file, or larger
            than ``limit``.
        ReadDeadlineError: the deadline passed while reading (``StoreUnavailableError``:
            the store could not be reached).
    """
    read: tuple[FileStatus, bytes] = _of(folder).read_file(
        folder, relative, what, shown, limit=limit, deadline=deadline
    )
    return read


def remove_file(folder: str, relative: str) -> bool:
    """Delete the name ``relative`` under ``folder``, reached through no link.

    A link there is removed itself; what it points to is left alone. A folder is not
    removed.

    Returns:
        True when it was deleted, False when it was not there.

    Raises:
        TableFileError: the way to it passes a link.
        OSError: it could not be deleted (a folder is not).
    """
    return bool(_of(folder).remove_file(folder, relative))


def entries(folder: str, relative: str = "") -> list[tuple[str, FileStatus]]:
    """Return the names in the folder ``relative`` to ``folder`` ("" for itself), each's status.

    A link in it is listed as ``other`` (its own status). A missing folder has no names.

    Raises:
        TableFileError: the way to it passes a link or a non-folder.
    """
    found: list[tuple[str, FileStatus]] = _of(folder).entries(folder, relative)
    return found


def write_file(folder: str, relative: str, data: bytes, *, overwrite: bool = True) -> bool:
    """Write ``data`` as ``relative`` under ``folder``: a reader sees all of it or none.

    Returns:
        False when the file was there and ``overwrite`` is off (nothing is written).
    """
    return bool(_of(folder).write_file(folder, relative, data, overwrite=overwrite))


def is_folder(folder: str) -> bool:
    """Return whether this node reaches ``folder`` (an S3 folder is reached from every node)."""
    return bool(_of(folder).is_folder(folder))


def remove_folder(folder: str) -> bool:
    """Delete ``folder`` and everything in it; False when it was missing.

    Raises:
        TableFileError: a local folder reached through a link (it stays).
        OSError: something in it could not be deleted.
    """
    return bool(_of(folder).remove_folder(folder))


def arrow_filesystem(
    folder: str, keys: S3Keys | None = None, endpoint: S3Endpoint | None = None
) -> tuple[FileSystem, str]:
    """Return pyarrow's filesystem of ``folder`` and the folder's path in it.

    Args:
        folder: a local path or ``s3://bucket/key``.
        keys: the keys to open an S3 folder with (None: the process's own).
        endpoint: the S3 store (None: the one the environment names).
    """
    from pyarrow import fs

    if on_s3(folder):
        from catalog.data.s3_store import filesystem

        return filesystem(keys, endpoint), s3_files.key_of(folder)
    return fs.LocalFileSystem(), folder
