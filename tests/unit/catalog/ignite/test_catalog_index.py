"""Port of Ignite's ``CatalogIndexTest``: creating, dropping, renaming indexes and their lifecycle.

DDL goes through SQL (``CREATE [UNIQUE] INDEX ... USING HASH | SORTED``, ``DROP INDEX``,
``ALTER INDEX ... RENAME TO``); the lifecycle steps the index builder issues
(``StartBuildingIndex``, ``MakeIndexAvailable``, ``RemoveIndex``) are JSON commands. Catalogs
are immutable, so the catalog held from before a change plays Ignite's ``catalog(version)``
from the past. Ignite's event listeners become the events of the prepared batch's entries.
"""

from __future__ import annotations

import pytest

from catalog import (
    Catalog,
    CatalogEvent,
    Collation,
    ErrorCode,
    IndexDescriptor,
    IndexKind,
    IndexStatus,
    Prepared,
)
from catalog import commands as c
from catalog.entries import NewIndexEntry
from tests.unit.catalog.helpers import apply, events, refused, run
from tests.unit.catalog.ignite.support import (
    SIMPLE_TABLE,
    applied,
    simple_table,
    sql,
    sql_refused,
)

TABLE = "TEST_TABLE"
INDEX = "MYINDEX"
INDEX_2 = "MYINDEX2"

SOME_TABLE = "CREATE TABLE {name} (KEY1 INT, VAL1 INT, PRIMARY KEY (KEY1))"
"""Ignite's ``createSomeTable``: two INT columns keyed (and colocated) by KEY1."""

SIMPLE_INDEX = f"CREATE INDEX {INDEX} ON {TABLE} USING SORTED (VAL ASC NULLS LAST)"
"""Ignite's ``simpleIndex()``."""


def some_table(cat: Catalog | None = None, name: str = TABLE) -> Catalog:
    """Return ``cat`` (default: the initial catalog) with ``createSomeTable(name)``."""
    return applied(cat or Catalog.initial(), SOME_TABLE.format(name=name))


def some_index(cat: Catalog, table: str = TABLE, name: str = INDEX) -> Catalog:
    """Return ``cat`` with Ignite's ``createSomeIndex``: a hash index on KEY1."""
    return applied(cat, f"CREATE INDEX {name} ON {table} USING HASH (KEY1)")


def some_sorted_index(cat: Catalog, table: str = TABLE, name: str = INDEX) -> Catalog:
    """Return ``cat`` with Ignite's ``createSomeSortedIndex``: a sorted index on KEY1."""
    return applied(cat, f"CREATE INDEX {name} ON {table} USING SORTED (KEY1 ASC NULLS LAST)")


def index_id(cat: Catalog, name: str) -> int:
    """Return the id of the alive index ``PUBLIC.name``."""
    return cat.index("PUBLIC", name).id


def table_index_ids(cat: Catalog, table_id: int) -> list[int]:
    """Return the ids of the indexes of table ``table_id`` (Ignite's ``indexes(tableId)``)."""
    return [index.id for index in cat.table_indexes(table_id)]


def roll_index_status_to(cat: Catalog, status: IndexStatus, index: int) -> Catalog:
    """Move index ``index`` from REGISTERED on to ``status`` (Ignite's ``rollIndexStatusTo``)."""
    for current in (IndexStatus.REGISTERED, IndexStatus.BUILDING, IndexStatus.AVAILABLE):
        if current is status:
            break
        if current is IndexStatus.REGISTERED:
            cat = apply(cat, c.StartBuildingIndex(index_id=index))
        elif current is IndexStatus.BUILDING:
            cat = apply(cat, c.MakeIndexAvailable(index_id=index))
        else:
            cat = applied(cat, f'DROP INDEX "{cat.index_by_id(index).name}"')
    assert cat.index_by_id(index).status is status
    return cat


def table_with_index(table: str = TABLE, index: str = INDEX) -> Catalog:
    """Return a catalog with ``createSomeTable`` and an AVAILABLE ``createSomeIndex``."""
    cat = some_index(some_table(name=table), table, index)
    return roll_index_status_to(cat, IndexStatus.AVAILABLE, index_id(cat, index))


