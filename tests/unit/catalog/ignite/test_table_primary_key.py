"""Ports of Ignite's ``TablePrimaryKeyTest`` and ``CatalogTableTest.testCreateTableWithNamedPk``.

A key is hash (the default) or sorted; a sorted key orders each column by a collation
(``PRIMARY KEY USING SORTED (A DESC, B ASC NULLS FIRST)``); ``CONSTRAINT name PRIMARY KEY``
names the key's index.
"""

from __future__ import annotations

import pytest

from catalog import Catalog, ErrorCode, IndexKind, IndexStatus
from catalog import commands as c
from catalog.descriptors import Collation
from tests.unit.catalog.helpers import apply, bad_shape, create_table, key
from tests.unit.catalog.ignite.support import applied, sql_refused

_KEYED = "CREATE TABLE T (C1 INT NOT NULL, C2 INT NOT NULL, C3 INT, {key})"


def _pk_index(cat: Catalog, table: str = "T") -> tuple[str, IndexKind, list[Collation | None]]:
    pk_index_id = cat.table("PUBLIC", table).pk_index_id
    assert pk_index_id is not None
    index = cat.index_by_id(pk_index_id)
    return index.name, index.kind, [column.collation for column in index.columns]


@pytest.mark.parametrize("using", ["", "USING HASH ", "USING SORTED "])
def test_pk_can_not_include_duplicate_columns(using: str) -> None:
    error = bad_shape(
        lambda: applied(Catalog.initial(), _KEYED.format(key=f"PRIMARY KEY {using}(C1, C2, C1)"))
    )
    assert "duplicate primary-key column: C1" in str(error)


@pytest.mark.parametrize("using", ["", "USING HASH ", "USING SORTED "])
def test_pk_can_not_include_unknown_columns(using: str) -> None:
    error = bad_shape(
        lambda: applied(Catalog.initial(), _KEYED.format(key=f'PRIMARY KEY {using}(C1, "foo")'))
    )
    assert "primary-key column foo is not a column of the table" in str(error)


@pytest.mark.parametrize("kind", [IndexKind.HASH, IndexKind.SORTED])
def test_hash_pk_with_no_columns(kind: IndexKind) -> None:
    """Ignite builds an empty key and refuses it when validating; here the command refuses it."""
    bad_shape(lambda: create_table(primary_key=(), primary_key_kind=kind))
    bad_shape(lambda: applied(Catalog.initial(), "CREATE TABLE T (C1 INT, PRIMARY KEY ())"))


def test_hash_pk() -> None:
    cat = applied(Catalog.initial(), _KEYED.format(key="PRIMARY KEY USING HASH (C1, C2)"))
    table = cat.table("PUBLIC", "T")
    assert list(table.column_names(table.primary_key)) == ["C1", "C2"]
    assert _pk_index(cat) == ("T_PK", IndexKind.HASH, [None, None])


@pytest.mark.parametrize("collation", list(Collation))
def test_sorted_pk_with_collations(collation: Collation) -> None:
    other = next(c for c in Collation if c is not collation)
    words = {
        Collation.ASC_NULLS_FIRST: "ASC NULLS FIRST",
        Collation.ASC_NULLS_LAST: "ASC NULLS LAST",
        Collation.DESC_NULLS_FIRST: "DESC NULLS FIRST",
        Collation.DESC_NULLS_LAST: "DESC NULLS LAST",
    }
    key_sql = f"PRIMARY KEY USING SORTED (C1 {words[collation]}, C2 {words[other]})"
    cat = applied(Catalog.initial(), _KEYED.format(key=key_sql))
    assert _pk_index(cat) == ("T_PK", IndexKind.SORTED, [collation, other])


def test_sorted_pk_defaults_sort_nulls_low() -> None:
    """Ordering left out: ASC NULLS FIRST, and DESC alone is DESC NULLS LAST (as indexes)."""
    key_sql = "PRIMARY KEY USING SORTED (C1 DESC, C2)"
    cat = applied(Catalog.initial(), _KEYED.format(key=key_sql))
    assert _pk_index(cat)[2] == [Collation.DESC_NULLS_LAST, Collation.ASC_NULLS_FIRST]


