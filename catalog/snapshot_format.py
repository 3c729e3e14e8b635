"""The stored form of a snapshot (a whole catalog version as one value) and the catalog digest.

Format 2 (written now) keeps each schema's tables and indexes as columns: their keys (id,
zone or table, name, alive) and each one's marshalled descriptor (``encode_descriptor``'s
bytes, with their own format version), groups ascending by schema id, ids ascending::

    [version, activation_ts, object_id_gen, default_zone_id, schemas, zones,
     [[schema id, table ids, zone ids, names, descriptor bytes], ...],
     [[schema id, index ids, table ids, names, alive flags, descriptor bytes], ...],
     system views, views, principals, roles, grants]

(the parts after the indexes only up to the last that holds something, so a catalog without
them is stored, and digested, as it was before they existed)

so loading builds every lookup from the keys and decodes a descriptor only when it is first
read (``catalog.snapshots``). The digest is the SHA-256 of this canonical encoding (objects
ordered by id), so it is equal on every node for the same content; it hashes the stored bytes
rather than re-encoding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Set
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack

from catalog.descriptors import (
    GrantDescriptor,
    PrincipalDescriptor,
    RoleDescriptor,
    SchemaDescriptor,
    SystemViewDescriptor,
    ViewDescriptor,
    ZoneDescriptor,
)
from catalog.storage.descriptor_cache import bytes_of
from catalog.storage.records import ALIVE, NAME, SCHEMA_ID, TABLE_ID, VALUE, ZONE_ID, Record
from catalog.wire import Kind, pack_value, to_wire


class SnapshotSource(Protocol):
    """What encoding a catalog version reads of it (a ``Catalog`` is one)."""

    @property
    def version(self) -> int:
        """The catalog version."""

    @property
    def activation_ts(self) -> int:
        """When it became active (hybrid timestamp)."""

    @property
    def object_id_gen(self) -> int:
        """The next object id."""

    @property
    def default_zone_id(self) -> int | None:
        """The default zone's id, if there is one."""

    def schemas(self) -> Iterable[SchemaDescriptor]:
        """Every schema."""

    def zones(self) -> Iterable[ZoneDescriptor]:
        """Every zone."""

    def system_views(self) -> Iterable[SystemViewDescriptor]:
        """Every system view."""

    def views(self) -> Iterable[ViewDescriptor]:
        """Every view."""

    def principals(self) -> Iterable[PrincipalDescriptor]:
        """Every principal."""

    def roles(self) -> Iterable[RoleDescriptor]:
        """Every role."""

    def grants(self) -> Iterable[GrantDescriptor]:
        """Every grant."""

    def table_records(self) -> tuple[list[int], list[Record]]:
        """Every table's id and stored record, as two parallel lists."""

    def index_records(self) -> tuple[list[int], list[Record]]:
        """Every index's id and stored record, as two parallel lists."""


_SLICE = 4096
"""The most items of one list packed by one call: msgpack holds the interpreter lock for a whole
call, and a snapshot is encoded in a worker thread while commits go on in the event loop."""

# A stored snapshot is the framing of its kind around the body: the framing of a nil body
# without its last byte (the nil) is the prefix every snapshot starts with.
_FRAMING = pack_value(Kind.SNAPSHOT, None)[:-1]


def _grouped(
    listed: tuple[list[int], list[Record]],
) -> list[tuple[int, list[int], list[Record]]]:
    """Return the ids and records by schema id (ascending), each group ascending by id."""
    ids, records = listed
    schemas = {r[SCHEMA_ID] for r in records}
    if len(schemas) == 1:
        return [(schemas.pop(), ids, records)]  # one schema: the lists as they are
    groups: dict[int, tuple[list[int], list[Record]]] = {s: ([], []) for s in sorted(schemas)}
    for object_id, record in zip(ids, records, strict=True):
        group = groups[record[SCHEMA_ID]]
        group[0].append(object_id)
        group[1].append(record)
    return [(schema_id, *group) for schema_id, group in groups.items()]


def _values(records: list[Record]) -> list[bytes]:
    return [r[VALUE] if type(r[VALUE]) is bytes else bytes_of(r) for r in records]


def encode_snapshot(catalog: SnapshotSource) -> bytes:
    """Return the canonical stored form of a whole catalog version (objects ordered by id)."""
    return b"".join(snapshot_pieces(catalog))


