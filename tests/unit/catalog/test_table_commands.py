"""create_table, drop_table and rename_table."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from catalog import (
    Catalog,
    CatalogEvent,
    Collation,
    ColumnType,
    ErrorCode,
    IndexKind,
    IndexStatus,
)
from catalog import commands as c
from catalog.descriptors.tables import INITIAL_TABLE_VERSION
from catalog.descriptors.zones import default_zone
from tests.unit.catalog.helpers import (
    DEFAULT_ZONE_ID,
    FIRST_FREE_ID,
    PUBLIC_ID,
    apply,
    bad_shape,
    catalog_with_default_zone,
    col,
    create_table,
    entry_types,
    events,
    key,
    refused,
    run,
    with_index,
    with_table,
)

# -- create_table: accepted ----------------------------------------------------------------


def test_create_table() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, create_table())
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_table", "new_index", "object_id_gen"]
    assert events(prepared) == [CatalogEvent.TABLE_CREATE, CatalogEvent.INDEX_CREATE, None]

    new = prepared.catalog
    table = new.table("PUBLIC", "T")
    assert table.id == FIRST_FREE_ID
    assert table.pk_index_id == FIRST_FREE_ID + 1
    assert new.object_id_gen == FIRST_FREE_ID + 2
    assert table.schema_id == PUBLIC_ID
    assert table.zone_id == DEFAULT_ZONE_ID
    assert table.schema_version == INITIAL_TABLE_VERSION == 1
    assert [v.version for v in table.versions] == [1]
    assert [(col.id, col.name) for col in table.columns] == [(0, "ID"), (1, "A"), (2, "B")]
    assert table.next_column_id == 3
    assert table.primary_key == (0,)
    assert table.colocation_columns == (0,)
    assert new.table_by_id(table.id) == table
    assert cat.find_table("PUBLIC", "T") is None


def test_create_table_resolves_column_parameters_and_defaults() -> None:
    cat = with_table(
        columns=(
            key(),
            col("S", ColumnType.STRING),
            col("D", ColumnType.DECIMAL, precision=10, scale=2, default="1.5"),
            col("TS", ColumnType.TIMESTAMP),
            col("N", ColumnType.INT16, nullable=False, default=7),
        )
    )
    columns = {col.name: col for col in cat.table("PUBLIC", "T").columns}
    assert (columns["S"].length, columns["S"].precision, columns["S"].scale) == (65536, None, None)
    assert (columns["D"].precision, columns["D"].scale, columns["D"].default) == (10, 2, "1.50")
    assert columns["TS"].precision == 6
    assert (columns["N"].nullable, columns["N"].default) == (False, 7)
    assert columns["ID"].nullable is False
    assert columns["S"].nullable is True


@pytest.mark.parametrize("kind", [IndexKind.HASH, IndexKind.SORTED])
def test_primary_key_index_is_created_available_with_the_table(kind: IndexKind) -> None:
    cat = with_table(
        columns=(key("K1"), key("K2", ColumnType.STRING), col("V")),
        primary_key=("K2", "K1"),
        primary_key_kind=kind,
    )
    table = cat.table("PUBLIC", "T")
    pk = cat.index("PUBLIC", "T_PK")
    assert pk.id == table.pk_index_id
    assert cat.index_by_id(pk.id) == pk
    assert pk.table_id == table.id
    assert pk.schema_id == PUBLIC_ID
    assert pk.kind is kind
    assert pk.unique is True
    assert pk.status is IndexStatus.AVAILABLE
    assert pk.created_with_table is True
    assert pk.column_ids == (1, 0)
    expected = Collation.ASC_NULLS_FIRST if kind is IndexKind.SORTED else None
    assert [ic.collation for ic in pk.columns] == [expected, expected]
    assert table.primary_key == (1, 0)
    assert table.colocation_columns == (1, 0)
    assert cat.table_indexes(table.id) == [pk]


def test_primary_key_kind_defaults_to_hash() -> None:
    assert with_table().index("PUBLIC", "T_PK").kind is IndexKind.HASH


def test_colocation_columns_a_subset_of_the_primary_key() -> None:
    cat = with_table(
        columns=(key("A"), key("B"), key("C"), col("V")),
        primary_key=("A", "B", "C"),
        colocation_columns=("C", "A"),
    )
    assert cat.table("PUBLIC", "T").colocation_columns == (2, 0)


def test_table_in_a_named_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    cat = apply(cat, create_table(zone="Z"), create_table("U"))
    zone_id = cat.zone("Z").id
    assert cat.table("PUBLIC", "T").zone_id == zone_id
    assert cat.table("PUBLIC", "U").zone_id == DEFAULT_ZONE_ID
    assert [t.name for t in cat.zone_tables(zone_id)] == ["T"]


def test_table_without_zone_goes_to_the_current_default_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"), c.SetDefaultZone(name="Z"))
    cat = apply(cat, create_table())
    assert cat.table("PUBLIC", "T").zone_id == cat.zone("Z").id


def test_names_are_case_sensitive() -> None:
    cat = apply(catalog_with_default_zone(), create_table("T"), create_table("t"))
    assert cat.table("PUBLIC", "T").id != cat.table("PUBLIC", "t").id
    assert {i.name for i in cat.indexes()} == {"T_PK", "t_PK"}


def test_same_table_name_in_two_schemas() -> None:
    cat = apply(
        catalog_with_default_zone(),
        c.CreateSchema(name="S"),
        create_table(),
        create_table(schema="S"),
    )
    assert cat.table("PUBLIC", "T").id != cat.table("S", "T").id
    assert cat.index("S", "T_PK").table_id == cat.table("S", "T").id


def test_longest_table_name_leaves_room_for_the_pk_suffix() -> None:
    # Every name is 1..128 characters, the PK index's "<TABLE>_PK" included.
    cat = with_table(name="a" * 125)
    assert cat.index("PUBLIC", "a" * 125 + "_PK").name == "a" * 125 + "_PK"
    bad_shape(lambda: create_table("a" * 126))


# -- create_table: refused -----------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: create_table(columns=()), id="no-columns"),
        pytest.param(lambda: create_table(columns=(key(), key())), id="duplicate-column"),
        pytest.param(lambda: create_table(primary_key=()), id="empty-pk"),
        pytest.param(lambda: create_table(primary_key=("X",)), id="pk-not-a-column"),
        pytest.param(lambda: create_table(primary_key=("id",)), id="pk-case-sensitive"),
        pytest.param(lambda: create_table(primary_key=("ID", "ID")), id="duplicate-pk-column"),
        pytest.param(lambda: create_table(primary_key=("A",)), id="nullable-pk-column"),
        pytest.param(lambda: create_table(primary_key=("ID", "A")), id="one-nullable-pk-column"),
        pytest.param(lambda: create_table(colocation_columns=()), id="empty-colocation"),
        pytest.param(lambda: create_table(colocation_columns=("A",)), id="colocation-not-pk"),
        pytest.param(
            lambda: create_table(colocation_columns=("ID", "ID")), id="duplicate-colocation"
        ),
        pytest.param(
            lambda: create_table(columns=(key(), col("A", ColumnType.INT8, default=1000))),
            id="bad-default",
        ),
        pytest.param(
            lambda: create_table(columns=(key(), col("A", ColumnType.INT8, length=3))),
            id="bad-parameter",
        ),
    ],
)
def test_create_table_refused_by_its_shape(build: Callable[[], object]) -> None:
    bad_shape(build)


def test_create_table_refused_when_parsed_too() -> None:
    error = bad_shape(
        lambda: c.parse(
            {
                "op": "create_table",
                "name": "T",
                "columns": [{"name": "ID", "type": "INT64"}],
                "primary_key": ["ID"],
            }
        )
    )
    assert "NOT NULL" in error.message


def test_create_existing_table() -> None:
    cat = with_table()
    refused(cat, ErrorCode.TABLE_EXISTS, create_table())
    prepared = run(cat, create_table(if_not_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    assert prepared.catalog.digest() == cat.digest()


def test_table_and_index_names_share_one_namespace() -> None:
    cat = with_index(with_table(), "I", ("A",))
    refused(cat, ErrorCode.INDEX_EXISTS, create_table("I"))
    # IF NOT EXISTS is about a table of that name; an index holding it is still a clash.
    refused(cat, ErrorCode.INDEX_EXISTS, create_table("I", if_not_exists=True))
    refused(cat, ErrorCode.INDEX_EXISTS, create_table("T_PK"))


def test_primary_key_index_name_must_be_free() -> None:
    cat = with_index(with_table(), "U_PK", ("A",))
    refused(cat, ErrorCode.INDEX_EXISTS, create_table("U"))
    cat = with_table(name="V_PK")
    refused(cat, ErrorCode.TABLE_EXISTS, create_table("V"))


def test_stopping_index_releases_its_name() -> None:
    cat = with_index(with_table(), "I", ("A",), status=IndexStatus.STOPPING)
    stopping = cat.index_by_id(cat.object_id_gen - 1)
    assert stopping.status is IndexStatus.STOPPING
    assert cat.find_index("PUBLIC", "I") is None
    cat = apply(cat, create_table("I"))
    assert cat.table("PUBLIC", "I").name == "I"
    assert cat.index_by_id(stopping.id) == stopping


def test_create_table_zone_errors() -> None:
    refused(catalog_with_default_zone(), ErrorCode.ZONE_NOT_FOUND, create_table(zone="Z"))
    refused(catalog_with_default_zone(), ErrorCode.ZONE_NOT_FOUND, create_table(zone="default"))


def test_a_first_table_without_a_zone_creates_the_default_zone() -> None:
    prepared = run(Catalog.initial(), create_table())
    assert entry_types(prepared)[:3] == ["new_zone", "set_default_zone", "object_id_gen"]
    cat = prepared.catalog
    (zone,) = cat.zones()
    assert cat.default_zone() == zone == default_zone(2)
    table = cat.table("PUBLIC", "T")
    assert (table.id, table.pk_index_id, table.zone_id) == (3, 4, zone.id)
    assert cat.object_id_gen == 5
    assert events(prepared)[:2] == [CatalogEvent.ZONE_CREATE, CatalogEvent.SET_DEFAULT_ZONE]


def test_later_tables_without_a_zone_find_the_created_default_zone() -> None:
    cat = apply(Catalog.initial(), create_table("A"), create_table("B"))
    (zone,) = cat.zones()
    cat = apply(cat, create_table("C"))
    assert cat.zones() == [zone]
    assert {t.zone_id for t in cat.tables()} == {zone.id}


def test_a_table_in_a_named_zone_creates_no_default_zone() -> None:
    cat = apply(Catalog.initial(), c.CreateZone(name="Z"), create_table(zone="Z"))
    assert [z.name for z in cat.zones()] == ["Z"]
    assert cat.default_zone() is None


def test_the_default_zone_is_not_created_over_a_zone_of_its_name() -> None:
    cat = apply(Catalog.initial(), c.CreateZone(name="Default", replicas=3))
    error = refused(cat, ErrorCode.ZONE_EXISTS, create_table())
    assert 'ZONE "Default"' in str(error) and "SET DEFAULT" in str(error)
    # Made the default, the zone of that name takes the table.
    cat = apply(cat, c.SetDefaultZone(name="Default"), create_table())
    assert cat.table("PUBLIC", "T").zone_id == cat.zone("Default").id
    assert cat.zone("Default").replicas == 3


def test_create_table_in_missing_schema() -> None:
    refused(catalog_with_default_zone(), ErrorCode.SCHEMA_NOT_FOUND, create_table(schema="S"))
    refused(catalog_with_default_zone(), ErrorCode.SCHEMA_NOT_FOUND, create_table(schema="public"))


def test_refused_second_command_leaves_nothing() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.TABLE_EXISTS, create_table(), create_table())
    refused(cat, ErrorCode.ZONE_NOT_FOUND, create_table(), create_table("U", zone="NOPE"))
    assert cat.tables() == []
    assert cat.object_id_gen == FIRST_FREE_ID


# -- drop_table ------------------------------------------------------------------------------


def test_drop_table_removes_every_index_then_the_table() -> None:
    cat = with_table()
    cat = with_index(cat, "R", ("A",))
    cat = with_index(cat, "B1", ("A",), status=IndexStatus.BUILDING)
    cat = with_index(cat, "AV", ("B",), status=IndexStatus.AVAILABLE)
    cat = with_index(cat, "ST", ("A", "B"), status=IndexStatus.STOPPING)
    cat = with_table(cat, "OTHER")
    table = cat.table("PUBLIC", "T")
    index_ids = [i.id for i in cat.table_indexes(table.id)]
    assert len(index_ids) == 5

    prepared = run(cat, c.DropTable(name="T"))

    assert entry_types(prepared) == ["remove_index"] * 5 + ["drop_table"]
    assert events(prepared) == [CatalogEvent.INDEX_REMOVED] * 5 + [CatalogEvent.TABLE_DROP]
    assert [e.model_dump().get("index_id") for e in prepared.entries[:5]] == index_ids
    assert index_ids[0] == table.pk_index_id
    new = prepared.catalog
    assert new.find_table("PUBLIC", "T") is None
    assert not new.has_table(table.id)
    assert new.table_indexes(table.id) == []
    assert [i.name for i in new.indexes()] == ["OTHER_PK"]
    assert [t.name for t in new.zone_tables(DEFAULT_ZONE_ID)] == ["OTHER"]
    assert [t.name for t in new.schema_tables(PUBLIC_ID)] == ["OTHER"]
    assert new.object_id_gen == cat.object_id_gen
    # The names are free again.
    again = apply(new, create_table(), create_table("R"))
    assert again.table("PUBLIC", "T").id == cat.object_id_gen


def test_drop_missing_table() -> None:
    cat = with_table()
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.DropTable(name="t"))
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.DropTable(name="T_PK"))
    prepared = run(cat, c.DropTable(name="X", if_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()


def test_drop_table_twice_in_one_batch() -> None:
    cat = with_table()
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.DropTable(name="T"), c.DropTable(name="T"))
    prepared = run(cat, c.DropTable(name="T"), c.DropTable(name="T", if_exists=True))
    assert prepared.applied == (True, False)


def test_create_and_drop_in_one_batch() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, create_table(), c.DropTable(name="T"))
    assert prepared.catalog.tables() == []
    assert prepared.catalog.indexes() == []
    assert prepared.catalog.object_id_gen == FIRST_FREE_ID + 2


# -- rename_table --------------------------------------------------------------------------


def test_rename_table_renames_its_pk_index() -> None:
    cat = with_index(with_table(), "I", ("A",))
    table = cat.table("PUBLIC", "T")
    prepared = run(cat, c.RenameTable(name="T", new_name="U"))
    assert entry_types(prepared) == ["rename_table", "rename_index"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER, CatalogEvent.INDEX_RENAME]
    new = prepared.catalog
    renamed = new.table("PUBLIC", "U")
    assert renamed.id == table.id
    assert renamed.schema_version == table.schema_version  # a rename is not a schema change
    assert renamed.columns == table.columns
    assert new.find_table("PUBLIC", "T") is None
    assert new.find_index("PUBLIC", "T_PK") is None
    pk = new.index("PUBLIC", "U_PK")
    assert pk.id == table.pk_index_id
    assert new.index("PUBLIC", "I").table_id == table.id  # other indexes keep their names
    # The old names are free.
    apply(new, create_table("T"))


def test_rename_table_back_and_forth_in_one_batch() -> None:
    cat = with_table()
    new = apply(cat, c.RenameTable(name="T", new_name="U"), c.RenameTable(name="U", new_name="T"))
    assert new.digest() == cat.digest()


def test_rename_table_refused() -> None:
    cat = with_index(with_table(), "I", ("A",))
    cat = with_table(cat, "OTHER")
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.RenameTable(name="X", new_name="Y"))
    refused(cat, ErrorCode.TABLE_EXISTS, c.RenameTable(name="T", new_name="OTHER"))
    refused(cat, ErrorCode.TABLE_EXISTS, c.RenameTable(name="T", new_name="T"))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameTable(name="T", new_name="I"))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameTable(name="T", new_name="OTHER_PK"))
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.RenameTable(schema="S", name="T", new_name="U"))


def test_rename_table_refused_when_new_pk_name_is_taken() -> None:
    cat = with_index(with_table(), "U_PK", ("A",))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameTable(name="T", new_name="U"))
    cat = with_table(with_table(), "V_PK")
    refused(cat, ErrorCode.TABLE_EXISTS, c.RenameTable(name="T", new_name="V"))


def test_rename_table_new_name_needs_room_for_the_pk_suffix() -> None:
    apply(with_table(), c.RenameTable(name="T", new_name="a" * 125))
    bad_shape(lambda: c.RenameTable(name="T", new_name="a" * 126))
