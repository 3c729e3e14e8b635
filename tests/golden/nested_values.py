"""Deterministic nested-column values whose encodings are kept as golden files
(``catalog_values`` says how golden files are made; its ``golden_files`` holds these too).

A table with a struct holding a list of structs and a map, then every nested evolution: a
field added at the end of a struct, one widened, one made nullable, one renamed, one dropped.
"""

from __future__ import annotations

from catalog import Catalog, ColumnType, VersionedUpdate
from catalog import commands as c
from catalog.commands.base import CommandBase
from catalog.marshalling import encode_commands, encode_entries, encode_update
from catalog.snapshots import encode_snapshot
from catalog.wire import encode_descriptor
from tests.golden.stamped_updates import stamped_update

T0 = 1_700_000_000_000
"""The golden nested values' epoch (ms)."""


def _field(name: str, ctype: ColumnType, *fields: c.Column, **kw: object) -> c.Column:
    return c.Column.model_validate({"name": name, "type": ctype, "fields": fields, **kw})


def golden_nested_commands() -> list[CommandBase]:
    """Return CREATE TABLE LAKE.EVENTS with nested columns and one of each nested change."""
    price = _field("PRICE", ColumnType.DECIMAL, precision=10, scale=2, nullable=False)
    item = _field("element", ColumnType.STRUCT, _field("SKU", ColumnType.STRING), price)
    payload = _field(
        "PAYLOAD",
        ColumnType.STRUCT,
        _field("SOURCE", ColumnType.STRING, length=10),
        _field("N", ColumnType.INT32),
        _field("ITEMS", ColumnType.ARRAY, item),
    )
    attrs = _field(
        "ATTRS",
        ColumnType.MAP,
        _field("key", ColumnType.STRING, nullable=False),
        _field("value", ColumnType.FLOAT64),
    )
    tags = _field("TAGS", ColumnType.ARRAY, _field("element", ColumnType.STRING, nullable=False))
    return [
        c.CreateSchema(name="LAKE"),
        c.CreateTable(
            schema="LAKE",
            name="EVENTS",
            columns=[
                c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                payload,
                attrs,
                tags,
            ],
            primary_key=["ID"],
        ),
        c.AddColumns(
            schema="LAKE",
            table="EVENTS",
            parent=["PAYLOAD", "ITEMS", "element"],
            columns=[c.Column(name="QTY", type=ColumnType.INT16)],
        ),
        c.AlterColumn(
            schema="LAKE", table="EVENTS", column="PAYLOAD", path=["N"], type=ColumnType.INT64
        ),
        c.AlterColumn(
            schema="LAKE",
            table="EVENTS",
            column="PAYLOAD",
            path=["ITEMS", "element", "PRICE"],
            nullable=True,
        ),
        c.RenameColumn(
            schema="LAKE", table="EVENTS", column="PAYLOAD", path=["SOURCE"], new_name="ORIGIN"
        ),
        c.DropColumns(
            schema="LAKE", table="EVENTS", fields=[["PAYLOAD", "ITEMS", "element", "SKU"]]
        ),
    ]


def golden_nested_update() -> tuple[Catalog, VersionedUpdate]:
    """Return version 1 and update 2: the nested commands' entries."""
    return stamped_update(T0, golden_nested_commands())


def golden_nested_catalog() -> Catalog:
    """Return version 2: LAKE.EVENTS after its nested changes."""
    v1, update = golden_nested_update()
    return update.apply_to(v1)


def golden_nested_files() -> dict[str, bytes]:
    """Return the name and current encoding of every golden file of nested columns."""
    _, update = golden_nested_update()
    catalog = golden_nested_catalog()
    return {
        "snapshot_nested_v2.bin": encode_snapshot(catalog),
        "update_nested_v3.bin": encode_update(update),
        "entries_nested_v1.bin": encode_entries(update.entries),
        "commands_nested_v1.bin": encode_commands(golden_nested_commands()),
        "descriptor_table_nested_v1.bin": encode_descriptor(catalog.table("LAKE", "EVENTS")),
    }
