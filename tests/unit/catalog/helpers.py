"""Builders for the catalogs the command tests start from, and assertions they share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog import (
    Catalog,
    CatalogError,
    CatalogEvent,
    ColumnType,
    ErrorCode,
    IndexStatus,
    Prepared,
    prepare,
)
from catalog import commands as c
from catalog.commands import CommandBase, ViewColumnSpec, ViewQuery, ViewVersionSpec
from catalog.data.files import DataCommit, IcebergSnapshot
from catalog.descriptors.zones import default_zone

# Ids in ``catalog_with_default_zone()``: PUBLIC 0, SYSTEM 1, zone Default 2; the next is 3.
PUBLIC_ID = 0
SYSTEM_ID = 1
DEFAULT_ZONE_ID = 2
FIRST_FREE_ID = 3


def catalog_with_default_zone(activation_ts: int = 0) -> Catalog:
    """Return ``Catalog.initial()`` with the ``Default`` zone a first table would create.

    Ignite's command tests start from the same (``catalogWithDefaultZone``); the tests of the
    zone's lazy creation start from ``Catalog.initial()`` itself.
    """
    return (
        Catalog.initial(activation_ts)
        .with_zone(default_zone(DEFAULT_ZONE_ID))
        .with_default_zone(DEFAULT_ZONE_ID)
        .with_object_id_gen(FIRST_FREE_ID)
    )


def col(name: str, ctype: ColumnType = ColumnType.INT32, **kw: Any) -> c.Column:
    """Return a column definition (nullable unless ``nullable=False`` is given)."""
    return c.Column(name=name, type=ctype, **kw)


def key(name: str = "ID", ctype: ColumnType = ColumnType.INT64, **kw: Any) -> c.Column:
    """Return a NOT NULL column fit for a primary key."""
    return c.Column(name=name, type=ctype, nullable=False, **kw)


def create_table(
    name: str = "T",
    *,
    columns: tuple[c.Column, ...] | None = None,
    primary_key: tuple[str, ...] = ("ID",),
    **kw: Any,
) -> c.CreateTableCommand:
    """Return CREATE TABLE name (ID INT64 NOT NULL PK, A INT32, B STRING) unless told otherwise."""
    if columns is None:
        columns = (key(), col("A"), col("B", ColumnType.STRING))
    return c.CreateTable(name=name, columns=columns, primary_key=primary_key, **kw)


def run(cat: Catalog, *commands: CommandBase) -> Prepared:
    """Prepare ``commands`` as one batch and check that ``cat`` itself did not change."""
    before = cat.digest()
    prepared = prepare(cat, list(commands))
    assert cat.digest() == before
    assert prepared.catalog.version == cat.version
    assert len(prepared.applied) == len(commands)
    return prepared


def apply(cat: Catalog, *commands: CommandBase) -> Catalog:
    """Return ``cat`` with ``commands`` applied as one batch."""
    return run(cat, *commands).catalog


def refused(cat: Catalog, code: ErrorCode, *commands: CommandBase) -> CatalogError:
    """Assert that the batch is refused with ``code`` and that ``cat`` is left as it was."""
    before = cat.digest()
    with pytest.raises(CatalogError) as info:
        prepare(cat, list(commands))
    assert info.value.code is code, str(info.value)
    assert cat.digest() == before
    return info.value


def bad_shape(
    build: Callable[[], object], code: ErrorCode = ErrorCode.VALIDATION_ERROR
) -> CatalogError:
    """Assert that building a command (or parsing it) is refused with ``code``."""
    with pytest.raises(CatalogError) as info:
        build()
    assert info.value.code is code, str(info.value)
    return info.value


def entry_types(prepared: Prepared) -> list[str]:
    """Return the ``type`` tag of every entry of a prepared batch."""
    return [str(e.model_dump()["type"]) for e in prepared.entries]


def events(prepared: Prepared) -> list[CatalogEvent | None]:
    """Return the event of every entry of a prepared batch."""
    return [e.event for e in prepared.entries]


def with_table(cat: Catalog | None = None, name: str = "T", **kw: Any) -> Catalog:
    """Return ``cat`` (default: the initial catalog) with a table from ``create_table``."""
    return apply(cat or Catalog.initial(), create_table(name, **kw))


def with_index(
    cat: Catalog,
    name: str,
    columns: tuple[str, ...],
    *,
    table: str = "T",
    status: IndexStatus = IndexStatus.REGISTERED,
    **kw: Any,
) -> Catalog:
    """Return ``cat`` with a new index on an existing table, moved on to ``status``."""
    cat = apply(cat, c.CreateIndex(table=table, name=name, columns=columns, **kw))
    index = cat.index(kw.get("schema", "PUBLIC"), name)
    assert index.status is IndexStatus.REGISTERED
    steps: list[CommandBase] = []
    if status is not IndexStatus.REGISTERED:
        steps.append(c.StartBuildingIndex(index_id=index.id))
    if status in (IndexStatus.AVAILABLE, IndexStatus.STOPPING):
        steps.append(c.MakeIndexAvailable(index_id=index.id))
    if status is IndexStatus.STOPPING:
        steps.append(c.DropIndex(schema=kw.get("schema", "PUBLIC"), name=name))
    for step in steps:
        cat = apply(cat, step)
    assert cat.index_by_id(index.id).status is status
    return cat


def iceberg_commit(
    seq: int, snapshot_id: int, parent: int | None = None, **row_ids: int | None
) -> DataCommit:
    """Return data commit ``seq`` of table 7: an engine's snapshot (``first_row_id``, ...)."""
    return DataCommit(
        table_id=7,
        seq=seq,
        commit_ts=seq << 16,
        schema_version=1,
        mode="append",
        files=(),
        request_id=f"r{seq}",
        iceberg=IcebergSnapshot(
            snapshot_id=snapshot_id,
            parent_id=parent,
            manifest_list=f"/w/t/metadata/snap-{snapshot_id}.avro",
            operation="append",
            timestamp_ms=seq,
            sequence_number=seq,
            **row_ids,
        ),
    )


def view_columns(*names: str) -> tuple[ViewColumnSpec, ...]:
    """Return INT64 columns of these names."""
    return tuple(ViewColumnSpec(name=n, type=ColumnType.INT64) for n in names)


def view_version(
    sql: str = "SELECT ID FROM T", *dialects: str, ts: int = 1_000, **kw: Any
) -> ViewVersionSpec:
    """Return a version with ``sql`` for each dialect (``spark`` if none), made at ``ts``."""
    queries = tuple(ViewQuery(dialect=d, sql=sql) for d in dialects or ("spark",))
    return ViewVersionSpec(queries=queries, timestamp_ms=ts, **kw)


def create_view(
    name: str = "V",
    sql: str = "SELECT ID FROM T",
    *dialects: str,
    columns: tuple[str, ...] = ("ID",),
    ts: int = 1_000,
    at_ms: int = 9_000,
    **kw: Any,
) -> c.CreateViewCommand:
    """Return CREATE VIEW name (columns) AS sql, made at ``ts``, asked for at ``at_ms``."""
    return c.CreateView(
        name=name,
        columns=view_columns(*columns),
        version=view_version(sql, *dialects, ts=ts),
        at_ms=at_ms,
        **kw,
    )
