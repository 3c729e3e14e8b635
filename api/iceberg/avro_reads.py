"""Reading a writer's manifest lists and manifests as untrusted input, within fixed limits.

A commit names the Avro files the server reads; whoever wrote them chose their size, their
compression and how many entries they claim. Each file is read through
``catalog.data.table_files`` (a regular file in the table's folder, reached through no link,
at most ``MAX_MANIFEST_LIST_BYTES`` or ``MAX_MANIFEST_BYTES``), then decoded by PyIceberg's
pure-Python Avro decoder (which fails cleanly on a corrupt file; its compiled one does not
check bounds) block by block: each block is decompressed only up to what is left of the
file's ``MAX_DECOMPRESSED_BYTES`` (a deflate bomb stops there), its entry count is charged
to the file's ``MAX_ENTRIES_PER_MANIFEST`` and the request's ``MAX_ENTRIES_PER_COMMIT``, and
the request's deadline (``READ_DEADLINE_S``) is checked between blocks and every few
thousand entries. A manifest whose list claims more entries than are left is refused before
it is opened.
"""

from __future__ import annotations

import bz2
import io
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import pyiceberg.avro.file
import zstandard
from pyiceberg import manifest as iceberg
from pyiceberg.avro.codecs import AVRO_CODEC_KEY, KNOWN_CODECS
from pyiceberg.avro.decoder import BinaryDecoder, StreamingBinaryDecoder
from pyiceberg.avro.file import SYNC_SIZE, AvroFile, Block
from pyiceberg.avro.reader import Reader
from pyiceberg.avro.resolver import resolve_reader
from pyiceberg.io import InputFile, InputStream
from pyiceberg.manifest import ManifestEntry, ManifestFile
from pyiceberg.schema import Schema

from catalog.data.table_files import ReadDeadlineError, TableFileError, read_file

MAX_MANIFEST_LIST_BYTES = 16 << 20
"""The largest manifest list read (16 MiB: about 60,000 manifests)."""
MAX_MANIFEST_BYTES = 64 << 20
"""The largest manifest read (64 MiB: eight times Iceberg's 8 MB target manifest size)."""
MAX_DECOMPRESSED_BYTES = 256 << 20
"""The most bytes one manifest or manifest list decompresses to."""
MAX_ENTRIES_PER_MANIFEST = 200_000
"""The most entries one manifest (or manifest list) holds: an 8 MB manifest holds ~60,000."""
MAX_ENTRIES_PER_COMMIT = 500_000
"""The most manifest entries the server reads for one commit (Python decodes ~15,000 a second)."""
READ_DEADLINE_S = 45.0
"""How long the file reads of one commit may take in all."""
_CHECK_EVERY = 4096
"""How many entries are decoded between two looks at the deadline."""


def _checked_decoder(b: bytes) -> BinaryDecoder:
    return StreamingBinaryDecoder(b)


# PyIceberg's Avro files pick their decoder through this module-level name.
pyiceberg.avro.file.new_decoder = _checked_decoder  # type: ignore[attr-defined]


class LimitError(TableFileError):
    """A file beyond one of the reading limits."""


