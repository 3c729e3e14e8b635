"""Ports of Ignite's ``CatalogTableTest``: tables and their columns, added and dropped.

Creating, dropping and renaming tables, ADD and DROP COLUMN, the events they fire and the
table's schema version. ALTER COLUMN is in ``test_catalog_table_alter_column.py``, the
IF [NOT] EXISTS tests in ``test_catalog_table_if_exists.py`` and ``testCreateTableWithNamedPk``
in ``test_table_primary_key.py``. Ignite reads an earlier catalog by time ("catalog from the
past"); here the earlier ``Catalog`` object is kept and checked to be unchanged.
"""

from __future__ import annotations

from catalog import Catalog, CatalogEvent, ColumnType, ErrorCode, IndexKind, IndexStatus
from catalog.descriptors.zones import ConsistencyMode
from catalog.entries.tables import NewColumnsEntry, RenameTableEntry
from catalog.event_feed import event_subject
from tests.unit.catalog.helpers import entry_types, events
from tests.unit.catalog.ignite.support import (
    SIMPLE_TABLE,
    applied,
    simple_table,
    sql,
    sql_refused,
)

SOME_TABLE = "CREATE TABLE {name} (KEY1 INT NOT NULL, VAL1 INT, PRIMARY KEY (KEY1))"
"""Ignite's ``createSomeTable``: a key and one value column."""


def test_create_table() -> None:
    before = Catalog.initial()
    cat = applied(
        before,
        "CREATE TABLE TEST_TABLE (KEY1 INT NOT NULL, KEY2 INT NOT NULL, VAL INT, "
        "PRIMARY KEY (KEY1, KEY2)) COLOCATE BY (KEY2)",
    )
    # The earlier version has neither the table nor its key index.
    assert before.find_table("PUBLIC", "TEST_TABLE") is None
    assert before.find_index("PUBLIC", "TEST_TABLE_PK") is None

    table = cat.table("PUBLIC", "TEST_TABLE")
    pk_index = cat.index("PUBLIC", "TEST_TABLE_PK")
    assert cat.table_by_id(table.id) == table and cat.index_by_id(pk_index.id) == pk_index
    assert before.find_table_by_id(table.id) is None
    default_zone = cat.default_zone()
    assert default_zone is not None
    assert (table.name, table.zone_id) == ("TEST_TABLE", default_zone.id)
    assert (table.primary_key, table.colocation_columns) == ((0, 1), (1,))

    assert (pk_index.name, pk_index.table_id, table.pk_index_id) == (
        "TEST_TABLE_PK",
        table.id,
        pk_index.id,
    )
    assert [column.column_id for column in pk_index.columns] == [0, 1]
    assert pk_index.kind is IndexKind.HASH and pk_index.unique and pk_index.created_with_table
    assert pk_index.status is IndexStatus.AVAILABLE

    key1 = table.column("KEY1")
    assert key1 is not None and key1.precision is None  # an INT takes no precision
    assert [(c.id, c.name) for c in table.columns] == [(0, "KEY1"), (1, "KEY2"), (2, "VAL")]


def test_create_multiple_tables() -> None:
    cat = applied(simple_table(), SIMPLE_TABLE.format(name="TEST_TABLE_2"))
    table1, table2 = cat.table("PUBLIC", "TEST_TABLE"), cat.table("PUBLIC", "TEST_TABLE_2")
    assert table1.id != table2.id
    index1, index2 = cat.index("PUBLIC", "TEST_TABLE_PK"), cat.index("PUBLIC", "TEST_TABLE_2_PK")
    assert index1.id != index2.id
    assert (index1.table_id, index2.table_id) == (table1.id, table2.id)


def test_create_table_with_same_name_is_not_possible() -> None:
    text = "CREATE TABLE TEST_TABLE (KEY1 INT, KEY2 INT, PRIMARY KEY (KEY1, KEY2))"
    cat = applied(Catalog.initial(), text)
    error = sql_refused(cat, ErrorCode.TABLE_EXISTS, text)
    assert "PUBLIC.TEST_TABLE already exists" in error.message


