"""Snapshots: a whole catalog version as one stored value, and the catalog digest.

Format 2 (written now) keeps each schema's tables and indexes as columns: their keys (id,
zone or table, name, alive) and each one's marshalled descriptor (``encode_descriptor``'s
bytes, with their own format version), groups ascending by schema id, ids ascending::

    [version, activation_ts, object_id_gen, default_zone_id, schemas, zones,
     [[schema id, table ids, zone ids, names, descriptor bytes], ...],
     [[schema id, index ids, table ids, names, alive flags, descriptor bytes], ...]]

so loading builds every lookup from the keys and decodes a descriptor only when it is first
read. Format 1 (still read) held every descriptor as a positional body.

The digest is the SHA-256 of the canonical encoding (objects ordered by id), so it is equal
on every node for the same content; it hashes the stored bytes rather than re-encoding.
"""

from __future__ import annotations

import gc
import hashlib
from typing import Any

import msgpack

from catalog.catalog import Catalog
from catalog.descriptors import IndexDescriptor, SchemaDescriptor, TableDescriptor, ZoneDescriptor
from catalog.marshalling import (
    Kind,
    compile_decoder,
    decode_value,
    encode_descriptor,
    format_error,
    pack_value,
    to_wire,
)
from catalog.store import (
    ALIVE,
    NAME,
    SCHEMA_ID,
    TABLE_ID,
    VALUE,
    ZONE_ID,
    IndexGroup,
    Record,
    TableGroup,
    bytes_of,
)

_SCHEMAS = compile_decoder(tuple[SchemaDescriptor, ...])
_ZONES = compile_decoder(tuple[ZoneDescriptor, ...])
_TABLES = compile_decoder(tuple[TableDescriptor, ...])
_INDEXES = compile_decoder(tuple[IndexDescriptor, ...])
_OPTIONAL_INT = compile_decoder(int | None)
_INT = compile_decoder(int)

_SLICE = 4096
"""The most items of one list packed by one call: msgpack holds the interpreter lock for a whole
call, and a snapshot is encoded in a worker thread while commits go on in the event loop."""

# A stored snapshot is the framing of its kind around the body: the framing of a nil body
# without its last byte (the nil) is the prefix every snapshot starts with.
_FRAMING = pack_value(Kind.SNAPSHOT, None)[:-1]


def _grouped(records: list[tuple[int, Record]]) -> list[tuple[int, list[tuple[int, Record]]]]:
    """Return the records by schema id (ascending), each group ascending by object id."""
    groups: dict[int, list[tuple[int, Record]]] = {}
    for pair in records:
        schema_id = pair[1][SCHEMA_ID]
        found = groups.get(schema_id)
        if found is None:
            groups[schema_id] = [pair]
        else:
            found.append(pair)
    return sorted(groups.items())


def _values(group: list[tuple[int, Record]]) -> list[bytes]:
    return [r[VALUE] if type(r[VALUE]) is bytes else bytes_of(r) for _, r in group]


def encode_snapshot(catalog: Catalog) -> bytes:
    """Return the canonical stored form of a whole catalog version (objects ordered by id)."""
    body = [
        catalog.version,
        catalog.activation_ts,
        catalog.object_id_gen,
        catalog.default_zone_id,
        to_wire(tuple(catalog.schemas())),
        to_wire(tuple(catalog.zones())),
        [
            [
                schema_id,
                [i for i, _ in group],
                [r[ZONE_ID] for _, r in group],
                [r[NAME] for _, r in group],
                _values(group),
            ]
            for schema_id, group in _grouped(catalog.table_records())
        ],
        [
            [
                schema_id,
                [i for i, _ in group],
                [r[TABLE_ID] for _, r in group],
                [r[NAME] for _, r in group],
                [r[ALIVE] for _, r in group],
                _values(group),
            ]
            for schema_id, group in _grouped(catalog.index_records())
        ],
    ]
    pieces = [_FRAMING]
    _pack_into(body, pieces)
    return b"".join(pieces)


