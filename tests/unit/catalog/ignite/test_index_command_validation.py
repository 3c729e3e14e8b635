"""Ports of Ignite's index command validation tests.

``CreateAbstractIndexCommandValidationTest`` through both its suites,
``CreateHashIndexCommandValidationTest`` and ``CreateSortedIndexCommandValidationTest`` (each
test runs for a hash and for a sorted index), ``DropIndexCommandValidationTest``,
``RenameIndexCommandValidationTest``, and ``AbstractChangeIndexStatusCommandValidationTest``
through ``StartBuildingIndexCommandValidationTest``, ``MakeIndexAvailableCommandValidationTest``
and ``RemoveIndexCommandValidationTest``.

Ignite checks a command's shape when its builder builds it, and its meaning against a catalog;
here the JSON command models check their shape when constructed (``bad_shape``) and ``prepare``
checks the rest (``refused``). Ignite's null names are ``None`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog import Catalog, ColumnType, ErrorCode, IndexKind, IndexStatus
from catalog import commands as c
from catalog.commands import CommandBase
from catalog.descriptors import Collation
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    col,
    create_table,
    key,
    refused,
    run,
    with_index,
)

SCHEMA = "PUBLIC"
TABLE = "TEST"
INDEX = "IDX"

NULL_AND_BLANK = [None, "", " ", "  "]
"""Ignite's ``nullAndBlankStrings``."""

RESERVED_SCHEMAS = ["SYSTEM", "INFORMATION_SCHEMA", "DEFINITION_SCHEMA"]
"""Ignite's ``reservedSchemaNames``."""

KINDS = pytest.mark.parametrize(
    "kind",
    [
        pytest.param(IndexKind.HASH, id="CreateHashIndex"),
        pytest.param(IndexKind.SORTED, id="CreateSortedIndex"),
    ],
)
"""Every ``CreateAbstractIndexCommandValidationTest`` test runs for both kinds of index."""


def with_test_table(name: str = TABLE, cat: Catalog | None = None) -> Catalog:
    """Return Ignite's ``catalogWithTable(name)``: columns ID INT32 (the key) and VAL INT32."""
    columns = (key("ID", ColumnType.INT32), col("VAL"))
    return apply(cat or Catalog.initial(), create_table(name, columns=columns))


def create_index(kind: IndexKind, **fields: Any) -> c.CreateIndexCommand:
    """Return Ignite's ``prefilledBuilder()``: index IDX on TEST (VAL), overridden by ``fields``.

    A sorted index gives its columns ASC_NULLS_FIRST, as Ignite's sorted builder does.
    """
    columns = fields.pop("columns", ("VAL",))
    if kind is IndexKind.SORTED and columns is not None:
        columns = tuple(
            c.IndexColumnSpec(name=name, collation=Collation.ASC_NULLS_FIRST) for name in columns
        )
    prefilled: dict[str, Any] = {
        "schema": SCHEMA,
        "name": INDEX,
        "table": TABLE,
        "columns": columns,
        "kind": kind,
    }
    return c.CreateIndex(**{**prefilled, **fields})


# -- CreateAbstractIndexCommandValidationTest ----------------------------------------------------


@KINDS
@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_create_index_schema_name_must_not_be_null_or_blank(
    kind: IndexKind, name: str | None
) -> None:
    error = bad_shape(lambda: create_index(kind, schema=name))
    assert "schema:" in error.message


@KINDS
@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_create_index_index_name_must_not_be_null_or_blank(
    kind: IndexKind, name: str | None
) -> None:
    error = bad_shape(lambda: create_index(kind, name=name))
    assert "name:" in error.message


@KINDS
@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_table_name_must_not_be_null_or_blank(kind: IndexKind, name: str | None) -> None:
    error = bad_shape(lambda: create_index(kind, table=name))
    assert "table:" in error.message


@KINDS
@pytest.mark.parametrize("columns", [None, ()])
def test_index_should_have_at_least_one_column(
    kind: IndexKind, columns: tuple[str, ...] | None
) -> None:
    error = bad_shape(lambda: c.CreateIndex(table=TABLE, name=INDEX, columns=columns, kind=kind))
    assert "columns" in error.message


@KINDS
@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_column_name_must_not_be_null_or_blank(kind: IndexKind, name: str | None) -> None:
    error = bad_shape(lambda: create_index(kind, columns=(name,)))
    assert "name" in error.message


@KINDS
def test_column_should_not_have_duplicates(kind: IndexKind) -> None:
    error = bad_shape(lambda: create_index(kind, columns=("C", "C")))
    assert "duplicate index column: C" in error.message


