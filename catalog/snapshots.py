"""Loading a snapshot: a whole catalog version from its stored value (``catalog.snapshot_format``).

Loading builds every lookup from the keys of format 2 (the layout is in
``catalog.snapshot_format``) and decodes a descriptor only when it is first read. Format 1
(still read) held every descriptor as a positional body.
"""

from __future__ import annotations

from typing import Any

from catalog.catalog import Catalog
from catalog.collector import collector_paused
from catalog.descriptors import (
    GrantDescriptor,
    IndexDescriptor,
    PrincipalDescriptor,
    RoleDescriptor,
    SchemaDescriptor,
    SystemViewDescriptor,
    TableDescriptor,
    ViewDescriptor,
    ZoneDescriptor,
)
from catalog.snapshot_format import catalog_digest, encode_snapshot, snapshot_pieces
from catalog.storage.relation_store import IndexGroup, TableGroup
from catalog.wire import Kind, compile_decoder, decode_value, encode_descriptor, format_error

__all__ = ["catalog_digest", "decode_snapshot", "encode_snapshot", "snapshot_pieces"]

_SCHEMAS = compile_decoder(tuple[SchemaDescriptor, ...])
_ZONES = compile_decoder(tuple[ZoneDescriptor, ...])
_SYSTEM_VIEWS = compile_decoder(tuple[SystemViewDescriptor, ...])
_VIEWS = compile_decoder(tuple[ViewDescriptor, ...])
_PRINCIPALS = compile_decoder(tuple[PrincipalDescriptor, ...])
_ROLES = compile_decoder(tuple[RoleDescriptor, ...])
_GRANTS = compile_decoder(tuple[GrantDescriptor, ...])
_TABLES = compile_decoder(tuple[TableDescriptor, ...])
_INDEXES = compile_decoder(tuple[IndexDescriptor, ...])
_OPTIONAL_INT = compile_decoder(int | None)
_INT = compile_decoder(int)


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
    """Return the parts every format shares: numbers, schemas, zones, views, access."""
    return {
        "version": _INT(items[0]),
        "activation_ts": _INT(items[1]),
        "object_id_gen": _INT(items[2]),
        "default_zone_id": _OPTIONAL_INT(items[3]),
        "schemas": _SCHEMAS(items[4]),
        "zones": _ZONES(items[5]),
        "system_views": _SYSTEM_VIEWS(items[8]) if len(items) > 8 else (),
        "views": _VIEWS(items[9]) if len(items) > 9 else (),
        "principals": _PRINCIPALS(items[10]) if len(items) > 10 else (),
        "roles": _ROLES(items[11]) if len(items) > 11 else (),
        "grants": _GRANTS(items[12]) if len(items) > 12 else (),
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
    if type(body) is not list or not 8 <= len(body) <= 13:
        raise format_error(
            "a snapshot has 8 parts, then system views, views, principals, roles and grants "
            "up to the last that holds any"
        )
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
    with collector_paused():
        result: Catalog = decode_value(Kind.SNAPSHOT, data, _build_catalog)
    return result
