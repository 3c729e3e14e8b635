"""Ports of Ignite's ``CreateTableCommandValidationTest``, ``DropTableCommandValidationTest``,
``RenameTableCommandValidationTest``, ``AlterTableAddColumnCommandValidationTest`` and
``AlterTableDropColumnCommandValidationTest``.

Ignite's builders refuse a bad shape when built and a command that does not fit the catalog
when applied; here a command model refuses its shape when constructed (``bad_shape``) and
``prepare`` refuses the rest. Tests named alike in several suites carry their command as a
prefix. The RENAME TABLE and IF [NOT] EXISTS cases already in ``test_catalog_table_if_exists.py``
are not repeated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog import Catalog, ColumnType, ErrorCode, IndexKind, IndexStatus
from catalog import commands as c
from catalog.descriptors import Collation
from tests.unit.catalog.helpers import bad_shape, col, key, refused, run, with_index
from tests.unit.catalog.ignite.support import applied, not_applied, sql_refused

RESERVED = ("SYSTEM", "INFORMATION_SCHEMA", "DEFINITION_SCHEMA")
NULL_AND_BLANK = (None, "", " ", "  ")
"""Ignite's ``nullAndBlankStrings``."""
NOT_A_NAME = {None: "Input should be a valid string", "": "a name must not be empty"}
"""What a missing or empty name is refused with; a blank one "must not be blank"."""

_TABLE = "CREATE TABLE {name} (ID INT PRIMARY KEY, VAL INT)"
"""``AbstractCommandValidationTest.createTableCommand``: ID keyed, and VAL."""


def _catalog_with(*statements: str) -> Catalog:
    return applied(Catalog.initial(), "; ".join(statements))


def _bad_name(build: Callable[[], object], field: str, name: str | None) -> None:
    """Check that a command with ``name`` in ``field`` cannot be built, naming the field."""
    error = str(bad_shape(build))
    assert f"{field}: {NOT_A_NAME.get(name, 'a name must not be blank')}" in error, error


def _create_table(**changes: Any) -> c.CreateTableCommand:
    """``CreateTableCommandValidationTest.fillProperties``, with ``changes``."""
    fields: dict[str, Any] = {
        "schema": "PUBLIC",
        "name": "TEST",
        "zone": "Default",
        "columns": (key("C", ColumnType.INT32),),
        "primary_key": ("C",),
        "colocation_columns": ("C",),
    }
    return c.CreateTable(**{**fields, **changes})


# -- CreateTableCommandValidationTest ----------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_create_table_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _create_table(schema=name), "schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_create_table_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _create_table(name=name), "name", name)


@pytest.mark.parametrize("columns", [None, ()])
def test_table_should_have_at_least_one_column(columns: tuple[c.Column, ...] | None) -> None:
    assert "columns:" in str(bad_shape(lambda: _create_table(columns=columns)))


def test_create_table_column_should_not_have_duplicates() -> None:
    column = key("C", ColumnType.INT32)
    error = bad_shape(lambda: _create_table(columns=(column, column)))
    assert "duplicate column name: C" in str(error)


def test_primary_key_columns_should_not_have_duplicates() -> None:
    error = bad_shape(lambda: _create_table(primary_key=("C", "C")))
    assert "duplicate primary-key column: C" in str(error)


def test_primary_key_columns_should_not_contain_nullable() -> None:
    columns = (col("C", ColumnType.INT32), key("D", ColumnType.INT32))
    error = bad_shape(lambda: _create_table(columns=columns, primary_key=("D", "C")))
    assert "primary-key column C must be NOT NULL" in str(error)
    text = "CREATE TABLE T (C INT NULL, D INT, PRIMARY KEY (D, C))"
    error = bad_shape(lambda: applied(Catalog.initial(), text))
    assert "primary-key column C cannot be NULL" in str(error)


def test_primary_key_columns_can_contain_only_table_columns() -> None:
    columns = (key("C", ColumnType.INT32), key("D", ColumnType.INT32))
    error = bad_shape(lambda: _create_table(columns=columns, primary_key=("Z", "D", "E")))
    assert "primary-key column Z is not a column of the table" in str(error)


@pytest.mark.parametrize("kind", [IndexKind.SORTED, IndexKind.HASH])
@pytest.mark.parametrize("primary_key", [None, ()])
def test_table_should_have_at_least_one_primary_key_column(
    primary_key: tuple[str, ...] | None, kind: IndexKind
) -> None:
    build = lambda: _create_table(primary_key=primary_key, primary_key_kind=kind)  # noqa: E731
    assert "primary_key:" in str(bad_shape(build))


