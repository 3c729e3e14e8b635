"""create_schema and drop_schema, name rules, and DDL refused in the SYSTEM schema."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from catalog import CatalogEvent, ColumnType, ErrorCode
from catalog import commands as c
from catalog.commands import CommandBase
from tests.unit.catalog.helpers import (
    FIRST_FREE_ID,
    PUBLIC_ID,
    SYSTEM_ID,
    apply,
    bad_shape,
    catalog_with_default_zone,
    create_table,
    entry_types,
    events,
    key,
    refused,
    run,
    with_index,
    with_table,
)

# -- names (shared by every command through the ``Name`` type) ------------------------------


@pytest.mark.parametrize(
    "name",
    ["S", "s", "a" * 128, "Ümlaut", "with space", "x.y", "日本", " leading", "1"],
)
def test_accepted_names(name: str) -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name=name))
    assert cat.schema(name).name == name


@pytest.mark.parametrize(
    "name",
    ["", " ", "\t", "a" * 129, "a\x00b", "a\nb", "tab\there", "\x7f", "bell\x07", "\x9f"],
)
def test_refused_names(name: str) -> None:
    bad_shape(lambda: c.CreateSchema(name=name))
    bad_shape(lambda: c.parse({"op": "create_schema", "name": name}))


@pytest.mark.parametrize(
    "build",
    [
        lambda: c.CreateZone(name=""),
        lambda: c.CreateTable(name="", columns=(key(),), primary_key=("ID",)),
        lambda: c.CreateTable(name="T\n", columns=(key(),), primary_key=("ID",)),
        lambda: c.CreateTable(name="T", columns=(key("a" * 129),), primary_key=("a" * 129,)),
        lambda: c.CreateIndex(table="T", name="I\x00", columns=("A",)),
        lambda: c.CreateIndex(table="T", name="I", columns=("",)),
        lambda: c.RenameTable(name="T", new_name=""),
        lambda: c.RenameIndex(name="I", new_name="a" * 129),
        lambda: c.RenameZone(name="Z", new_name="\x01"),
        lambda: c.DropTable(schema="", name="T"),
        lambda: c.AddColumns(table="T", columns=(c.Column(name=" ", type=ColumnType.INT8),)),
        lambda: c.DropColumns(table="T", columns=("",)),
        lambda: c.AlterColumn(table="T", column="\x1b"),
    ],
)
def test_name_rules_apply_to_every_named_field(build: Callable[[], object]) -> None:
    bad_shape(build)


def test_names_are_case_sensitive() -> None:
    cat = apply(
        catalog_with_default_zone(), c.CreateSchema(name="public"), c.CreateSchema(name="Public")
    )
    assert {s.name for s in cat.schemas()} == {"PUBLIC", "SYSTEM", "public", "Public"}
    assert cat.find_schema("pUBLIC") is None


# -- create_schema ---------------------------------------------------------------------------


def test_create_schema() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, c.CreateSchema(name="S"))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_schema", "object_id_gen"]
    assert events(prepared) == [CatalogEvent.SCHEMA_CREATE, None]
    new = prepared.catalog
    schema = new.schema("S")
    assert schema.id == FIRST_FREE_ID
    assert new.schema_by_id(FIRST_FREE_ID) == schema
    assert new.object_id_gen == FIRST_FREE_ID + 1
    assert new.schema_tables(schema.id) == []
    assert cat.find_schema("S") is None


def test_create_schema_ids_come_from_the_shared_counter() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S1"), c.CreateZone(name="Z"))
    cat = apply(cat, c.CreateSchema(name="S2"))
    assert [cat.schema("S1").id, cat.zone("Z").id, cat.schema("S2").id] == [3, 4, 5]


@pytest.mark.parametrize("name", ["PUBLIC", "S"])
def test_create_existing_schema_is_refused(name: str) -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    refused(cat, ErrorCode.SCHEMA_EXISTS, c.CreateSchema(name=name))


def test_create_schema_if_not_exists_is_a_no_op() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    prepared = run(cat, c.CreateSchema(name="S", if_not_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    assert prepared.catalog.digest() == cat.digest()


def test_create_schema_twice_in_one_batch_is_refused_as_a_whole() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.SCHEMA_EXISTS, c.CreateSchema(name="S"), c.CreateSchema(name="S"))
    prepared = run(cat, c.CreateSchema(name="S"), c.CreateSchema(name="S", if_not_exists=True))
    assert prepared.applied == (True, False)


def test_later_commands_see_the_new_schema() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"), create_table(schema="S"))
    table = cat.table("S", "T")
    assert table.schema_id == cat.schema("S").id
    assert cat.find_table("PUBLIC", "T") is None


# -- drop_schema -----------------------------------------------------------------------------


def test_drop_empty_schema() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    prepared = run(cat, c.DropSchema(name="S"))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["drop_schema"]
    assert events(prepared) == [CatalogEvent.SCHEMA_DROP]
    assert prepared.catalog.find_schema("S") is None
    assert cat.find_schema("S") is not None


def test_dropped_schema_name_can_be_reused_under_a_new_id() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    old_id = cat.schema("S").id
    cat = apply(cat, c.DropSchema(name="S"), c.CreateSchema(name="S"))
    assert cat.schema("S").id == old_id + 1


def test_drop_missing_schema() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.DropSchema(name="S"))
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.DropSchema(name="public"))
    prepared = run(cat, c.DropSchema(name="S", if_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()


@pytest.mark.parametrize("name", ["SYSTEM", "INFORMATION_SCHEMA"])
@pytest.mark.parametrize("cascade", [False, True])
def test_system_schemas_cannot_be_dropped(name: str, cascade: bool) -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropSchema(name=name, cascade=cascade))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropSchema(name=name, if_exists=True))


def test_non_empty_schema_needs_cascade() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"), create_table(schema="S"))
    refused(cat, ErrorCode.SCHEMA_NOT_EMPTY, c.DropSchema(name="S"))
    refused(cat, ErrorCode.SCHEMA_NOT_EMPTY, c.DropSchema(name="S", if_exists=True))


def test_drop_schema_cascade_removes_tables_and_indexes() -> None:
    cat = apply(
        catalog_with_default_zone(),
        c.CreateSchema(name="S"),
        create_table("T1", schema="S"),
        create_table("T2", schema="S"),
    )
    cat = with_index(cat, "I1", ("A",), table="T1", schema="S")
    cat = with_table(cat, "KEEP")  # in PUBLIC
    t1, t2 = cat.table("S", "T1"), cat.table("S", "T2")
    i1 = cat.index("S", "I1")

    prepared = run(cat, c.DropSchema(name="S", cascade=True))

    assert entry_types(prepared) == [
        "remove_index",
        "remove_index",
        "drop_table",
        "remove_index",
        "drop_table",
        "drop_schema",
    ]
    assert [e.model_dump().get("index_id") for e in prepared.entries[:2]] == [t1.pk_index_id, i1.id]
    assert events(prepared) == [
        CatalogEvent.INDEX_REMOVED,
        CatalogEvent.INDEX_REMOVED,
        CatalogEvent.TABLE_DROP,
        CatalogEvent.INDEX_REMOVED,
        CatalogEvent.TABLE_DROP,
        CatalogEvent.SCHEMA_DROP,
    ]
    new = prepared.catalog
    assert new.find_schema("S") is None
    assert [t.name for t in new.tables()] == ["KEEP"]
    assert [i.name for i in new.indexes()] == ["KEEP_PK"]
    for table in (t1, t2):
        assert not new.has_table(table.id)
        assert new.table_indexes(table.id) == []
    assert new.zone_tables(t1.zone_id) == [new.table("PUBLIC", "KEEP")]


def test_cascade_on_an_empty_schema_just_drops_it() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    prepared = run(cat, c.DropSchema(name="S", cascade=True))
    assert entry_types(prepared) == ["drop_schema"]


def test_refused_drop_schema_changes_nothing_in_a_batch() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"), create_table(schema="S"))
    refused(
        cat,
        ErrorCode.SCHEMA_NOT_EMPTY,
        c.DropTable(schema="S", name="X", if_exists=True),
        c.CreateSchema(name="S2"),
        c.DropSchema(name="S"),
    )


# -- DDL in the SYSTEM schema --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        create_table(schema="SYSTEM"),
        create_table(schema="SYSTEM", if_not_exists=True),
        c.DropTable(schema="SYSTEM", name="T"),
        c.DropTable(schema="SYSTEM", name="T", if_exists=True),
        c.RenameTable(schema="SYSTEM", name="T", new_name="U"),
        c.AddColumns(
            schema="SYSTEM", table="T", columns=(c.Column(name="X", type=ColumnType.INT8),)
        ),
        c.DropColumns(schema="SYSTEM", table="T", columns=("A",)),
        c.AlterColumn(schema="SYSTEM", table="T", column="A", nullable=True),
        c.CreateIndex(schema="SYSTEM", table="T", name="I", columns=("A",)),
        c.DropIndex(schema="SYSTEM", name="I"),
        c.DropIndex(schema="SYSTEM", name="I", if_exists=True),
        c.RenameIndex(schema="SYSTEM", name="I", new_name="J"),
    ],
    ids=lambda cmd: str(cmd.model_dump()["op"]),
)
def test_ddl_in_system_schema_is_refused(command: CommandBase) -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.VALIDATION_ERROR, command)
    assert cat.schema_tables(SYSTEM_ID) == []


@pytest.mark.parametrize(
    "command",
    [
        create_table(schema="S"),
        c.DropTable(schema="S", name="T"),
        c.RenameTable(schema="S", name="T", new_name="U"),
        c.AddColumns(schema="S", table="T", columns=(c.Column(name="X", type=ColumnType.INT8),)),
        c.DropColumns(schema="S", table="T", columns=("A",)),
        c.AlterColumn(schema="S", table="T", column="A", nullable=True),
        c.CreateIndex(schema="S", table="T", name="I", columns=("A",)),
        c.DropIndex(schema="S", name="I"),
        c.RenameIndex(schema="S", name="I", new_name="J"),
    ],
    ids=lambda cmd: str(cmd.model_dump()["op"]),
)
def test_ddl_in_missing_schema_is_refused(command: CommandBase) -> None:
    refused(catalog_with_default_zone(), ErrorCode.SCHEMA_NOT_FOUND, command)


@pytest.mark.parametrize(
    "command",
    [
        c.DropTable(schema="S", name="T", if_exists=True),
        c.DropIndex(schema="S", name="I", if_exists=True),
    ],
)
def test_drop_if_exists_in_missing_schema_is_a_no_op(command: CommandBase) -> None:
    # Ignite: DROP TABLE/INDEX IF EXISTS does not fail on a missing schema either.
    prepared = run(catalog_with_default_zone(), command)
    assert prepared.applied == (False,)


def test_public_schema_is_the_default() -> None:
    cat = with_table()
    assert cat.table("PUBLIC", "T").schema_id == PUBLIC_ID
    assert create_table().schema_ == "PUBLIC"