@dataclass
class ReadBudget:
    """What one request's reads may still take: entries, and time until its deadline.

    Attributes:
        folder: the table's folder (every file read is under it).
        deadline: the ``time.monotonic()`` by which the reads must end.
        entries_left: how many more manifest entries may be read.
    """

    folder: str
    deadline: float = field(default_factory=lambda: time.monotonic() + READ_DEADLINE_S)
    entries_left: int = MAX_ENTRIES_PER_COMMIT

    def check_time(self, what: str) -> None:
        """Raise ReadDeadlineError when the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise ReadDeadlineError(
                f"reading the commit's manifests took longer than {READ_DEADLINE_S:g} s (at {what})"
            )

    def check_claim(self, count: int, what: str) -> None:
        """Refuse ``count`` more entries of ``what`` when fewer are left."""
        if count > self.entries_left:
            raise LimitError(
                f"{what}: the commit names more than {MAX_ENTRIES_PER_COMMIT} manifest "
                "entries, more than this catalog reads for one commit"
            )

    def take(self, count: int, what: str) -> None:
        """Charge ``count`` entries of ``what``; refuse when more than are left."""
        self.check_claim(count, what)
        self.entries_left -= count


def _inflate(codec: str, data: bytes, room: int, what: str) -> bytes:
    """Decompress one block of ``codec`` to at most ``room`` bytes, or refuse."""
    if codec == "null":
        out = data
    elif codec == "deflate":
        out = zlib.decompressobj(-15).decompress(data, room + 1)
    elif codec == "bzip2":
        out = bz2.BZ2Decompressor().decompress(data, max_length=room + 1)
    elif codec == "zstandard":
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
        chunks, size = [], 0
        while size <= room and (chunk := reader.read(min(1 << 20, room + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        out = b"".join(chunks)
    else:
        raise LimitError(f"{what} is compressed with {codec}, which this catalog does not read")
    if len(out) > room:
        raise LimitError(
            f"{what} decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes, more than this "
            "catalog reads of one file"
        )
    return out


_READERS_KEPT = 256
"""How many Avro schemas' readers are kept built: a writer writes every manifest of a spec
with one schema, so parsing and resolving it again (most of a small manifest's read) is saved."""
_readers: OrderedDict[tuple[str, str], tuple[Schema, Schema, Reader]] = OrderedDict()
_readers_lock = threading.Lock()


class _BoundedAvroFile(AvroFile[Any]):
    """PyIceberg's Avro file reader, with each block charged to the file's and request's limits."""

    def __init__(self, input_file: _BoundedInput, **options: Any) -> None:
        super().__init__(input_file, **options)
        self.budget = input_file.budget
        self.what = f"{input_file.what} {input_file.location}"
        self.what_kind = input_file.what
        self.room = MAX_DECOMPRESSED_BYTES
        self.entries_left = MAX_ENTRIES_PER_MANIFEST
        self.decoded = 0

    def __enter__(self) -> _BoundedAvroFile:
        """Read the header; the reader of a schema met before is the one built then."""
        with self.input_file.open() as f:
            self.decoder = _checked_decoder(f.read())
        self.header = self._read_header()
        key = (str(self.header.meta.get("avro.schema")), self.what_kind)
        with _readers_lock:
            built = _readers.get(key)
            if built is not None:
                _readers.move_to_end(key)
        if built is None:
            schema = self.header.get_schema()
            read_schema = self.read_schema or schema
            reader = resolve_reader(schema, read_schema, self.read_types, self.read_enums)
            built = (schema, read_schema, reader)
            with _readers_lock:
                _readers[key] = built
                if len(_readers) > _READERS_KEPT:
                    _readers.popitem(last=False)
        self.schema, self.read_schema, self.reader = built
        return self

    def _read_block(self) -> int:
        if self.block:
            sync_marker = self.decoder.read(SYNC_SIZE)
            if sync_marker != self.header.sync:
                raise ValueError("the file's sync marker does not match its header")
        records = self.decoder.read_int()
        if records < 0:
            raise ValueError("a block of a negative number of entries")
        if records > self.entries_left:
            raise LimitError(
                f"{self.what} holds more than {MAX_ENTRIES_PER_MANIFEST} entries, more than "
                "this catalog reads of one file"
            )
        self.entries_left -= records
        self.budget.take(records, self.what)
        self.budget.check_time(self.what)
        data = self.decoder.read_bytes()
        codec = str(self.header.meta.get(AVRO_CODEC_KEY, "deflate"))
        if codec not in KNOWN_CODECS:
            raise ValueError(f"unknown codec {codec}")
        data = _inflate(codec, data, self.room, self.what)
        self.room -= len(data)
        self.block = Block(
            reader=self.reader, block_records=records, block_decoder=_checked_decoder(data)
        )
        return records

    def __next__(self) -> Any:
        self.decoded += 1
        if self.decoded % _CHECK_EVERY == 0:
            self.budget.check_time(self.what)
        return super().__next__()


class _BoundedInput(InputFile):
    """A manifest list or manifest of the table's folder, read whole within its size limit."""

    def __init__(self, budget: ReadBudget, relative: str, location: str, what: str) -> None:
        super().__init__(location)
        self.budget, self.relative, self.what = budget, relative, what
        self.limit = MAX_MANIFEST_LIST_BYTES if what == "manifest list" else MAX_MANIFEST_BYTES
        self.status, self.data = read_file(
            budget.folder, relative, what, location, limit=self.limit, deadline=budget.deadline
        )

    def __len__(self) -> int:
        return len(self.data)

    def exists(self) -> bool:
        """Return True: the file was read."""
        return True

    def open(self, seekable: bool = True) -> InputStream:
        """Return the bytes read."""
        return io.BytesIO(self.data)


def open_manifest_list(budget: ReadBudget, relative: str, location: str) -> _BoundedInput:
    """Read a manifest list's bytes (a regular file in the table's folder, within its limit)."""
    return _BoundedInput(budget, relative, location, "manifest list")


def manifests_of(read: _BoundedInput) -> tuple[ManifestFile, ...]:
    """Decode the manifests a manifest list (``open_manifest_list``) names."""
    with _BoundedAvroFile(
        read,
        read_schema=iceberg.MANIFEST_LIST_FILE_SCHEMAS[iceberg.DEFAULT_READ_VERSION],
        read_types={-1: ManifestFile, 508: iceberg.PartitionFieldSummary},
        read_enums={517: iceberg.ManifestContent},
    ) as reader:
        return tuple(reader)


def claimed_entries(manifest: ManifestFile) -> int:
    """Return how many entries a manifest's list says it holds (0 where it does not say)."""
    counts = (manifest.added_files_count, manifest.existing_files_count)
    return sum(c or 0 for c in (*counts, manifest.deleted_files_count))


def manifest_entries(
    budget: ReadBudget, relative: str, manifest: ManifestFile
) -> list[ManifestEntry]:
    """Return a manifest's live entries (not deleted), each with what it inherits from its list.

    Raises:
        TableFileError: the file cannot be used (``read_file``), or is beyond a limit.
        ReadDeadlineError: the request's deadline passed.
    """
    what = f"manifest {manifest.manifest_path}"
    claimed = claimed_entries(manifest)
    if claimed > MAX_ENTRIES_PER_MANIFEST:
        raise LimitError(
            f"{what} holds {claimed} entries, more than the {MAX_ENTRIES_PER_MANIFEST} this "
            "catalog reads of one manifest"
        )
    budget.check_claim(claimed, what)
    read = _BoundedInput(budget, relative, manifest.manifest_path, "manifest")
    with _BoundedAvroFile(
        read,
        read_schema=iceberg.MANIFEST_ENTRY_SCHEMAS[iceberg.DEFAULT_READ_VERSION],
        read_types={-1: ManifestEntry, 2: iceberg.DataFile},
        read_enums={
            0: iceberg.ManifestEntryStatus,
            101: iceberg.FileFormat,
            134: iceberg.DataFileContent,
        },
    ) as reader:
        return [
            iceberg._inherit_from_manifest(entry, manifest)
            for entry in reader
            if entry.status != iceberg.ManifestEntryStatus.DELETED
        ]