def test_drop_table() -> None:
    before = simple_table()
    table = before.table("PUBLIC", "TEST_TABLE")
    pk_index = before.index("PUBLIC", "TEST_TABLE_PK")
    cat = applied(before, "DROP TABLE TEST_TABLE")

    # The earlier version still has both, by name and by id.
    assert before.table_by_id(table.id) == table
    assert before.index_by_id(pk_index.id) == pk_index
    assert before.find_table("PUBLIC", "TEST_TABLE") == table

    assert cat.find_table("PUBLIC", "TEST_TABLE") is None
    assert cat.find_table_by_id(table.id) is None
    assert cat.find_index("PUBLIC", "TEST_TABLE_PK") is None
    assert cat.find_index_by_id(pk_index.id) is None
    assert cat.find_schema("PUBLIC") is not None


def test_re_create_table_with_same_name() -> None:
    before = simple_table()
    table1 = before.table("PUBLIC", "TEST_TABLE")
    dropped = applied(before, "DROP TABLE TEST_TABLE")
    assert dropped.find_table("PUBLIC", "TEST_TABLE") is None
    cat = applied(dropped, SIMPLE_TABLE.format(name="TEST_TABLE"))
    table2 = cat.table("PUBLIC", "TEST_TABLE")
    assert table1.id != table2.id
    # The earlier version keeps the first table and never had the second.
    assert before.find_table_by_id(table1.id) == table1
    assert before.find_table_by_id(table2.id) is None


def test_add_column() -> None:
    before = simple_table()
    cat = applied(before, "ALTER TABLE TEST_TABLE ADD COLUMN NEWCOL VARCHAR(11) DEFAULT 'Ignite!'")
    old = before.table("PUBLIC", "TEST_TABLE")
    assert old.column("NEWCOL") is None
    max_column_id = max(column.id for column in old.columns)

    table = cat.table("PUBLIC", "TEST_TABLE")
    column = table.column("NEWCOL")
    assert column is not None
    assert (column.id, column.name, column.type) == (max_column_id + 1, "NEWCOL", ColumnType.STRING)
    assert column.nullable and column.default == "Ignite!"
    assert (column.length, column.precision, column.scale) == (11, None, None)
    assert [c.name for c in table.columns].index("NEWCOL") == 6
    assert table.column_by_id(max_column_id + 1) == column


def test_drop_column() -> None:
    before = simple_table()
    cat = applied(before, "ALTER TABLE TEST_TABLE DROP COLUMN VAL")
    old = before.table("PUBLIC", "TEST_TABLE")
    assert old.column("VAL") is not None and len(old.columns) == 6

    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("VAL") is None and len(table.columns) == 5
    assert table.columns == tuple(c for c in old.columns if c.name != "VAL")


def test_add_drop_multiple_columns() -> None:
    cat = simple_table()
    sql_refused(cat, ErrorCode.COLUMN_EXISTS, "ALTER TABLE TEST_TABLE ADD (NEWCOL INT, VAL INT)")
    cat = applied(cat, "ALTER TABLE TEST_TABLE ADD COLUMN (NEWCOL INT, NEWCOL2 INT)")
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("NEWCOL") is not None and table.column("NEWCOL2") is not None
    cat = applied(cat, "ALTER TABLE TEST_TABLE DROP COLUMN (NEWCOL, NEWCOL2)")
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("NEWCOL") is None and table.column("NEWCOL2") is None


def test_drop_not_existing_table() -> None:
    error = sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "DROP TABLE TEST_TABLE")
    assert "PUBLIC.TEST_TABLE not found" in error.message


def test_drop_column_with_missing_table_columns() -> None:
    text = 'ALTER TABLE TEST_TABLE DROP COLUMN "fake"'
    error = sql_refused(simple_table(), ErrorCode.COLUMN_NOT_FOUND, text)
    assert "column fake not found in table TEST_TABLE" in error.message


def test_drop_column_with_primary_key_columns() -> None:
    text = "ALTER TABLE TEST_TABLE DROP COLUMN ID"
    error = sql_refused(simple_table(), ErrorCode.VALIDATION_ERROR, text)
    assert "cannot drop primary-key column ID" in error.message


def _with_simple_index() -> Catalog:
    """Ignite's ``simpleIndex``: sorted index ``myIndex`` on VAL ASC NULLS LAST."""
    return applied(simple_table(), 'CREATE INDEX "myIndex" ON TEST_TABLE (VAL ASC NULLS LAST)')