@pytest.mark.parametrize(
    ("columns", "collations"),
    [
        (("C1",), ()),
        (("C1",), (Collation.ASC_NULLS_LAST, Collation.ASC_NULLS_LAST)),
        (("C1", "C2"), (Collation.ASC_NULLS_LAST,)),
    ],
)
def test_table_with_sorted_primary_key_with_not_match_columns_collations(
    columns: tuple[str, ...], collations: tuple[Collation, ...]
) -> None:
    error = bad_shape(
        lambda: _create_table(
            columns=(key("C1", ColumnType.INT32), key("C2", ColumnType.INT32)),
            primary_key=columns,
            primary_key_kind=IndexKind.SORTED,
            primary_key_collations=collations,
            colocation_columns=columns,
        )
    )
    assert "give one collation per key column" in str(error)


def test_colocation_columns_could_not_be_empty() -> None:
    error = bad_shape(lambda: _create_table(colocation_columns=()))
    assert "colocation columns must not be empty" in str(error)


def test_colocation_column_should_not_have_duplicates() -> None:
    error = bad_shape(lambda: _create_table(colocation_columns=("C", "C")))
    assert "duplicate colocation column: C" in str(error)


def test_colocation_column_should_be_presented_in_columns_list() -> None:
    columns = (key("C1", ColumnType.INT32), key("C2", ColumnType.INT32))
    build = lambda: _create_table(columns=columns, primary_key=("C1",), colocation_columns=("C2",))  # noqa: E731
    assert "colocation column C2 is not a primary-key column" in str(bad_shape(build))


def test_create_table_exception_is_thrown_if_schema_not_exists() -> None:
    error = refused(
        Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, _create_table(schema="PUBLIC_UNK")
    )
    assert "schema PUBLIC_UNK not found" in error.message


@pytest.mark.parametrize("schema", RESERVED)
def test_create_table_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    error = refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, _create_table(schema=schema))
    assert f"objects in system schema {schema} cannot be changed" in error.message


def test_exception_is_thrown_if_zone_not_exists() -> None:
    error = refused(Catalog.initial(), ErrorCode.ZONE_NOT_FOUND, _create_table(zone="Default_UNK"))
    assert "zone Default_UNK not found" in error.message


def test_exception_is_thrown_if_table_with_given_name_already_exists() -> None:
    cat = _catalog_with(_TABLE.format(name="TEST"))
    error = refused(cat, ErrorCode.TABLE_EXISTS, _create_table(name="TEST"))
    assert "table PUBLIC.TEST already exists" in error.message


def test_exception_is_thrown_if_index_with_given_name_already_exists() -> None:
    cat = _catalog_with(
        _TABLE.format(name="TEST"), "CREATE INDEX TEST_IDX ON TEST USING HASH (VAL)"
    )
    error = refused(cat, ErrorCode.INDEX_EXISTS, _create_table(name="TEST_IDX"))
    assert "index PUBLIC.TEST_IDX already exists" in error.message


def test_exception_is_thrown_if_table_with_name_similar_to_autogenerated_pk_name_already_exists() -> (  # noqa: E501
    None
):
    cat = _catalog_with(_TABLE.format(name="TEST_PK"))
    error = refused(cat, ErrorCode.TABLE_EXISTS, _create_table(name="TEST"))
    assert "table PUBLIC.TEST_PK already exists" in error.message


def test_exception_is_thrown_if_index_with_name_similar_to_autogenerated_pk_name_already_exists() -> (  # noqa: E501
    None
):
    cat = _catalog_with(_TABLE.format(name="TEST"), "CREATE INDEX FOO_PK ON TEST USING HASH (VAL)")
    error = refused(cat, ErrorCode.INDEX_EXISTS, _create_table(name="FOO"))
    assert "index PUBLIC.FOO_PK already exists" in error.message


@pytest.mark.parametrize("interval", ["INTERVAL YEAR TO MONTH", "INTERVAL DAY TO SECOND"])
@pytest.mark.parametrize("nullability", ["NOT NULL", "NULL"])
def test_create_table_reject_interval_types(interval: str, nullability: str) -> None:
    """Ignite's PERIOD and DURATION cannot be persisted; here they are no column types."""
    text = f"CREATE TABLE T (ID INT PRIMARY KEY, P {interval} {nullability})"
    error = bad_shape(lambda: applied(Catalog.initial(), text))
    assert f"unsupported column type {interval}" in str(error)


