"""Ports of Ignite's ``CatalogTableTest`` and command validation tests: IF [NOT] EXISTS.

``ALTER TABLE [IF EXISTS] t ADD [COLUMN] [IF NOT EXISTS] ...``, ``DROP [COLUMN] [IF EXISTS]``,
``ALTER COLUMN``, ``RENAME COLUMN``, ``RENAME TO`` and ``ALTER INDEX [IF EXISTS] ... RENAME``.
"""

from __future__ import annotations

from catalog import Catalog, ErrorCode, prepare
from catalog import commands as c
from tests.unit.catalog.ignite.support import (
    applied,
    not_applied,
    simple_table,
    sql_refused,
)

# -- CatalogTableTest: ADD COLUMN IF NOT EXISTS ------------------------------------------------


def test_add_single_column_if_not_exists_column_exists() -> None:
    not_applied(simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN IF NOT EXISTS VAL INT")


def test_add_single_column_if_not_exists_column_does_not_exist() -> None:
    cat = applied(simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN IF NOT EXISTS NEWCOL INT")
    assert cat.table("PUBLIC", "TEST_TABLE").column("NEWCOL") is not None


def test_add_multiple_columns_if_not_exists_all_new() -> None:
    cat = applied(
        simple_table(), "ALTER TABLE TEST_TABLE ADD COLUMN IF NOT EXISTS (NEWCOL INT, NEWCOL2 INT)"
    )
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("NEWCOL") is not None and table.column("NEWCOL2") is not None


def test_add_multiple_columns_if_not_exists_partial_overlap() -> None:
    before = simple_table()
    cat = applied(before, "ALTER TABLE TEST_TABLE ADD IF NOT EXISTS (VAL BIGINT, NEWCOL INT)")
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("NEWCOL") is not None
    assert table.column("VAL") == before.table("PUBLIC", "TEST_TABLE").column("VAL")  # untouched


def test_add_multiple_columns_if_not_exists_all_exist() -> None:
    not_applied(
        simple_table(),
        "ALTER TABLE TEST_TABLE ADD COLUMN IF NOT EXISTS (VAL INT, STR VARCHAR(100))",
    )


def test_add_multiple_columns_fails_atomically_when_one_already_exists() -> None:
    # ``refused`` also checks that nothing of the batch (NEWCOL) was applied.
    sql_refused(
        simple_table(), ErrorCode.COLUMN_EXISTS, "ALTER TABLE TEST_TABLE ADD (NEWCOL INT, VAL INT)"
    )


# -- CatalogTableTest: DROP COLUMN IF EXISTS ---------------------------------------------------


def test_drop_multiple_columns_if_exists_all_exist() -> None:
    cat = applied(simple_table(), "ALTER TABLE TEST_TABLE DROP COLUMN IF EXISTS (VAL, DEC)")
    table = cat.table("PUBLIC", "TEST_TABLE")
    assert table.column("VAL") is None and table.column("DEC") is None


def test_drop_multiple_columns_if_exists_partial_overlap() -> None:
    cat = applied(simple_table(), 'ALTER TABLE TEST_TABLE DROP COLUMN IF EXISTS VAL, "fake"')
    assert cat.table("PUBLIC", "TEST_TABLE").column("VAL") is None


def test_drop_multiple_columns_if_exists_none_exist() -> None:
    not_applied(simple_table(), 'ALTER TABLE TEST_TABLE DROP COLUMN IF EXISTS "fake1", "fake2"')


def test_drop_single_column_if_exists() -> None:
    not_applied(simple_table(), 'ALTER TABLE TEST_TABLE DROP COLUMN IF EXISTS "fake"')


def test_drop_single_column_if_exists_column_exists() -> None:
    cat = applied(simple_table(), "ALTER TABLE TEST_TABLE DROP COLUMN IF EXISTS VAL")
    assert cat.table("PUBLIC", "TEST_TABLE").column("VAL") is None


# -- ALTER TABLE IF EXISTS (every action), validation tests ------------------------------------

_EVERY_ACTION = (
    "ADD COLUMN NEWCOL INT",
    "ADD COLUMN (NEWCOL INT, NEWCOL2 INT)",
    "DROP COLUMN VAL",
    "ALTER COLUMN VAL SET DATA TYPE BIGINT",
    "ALTER COLUMN VAL SET DEFAULT 5",
    "RENAME COLUMN VAL TO VAL2",
    "RENAME TO OTHER",
)


def test_add_column_with_not_existing_table() -> None:
    sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "ALTER TABLE T ADD COLUMN C INT")
    not_applied(Catalog.initial(), "ALTER TABLE IF EXISTS T ADD COLUMN C INT")


def test_drop_column_with_not_existing_table() -> None:
    sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "ALTER TABLE T DROP COLUMN C")
    not_applied(Catalog.initial(), "ALTER TABLE IF EXISTS T DROP COLUMN C")