def test_sorted_pk_should_have_the_same_number_of_columns_and_collations() -> None:
    error = bad_shape(
        lambda: create_table(
            columns=(key("C1"), key("C2")),
            primary_key=("C1", "C2"),
            primary_key_kind=IndexKind.SORTED,
            primary_key_collations=(Collation.ASC_NULLS_LAST,),
        )
    )
    assert "give one collation per key column" in str(error)


def test_hash_pk_takes_no_ordering() -> None:
    for key_sql in ("PRIMARY KEY (C1 DESC)", "PRIMARY KEY USING HASH (C1, C2 NULLS LAST)"):
        text = _KEYED.format(key=key_sql)
        error = bad_shape(lambda: applied(Catalog.initial(), text))  # noqa: B023
        assert "PRIMARY KEY USING SORTED" in str(error)
    error = bad_shape(lambda: create_table(primary_key_collations=(Collation.DESC_NULLS_FIRST,)))
    assert "a hash primary key takes no collations" in str(error)


def test_create_table_with_named_pk() -> None:
    cat = applied(
        Catalog.initial(),
        "CREATE TABLE T (KEY1 INT NOT NULL, KEY2 INT NOT NULL, VAL INT, "
        "CONSTRAINT CUSTOM_PK_NAME PRIMARY KEY (KEY1, KEY2)) COLOCATE BY (KEY2)",
    )
    table = cat.table("PUBLIC", "T")
    assert cat.find_index("PUBLIC", "T_PK") is None
    index = cat.index("PUBLIC", "CUSTOM_PK_NAME")
    assert index.id == table.pk_index_id and index.table_id == table.id
    assert [column.column_id for column in index.columns] == [0, 1]
    assert index.unique and index.created_with_table and index.status is IndexStatus.AVAILABLE


def test_named_pk_takes_a_free_name() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE OTHER (ID INT PRIMARY KEY)")
    sql_refused(
        cat, ErrorCode.TABLE_EXISTS, "CREATE TABLE T (ID INT, CONSTRAINT OTHER PRIMARY KEY (ID))"
    )
    sql_refused(
        cat, ErrorCode.INDEX_EXISTS, "CREATE TABLE T (ID INT, CONSTRAINT OTHER_PK PRIMARY KEY (ID))"
    )
    sql_refused(
        cat, ErrorCode.VALIDATION_ERROR, "CREATE TABLE T (ID INT, CONSTRAINT T PRIMARY KEY (ID))"
    )


def test_rename_table_renames_a_named_pk_index_as_ignite() -> None:
    """Ignite's RenameTableCommand names the key index ``<NEW>_PK`` whatever it was named."""
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID INT, CONSTRAINT MY_KEY PRIMARY KEY (ID))")
    cat = applied(cat, "ALTER TABLE T RENAME TO U")
    assert cat.find_index("PUBLIC", "MY_KEY") is None
    assert cat.index("PUBLIC", "U_PK").id == cat.table("PUBLIC", "U").pk_index_id


def test_json_create_table_names_and_orders_its_key() -> None:
    (command,) = c.parse(
        {
            "op": "create_table",
            "name": "T",
            "columns": [
                {"name": "A", "type": "INT32", "nullable": False},
                {"name": "B", "type": "INT32", "nullable": False},
            ],
            "primary_key": ["A", "B"],
            "primary_key_kind": "sorted",
            "primary_key_name": "T_KEY",
            "primary_key_collations": ["DESC_NULLS_FIRST", "ASC_NULLS_LAST"],
        }
    )
    assert isinstance(command, c.CreateTableCommand)
    cat = apply(Catalog.initial(), command)
    assert _pk_index(cat) == (
        "T_KEY",
        IndexKind.SORTED,
        [Collation.DESC_NULLS_FIRST, Collation.ASC_NULLS_LAST],
    )