# -- DropTableCommandValidationTest ------------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_table_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: c.DropTable(schema=name, name="TEST"), "schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_table_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: c.DropTable(schema="TEST", name=name), "name", name)


def test_drop_table_exception_is_thrown_if_schema_not_exists() -> None:
    error = sql_refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, "DROP TABLE PUBLIC_UNK.TEST")
    assert "PUBLIC_UNK" in error.message
    not_applied(Catalog.initial(), "DROP TABLE IF EXISTS PUBLIC_UNK.TEST")


def test_drop_table_exception_is_thrown_if_table_with_given_name_not_found() -> None:
    error = refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, c.DropTable(name="TEST"))
    assert "table PUBLIC.TEST not found" in error.message


@pytest.mark.parametrize("schema", RESERVED)
def test_drop_table_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    for command in (
        c.DropTable(schema=schema, name="t"),
        c.DropTable(schema=schema, name="t", if_exists=True),
    ):
        error = refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, command)
        assert f"objects in system schema {schema} cannot be changed" in error.message


# -- RenameTableCommandValidationTest ----------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_rename_table_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: c.RenameTable(schema=name, name="TEST", new_name="TEST2"), "schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_rename_table_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: c.RenameTable(schema="TEST", name=name, new_name="TEST2"), "name", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_new_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: c.RenameTable(schema="TEST", name="TEST", new_name=name), "new_name", name)


def test_exception_is_thrown_if_pk_index_with_new_name_exists() -> None:
    cat = _catalog_with(
        _TABLE.format(name="TEST"),
        _TABLE.format(name="TEST3"),
        "CREATE INDEX TEST2_PK ON TEST3 USING HASH (VAL)",
    )
    error = sql_refused(cat, ErrorCode.INDEX_EXISTS, "ALTER TABLE TEST RENAME TO TEST2")
    assert "index PUBLIC.TEST2_PK already exists" in error.message


# -- AlterTableAddColumnCommandValidationTest --------------------------------------------------


def _add_columns(**changes: Any) -> c.AddColumnsCommand:
    """``AlterTableAddColumnCommandValidationTest.fillProperties``, with ``changes``."""
    fields: dict[str, Any] = {"schema": "PUBLIC", "table": "TEST", "columns": (col("NEW_C"),)}
    return c.AddColumns(**{**fields, **changes})


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_add_column_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _add_columns(schema=name), "schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_add_column_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _add_columns(table=name), "table", name)


@pytest.mark.parametrize("columns", [None, ()])
def test_add_column_command_should_have_at_least_one_column(
    columns: tuple[c.Column, ...] | None,
) -> None:
    assert "columns:" in str(bad_shape(lambda: _add_columns(columns=columns)))


def test_add_column_column_should_not_have_duplicates() -> None:
    error = bad_shape(lambda: _add_columns(columns=(col("C"), col("C"))))
    assert "duplicate column name: C" in str(error)


def test_exception_not_thrown_if_column_with_given_name_already_exists_with_if_column_not_exists() -> (  # noqa: E501
    None
):
    cat = _catalog_with("CREATE TABLE TEST (TEST INT PRIMARY KEY)")
    refused(cat, ErrorCode.COLUMN_EXISTS, _add_columns(columns=(col("TEST"),)))
    prepared = run(cat, _add_columns(columns=(col("TEST"),), if_not_exists=True))
    assert prepared.applied == (False,) and not prepared.entries


def test_cannot_add_non_nullable_column_without_default() -> None:
    column = col("TEST", ColumnType.STRING, length=10, nullable=False)
    error = bad_shape(lambda: _add_columns(columns=(column,)))
    assert "NOT NULL column TEST needs a default value" in str(error)
    text = "ALTER TABLE TEST ADD COLUMN TEST VARCHAR(10) NOT NULL"
    cat = _catalog_with("CREATE TABLE TEST (ID INT PRIMARY KEY)")
    assert "NOT NULL column TEST needs a default value" in str(
        bad_shape(lambda: applied(cat, text))
    )


@pytest.mark.parametrize("schema", RESERVED)
def test_add_column_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    text = f"ALTER TABLE {schema}.T ADD COLUMN C INT"
    error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
    assert f"objects in system schema {schema} cannot be changed" in error.message