def test_alter_column_for_non_existing_table_rejected() -> None:
    text = "ALTER TABLE T ALTER COLUMN C SET DATA TYPE BIGINT"
    sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, text)
    not_applied(Catalog.initial(), text.replace("TABLE T", "TABLE IF EXISTS T"))


def test_exception_is_thrown_if_schema_not_exists() -> None:
    """Every ALTER TABLE action: a missing schema is refused, and no error with IF EXISTS."""
    for action in _EVERY_ACTION:
        sql_refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, f"ALTER TABLE NOPE.T {action}")
        not_applied(Catalog.initial(), f"ALTER TABLE IF EXISTS NOPE.T {action}")


def test_alter_table_if_exists_applies_to_an_existing_table() -> None:
    for action in _EVERY_ACTION:
        applied(simple_table(), f"ALTER TABLE IF EXISTS TEST_TABLE {action}")


def test_exception_is_thrown_if_column_with_given_name_already_exists() -> None:
    sql_refused(simple_table(), ErrorCode.COLUMN_EXISTS, "ALTER TABLE TEST_TABLE ADD VAL INT")


def test_exception_is_thrown_if_column_with_given_name_not_exists() -> None:
    # IF EXISTS on the table says nothing about the column: a missing column is still refused.
    text = 'ALTER TABLE IF EXISTS TEST_TABLE DROP COLUMN "fake"'
    sql_refused(simple_table(), ErrorCode.COLUMN_NOT_FOUND, text)


def test_exception_is_thrown_if_schema_is_reserved() -> None:
    for action in _EVERY_ACTION:
        sql_refused(
            Catalog.initial(),
            ErrorCode.VALIDATION_ERROR,
            f"ALTER TABLE IF EXISTS SYSTEM.T {action}",
        )


# -- RenameTableCommandValidationTest / RenameIndexCommandValidationTest -----------------------


def test_exception_is_thrown_if_table_with_given_name_not_found() -> None:
    sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "ALTER TABLE T RENAME TO U")
    not_applied(Catalog.initial(), "ALTER TABLE IF EXISTS T RENAME TO U")


def test_exception_is_thrown_if_index_with_given_name_not_found() -> None:
    sql_refused(simple_table(), ErrorCode.INDEX_NOT_FOUND, "ALTER INDEX I RENAME TO J")
    not_applied(simple_table(), "ALTER INDEX IF EXISTS I RENAME TO J")
    not_applied(simple_table(), "ALTER INDEX IF EXISTS NOPE.I RENAME TO J")


def test_rename_index_if_exists_renames_an_existing_index() -> None:
    cat = applied(simple_table(), "CREATE INDEX I ON TEST_TABLE (VAL)")
    cat = applied(cat, "ALTER INDEX IF EXISTS I RENAME TO J")
    assert cat.find_index("PUBLIC", "I") is None and cat.find_index("PUBLIC", "J") is not None


def test_exception_is_thrown_if_table_with_new_name_exists() -> None:
    cat = applied(simple_table(), "CREATE TABLE OTHER (ID INT PRIMARY KEY)")
    sql_refused(cat, ErrorCode.TABLE_EXISTS, "ALTER TABLE IF EXISTS TEST_TABLE RENAME TO OTHER")


def test_json_commands_say_if_table_exists() -> None:
    """The JSON commands carry the same flags, named as Ignite's builders name them."""
    (command,) = c.parse(
        {
            "op": "add_columns",
            "table": "T",
            "columns": [{"name": "C", "type": "INT32"}],
            "if_not_exists": True,
            "if_table_exists": True,
        }
    )
    assert isinstance(command, c.AddColumnsCommand)
    assert command.if_not_exists and command.if_table_exists
    commands: list[c.CommandBase] = [command]
    for op, extra in (
        ("drop_columns", {"columns": ["C"]}),
        ("alter_column", {"column": "C", "nullable": True}),
        ("rename_column", {"column": "C", "new_name": "D"}),
        ("rename_table", {"name": "T", "new_name": "U", "if_exists": True}),
    ):
        fields = {"op": op, "table": "T", "if_table_exists": True, **extra}
        if op == "rename_table":
            fields = {k: v for k, v in fields.items() if k not in ("table", "if_table_exists")}
        commands += c.parse(fields)
    prepared = prepare(Catalog.initial(), commands)
    assert not prepared.entries and not any(prepared.applied)