def index_events(prepared: Prepared) -> list[tuple[CatalogEvent | None, int]]:
    """Return (event, index id) of every entry of a batch that is about an index."""
    found = []
    for entry in prepared.entries:
        fields = entry.model_dump()
        if "index_id" in fields:
            found.append((entry.event, int(fields["index_id"])))
        elif "index" in fields:
            found.append((entry.event, int(fields["index"]["id"])))
    return found


# -- creating indexes ----------------------------------------------------------------------------


def test_create_hash_index() -> None:
    before = simple_table(TABLE)
    cat = applied(before, f"CREATE INDEX {INDEX} ON {TABLE} USING HASH (VAL, ID)")
    # The catalog from before the index does not know it.
    assert before.find_table("PUBLIC", TABLE) is not None
    assert before.find_index("PUBLIC", INDEX) is None
    table = cat.table("PUBLIC", TABLE)
    index = cat.index("PUBLIC", INDEX)
    assert cat.index_by_id(index.id) == index
    assert index.name == INDEX
    assert index.kind is IndexKind.HASH
    assert index.table_id == table.id
    assert index.column_ids == (1, 0)
    assert index.unique is False
    assert index.status is IndexStatus.REGISTERED


def test_create_hash_index_with_table() -> None:
    prepared = sql(
        Catalog.initial(),
        SIMPLE_TABLE.format(name=TABLE) + f"; CREATE INDEX {INDEX} ON {TABLE} USING HASH (VAL, ID)",
    )
    assert prepared.applied == (True, True)
    cat = prepared.catalog
    index = cat.index("PUBLIC", INDEX)
    assert index.name == INDEX
    assert index.kind is IndexKind.HASH
    assert index.table_id == cat.table("PUBLIC", TABLE).id
    assert index.column_ids == (1, 0)
    assert index.unique is False
    assert index.status is IndexStatus.AVAILABLE


_SORTED_UNIQUE = (
    f"CREATE UNIQUE INDEX {INDEX} ON {TABLE} USING SORTED (VAL DESC NULLS FIRST, ID ASC NULLS LAST)"
)


def test_create_sorted_index() -> None:
    before = simple_table(TABLE)
    cat = applied(before, _SORTED_UNIQUE)
    assert before.find_table("PUBLIC", TABLE) is not None
    assert before.find_index("PUBLIC", INDEX) is None
    table = cat.table("PUBLIC", TABLE)
    index = cat.index("PUBLIC", INDEX)
    assert cat.index_by_id(index.id) == index
    assert index.name == INDEX
    assert index.kind is IndexKind.SORTED
    assert index.table_id == table.id
    assert index.column_ids == (1, 0)
    assert [ic.collation for ic in index.columns] == [
        Collation.DESC_NULLS_FIRST,
        Collation.ASC_NULLS_LAST,
    ]
    assert index.unique is True
    assert index.status is IndexStatus.REGISTERED


def test_create_sorted_index_with_table() -> None:
    prepared = sql(Catalog.initial(), SIMPLE_TABLE.format(name=TABLE) + "; " + _SORTED_UNIQUE)
    assert prepared.applied == (True, True)
    cat = prepared.catalog
    index = cat.index("PUBLIC", INDEX)
    assert index.name == INDEX
    assert index.kind is IndexKind.SORTED
    assert index.table_id == cat.table("PUBLIC", TABLE).id
    assert [(ic.column_id, ic.collation) for ic in index.columns] == [
        (1, Collation.DESC_NULLS_FIRST),
        (0, Collation.ASC_NULLS_LAST),
    ]
    assert index.unique is True
    assert index.status is IndexStatus.AVAILABLE


def test_pk_available_on_create_index_event() -> None:
    prepared = sql(Catalog.initial(), SOME_TABLE.format(name=TABLE))
    created = [e for e in prepared.entries if isinstance(e, NewIndexEntry)]
    assert [e.event for e in created] == [CatalogEvent.INDEX_CREATE]
    pk: IndexDescriptor = created[0].index
    assert pk.name == f"{TABLE}_PK"
    assert pk.kind is IndexKind.HASH
    assert pk.status is IndexStatus.AVAILABLE
    assert pk.unique is True
    assert pk.created_with_table is True


def _refused_for_both_kinds(cat: Catalog, code: ErrorCode, statement: str, message: str) -> None:
    """Check that ``statement`` (with ``{using}``) is refused for hash and sorted indexes."""
    for using in ("HASH", "SORTED"):
        error = sql_refused(cat, code, statement.format(using=using))
        assert message in error.message