@KINDS
def test_create_index_exception_is_thrown_if_schema_not_exists(kind: IndexKind) -> None:
    command = create_index(kind, schema=SCHEMA + "_UNK")
    error = refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, command)
    assert "schema PUBLIC_UNK not found" in error.message


@KINDS
def test_exception_is_thrown_if_table_not_exists(kind: IndexKind) -> None:
    error = refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, create_index(kind))
    assert "table PUBLIC.TEST not found" in error.message


@KINDS
def test_exception_is_thrown_if_table_with_given_name_already_exists(kind: IndexKind) -> None:
    command = create_index(kind, table="TEST", name="TEST")
    error = refused(with_test_table("TEST"), ErrorCode.TABLE_EXISTS, command)
    assert "table PUBLIC.TEST already exists" in error.message


@KINDS
def test_exception_is_thrown_if_index_with_given_name_already_exists(kind: IndexKind) -> None:
    cat = with_index(with_test_table(), "IDX", ("VAL",), table=TABLE)
    error = refused(cat, ErrorCode.INDEX_EXISTS, create_index(kind, name="IDX"))
    assert "index PUBLIC.IDX already exists" in error.message


@KINDS
def test_exception_is_thrown_if_column_with_given_name_not_exists(kind: IndexKind) -> None:
    command = create_index(kind, columns=("UNK",))
    error = refused(with_test_table(), ErrorCode.COLUMN_NOT_FOUND, command)
    assert "column UNK not found in table TEST" in error.message


@KINDS
def test_exception_is_thrown_if_index_is_unique_and_not_all_colocation_columns_covered(
    kind: IndexKind,
) -> None:
    columns = (key("C1", ColumnType.INT32), key("C2", ColumnType.INT32))
    cat = apply(Catalog.initial(), create_table(TABLE, columns=columns, primary_key=("C1", "C2")))
    command = create_index(kind, unique=True, columns=("C1",))
    error = refused(cat, ErrorCode.VALIDATION_ERROR, command)
    assert "unique index must contain every colocation column" in error.message
    assert "missing: C2" in error.message


@KINDS
def test_no_exception_is_thrown_if_stopping_index_with_given_name_already_exists(
    kind: IndexKind,
) -> None:
    cat = with_index(with_test_table(), INDEX, ("VAL",), table=TABLE)
    command = create_index(kind)
    refused(cat, ErrorCode.INDEX_EXISTS, command)
    stopping = cat.index(SCHEMA, INDEX).id
    cat = apply(
        cat,
        c.StartBuildingIndex(index_id=stopping),
        c.MakeIndexAvailable(index_id=stopping),
        c.DropIndex(schema=SCHEMA, name=INDEX),
    )
    assert cat.index_by_id(stopping).status is IndexStatus.STOPPING
    assert run(cat, command).applied == (True,)


# -- DropIndexCommandValidationTest --------------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_index_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    error = bad_shape(lambda: c.DropIndex(name="TEST", schema=name))
    assert "schema:" in error.message


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_index_index_name_must_not_be_null_or_blank(name: str | None) -> None:
    error = bad_shape(lambda: c.DropIndex(schema="TEST", name=name))
    assert "name:" in error.message


def test_drop_index_exception_is_thrown_if_schema_not_exists() -> None:
    command = c.DropIndex(schema=SCHEMA + "_UNK", name="TEST")
    error = refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, command)
    assert "schema PUBLIC_UNK not found" in error.message
    prepared = run(
        Catalog.initial(), c.DropIndex(schema=SCHEMA + "_UNK", name="TEST", if_exists=True)
    )
    assert prepared.applied == (False,)
    assert prepared.entries == ()


def test_drop_index_exception_is_thrown_if_index_with_given_name_not_found() -> None:
    command = c.DropIndex(schema=SCHEMA, name="TEST")
    error = refused(Catalog.initial(), ErrorCode.INDEX_NOT_FOUND, command)
    assert "index PUBLIC.TEST not found" in error.message


def test_exception_is_thrown_if_index_is_primary_key() -> None:
    cat = apply(
        Catalog.initial(),
        create_table(TABLE, columns=(key("C", ColumnType.INT32),), primary_key=("C",)),
    )
    command = c.DropIndex(schema=SCHEMA, name=f"{TABLE}_PK")
    error = refused(cat, ErrorCode.VALIDATION_ERROR, command)
    assert f"cannot drop primary-key index {TABLE}_PK" in error.message


