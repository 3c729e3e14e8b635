"""A table's files on S3, as untrusted input: objects only, bounded reads, refusals in words.

The S3 half of ``catalog.data.table_files``. S3 has no links, FIFOs nor devices: a name is
an object or a prefix. An object is written whole or not at all (a PUT), so no temporary
name is needed. A store that cannot be reached, or refuses the catalog's keys, is a
``StoreUnavailableError`` with the store's words, keys hidden (``s3_store.redacted``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from catalog.data.file_status import (
    FileStatus,
    StoreUnavailableError,
    TableFileError,
    read_within,
)
from catalog.data.s3_store import filesystem, redacted
from catalog.data.warehouse import S3


def key_of(folder: str, relative: str = "") -> str:
    """Return ``bucket/key`` of ``relative`` under the S3 folder ``folder`` (pyarrow's path)."""
    path = folder.removeprefix(S3)
    return f"{path}/{relative}" if relative else path


def _checked(folder: str, relative: str, what: str, shown: str) -> str:
    if any(p in ("", ".", "..") for p in relative.split("/")):
        raise TableFileError(f"{what} {shown} is not a path inside the table's folder {folder}")
    return key_of(folder, relative)


@contextmanager
def _store(what: str, shown: str) -> Iterator[None]:
    """Say in words why a read failed: missing, or the store out of reach (keys hidden)."""
    try:
        yield
    except FileNotFoundError as e:
        raise TableFileError(f"{what} {shown} does not exist", missing=True) from e
    except TableFileError:
        raise
    except OSError as e:
        raise StoreUnavailableError(
            f"the S3 store could not be read for {what} {shown}: {redacted(str(e))}"
        ) from e


@contextmanager
def _writing(what: str, shown: str) -> Iterator[None]:
    """Say in words why a write or delete failed (an ``OSError``, keys hidden)."""
    try:
        yield
    except OSError as e:
        raise OSError(
            f"the S3 store could not be written for {what} {shown}: {redacted(str(e))}"
        ) from e


def _status(info: object) -> FileStatus:
    from pyarrow import fs

    assert isinstance(info, fs.FileInfo)
    mtime = info.mtime_ns or 0
    if info.type == fs.FileType.File:
        return FileStatus(size=info.size or 0, mtime_ns=mtime, kind="file", tag=str(mtime))
    return FileStatus(size=0, mtime_ns=mtime, kind="folder")


def file_status(folder: str, relative: str, what: str, shown: str) -> FileStatus:
    """Return the status of the object ``relative`` under ``folder`` (``table_files``)."""
    from pyarrow import fs

    key = _checked(folder, relative, what, shown)
    with _store(what, shown):
        info = filesystem().get_file_info(key)
    if info.type == fs.FileType.NotFound:
        raise TableFileError(f"{what} {shown} does not exist", missing=True)
    if info.type != fs.FileType.File:
        raise TableFileError(f"{what} {shown} is not a file")
    return _status(info)


def read_file(
    folder: str, relative: str, what: str, shown: str, *, limit: int, deadline: float
) -> tuple[FileStatus, bytes]:
    """Read the object ``relative`` under ``folder`` whole, within ``limit`` and ``deadline``."""
    found = file_status(folder, relative, what, shown)
    with _store(what, shown), filesystem().open_input_stream(key_of(folder, relative)) as f:
        data = read_within(f, found.size, what, shown, limit=limit, deadline=deadline)
    return found, data


def remove_file(folder: str, relative: str) -> bool:
    """Delete the object ``relative`` under ``folder``; False when it was not there."""
    try:
        file_status(folder, relative, "file", relative)
    except TableFileError as e:
        if e.missing:
            return False
        raise
    with _writing("file", relative):
        filesystem().delete_file(key_of(folder, relative))
    return True


def entries(folder: str, relative: str = "") -> list[tuple[str, FileStatus]]:
    """Return the names directly under ``relative`` in ``folder``, each's status."""
    from pyarrow import fs

    if relative:
        _checked(folder, relative, "folder", relative)
    path = key_of(folder, relative)
    with _store("folder", relative or folder):
        found = filesystem().get_file_info(fs.FileSelector(path, allow_not_found=True))
    return [(info.base_name, _status(info)) for info in found]


def write_file(folder: str, relative: str, data: bytes, *, overwrite: bool = True) -> bool:
    """Write ``data`` as the object ``relative`` under ``folder`` (one PUT: whole or nothing).

    Returns:
        False when it was there and ``overwrite`` is off (nothing is written).
    """
    shown = f"{folder}/{relative}"
    key = _checked(folder, relative, "file", shown)
    if not overwrite:
        try:
            file_status(folder, relative, "file", shown)
            return False
        except TableFileError as e:
            if not e.missing:
                raise
    with _writing("file", shown), filesystem().open_output_stream(key) as out:
        out.write(data)
    return True


def is_folder(folder: str) -> bool:
    """Return True: an S3 folder is reached from every node (its objects may be none yet)."""
    return True


def remove_folder(folder: str) -> bool:
    """Delete every object under ``folder``; False when it held none."""
    if not entries(folder):
        return False
    with _writing("folder", folder):
        filesystem().delete_dir_contents(key_of(folder), missing_dir_ok=True)
    return True
