"""A new Iceberg schema as catalog commands: fields matched to columns by id."""

from __future__ import annotations

import pytest

from api.iceberg.errors import IcebergError
from api.iceberg.evolution import schema_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import IcebergSchema, StructField
from catalog import ColumnType
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.descriptors import TableDescriptor
from catalog.prepare import prepare


def _catalog(*commands: CommandBase) -> Catalog:
    return prepare(Catalog.initial(), list(commands)).catalog


def _table() -> tuple[Catalog, TableDescriptor]:
    columns = [
        c.Column(name="ID", type=ColumnType.INT64, nullable=False),
        c.Column(name="N", type=ColumnType.INT16, nullable=False),
        c.Column(name="X", type=ColumnType.FLOAT32),
        c.Column(name="NOTE", type=ColumnType.STRING, length=40),
    ]
    cat = _catalog(c.CreateTable(name="T", columns=columns, primary_key=["ID"]))
    return cat, cat.table("PUBLIC", "T")


def _current(table: TableDescriptor) -> list[StructField]:
    return list(table_metadata(table, "/w", 0).schemas[-1].fields)


def _schema(fields: list[StructField], key: tuple[int, ...] = (0,)) -> IcebergSchema:
    return IcebergSchema(identifier_field_ids=list(key), fields=fields)


def _changed(field: StructField, **update: object) -> StructField:
    return field.model_copy(update=update)


def _applied(cat: Catalog, commands: list[CommandBase]) -> TableDescriptor:
    return prepare(cat, commands).catalog.table("PUBLIC", "T")


def test_the_same_schema_needs_no_command() -> None:
    _, table = _table()
    assert schema_commands("PUBLIC", table, _schema(_current(table))) == []


def test_added_renamed_widened_and_optional_fields_become_commands_in_order() -> None:
    cat, table = _table()
    id_, n, x, note = _current(table)
    new = StructField(id=4, name="TAG", required=False, type="string")
    fields = [id_, _changed(n, type="long", required=False), _changed(x, type="double"), new]
    fields[1] = _changed(fields[1], name="COUNT")
    commands = schema_commands("PUBLIC", table, _schema(fields))
    assert [type(command) for command in commands] == [
        c.DropColumnsCommand,
        c.RenameColumnCommand,
        c.AlterColumnCommand,
        c.AlterColumnCommand,
        c.AddColumnsCommand,
    ]
    changed = _applied(cat, commands)
    assert [(col.id, col.name, col.type, col.nullable) for col in changed.columns] == [
        (0, "ID", ColumnType.INT64, False),
        (1, "COUNT", ColumnType.INT64, True),
        (2, "X", ColumnType.FLOAT64, True),
        (4, "TAG", ColumnType.STRING, True),
    ]
    assert note.id not in {col.id for col in changed.columns}


def test_an_int_field_over_a_small_int_column_is_no_change() -> None:
    _, table = _table()
    fields = _current(table)
    assert fields[1].type == "int"
    assert schema_commands("PUBLIC", table, _schema(fields)) == []


@pytest.mark.parametrize(
    ("reshape", "refusal"),
    [
        (lambda f: [f[1], f[0], f[2], f[3]], "cannot reorder"),
        (
            lambda f: [*f, StructField(id=9, name="LATE", required=False, type="int")],
            "take the ids after last-column-id 3 in order",
        ),
        (
            lambda f: [*f, StructField(id=4, name="L", required=False, type="fixed[4]")],
            "field L: the Iceberg type fixed",
        ),
    ],
)
def test_changes_the_catalog_cannot_make_are_refused(reshape: object, refusal: str) -> None:
    _, table = _table()
    assert callable(reshape)
    with pytest.raises(IcebergError, match=refusal):
        schema_commands("PUBLIC", table, _schema(reshape(_current(table))))


def test_the_identifier_fields_cannot_change() -> None:
    _, table = _table()
    with pytest.raises(IcebergError, match=r"primary key \(ID\) and cannot change"):
        schema_commands("PUBLIC", table, _schema(_current(table), key=(0, 1)))


def test_a_dropped_columns_id_is_never_given_again() -> None:
    cat, table = _table()
    fields = _current(table)
    dropped = _applied(cat, [c.DropColumnsCommand(table="T", columns=[fields[2].name])])
    with pytest.raises(IcebergError, match="never reuses a column id"):
        schema_commands("PUBLIC", dropped, _schema(fields))