def test_drop_column_with_index_columns() -> None:
    text = "ALTER TABLE TEST_TABLE DROP COLUMN VAL"
    error = sql_refused(_with_simple_index(), ErrorCode.VALIDATION_ERROR, text)
    assert "cannot drop column VAL: an index uses it" in error.message


def test_drop_multiple_columns() -> None:
    before = simple_table()
    cat = applied(before, "ALTER TABLE TEST_TABLE DROP COLUMN VAL, DEC, STR")
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert all(table.column(name) is None for name in ("VAL", "DEC", "STR"))
    assert len(table.columns) == len(before.table("PUBLIC", "TEST_TABLE").columns) - 3


def test_drop_multiple_columns_with_missing_column() -> None:
    # ``sql_refused`` also checks that nothing of the batch (VAL) was dropped.
    text = 'ALTER TABLE TEST_TABLE DROP COLUMN VAL, "fake"'
    error = sql_refused(simple_table(), ErrorCode.COLUMN_NOT_FOUND, text)
    assert "column fake not found in table TEST_TABLE" in error.message


def test_drop_multiple_columns_with_primary_key_column() -> None:
    text = "ALTER TABLE TEST_TABLE DROP COLUMN VAL, ID"
    error = sql_refused(simple_table(), ErrorCode.VALIDATION_ERROR, text)
    assert "cannot drop primary-key column ID" in error.message


def test_drop_multiple_columns_with_index_column() -> None:
    text = "ALTER TABLE TEST_TABLE DROP COLUMN VAL, DEC"
    error = sql_refused(_with_simple_index(), ErrorCode.VALIDATION_ERROR, text)
    assert "cannot drop column VAL: an index uses it" in error.message


def test_drop_multiple_columns_from_non_existing_table() -> None:
    text = "ALTER TABLE TEST_TABLE DROP COLUMN VAL, DEC"
    error = sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, text)
    assert "PUBLIC.TEST_TABLE not found" in error.message


def test_add_column_with_existing_name() -> None:
    text = "ALTER TABLE TEST_TABLE ADD COLUMN ID INT"
    error = sql_refused(simple_table(), ErrorCode.COLUMN_EXISTS, text)
    assert "column ID already exists" in error.message


def test_table_events() -> None:
    cat = Catalog.initial()
    seen: list[CatalogEvent | None] = []
    for text in (
        *(SIMPLE_TABLE.format(name=name) for name in ("T1", "T2", "T3")),
        "DROP TABLE T1",
        "DROP TABLE T2",
    ):
        prepared = sql(cat, text)
        seen += events(prepared)
        cat = prepared.catalog
    table_events = [e for e in seen if e in (CatalogEvent.TABLE_CREATE, CatalogEvent.TABLE_DROP)]
    assert table_events == [CatalogEvent.TABLE_CREATE] * 3 + [CatalogEvent.TABLE_DROP] * 2


def test_tables() -> None:
    initial = Catalog.initial()
    after_first = applied(initial, SIMPLE_TABLE.format(name="TEST_TABLE0"))
    latest = applied(after_first, SIMPLE_TABLE.format(name="TEST_TABLE1"))
    assert initial.tables() == []
    assert after_first.tables() == [after_first.table("PUBLIC", "TEST_TABLE0")]
    assert {t.name for t in latest.tables()} == {"TEST_TABLE0", "TEST_TABLE1"}
    assert latest.table("PUBLIC", "TEST_TABLE0") == after_first.table("PUBLIC", "TEST_TABLE0")


def test_create_tables_within_different_zones() -> None:
    cat = applied(
        simple_table(),
        "CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15) STORAGE PROFILES ['test_profile']",
    )
    cat = applied(
        cat,
        'CREATE TABLE "test_table_zone" (ID INT, VAL INT, PRIMARY KEY (ID)) ZONE TEST_ZONE_NAME',
    )
    default_zone, zone = cat.zone("Default"), cat.zone("TEST_ZONE_NAME")
    assert len(cat.tables()) == 2
    table_id = cat.table("PUBLIC", "TEST_TABLE").id
    custom_table_id = cat.table("PUBLIC", "test_table_zone").id
    assert [t.id for t in cat.zone_tables(default_zone.id)] == [table_id]
    assert [t.id for t in cat.zone_tables(zone.id)] == [custom_table_id]


