"""A backup file: a self-describing, checked copy of a catalog and its data commits.

::

    CATALOG BACKUP + newline                   magic
    record*                              each: 4-byte big-endian length, msgpack [tag, ...]
      ["header", {...}]                  first: ``BackupHeader``
      ["snapshot", S, bytes]             the catalog at the backup's earliest version S, if any
      ["update", N, bytes]               each retained update after it, in order
      ["data", table, seq, bytes]        each data commit up to the backup's moment
      ["end", records, sha256]           last: how many records came before, and the SHA-256
                                         of every byte before this record

The values are the stored bodies (the catalog's wire format, a data commit's msgpack), so a
restore writes back exactly what the source held. A file that is cut short, changed by a
single byte, of another format, or holding records out of order is refused as a whole
(``BackupFileError``), before anything is written.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgpack
import pydantic

from catalog.errors import ErrorCode, ValidationError
from catalog.model import Model

MAGIC = b"CATALOG BACKUP\n"
FORMAT = 1
"""The backup format this code writes and reads."""
_LENGTH = 4
_MAX_RECORD = 1 << 31


class BackupFileError(ValidationError):
    """The file is not a whole, unaltered backup of a format this catalog reads."""

    default_code = ErrorCode.BACKUP_INVALID


class BackupHeader(Model):
    """What a backup holds and where it came from."""

    format: int
    cluster_id: str | None
    """The source cluster's id (None: a store from before cluster ids)."""
    prefix: str
    """The source catalog's key prefix."""
    version: int
    """The catalog version the backup is of."""
    earliest: int
    """The first version it holds (its snapshot's, or 1)."""
    activation_ts: int
    """When ``version`` became active (hybrid timestamp)."""
    at_ts: int
    """The moment its data commits are as of: every one up to it, none after."""
    digest: str
    """The SHA-256 of the catalog at ``version`` (``Catalog.digest``)."""
    delay_ms: int
    max_clock_skew_ms: int
    settings_format: int
    warehouse: str | None
    log_format: int
    """The stored envelope format of the source's values."""
    catalog_format: int
    """The catalog wire format of the code that wrote it."""
    made_ms: int
    """When it was written (wall-clock milliseconds)."""


@dataclass
class Backup:
    """A backup read whole: its header, catalog entries and data commits."""

    header: BackupHeader
    snapshot: tuple[int, bytes] | None = None
    updates: list[tuple[int, bytes]] = field(default_factory=list)
    data: list[tuple[int, int, bytes]] = field(default_factory=list)


class BackupWriter:
    """Writes a backup file under a temporary name, renamed into place when it is finished."""

    def __init__(self, path: Path, header: BackupHeader) -> None:
        self.path = path
        self._partial = path.with_name(f"{path.name}.partial")
        self._out: IO[bytes] = self._partial.open("wb")
        self._hash = hashlib.sha256()
        self._records = 0
        self._write(MAGIC)
        self._record(["header", header.model_dump(mode="json")])

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._hash.update(data)

    def _record(self, value: list[Any]) -> None:
        body = msgpack.packb(value, use_bin_type=True)
        self._write(len(body).to_bytes(_LENGTH, "big") + body)
        self._records += 1

    def snapshot(self, version: int, body: bytes) -> None:
        """Add the snapshot at ``version`` (its bytes written as they are, not copied)."""
        packer = msgpack.Packer(use_bin_type=True)
        head = packer.pack_array_header(3) + packer.pack("snapshot") + packer.pack(version)
        head += _bin_header(len(body))
        self._write((len(head) + len(body)).to_bytes(_LENGTH, "big") + head)
        self._write(body)
        self._records += 1

    def update(self, version: int, body: bytes) -> None:
        """Add update ``version``."""
        self._record(["update", version, body])

    def data(self, table_id: int, seq: int, body: bytes) -> None:
        """Add data commit ``seq`` of table ``table_id``."""
        self._record(["data", table_id, seq, body])

    def finish(self) -> int:
        """Write the end record, flush to disk and put the file in place; return its size."""
        end = msgpack.packb(["end", self._records, self._hash.hexdigest()], use_bin_type=True)
        self._out.write(len(end).to_bytes(_LENGTH, "big") + end)
        self._out.flush()
        os.fsync(self._out.fileno())
        size = self._out.tell()
        self._out.close()
        os.replace(self._partial, self.path)
        return size

    def abandon(self) -> None:
        """Close and remove the unfinished file."""
        self._out.close()
        self._partial.unlink(missing_ok=True)