def snapshot_pieces(catalog: SnapshotSource) -> list[bytes]:
    """Return ``encode_snapshot(catalog)`` as the pieces it is packed in, not joined.

    A million tables make a snapshot of hundreds of megabytes: kept in pieces, it is never
    copied whole (``UpdateLog.save_snapshot`` takes the pieces).
    """
    tables = [
        [
            schema_id,
            ids,
            [r[ZONE_ID] for r in records],
            [r[NAME] for r in records],
            _values(records),
        ]
        for schema_id, ids, records in _grouped(catalog.table_records())
    ]
    indexes = [
        [
            schema_id,
            ids,
            [r[TABLE_ID] for r in records],
            [r[NAME] for r in records],
            [r[ALIVE] for r in records],
            _values(records),
        ]
        for schema_id, ids, records in _grouped(catalog.index_records())
    ]
    body = [
        catalog.version,
        catalog.activation_ts,
        catalog.object_id_gen,
        catalog.default_zone_id,
        to_wire(tuple(catalog.schemas())),
        to_wire(tuple(catalog.zones())),
        tables,
        indexes,
    ]
    # Appended parts, each present only when it or a later one holds something: a catalog
    # without them encodes (and digests) as it did before they existed.
    appended = [
        tuple(catalog.system_views()),
        tuple(catalog.views()),
        tuple(catalog.principals()),
        tuple(catalog.roles()),
        tuple(catalog.grants()),
    ]
    while appended and not appended[-1]:
        appended.pop()
    body.extend(to_wire(part) for part in appended)
    # The per-object columns (a million items each at a million tables) hold no lists: they
    # are packed a slice at a time without looking for one in them.
    columns = {id(column) for group in (*tables, *indexes) for column in group[1:]}
    pieces = [_FRAMING]
    _pack_into(body, pieces, columns)
    return pieces


def _pack_into(value: Any, pieces: list[bytes], columns: Set[int]) -> None:
    """Append the msgpack bytes of ``value`` to ``pieces``, a long list a slice at a time.

    The bytes are the same as one ``packb`` of the whole value: an array is its header and
    then its items one after the other, so slices packed alone join to the same array. Lists
    whose ``id`` is in ``columns`` are known to hold no lists.
    """
    if type(value) is not list:
        pieces.append(msgpack.packb(value, use_bin_type=True))
        return
    pieces.append(_array_header(len(value)))
    if id(value) not in columns and any(type(item) is list for item in value):
        for item in value:
            _pack_into(item, pieces, columns)
        return
    for start in range(0, len(value), _SLICE):
        part = value[start : start + _SLICE]
        pieces.append(msgpack.packb(part, use_bin_type=True)[len(_array_header(len(part))) :])


def _array_header(length: int) -> bytes:
    if length < 16:
        return bytes((0x90 | length,))
    if length < 1 << 16:
        return b"\xdc" + length.to_bytes(2, "big")
    return b"\xdd" + length.to_bytes(4, "big")


def catalog_digest(catalog: SnapshotSource) -> str:
    """Return the SHA-256 (hex) of a catalog's canonical encoding."""
    digest = hashlib.sha256()
    for piece in snapshot_pieces(catalog):
        digest.update(piece)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    """What a stored snapshot of the current format says of itself, read without decoding it."""

    version: int
    activation_ts: int
    digest: str
    """The catalog's digest: a snapshot of the current format is its catalog's canonical
    encoding, so the digest is its bytes' (``catalog_digest`` of the decoded catalog)."""


def stored_snapshot(payload: bytes) -> StoredSnapshot | None:
    """Return the version, activation and digest of a snapshot of the current format, else None.

    Reads only the snapshot's first fields and hashes its bytes: at a million tables, a
    fraction of decoding it and encoding it again.
    """
    if not payload.startswith(_FRAMING):
        return None
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(payload[len(_FRAMING) : len(_FRAMING) + 64])
    try:
        unpacker.read_array_header()
        version, activation_ts = unpacker.unpack(), unpacker.unpack()
    except (ValueError, msgpack.UnpackException):
        return None
    if type(version) is not int or type(activation_ts) is not int:
        return None
    return StoredSnapshot(version, activation_ts, hashlib.sha256(payload).hexdigest())