# -- AlterTableDropColumnCommandValidationTest -------------------------------------------------


def _drop_columns(**changes: Any) -> c.DropColumnsCommand:
    """``AlterTableDropColumnCommandValidationTest.fillProperties``, with ``changes``."""
    fields: dict[str, Any] = {"schema": "PUBLIC", "table": "TEST", "columns": ("C",)}
    return c.DropColumns(**{**fields, **changes})


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_column_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _drop_columns(schema=name), "schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_column_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _drop_columns(table=name), "table", name)


@pytest.mark.parametrize("columns", [None, ()])
def test_drop_column_command_should_have_at_least_one_column(
    columns: tuple[str, ...] | None,
) -> None:
    assert "columns:" in str(bad_shape(lambda: _drop_columns(columns=columns)))


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_column_column_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name(lambda: _drop_columns(columns=(name,)), "columns.0", name)


def test_exception_does_not_thrown_if_column_with_given_name_not_exists_with_if_column_exists() -> (
    None
):
    cat = _catalog_with("CREATE TABLE TEST (TEST INT PRIMARY KEY)")
    error = refused(cat, ErrorCode.COLUMN_NOT_FOUND, _drop_columns(columns=("TEST_UNK",)))
    assert "column TEST_UNK not found in table TEST" in error.message
    prepared = run(cat, _drop_columns(columns=("TEST_UNK",), if_exists=True))
    assert prepared.applied == (False,) and not prepared.entries


def test_exception_is_thrown_if_column_belongs_to_primary_key() -> None:
    cat = _catalog_with("CREATE TABLE TEST (C1 INT, C2 INT, PRIMARY KEY (C1, C2))")
    error = refused(cat, ErrorCode.VALIDATION_ERROR, _drop_columns(columns=("C2",)))
    assert "cannot drop primary-key column C2" in error.message


def test_exception_is_thrown_if_column_belongs_to_index() -> None:
    cat = _catalog_with(
        _TABLE.format(name="TEST"), "CREATE INDEX TEST_IDX ON TEST USING HASH (VAL)"
    )
    error = refused(cat, ErrorCode.VALIDATION_ERROR, _drop_columns(columns=("VAL",)))
    assert "cannot drop column VAL: an index uses it" in error.message


def test_right_exception_is_thrown_if_same_column_name_belongs_to_indexes_for_different_tables() -> (  # noqa: E501
    None
):
    """Only the indexes of the table itself keep its column; another table's do not."""
    both = _catalog_with(
        _TABLE.format(name="TEST"),
        "CREATE INDEX TEST_IDX ON TEST USING HASH (VAL)",
        _TABLE.format(name="TEST_1"),
        "CREATE INDEX TEST_IDX_1 ON TEST_1 USING HASH (VAL)",
    )
    on_val = [i.name for i in both.indexes() if 1 in i.column_ids]
    assert sorted(on_val) == ["TEST_IDX", "TEST_IDX_1"]  # both index a column VAL (id 1)
    error = refused(both, ErrorCode.VALIDATION_ERROR, _drop_columns(columns=("VAL",)))
    assert "cannot drop column VAL: an index uses it" in error.message

    other_only = applied(both, "DROP INDEX TEST_IDX")
    cat = run(other_only, _drop_columns(columns=("VAL",))).catalog
    assert cat.table("PUBLIC", "TEST").column("VAL") is None


@pytest.mark.parametrize("schema", RESERVED)
def test_drop_column_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    text = f"ALTER TABLE IF EXISTS {schema}.T DROP COLUMN C"
    error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
    assert f"objects in system schema {schema} cannot be changed" in error.message


def test_no_exception_is_thrown_if_column_belongs_to_stopping_index() -> None:
    cat = _catalog_with(_TABLE.format(name="TEST"))
    registered = with_index(cat, "TEST_IDX", ("VAL",), table="TEST", kind=IndexKind.HASH)
    refused(registered, ErrorCode.VALIDATION_ERROR, _drop_columns(columns=("VAL",)))
    stopping = with_index(
        cat, "TEST_IDX", ("VAL",), table="TEST", kind=IndexKind.HASH, status=IndexStatus.STOPPING
    )
    dropped = run(stopping, _drop_columns(columns=("VAL",))).catalog
    assert dropped.table("PUBLIC", "TEST").column("VAL") is None