def _bin_header(length: int) -> bytes:
    """Return msgpack's header of a byte string of ``length`` bytes (bin 8, 16 or 32)."""
    if length < 1 << 8:
        return b"\xc4" + length.to_bytes(1, "big")
    if length < 1 << 16:
        return b"\xc5" + length.to_bytes(2, "big")
    return b"\xc6" + length.to_bytes(4, "big")


def read_backup(path: Path) -> Backup:
    """Read and check a whole backup file.

    Raises:
        BackupFileError: not a backup, another format, cut short, altered or out of order.
        OSError: the file cannot be read.
    """
    with path.open("rb") as source:
        return _read(source, str(path))


def _read(source: IO[bytes], name: str) -> Backup:
    digest = hashlib.sha256()
    magic = source.read(len(MAGIC))
    if magic != MAGIC:
        raise BackupFileError(f"{name} is not a catalog backup (it does not start as one)")
    digest.update(magic)
    records = _records(source, name, digest)
    header = _header(next(records, None), name)
    backup = Backup(header)
    count = 1
    for tag, fields in records:
        if tag == "end":
            _check_end(fields, count, digest, name)
            if source.read(1):
                raise BackupFileError(f"{name} has bytes after its end record")
            _check_order(backup, name)
            return backup
        _add(backup, tag, fields, name)
        count += 1
    raise BackupFileError(f"{name} is cut short: it has no end record")


def _records(source: IO[bytes], name: str, digest: Any) -> Iterator[tuple[str, list[Any]]]:
    """Yield each record's tag and fields; the digest covers every record but the end one."""
    while True:
        prefix = source.read(_LENGTH)
        if not prefix:
            return
        length = int.from_bytes(prefix, "big") if len(prefix) == _LENGTH else -1
        body = source.read(length) if 0 < length < _MAX_RECORD else b""
        if len(body) != length:
            raise BackupFileError(f"{name} is cut short in the middle of a record")
        try:
            value = msgpack.unpackb(body, raw=False, strict_map_key=True)
        except (ValueError, msgpack.UnpackException) as e:
            raise BackupFileError(f"{name} holds a damaged record ({e})") from None
        if not isinstance(value, list) or not value or not isinstance(value[0], str):
            raise BackupFileError(f"{name} holds a record of an unknown shape")
        if value[0] != "end":
            digest.update(prefix + body)
        yield value[0], value[1:]


def _header(record: tuple[str, list[Any]] | None, name: str) -> BackupHeader:
    if record is None or record[0] != "header" or len(record[1]) != 1:
        raise BackupFileError(f"{name} does not begin with a backup header")
    fields = record[1][0]
    found = fields.get("format") if isinstance(fields, dict) else None
    if found != FORMAT:
        raise BackupFileError(
            f"{name} is a backup of format {found}; this catalog reads format {FORMAT}"
        )
    try:
        return BackupHeader.model_validate(fields)
    except pydantic.ValidationError as e:
        raise BackupFileError(f"{name} has a damaged header ({e.error_count()} problems)") from None


def _check_end(fields: list[Any], count: int, digest: Any, name: str) -> None:
    if len(fields) != 2 or fields[0] != count or fields[1] != digest.hexdigest():
        raise BackupFileError(
            f"{name} was altered or damaged: its records do not match the digest it ends with"
        )


def _add(backup: Backup, tag: str, fields: list[Any], name: str) -> None:
    shapes = {"snapshot": (int, bytes), "update": (int, bytes), "data": (int, int, bytes)}
    shape = shapes.get(tag)
    if shape is None or len(fields) != len(shape):
        raise BackupFileError(f"{name} holds an unknown record {tag!r}")
    if not all(type(v) is t for v, t in zip(fields, shape, strict=True)):
        raise BackupFileError(f"{name} holds a damaged {tag} record")
    if tag == "snapshot":
        if backup.snapshot is not None or backup.updates:
            raise BackupFileError(f"{name} holds a snapshot out of place")
        backup.snapshot = (fields[0], fields[1])
    elif tag == "update":
        backup.updates.append((fields[0], fields[1]))
    else:
        backup.data.append((fields[0], fields[1], fields[2]))


def _check_order(backup: Backup, name: str) -> None:
    header = backup.header
    first = header.earliest
    if backup.snapshot is not None and backup.snapshot[0] != first:
        raise BackupFileError(f"{name}: its snapshot is not of its earliest version {first}")
    expected = first + 1 if backup.snapshot is not None else first
    numbers = [v for v, _ in backup.updates]
    if numbers != list(range(expected, header.version + 1)):
        raise BackupFileError(
            f"{name} does not hold every version from {first} to {header.version}"
        )