def _pack_into(value: Any, pieces: list[bytes]) -> None:
    """Append the msgpack bytes of ``value`` to ``pieces``, a long list a slice at a time.

    The bytes are the same as one ``packb`` of the whole value: an array is its header and
    then its items one after the other, so slices packed alone join to the same array.
    """
    if type(value) is not list:
        pieces.append(msgpack.packb(value, use_bin_type=True))
        return
    pieces.append(_array_header(len(value)))
    if any(type(item) is list for item in value):
        for item in value:
            _pack_into(item, pieces)
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


def catalog_digest(catalog: Catalog) -> str:
    """Return the SHA-256 (hex) of a catalog's canonical encoding."""
    return hashlib.sha256(encode_snapshot(catalog)).hexdigest()


def _column(value: Any, expected: type, length: int | None, what: str) -> list[Any]:
    if type(value) is not list:
        raise format_error(f"snapshot {what} must be a list")
    if length is not None and len(value) != length:
        raise format_error(f"snapshot {what} has {len(value)} items, expected {length}")
    # One C-level pass: ``map(type, ...)`` into a set is several times faster than a
    # Python-level check per item, which would dominate loading a million tables.
    if value and set(map(type, value)) != {expected}:
        raise format_error(f"snapshot {what} must hold only {expected.__name__} values")
    return value


def _groups(value: Any, kinds: tuple[type, ...], what: str) -> list[list[Any]]:
    """Return the checked groups of one kind: each a schema id, then equal-length columns."""
    if type(value) is not list:
        raise format_error(f"snapshot {what} must be a list of groups")
    groups = []
    for group in value:
        if type(group) is not list or len(group) != len(kinds) + 1 or type(group[0]) is not int:
            raise format_error(f"a snapshot {what} group is a schema id and {len(kinds)} columns")
        length = len(group[1]) if type(group[1]) is list else None
        columns = [
            _column(column, kind, length, f"{what} column {n}")
            for n, (column, kind) in enumerate(zip(group[1:], kinds, strict=True))
        ]
        groups.append([group[0], *columns])
    return groups


def _header(items: list[Any]) -> dict[str, Any]:
    """Return the parts every format shares: the version's numbers, schemas and zones."""
    return {
        "version": _INT(items[0]),
        "activation_ts": _INT(items[1]),
        "object_id_gen": _INT(items[2]),
        "default_zone_id": _OPTIONAL_INT(items[3]),
        "schemas": _SCHEMAS(items[4]),
        "zones": _ZONES(items[5]),
    }


def _build_v2(items: list[Any]) -> Catalog:
    tables = _groups(items[6], (int, int, str, bytes), "tables")
    indexes = _groups(items[7], (int, int, str, bool, bytes), "indexes")
    return Catalog.from_groups(
        **_header(items),
        tables=[TableGroup(*g) for g in tables],
        indexes=[IndexGroup(*g) for g in indexes],
    )


def _build_v1(items: list[Any]) -> Catalog:
    tables: tuple[TableDescriptor, ...] = _TABLES(items[6])
    indexes: tuple[IndexDescriptor, ...] = _INDEXES(items[7])
    # Kept as bytes, like format 2, so a node loaded from an old snapshot is as small.
    return Catalog.from_groups(
        **_header(items),
        tables=TableGroup.of(tables, [encode_descriptor(d) for d in tables]),
        indexes=IndexGroup.of(indexes, [encode_descriptor(d) for d in indexes]),
    )


def _build_catalog(version: int, body: Any) -> Catalog:
    if type(body) is not list or len(body) != 8:
        raise format_error("a snapshot has 8 parts")
    return _build_v1(body) if version == 1 else _build_v2(body)


def decode_snapshot(data: bytes) -> Catalog:
    """Decode a whole catalog version (format 1 or 2).

    Descriptors of format 2 are checked when first decoded: bytes that do not hold the
    object their keys name raise ``FormatError`` then.

    Raises:
        FormatError: garbage, a wrong kind, a newer format, or inconsistent content.
    """
    # A snapshot creates a large acyclic heap at once; letting the cyclic GC walk it over
    # and over while it grows costs more than the decoding.
    paused = gc.isenabled()
    gc.disable()
    try:
        result: Catalog = decode_value(Kind.SNAPSHOT, data, _build_catalog)
    finally:
        if paused:
            gc.enable()
    return result
