"""A table's files in a local folder, as untrusted input: reached through no link, bounded reads.

The local half of ``catalog.data.table_files``. A writer puts files in its table's folder
and names them in a commit; anyone who can write there can also put a symbolic link, a FIFO
or a device node there. So every file the catalog opens, checks or deletes because a commit
named it is reached from the table's folder one name at a time (``openat`` with
``O_NOFOLLOW``): a link anywhere at or below the folder (the folder itself, a folder on the
way, the file) is refused, never followed, so the file is inside the folder on its resolved
path, checked at the moment it is used. A file is opened without blocking (a FIFO with no
writer does not hold the thread), then refused unless it is a regular file; a read is capped
in bytes and cut by a deadline between chunks. Deleting removes the name inside the folder
(a link itself, never what it points to).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager

from catalog.data.file_status import FileStatus, TableFileError, read_within

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _status(found: os.stat_result) -> FileStatus:
    return FileStatus(
        size=found.st_size,
        mtime_ns=found.st_mtime_ns,
        kind="file"
        if stat.S_ISREG(found.st_mode)
        else "folder"
        if stat.S_ISDIR(found.st_mode)
        else "other",
        tag=f"{found.st_dev}:{found.st_ino}",
    )


def _refusal(error: OSError, what: str, shown: str, folder: str) -> TableFileError:
    if error.errno == errno.ENOENT:
        return TableFileError(f"{what} {shown} does not exist", missing=True)
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return TableFileError(
            f"{what} {shown} is reached through a symbolic link or a non-folder: a file "
            f"must be a regular file under the table's folder {folder}, with no link on the "
            "way"
        )
    return TableFileError(f"{what} {shown} cannot be read: {error.strerror}")


@contextmanager
def _folder(folder: str, parts: list[str], what: str, shown: str) -> Iterator[int]:
    """Open the folder ``parts`` below ``folder``, one name at a time through no link."""
    if any(p in ("", ".", "..") for p in parts):
        raise TableFileError(f"{what} {shown} is not a path inside the table's folder {folder}")
    try:
        fd = os.open(folder, _DIRECTORY)
    except OSError as e:
        raise _refusal(e, what, shown, folder) from e
    try:
        for part in parts:
            try:
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as e:
                raise _refusal(e, what, shown, folder) from e
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


@contextmanager
def _parent(folder: str, relative: str, what: str, shown: str) -> Iterator[tuple[int, str]]:
    """Open the folder that holds ``relative`` through no link; yield it and the file's name."""
    *folders, name = relative.split("/")
    if name in ("", ".", ".."):
        raise TableFileError(f"{what} {shown} is not a path inside the table's folder {folder}")
    with _folder(folder, folders, what, shown) as fd:
        yield fd, name


def file_status(folder: str, relative: str, what: str, shown: str) -> FileStatus:
    """Return the status of the regular file ``relative`` under ``folder`` (``table_files``)."""
    with _parent(folder, relative, what, shown) as (fd, name):
        try:
            found = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError as e:
            raise _refusal(e, what, shown, folder) from e
    if stat.S_ISLNK(found.st_mode):
        raise _refusal(OSError(errno.ELOOP, "a link"), what, shown, folder)
    if not stat.S_ISREG(found.st_mode):
        raise TableFileError(f"{what} {shown} is not a regular file")
    return _status(found)


def read_file(
    folder: str, relative: str, what: str, shown: str, *, limit: int, deadline: float
) -> tuple[FileStatus, bytes]:
    """Read the regular file ``relative`` under ``folder``, through no link (``table_files``)."""
    with _parent(folder, relative, what, shown) as (dir_fd, name):
        try:
            fd = os.open(name, _FILE, dir_fd=dir_fd)
        except OSError as e:
            raise _refusal(e, what, shown, folder) from e
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode):
        os.close(fd)
        raise TableFileError(f"{what} {shown} is not a regular file")
    with os.fdopen(fd, "rb", buffering=0) as file:
        data = read_within(file, found.st_size, what, shown, limit=limit, deadline=deadline)
    return _status(found), data


def remove_file(folder: str, relative: str) -> bool:
    """Delete the name ``relative`` under ``folder`` through no link (``table_files``)."""
    with _parent(folder, relative, "file", relative) as (fd, name):
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            return False
    return True


def entries(folder: str, relative: str = "") -> list[tuple[str, FileStatus]]:
    """Return the names in ``relative`` under ``folder``, each's own status (``table_files``)."""
    parts = relative.split("/") if relative else []
    try:
        with _folder(folder, parts, "folder", relative or folder) as fd:
            found = []
            for name in os.listdir(fd):
                try:
                    found.append((name, _status(os.stat(name, dir_fd=fd, follow_symlinks=False))))
                except FileNotFoundError:
                    continue
            return found
    except TableFileError as e:
        if e.missing:
            return []
        raise


def write_file(folder: str, relative: str, data: bytes, *, overwrite: bool = True) -> bool:
    """Write ``data`` to ``relative`` under ``folder``, whole or not at all.

    The bytes go to a fresh name beside it, then are renamed into place, so a reader never
    sees half a file; the folders on the way are made when missing.

    Returns:
        False when the file was there and ``overwrite`` is off (nothing is written).
    """
    target = os.path.join(folder, relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not overwrite and os.path.lexists(target):
        return False
    partial = f"{target}.{os.getpid()}-{time.monotonic_ns()}.partial"
    with open(partial, "xb") as file:
        file.write(data)
    if overwrite:
        os.replace(partial, target)
        return True
    try:
        os.link(partial, target)  # fails when another writer got there first
    except FileExistsError:
        return False
    finally:
        os.unlink(partial)
    return True


def is_folder(folder: str) -> bool:
    """Return whether ``folder`` is a folder here (not through a link at its end)."""
    return os.path.isdir(folder) and not os.path.islink(folder)


def remove_folder(folder: str) -> bool:
    """Delete ``folder`` and all it holds; links inside are removed, never followed.

    Returns:
        False when it was missing.

    Raises:
        TableFileError: the folder is reached through a link (it stays).
        OSError: something in it could not be deleted.
    """
    if not os.path.isdir(folder):
        return False
    if os.path.realpath(folder) != os.path.normpath(folder):
        raise TableFileError(f"folder {folder} is reached through a link")
    shutil.rmtree(folder)  # walks by file descriptor: a link inside is removed, not followed
    return True
