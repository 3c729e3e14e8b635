"""Snapshots: a whole catalog version as one stored value, and the catalog digest.

Format 2 (written now) keeps tables and indexes as columns: their keys (id, schema, zone or
table, name, alive) and each one's marshalled descriptor (``encode_descriptor``'s bytes, with
their own format version)::

    [version, activation_ts, object_id_gen, default_zone_id, schemas, zones,
     [table ids, schema ids, zone ids, names, descriptor bytes],
     [index ids, schema ids, table ids, names, alive flags, descriptor bytes]]

so loading builds every lookup from the keys and decodes a descriptor only when it is first
read. Format 1 (still read) held every descriptor as a positional body.

The digest is the SHA-256 of the canonical encoding (objects ordered by id), so it is equal
on every node for the same content; it hashes the stored bytes rather than re-encoding.
"""

from __future__ import annotations

import gc
import hashlib
from typing import Any

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
    ZONE_ID,
    IndexColumns,
    TableColumns,
    bytes_of,
)

_SCHEMAS = compile_decoder(tuple[SchemaDescriptor, ...])
_ZONES = compile_decoder(tuple[ZoneDescriptor, ...])
_TABLES = compile_decoder(tuple[TableDescriptor, ...])
_INDEXES = compile_decoder(tuple[IndexDescriptor, ...])
_OPTIONAL_INT = compile_decoder(int | None)
_INT = compile_decoder(int)


def encode_snapshot(catalog: Catalog) -> bytes:
    """Return the canonical stored form of a whole catalog version (objects ordered by id)."""
    tables = catalog.table_records()
    indexes = catalog.index_records()
    body = [
        catalog.version,
        catalog.activation_ts,
        catalog.object_id_gen,
        catalog.default_zone_id,
        to_wire(tuple(catalog.schemas())),
        to_wire(tuple(catalog.zones())),
        [
            [i for i, _ in tables],
            [r[SCHEMA_ID] for _, r in tables],
            [r[ZONE_ID] for _, r in tables],
            [r[NAME] for _, r in tables],
            [bytes_of(r) for _, r in tables],
        ],
        [
            [i for i, _ in indexes],
            [r[SCHEMA_ID] for _, r in indexes],
            [r[TABLE_ID] for _, r in indexes],
            [r[NAME] for _, r in indexes],
            [r[ALIVE] for _, r in indexes],
            [bytes_of(r) for _, r in indexes],
        ],
    ]
    return pack_value(Kind.SNAPSHOT, body)


def catalog_digest(catalog: Catalog) -> str:
    """Return the SHA-256 (hex) of a catalog's canonical encoding."""
    return hashlib.sha256(encode_snapshot(catalog)).hexdigest()


def _column(value: Any, expected: type, length: int | None, what: str) -> list[Any]:
    if type(value) is not list:
        raise format_error(f"snapshot {what} must be a list")
    if length is not None and len(value) != length:
        raise format_error(f"snapshot {what} has {len(value)} items, expected {length}")
    if not all(type(v) is expected for v in value):
        raise format_error(f"snapshot {what} must hold only {expected.__name__} values")
    return value


def _columns(value: Any, kinds: tuple[type, ...], what: str) -> list[list[Any]]:
    if type(value) is not list or len(value) != len(kinds):
        raise format_error(f"snapshot {what} must be {len(kinds)} columns")
    length = len(value[0]) if type(value[0]) is list else None
    return [
        _column(c, k, length, f"{what} column {n}")
        for n, (c, k) in enumerate(zip(value, kinds, strict=True))
    ]


def _build_v2(items: list[Any]) -> Catalog:
    t = _columns(items[6], (int, int, int, str, bytes), "tables")
    i = _columns(items[7], (int, int, int, str, bool, bytes), "indexes")
    return Catalog.from_columns(
        version=_INT(items[0]),
        activation_ts=_INT(items[1]),
        object_id_gen=_INT(items[2]),
        default_zone_id=_OPTIONAL_INT(items[3]),
        schemas=_SCHEMAS(items[4]),
        zones=_ZONES(items[5]),
        tables=TableColumns(t[0], t[1], t[2], t[3], t[4]),
        indexes=IndexColumns(i[0], i[1], i[2], i[3], i[4], i[5]),
    )


def _build_v1(items: list[Any]) -> Catalog:
    tables: tuple[TableDescriptor, ...] = _TABLES(items[6])
    indexes: tuple[IndexDescriptor, ...] = _INDEXES(items[7])
    # Kept as bytes, like format 2, so a node loaded from an old snapshot is as small.
    return Catalog.from_columns(
        version=_INT(items[0]),
        activation_ts=_INT(items[1]),
        object_id_gen=_INT(items[2]),
        default_zone_id=_OPTIONAL_INT(items[3]),
        schemas=_SCHEMAS(items[4]),
        zones=_ZONES(items[5]),
        tables=TableColumns.of(tables, [encode_descriptor(d) for d in tables]),
        indexes=IndexColumns.of(indexes, [encode_descriptor(d) for d in indexes]),
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