def test_table_rename() -> None:
    before = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    cat = applied(before, "ALTER TABLE TEST_TABLE RENAME TO TEST_TABLE_2")
    previous = before.table("PUBLIC", "TEST_TABLE")
    current = cat.table("PUBLIC", "TEST_TABLE_2")
    assert (previous.name, current.name) == ("TEST_TABLE", "TEST_TABLE_2")
    assert before.find_table("PUBLIC", "TEST_TABLE_2") is None
    assert cat.find_table("PUBLIC", "TEST_TABLE") is None
    # Everything else is left as it was: id, columns, keys, key index, schema and version.
    assert current.id == previous.id and current.columns == previous.columns
    assert current.colocation_columns == previous.colocation_columns
    assert current.primary_key == previous.primary_key
    assert current.pk_index_id == previous.pk_index_id
    assert current.schema_id == previous.schema_id
    assert current.schema_version == previous.schema_version
    assert current == previous.model_copy(update={"name": "TEST_TABLE_2"})


def test_table_rename_and_create_table_with_same_name() -> None:
    cat = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    cat = applied(cat, "ALTER TABLE TEST_TABLE RENAME TO TEST_TABLE_2")
    cat = applied(cat, SOME_TABLE.format(name="TEST_TABLE"))
    assert cat.find_table("PUBLIC", "TEST_TABLE") is not None
    assert cat.find_table("PUBLIC", "TEST_TABLE_2") is not None


def test_add_column_increments_table_version() -> None:
    cat = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    cat = applied(cat, "ALTER TABLE TEST_TABLE ADD COLUMN VAL2 INT")
    assert cat.table("PUBLIC", "TEST_TABLE").schema_version == 2


def test_create_table_produces_table_version1() -> None:
    cat = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    assert cat.table("PUBLIC", "TEST_TABLE").schema_version == 1


def test_drop_column_increments_table_version() -> None:
    cat = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    cat = applied(cat, "ALTER TABLE TEST_TABLE DROP COLUMN VAL1")
    assert cat.table("PUBLIC", "TEST_TABLE").schema_version == 2


def test_table_rename_fires_event() -> None:
    before = applied(Catalog.initial(), SOME_TABLE.format(name="TEST_TABLE"))
    prepared = sql(before, "ALTER TABLE TEST_TABLE RENAME TO TEST_TABLE_2")
    entry = prepared.entries[0]
    assert isinstance(entry, RenameTableEntry) and entry.event is CatalogEvent.TABLE_ALTER
    table = prepared.catalog.table("PUBLIC", "TEST_TABLE_2")
    assert (entry.table_id, entry.new_name) == (table.id, table.name)
    subject = event_subject(entry.subject(before, prepared.catalog), before, prepared.catalog)
    assert (subject.id, subject.name, subject.previous_name) == (
        table.id,
        "TEST_TABLE_2",
        "TEST_TABLE",
    )


