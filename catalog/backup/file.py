"""A backup file: a self-describing, checked copy of a catalog and its data commits.

::

    CATALOG BACKUP + newline                   magic
    record*                              each: 4-byte big-endian length, msgpack [tag, ...]
      ["header", {...}]                  first: ``BackupHeader``
      ["snapshot", S, bytes]             the stored snapshot at the earliest version S, if any
      ["update", N, bytes]               each retained update after it, in order
      ["data", table, seq, bytes]        each data commit up to the backup's moment
      ["end", records, sha256]           last: how many records came before, and the SHA-256
                                         of every byte before this record

The values are the stored bodies (the catalog's wire format, a data commit's msgpack), so a
restore writes back exactly what the source held. A file that is cut short, changed by a
single byte, of another format, or holding records out of order is refused as a whole
(``BackupFileError``), before anything is written.

Format 2 adds the SHA-256 of the snapshot's bytes to the header (``snapshot_sha256``); format 1
(read still) lacks it. A snapshot's bytes are read straight into their own buffer, and hashed
for that check in a second thread while the file's own digest is computed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgpack
import pydantic

from catalog.errors import ErrorCode, ValidationError
from catalog.model import Model
from catalog.snapshot_format import StoredSnapshot, stored_snapshot

MAGIC = b"CATALOG BACKUP\n"
FORMAT = 2
"""The backup format this code writes."""
READ_FORMATS = (1, 2)
"""The backup formats this code reads."""
_LENGTH = 4
_MAX_RECORD = 1 << 31
_HEAD = 64
"""How much of a large record is read first: a snapshot record's fields before its bytes."""


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
    snapshot_sha256: str | None = None
    """The SHA-256 of the snapshot's bytes (for a snapshot of the current stored format, the
    digest of the catalog at ``earliest``); None without a snapshot, and in format 1."""
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
    """A backup read whole: its header, catalog entries and data commits.

    Attributes:
        snapshot_sha256: the SHA-256 of the snapshot's bytes as read (None without one).
        snapshot_stored: what the snapshot says of itself when it is of the current stored
            format (``stored_snapshot``), else None.
    """

    header: BackupHeader
    snapshot: tuple[int, bytes] | None = None
    updates: list[tuple[int, bytes]] = field(default_factory=list)
    data: list[tuple[int, int, bytes]] = field(default_factory=list)
    snapshot_sha256: str | None = None
    snapshot_stored: StoredSnapshot | None = None


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
    # The snapshot's own hash runs beside the file's (hashlib lets go of the interpreter lock).
    with ThreadPoolExecutor(1, thread_name_prefix="backup-snapshot-hash") as pool:
        hashed: Future[tuple[str, StoredSnapshot | None]] | None = None
        for tag, fields in records:
            if tag == "end":
                _check_end(fields, count, digest, name)
                if source.read(1):
                    raise BackupFileError(f"{name} has bytes after its end record")
                _check_order(backup, name)
                if hashed is not None:
                    backup.snapshot_sha256, backup.snapshot_stored = hashed.result()
                _check_snapshot(backup, name)
                return backup
            _add(backup, tag, fields, name)
            if tag == "snapshot":
                hashed = pool.submit(_snapshot_described, fields[1])
            count += 1
    raise BackupFileError(f"{name} is cut short: it has no end record")


def _snapshot_described(body: bytes) -> tuple[str, StoredSnapshot | None]:
    """Return the SHA-256 of a snapshot's bytes and, if of the current format, its facts."""
    stored = stored_snapshot(body)
    return (stored.digest if stored is not None else hashlib.sha256(body).hexdigest()), stored


def _records(source: IO[bytes], name: str, digest: Any) -> Iterator[tuple[str, list[Any]]]:
    """Yield each record's tag and fields; the digest covers every record but the end one."""
    while True:
        prefix = source.read(_LENGTH)
        if not prefix:
            return
        length = int.from_bytes(prefix, "big") if len(prefix) == _LENGTH else -1
        if not 0 < length < _MAX_RECORD:
            raise BackupFileError(f"{name} is cut short in the middle of a record")
        head = source.read(min(length, _HEAD))
        found = _snapshot_head(head, length) if length > _HEAD else None
        if found is not None:
            # A snapshot's bytes go straight into their own buffer, never copied again.
            version, start = found
            source.seek(start - len(head), os.SEEK_CUR)
            body = source.read(length - start)
            if len(body) != length - start:
                raise BackupFileError(f"{name} is cut short in the middle of a record")
            digest.update(prefix + head[:start])
            digest.update(body)
            yield "snapshot", [version, body]
            continue
        body = head + source.read(length - len(head)) if length > len(head) else head
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


def _snapshot_head(head: bytes, length: int) -> tuple[int, int] | None:
    """Return the version and the offset of the bytes of a snapshot record of ``length`` bytes.

    ``head`` is the record's start. None when it is not a well-formed snapshot record (any
    other record, or a damaged one, which the general path then reads and refuses).
    """
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(head)
    try:
        if unpacker.read_array_header() != 3 or unpacker.unpack() != "snapshot":
            return None
        version = unpacker.unpack()
    except (ValueError, msgpack.UnpackException):
        return None
    at = unpacker.tell()
    size = {0xC4: 1, 0xC5: 2, 0xC6: 4}.get(head[at]) if at < len(head) else None
    if type(version) is not int or size is None or at + 1 + size > len(head):
        return None
    start = at + 1 + size
    if start + int.from_bytes(head[at + 1 : start], "big") != length:
        return None
    return version, start


def _header(record: tuple[str, list[Any]] | None, name: str) -> BackupHeader:
    if record is None or record[0] != "header" or len(record[1]) != 1:
        raise BackupFileError(f"{name} does not begin with a backup header")
    fields = record[1][0]
    found = fields.get("format") if isinstance(fields, dict) else None
    if type(found) is not int or found not in READ_FORMATS:
        raise BackupFileError(
            f"{name} is a backup of format {found}; this catalog reads formats "
            f"{', '.join(map(str, READ_FORMATS))}"
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


def _check_snapshot(backup: Backup, name: str) -> None:
    """Check the snapshot's bytes are those the header recorded (format 2 on)."""
    header = backup.header
    if header.format < 2:
        return
    if header.snapshot_sha256 != backup.snapshot_sha256:
        raise BackupFileError(
            f"{name} was altered or damaged: its snapshot does not match the digest its "
            "header recorded"
        )


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