def test_create_index_with_already_existing_name() -> None:
    _refused_for_both_kinds(
        applied(simple_table(TABLE), SIMPLE_INDEX),
        ErrorCode.INDEX_EXISTS,
        f"CREATE INDEX {INDEX} ON {TABLE} USING {{using}} (VAL)",
        f"index PUBLIC.{INDEX} already exists",
    )


def test_create_index_with_same_name_as_existing_table() -> None:
    _refused_for_both_kinds(
        simple_table(TABLE),
        ErrorCode.TABLE_EXISTS,
        f"CREATE INDEX {TABLE} ON {TABLE} USING {{using}} (VAL)",
        f"table PUBLIC.{TABLE} already exists",
    )


def test_create_index_with_not_existing_table() -> None:
    _refused_for_both_kinds(
        Catalog.initial(),
        ErrorCode.TABLE_NOT_FOUND,
        f"CREATE INDEX {TABLE} ON {TABLE} USING {{using}} (VAL)",
        f"table PUBLIC.{TABLE} not found",
    )


def test_create_index_with_missing_table_columns() -> None:
    _refused_for_both_kinds(
        simple_table(TABLE),
        ErrorCode.COLUMN_NOT_FOUND,
        f'CREATE INDEX {INDEX} ON {TABLE} USING {{using}} ("fake")',
        f"column fake not found in table {TABLE}",
    )


def test_create_uniq_index_with_missing_table_colocation_columns() -> None:
    _refused_for_both_kinds(
        simple_table(TABLE),
        ErrorCode.VALIDATION_ERROR,
        f"CREATE UNIQUE INDEX {INDEX} ON {TABLE} USING {{using}} (VAL)",
        "unique index must contain every colocation column",
    )


# -- reading indexes -----------------------------------------------------------------------------


def test_indexes() -> None:
    initial = Catalog.initial()
    after_table = simple_table(TABLE)
    latest = applied(after_table, SIMPLE_INDEX)
    pk = f"{TABLE}_PK"
    assert initial.indexes() == []
    assert after_table.index("PUBLIC", pk) in after_table.indexes()
    assert [i.name for i in after_table.indexes()] == [pk]
    indexes = latest.indexes()
    assert latest.index("PUBLIC", pk) in indexes
    assert latest.index("PUBLIC", INDEX) in indexes


def test_get_indexes_for_tables() -> None:
    table_0, table_1 = TABLE + "0", TABLE + "1"
    cat = some_index(some_table(some_table(name=table_0), table_1), table_1, INDEX)
    # A table that does not exist has no indexes.
    assert table_index_ids(cat, 2**31 - 1) == []
    table_id_0 = cat.table("PUBLIC", table_0).id
    table_id_1 = cat.table("PUBLIC", table_1).id
    assert table_index_ids(cat, table_id_0) == [index_id(cat, f"{table_0}_PK")]
    assert table_index_ids(cat, table_id_1) == [
        index_id(cat, f"{table_1}_PK"),
        index_id(cat, INDEX),
    ]


def test_get_indexes_for_table_in_sorted_order_by_id() -> None:
    cat = some_table()
    cat = some_index(some_index(cat, TABLE, INDEX + "0"), TABLE, INDEX + "1")
    expected = [index_id(cat, name) for name in (f"{TABLE}_PK", INDEX + "0", INDEX + "1")]
    assert expected == sorted(expected)
    assert table_index_ids(cat, cat.table("PUBLIC", TABLE).id) == expected


# -- dropping tables and indexes -----------------------------------------------------------------


def test_drop_table_with_index() -> None:
    before = table_with_index()
    cat = applied(before, f"DROP TABLE {TABLE}")
    # The catalog from before the drop still holds the table and its AVAILABLE index.
    table = before.table("PUBLIC", TABLE)
    index = before.index("PUBLIC", INDEX)
    assert before.table_by_id(table.id) == table
    assert before.index_by_id(index.id) == index
    assert index.status is IndexStatus.AVAILABLE
    # The latest one holds neither, by name or by id.
    assert cat.find_table("PUBLIC", TABLE) is None
    assert cat.find_table_by_id(table.id) is None
    assert cat.find_index("PUBLIC", INDEX) is None
    assert cat.find_index_by_id(index.id) is None