def test_column_events() -> None:
    # Without the table nothing is applied, so nothing fires.
    sql_refused(
        Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "ALTER TABLE TEST_TABLE ADD NEWCOL INT"
    )
    added = sql(simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN NEWCOL INT")
    assert entry_types(added) == ["new_columns"]
    assert events(added) == [CatalogEvent.TABLE_ALTER]
    dropped = sql(added.catalog, "ALTER TABLE TEST_TABLE DROP COLUMN NEWCOL")
    assert entry_types(dropped) == ["drop_columns"]
    assert events(dropped) == [CatalogEvent.TABLE_ALTER]


def test_get_table_by_id_and_catalog_version() -> None:
    before = Catalog.initial()
    cat = applied(before, SIMPLE_TABLE.format(name="TEST_TABLE"))
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert before.find_table_by_id(table.id) is None
    assert cat.table_by_id(table.id) == table


# -- ADD COLUMN with several columns -----------------------------------------------------------


def test_add_multiple_columns_assigns_sequential_ids() -> None:
    before = simple_table()
    max_id = max(c.id for c in before.table("PUBLIC", "TEST_TABLE").columns)
    cat = applied(
        before,
        "ALTER TABLE TEST_TABLE ADD COLUMN (COL_A INT, COL_B VARCHAR(100), COL_C DECIMAL(11, 2))",
    )
    table = cat.table("PUBLIC", "TEST_TABLE")
    ids = [table.column(name) for name in ("COL_A", "COL_B", "COL_C")]
    assert [c.id if c else None for c in ids] == [max_id + 1, max_id + 2, max_id + 3]


def test_add_multiple_columns_preserves_properties() -> None:
    cat = applied(
        simple_table(),
        "ALTER TABLE TEST_TABLE ADD COLUMN (COL_INT INT DEFAULT 42, "
        "COL_STR VARCHAR(200) NOT NULL DEFAULT 'hello', COL_DEC DECIMAL(15, 5))",
    )
    table = cat.table("PUBLIC", "TEST_TABLE")
    col_int, col_str, col_dec = (table.column(n) for n in ("COL_INT", "COL_STR", "COL_DEC"))
    assert col_int is not None and col_str is not None and col_dec is not None
    assert (col_int.type, col_int.nullable, col_int.default) == (ColumnType.INT32, True, 42)
    assert (col_str.type, col_str.length, col_str.default) == (ColumnType.STRING, 200, "hello")
    assert not col_str.nullable
    assert (col_dec.type, col_dec.nullable) == (ColumnType.DECIMAL, True)
    assert (col_dec.precision, col_dec.scale) == (15, 5)


def test_add_multiple_columns_preserves_order() -> None:
    cat = applied(
        simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN (COL_A INT, COL_B INT, COL_C INT)"
    )
    names = [c.name for c in cat.table("PUBLIC", "TEST_TABLE").columns]
    # The simple table has six columns; the new ones follow them, in the order given.
    assert names[6:] == ["COL_A", "COL_B", "COL_C"]
    assert [names.index(n) for n in ("COL_A", "COL_B", "COL_C")] == [6, 7, 8]


def test_add_multiple_columns_increments_table_version_once() -> None:
    before = simple_table()
    assert before.table("PUBLIC", "TEST_TABLE").schema_version == 1
    cat = applied(before, "ALTER TABLE TEST_TABLE ADD COLUMN (COL_A INT, COL_B INT, COL_C INT)")
    assert cat.table("PUBLIC", "TEST_TABLE").schema_version == 2


def test_add_multiple_columns_time_travel_visibility() -> None:
    before = simple_table()
    cat = applied(before, "ALTER TABLE TEST_TABLE ADD COLUMN (COL_A INT, COL_B INT)")
    old, new = before.table("PUBLIC", "TEST_TABLE"), cat.table("PUBLIC", "TEST_TABLE")
    assert old.column("COL_A") is None and old.column("COL_B") is None
    assert new.column("COL_A") is not None and new.column("COL_B") is not None


def test_add_multiple_columns_fires_event_with_all_columns() -> None:
    prepared = sql(simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN (COL_A INT, COL_B INT)")
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]  # one event for both
    (entry,) = prepared.entries
    assert isinstance(entry, NewColumnsEntry)
    assert [c.name for c in entry.columns] == ["COL_A", "COL_B"]


def _check_default_zone_properties(cat: Catalog) -> None:
    """Ignite's ``checkDefaultZoneProperties``: the one zone is the default, as created."""
    zone = cat.default_zone()
    assert zone is not None and cat.zones() == [zone]
    assert (zone.name, zone.partitions, zone.replicas, zone.quorum) == ("Default", 25, 1, 1)
    assert (zone.auto_scale_up_s, zone.auto_scale_down_s) == (0, None)
    assert (zone.filter, zone.storage_profiles) == ("$..*", ("default",))
    assert zone.consistency_mode is ConsistencyMode.STRONG_CONSISTENCY


def test_create_default_zone_lazily_if_no_zones_provided() -> None:
    initial = Catalog.initial()
    assert initial.zones() == [] and initial.default_zone() is None
    _check_default_zone_properties(applied(initial, SIMPLE_TABLE.format(name="TEST_TABLE")))


def test_default_zone_creation_is_idempotent() -> None:
    cat = simple_table("TEST_TABLE0")
    cat = applied(cat, SIMPLE_TABLE.format(name="TEST_TABLE1"))
    _check_default_zone_properties(cat)


def test_default_zone_cannot_be_created_if_default_name_is_already_in_use() -> None:
    cat = applied(Catalog.initial(), "CREATE ZONE \"Default\" STORAGE PROFILES ['default']")
    error = sql_refused(cat, ErrorCode.ZONE_EXISTS, SIMPLE_TABLE.format(name="TEST_TABLE"))
    assert "a zone named Default already exists" in str(error)
    assert len(cat.zones()) == 1 and cat.default_zone() is None
