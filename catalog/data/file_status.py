"""What the catalog learns of a file in a table's folder, and why it refuses one.

Both kinds of folder (``catalog.data.local_files``, ``catalog.data.s3_files``) answer these.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, Protocol

_CHUNK = 1 << 20
"""How much one read takes before the deadline is checked again."""


@dataclass(frozen=True, slots=True)
class FileStatus:
    """A file's size, modification time and kind, and a tag that changes when it is replaced.

    Attributes:
        size: its bytes.
        mtime_ns: when it was last written, in nanoseconds since the epoch.
        kind: ``file`` (a regular file, an S3 object), ``folder`` (an S3 prefix), or
            ``other`` (a link, a FIFO, a device).
        tag: the file's identity: its device and inode, or its S3 modification time.
    """

    size: int
    mtime_ns: int
    kind: Literal["file", "folder", "other"] = "file"
    tag: str = ""

    @property
    def mtime(self) -> float:
        """When it was last written, in seconds since the epoch."""
        return self.mtime_ns / 1e9


class TableFileError(ValueError):
    """A file a commit named that the catalog will not use: the message says which and why.

    Attributes:
        missing: the refusal is that the file (or a folder on its way) does not exist.
    """

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


class ReadDeadlineError(TableFileError):
    """Reading the files of one request took longer than its deadline."""


class StoreUnavailableError(ReadDeadlineError):
    """The store holding a table's files could not be reached, or refused the catalog's keys.

    Nothing was written because of it; the same request can be sent again once the store
    answers.
    """


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def read_within(
    file: _Readable, size: int, what: str, shown: str, *, limit: int, deadline: float
) -> bytes:
    """Read ``file`` (of ``size`` bytes when opened) whole, within ``limit`` and ``deadline``.

    Raises:
        TableFileError: it has more than ``limit`` bytes (or grew past it while read).
        ReadDeadlineError: the deadline passed while reading.
    """
    if size > limit:
        raise TableFileError(
            f"{what} {shown} has {size} bytes, more than the {limit} this catalog reads of a {what}"
        )
    chunks: list[bytes] = []
    read = 0
    while chunk := file.read(_CHUNK):
        read += len(chunk)
        if read > limit:  # it grew while read
            raise TableFileError(f"{what} {shown} has more than the {limit} bytes read")
        if time.monotonic() > deadline:
            raise ReadDeadlineError(f"reading {what} {shown} took longer than allowed")
        chunks.append(chunk)
    return b"".join(chunks)
