"""Resolve a table's schema at a timestamp (or version) for Spark: ``schema_at``.

A job pins one timestamp and resolves every schema at it. The catalog first waits until
metadata is complete at that timestamp, so the answer is the same on every node and never
changes afterwards.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql.types import StructType

from api.client import AsyncCatalogClient, CatalogClient
from catalog.catalog import Catalog
from catalog.descriptors import TableDescriptor
from catalog.errors import ValidationError
from catalog.identifiers import parse_qualified, quote_name
from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.node import CatalogNode
from schemasync.clock import MAX_TIMESTAMP, hlc
from spark.types import struct_type

AsOf = int | str | dt.datetime | None
"""A point to read at: a hybrid timestamp, ``"version=N"``, an RFC 3339 time, or None (now)."""


@dataclass(frozen=True, slots=True)
class TableAt:
    """A table as of a pinned moment.

    Attributes:
        table: the descriptor active at ``at``.
        partitions: its zone's partition count (Spark input partitions, write buckets).
        version: the catalog version read.
        at: the pinned hybrid timestamp data is read at (for ``version=N``: its activation).
    """

    table: TableDescriptor
    partitions: int
    version: int
    at: int


@dataclass(frozen=True, slots=True)
class Pin:
    """A parsed ``as_of``: exactly one of ``ts`` and ``version``, or neither (now)."""

    ts: int | None = None
    version: int | None = None


def split_name(name: str) -> tuple[str, str]:
    """Return the exact ``(schema, table)`` of ``[schema.]table`` as typed in SQL.

    Unquoted names fold to upper case, double-quoted ones stay exact (``public.orders`` is
    ``PUBLIC.ORDERS``, ``"Sales"."orders"`` is ``Sales.orders``); the schema defaults to PUBLIC.

    Raises:
        ValidationError: not ``[schema.]table``.
    """
    return parse_qualified(name.strip())


def parse_as_of(value: AsOf) -> Pin:
    """Parse ``as_of``: a hybrid timestamp, ``version=N``, an RFC 3339 time, or None.

    Raises:
        ValidationError: none of these forms.
    """
    if value is None or value == "":
        return Pin()
    if isinstance(value, bool):
        raise ValidationError(f"as_of={value!r} is not a timestamp")
    if isinstance(value, int):
        if not 0 < value <= MAX_TIMESTAMP:
            raise ValidationError(f"as_of={value} is not a hybrid timestamp")
        return Pin(ts=value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValidationError("as_of needs an aware datetime (with a time zone)")
        return Pin(ts=hlc(int(value.timestamp() * 1000)))
    text = value.strip()
    if text.startswith("version="):
        number = text.removeprefix("version=")
        if not (number.isascii() and number.isdigit()) or int(number) < 1:
            raise ValidationError(f"as_of={text!r}: version=N needs a version number >= 1")
        return Pin(version=int(number))
    if text.isascii() and text.isdigit():
        return parse_as_of(int(text))
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"as_of={text!r} is neither a hybrid timestamp, version=N, nor an RFC 3339 time"
        ) from None
    return parse_as_of(moment)


def _from_catalog(cat: Catalog, schema: str, name: str, at: int) -> TableAt:
    table = cat.table(schema, name)
    partitions = cat.zone_by_id(table.zone_id).partitions
    return TableAt(table, partitions, cat.version, at)


def resolve_table(
    source: CatalogClient | SyncCatalogNode, name: str, as_of: AsOf = None
) -> TableAt:
    """Return the table ``name`` as of ``as_of`` (default: now, pinned once).

    Raises:
        CatalogApiError | CatalogError: no such table then, or a bad timestamp.
    """
    schema, table = split_name(name)
    pin = parse_as_of(as_of)
    if isinstance(source, SyncCatalogNode):
        if pin.version is not None:
            cat = source.catalog(pin.version)
            return _from_catalog(cat, schema, table, cat.activation_ts)
        ts = source.now() if pin.ts is None else pin.ts
        return _from_catalog(source.active_catalog(ts), schema, table, ts)
    schema, table = quote_name(schema), quote_name(table)  # the server reads them as typed
    if pin.version is not None:
        body = source.table_info(schema, table, version=pin.version)
        return TableAt(body.table, body.zone.partitions, body.version, body.activation_ts)
    ts = source.now() if pin.ts is None else pin.ts
    body = source.table_info(schema, table, at=ts)
    return TableAt(body.table, body.zone.partitions, body.version, ts)


async def resolve_table_async(
    source: AsyncCatalogClient | CatalogNode, name: str, as_of: AsOf = None
) -> TableAt:
    """``resolve_table`` for async callers: an in-process ``CatalogNode`` or an async client."""
    schema, table = split_name(name)
    pin = parse_as_of(as_of)
    if isinstance(source, CatalogNode):
        if pin.version is not None:
            cat = source.service.catalog(pin.version)
            return _from_catalog(cat, schema, table, cat.activation_ts)
        ts = source.clock.now() if pin.ts is None else pin.ts
        await source.schema_sync.wait_for_metadata_completeness(ts)
        return _from_catalog(source.service.active_catalog(ts), schema, table, ts)
    schema, table = quote_name(schema), quote_name(table)  # the server reads them as typed
    if pin.version is not None:
        body = await source.table_info(schema, table, version=pin.version)
        return TableAt(body.table, body.zone.partitions, body.version, body.activation_ts)
    ts = await source.now() if pin.ts is None else pin.ts
    body = await source.table_info(schema, table, at=ts)
    return TableAt(body.table, body.zone.partitions, body.version, ts)


def schema_at(source: CatalogClient | SyncCatalogNode, name: str, at: AsOf = None) -> StructType:
    """Return the Spark schema of table ``name`` as of ``at`` (default: now).

    Waits for metadata completeness at ``at`` first. Each field's metadata carries the column
    id (``column_id``) and the catalog type (``catalog_type``).

    Args:
        source: a catalog client (``api.client.CatalogClient``) or a ``SyncCatalogNode``.
        name: ``"SCHEMA.TABLE"``, or ``"TABLE"`` for the PUBLIC schema.
        at: a hybrid timestamp, ``"version=N"``, an RFC 3339 time or aware datetime, or None.
    """
    return struct_type(resolve_table(source, name, at).table)


async def schema_at_async(
    source: AsyncCatalogClient | CatalogNode, name: str, at: AsOf = None
) -> StructType:
    """``schema_at`` for async callers: an in-process ``CatalogNode`` or an async client."""
    return struct_type((await resolve_table_async(source, name, at)).table)