def test_get_table_id_on_drop_index_event() -> None:
    cat = table_with_index()
    table = cat.table("PUBLIC", TABLE)
    pk = cat.index("PUBLIC", f"{TABLE}_PK")
    index = cat.index("PUBLIC", INDEX)
    assert index.status is IndexStatus.AVAILABLE
    assert index.kind is IndexKind.HASH
    assert pk.id != index.id
    assert pk.id == table.pk_index_id
    dropped = sql(cat, f"DROP INDEX {INDEX}")
    assert index_events(dropped) == [(CatalogEvent.INDEX_STOPPING, index.id)]
    table_dropped = sql(dropped.catalog, f"DROP TABLE {TABLE}")
    removed = [i for e, i in index_events(table_dropped) if e is CatalogEvent.INDEX_REMOVED]
    assert removed[0] == pk.id  # the primary-key index is removed first


def test_re_create_index_with_same_name() -> None:
    before_drop = table_with_index()
    index_1 = before_drop.index("PUBLIC", INDEX)
    cat = applied(before_drop, f"DROP INDEX {INDEX}")
    cat = apply(cat, c.RemoveIndex(index_id=index_1.id))
    assert cat.find_index("PUBLIC", INDEX) is None
    cat = some_sorted_index(cat)
    index_2 = cat.index("PUBLIC", INDEX)
    assert index_2.kind is IndexKind.SORTED
    assert index_2.id != index_1.id
    # The catalog from before the drop still holds the first index, and not the second.
    assert before_drop.index_by_id(index_1.id) == index_1
    assert before_drop.find_index_by_id(index_2.id) is None


def test_dropping_an_available_index_moves_it_to_stopping_state() -> None:
    cat = some_index(some_table())
    index = index_id(cat, INDEX)
    cat = roll_index_status_to(cat, IndexStatus.AVAILABLE, index)
    cat = applied(cat, f"DROP INDEX {INDEX}")
    stopping = cat.find_index_by_id(index)
    assert stopping is not None
    assert stopping.status is IndexStatus.STOPPING


@pytest.mark.parametrize("status", [IndexStatus.REGISTERED, IndexStatus.BUILDING])
def test_dropping_not_available_index_removes_it(status: IndexStatus) -> None:
    cat = some_index(some_table())
    index = index_id(cat, INDEX)
    cat = roll_index_status_to(cat, status, index)
    cat = applied(cat, f"DROP INDEX {INDEX}")
    assert cat.find_index("PUBLIC", INDEX) is None
    assert cat.find_index_by_id(index) is None


def test_removing_stopped_index_removes_it_from_catalog() -> None:
    cat = some_index(some_table())
    index = index_id(cat, INDEX)
    cat = roll_index_status_to(cat, IndexStatus.STOPPING, index)
    assert cat.index_by_id(index).status is IndexStatus.STOPPING
    # A STOPPING index cannot be found by its name.
    assert cat.find_index("PUBLIC", INDEX) is None
    cat = apply(cat, c.RemoveIndex(index_id=index))
    assert cat.find_index_by_id(index) is None
    assert cat.find_index("PUBLIC", INDEX) is None


def test_drop_not_existing_index() -> None:
    cat = Catalog.initial()
    assert cat.find_index("PUBLIC", INDEX) is None
    error = sql_refused(cat, ErrorCode.INDEX_NOT_FOUND, f"DROP INDEX {INDEX}")
    assert f"index PUBLIC.{INDEX} not found" in error.message


# -- lifecycle -----------------------------------------------------------------------------------


def _rolled(kind: IndexKind, status: IndexStatus) -> IndexDescriptor:
    """Create a ``kind`` index on KEY1 of ``createSomeTable``, roll it to ``status``, read it."""
    cat = some_table()
    cat = some_index(cat) if kind is IndexKind.HASH else some_sorted_index(cat)
    index = index_id(cat, INDEX)
    cat = apply(cat, c.StartBuildingIndex(index_id=index))
    if status is IndexStatus.AVAILABLE:
        cat = apply(cat, c.MakeIndexAvailable(index_id=index))
    found = cat.index("PUBLIC", INDEX)
    assert found.kind is kind
    return found


def test_start_hash_index_building() -> None:
    assert _rolled(IndexKind.HASH, IndexStatus.BUILDING).status is IndexStatus.BUILDING


def test_start_sorted_index_building() -> None:
    assert _rolled(IndexKind.SORTED, IndexStatus.BUILDING).status is IndexStatus.BUILDING