# -- RenameIndexCommandValidationTest ------------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_rename_index_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    error = bad_shape(lambda: c.RenameIndex(schema=name, name="TEST", new_name="TEST2"))
    assert "schema:" in error.message


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_rename_index_index_name_must_not_be_null_or_blank(name: str | None) -> None:
    error = bad_shape(lambda: c.RenameIndex(schema="TEST", name=name, new_name="TEST2"))
    assert " name:" in error.message


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_new_index_name_must_not_be_null_or_blank(name: str | None) -> None:
    error = bad_shape(lambda: c.RenameIndex(schema="TEST", name="TEST", new_name=name))
    assert "new_name:" in error.message


def test_exception_is_thrown_if_schema_does_not_exist() -> None:
    command = c.RenameIndex(schema="TEST", name="TEST", new_name="TEST2")
    error = refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, command)
    assert "schema TEST not found" in error.message
    if_exists = c.RenameIndex(schema="TEST", name="TEST", new_name="TEST2", if_exists=True)
    prepared = run(Catalog.initial(), if_exists)
    assert prepared.applied == (False,)
    assert prepared.entries == ()


def test_rename_index_exception_is_thrown_if_index_with_given_name_not_found() -> None:
    command = c.RenameIndex(schema=SCHEMA, name="TEST", new_name="TEST2")
    error = refused(Catalog.initial(), ErrorCode.INDEX_NOT_FOUND, command)
    assert "index PUBLIC.TEST not found" in error.message


def test_exception_is_thrown_if_index_with_new_name_exists() -> None:
    cat = with_test_table("TABLE2", with_test_table("TABLE1"))
    cat = with_index(cat, "TEST1", ("VAL",), table="TABLE1")
    cat = with_index(cat, "TEST2", ("VAL",), table="TABLE2")
    command = c.RenameIndex(schema=SCHEMA, name="TEST1", new_name="TEST2")
    error = refused(cat, ErrorCode.INDEX_EXISTS, command)
    assert "index PUBLIC.TEST2 already exists" in error.message


def test_rename_index_exception_is_thrown_if_table_with_new_name_exists() -> None:
    cat = with_index(with_test_table("TABLE1"), "TEST", ("VAL",), table="TABLE1")
    command = c.RenameIndex(schema=SCHEMA, name="TEST", new_name="TABLE1")
    error = refused(cat, ErrorCode.TABLE_EXISTS, command)
    assert "table PUBLIC.TABLE1 already exists" in error.message


@pytest.mark.parametrize("schema", RESERVED_SCHEMAS)
def test_rename_index_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    """Ignite's test builds a RenameTableCommand here; both renames are checked."""
    for command in (
        c.RenameIndex(schema=schema, name="t", new_name="u"),
        c.RenameIndex(schema=schema, name="t", new_name="u", if_exists=True),
        c.RenameTable(schema=schema, name="t", new_name="u"),
    ):
        error = refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, command)
        assert f"system schema {schema}" in error.message


# -- AbstractChangeIndexStatusCommandValidationTest ----------------------------------------------

StatusCommand = Callable[[int], CommandBase]

_STATUS_COMMANDS: list[tuple[str, StatusCommand, IndexStatus]] = [
    ("StartBuildingIndex", lambda i: c.StartBuildingIndex(index_id=i), IndexStatus.REGISTERED),
    ("MakeIndexAvailable", lambda i: c.MakeIndexAvailable(index_id=i), IndexStatus.BUILDING),
    ("RemoveIndex", lambda i: c.RemoveIndex(index_id=i), IndexStatus.STOPPING),
]


@pytest.mark.parametrize(
    ("make", "status", "expected"),
    [
        pytest.param(make, status, needed, id=f"{suite}-{status}")
        for suite, make, needed in _STATUS_COMMANDS
        for status in IndexStatus
        if status is not needed
    ],
)
def test_exception_is_thrown_if_index_has_invalid_previous_status(
    make: StatusCommand, status: IndexStatus, expected: IndexStatus
) -> None:
    cat = with_index(with_test_table(), "TEST_INDEX", ("VAL",), table=TABLE, status=status)
    index = cat.index_by_id(cat.object_id_gen - 1)
    assert index.name == "TEST_INDEX" and index.status is status
    error = refused(cat, ErrorCode.INDEX_STATUS_CONFLICT, make(index.id))
    assert f"is {status}, expected {expected}" in error.message


@pytest.mark.parametrize(
    "make", [pytest.param(make, id=suite) for suite, make, _ in _STATUS_COMMANDS]
)
def test_exception_is_thrown_if_index_with_given_id_not_found(make: StatusCommand) -> None:
    error = refused(Catalog.initial(), ErrorCode.INDEX_NOT_FOUND, make(1))
    assert "index with id 1 not found" in error.message