def test_make_hash_index_available() -> None:
    assert _rolled(IndexKind.HASH, IndexStatus.AVAILABLE).status is IndexStatus.AVAILABLE


def test_make_sorted_index_available() -> None:
    assert _rolled(IndexKind.SORTED, IndexStatus.AVAILABLE).status is IndexStatus.AVAILABLE


def test_start_building_index_event() -> None:
    cat = some_index(some_table())
    index = index_id(cat, INDEX)
    prepared = run(cat, c.StartBuildingIndex(index_id=index))
    assert index_events(prepared) == [(CatalogEvent.INDEX_BUILDING, index)]


def test_available_index_event() -> None:
    cat = some_index(some_table())
    index = index_id(cat, INDEX)
    cat = apply(cat, c.StartBuildingIndex(index_id=index))
    prepared = run(cat, c.MakeIndexAvailable(index_id=index))
    assert index_events(prepared) == [(CatalogEvent.INDEX_AVAILABLE, index)]


def test_index_events() -> None:
    create_index = f"CREATE INDEX {INDEX} ON {TABLE} USING HASH (ID)"
    # Without its table the index is refused, and nothing (no event) comes of it.
    error = sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, create_index)
    assert f"table PUBLIC.{TABLE} not found" in error.message
    prepared = sql(Catalog.initial(), SIMPLE_TABLE.format(name=TABLE))
    assert [e for e in events(prepared) if e is not None and e.startswith("INDEX_")] == [
        CatalogEvent.INDEX_CREATE  # the primary-key index
    ]
    prepared = sql(prepared.catalog, create_index)
    index = index_id(prepared.catalog, INDEX)
    assert index_events(prepared) == [(CatalogEvent.INDEX_CREATE, index)]
    seen = []
    cat = prepared.catalog
    for command in (
        c.StartBuildingIndex(index_id=index),
        c.MakeIndexAvailable(index_id=index),
        c.DropIndex(schema="PUBLIC", name=INDEX),
        c.RemoveIndex(index_id=index),
    ):
        prepared = run(cat, command)
        seen += index_events(prepared)
        cat = prepared.catalog
    assert seen == [
        (CatalogEvent.INDEX_BUILDING, index),
        (CatalogEvent.INDEX_AVAILABLE, index),
        (CatalogEvent.INDEX_STOPPING, index),
        (CatalogEvent.INDEX_REMOVED, index),
    ]
    pk = cat.table("PUBLIC", TABLE).pk_index_id
    prepared = sql(cat, f"DROP TABLE {TABLE}")
    assert index_events(prepared) == [(CatalogEvent.INDEX_REMOVED, pk)]
    error = refused(prepared.catalog, ErrorCode.INDEX_NOT_FOUND, c.DropIndex(name=INDEX))
    assert f"index PUBLIC.{INDEX} not found" in error.message


# -- renaming indexes ----------------------------------------------------------------------------


def test_rename_index() -> None:
    before = some_index(some_table())
    index = before.index("PUBLIC", INDEX).id
    cat = applied(before, f"ALTER INDEX {INDEX} RENAME TO {INDEX_2}")
    assert cat.find_index("PUBLIC", INDEX) is None
    renamed = cat.index("PUBLIC", INDEX_2)
    assert renamed.id == index
    assert renamed.name == INDEX_2
    # The catalog from before the rename knows the index by its old name only.
    assert before.index("PUBLIC", INDEX).id == index
    assert before.find_index("PUBLIC", INDEX_2) is None
    # The old name is free for a new index.
    cat = some_index(cat)
    assert cat.index("PUBLIC", INDEX).id != index


def test_rename_pk_index() -> None:
    cat = some_table()
    pk = f"{TABLE}_PK"
    assert cat.find_index("PUBLIC", pk) is not None
    pk_index_id = cat.table("PUBLIC", TABLE).pk_index_id
    cat = applied(cat, f"ALTER INDEX {pk} RENAME TO {INDEX}")
    index = cat.index("PUBLIC", INDEX)
    assert index.id == pk_index_id
    assert index.name == INDEX
    assert cat.find_index("PUBLIC", pk) is None


def test_rename_non_existing_index() -> None:
    sql_refused(some_table(), ErrorCode.INDEX_NOT_FOUND, f"ALTER INDEX {INDEX} RENAME TO TEST")
