"""Ports of Ignite's ``AlterTableAlterColumnCommandValidationTest``.

ALTER COLUMN refuses what would make rows already written unreadable or invalid: narrowing a
type, changing a scale or a precision other than a DECIMAL's growing, shortening a STRING or
BYTES, SET NOT NULL, and any type or NOT NULL change of a key column (UNSUPPORTED_CHANGE); a
parameter the type does not take is a VALIDATION_ERROR. The missing-schema and missing-table
cases are in ``test_catalog_table_if_exists.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, ColumnType, ErrorCode
from catalog import commands as c
from catalog.column_types import PLAIN_TYPES
from tests.unit.catalog.helpers import apply, bad_shape, col, key, refused
from tests.unit.catalog.ignite.ignite_column_types import (
    LENGTH_TYPES,
    PRECISION_TYPES,
    column_with_defaults,
    is_supported_column_type_change,
)
from tests.unit.catalog.ignite.support import applied, sql_refused

T = ColumnType
RESERVED = ("SYSTEM", "INFORMATION_SCHEMA", "DEFINITION_SCHEMA")
NULL_AND_BLANK = (None, "", " ", "  ")
"""Ignite's ``nullAndBlankStrings``."""
NOT_A_NAME = {None: "Input should be a valid string", "": "a name must not be empty"}


def _test_table(*columns: c.Column, primary_key: tuple[str, ...] = ("ID",)) -> Catalog:
    """Ignite's ``catalogWithTable``: table TEST with ``columns``."""
    create = c.CreateTable(name="TEST", columns=columns, primary_key=primary_key)
    return apply(Catalog.initial(), create)


def _alter(column: str, **fields: Any) -> c.AlterColumnCommand:
    return c.AlterColumn(schema="PUBLIC", table="TEST", column=column, **fields)


def _bad_name(field: str, name: str | None, **fields: Any) -> None:
    values: dict[str, Any] = {"schema": "TEST", "table": "TEST", "column": "TEST", field: name}
    error = str(bad_shape(lambda: c.AlterColumn(nullable=True, **{**values, **fields})))
    assert f"{field}: {NOT_A_NAME.get(name, 'a name must not be blank')}" in error, error


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_alter_column_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name("schema", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_alter_column_table_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name("table", name)


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_alter_column_column_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name("column", name)


def test_exception_is_thrown_if_column_with_given_name_not_found() -> None:
    cat = _test_table(key("ID", T.INT32), col("VAL", T.INT32))
    error = refused(cat, ErrorCode.COLUMN_NOT_FOUND, _alter("TEST", nullable=True))
    assert "column TEST not found in table TEST" in error.message


def test_type_of_pk_column_cannot_be_changed() -> None:
    cat = _test_table(key("ID", T.INT32), col("VAL", T.INT32))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("ID", type=T.INT64))
    assert "cannot change the type of primary-key column ID" in error.message


def test_precision_of_pk_column_cannot_be_changed() -> None:
    cat = _test_table(key("ID", T.DECIMAL, precision=10, scale=0))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("ID", precision=16))
    assert "primary-key column ID" in error.message


def test_scale_of_pk_column_cannot_be_changed() -> None:
    cat = _test_table(key("ID", T.DECIMAL, precision=10, scale=2))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("ID", scale=6))
    assert "primary-key column ID" in error.message


def test_not_null_constraint_of_pk_column_cannot_be_dropped() -> None:
    cat = _test_table(key("ID", T.INT64))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("ID", nullable=True))
    assert "cannot drop NOT NULL of primary-key column ID" in error.message


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (source, target)
        for source in PLAIN_TYPES
        for target in PLAIN_TYPES
        if source is not target and not is_supported_column_type_change(source, target)
    ],
)
def test_invalid_type_conversion_is_not_allowed(source: ColumnType, target: ColumnType) -> None:
    cat = _test_table(key("ID", T.INT32), column_with_defaults("VAL", source))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", type=target))
    assert f"{source} to {target}" in error.message


@pytest.mark.parametrize("ctype", [t for t in PLAIN_TYPES if t is not T.DECIMAL])
def test_precision_cannot_be_changed_if_type_is_not_decimal(ctype: ColumnType) -> None:
    cat = _test_table(key("ID", T.INT64), column_with_defaults("VAL", ctype))
    if ctype in PRECISION_TYPES:  # TIME and TIMESTAMPs keep the precision they were given
        error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", precision=2))
        assert f"cannot change the precision of a {ctype} column" in error.message
    else:
        error = refused(cat, ErrorCode.VALIDATION_ERROR, _alter("VAL", precision=2))
        assert f"column type {ctype} does not take a precision" in error.message


def test_precision_cannot_be_decreased() -> None:
    cat = _test_table(key("ID", T.INT64), col("VAL", T.DECIMAL, scale=0, precision=10))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", precision=2))
    assert "cannot decrease the precision of a DECIMAL column" in error.message


def test_scale_cannot_be_changed() -> None:
    cat = _test_table(key("ID", T.INT64), col("VAL", T.DECIMAL, precision=10, scale=6))
    for scale in (2, 10):
        error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", scale=scale))
        assert "cannot change the scale of a DECIMAL column" in error.message


@pytest.mark.parametrize("ctype", [t for t in PLAIN_TYPES if t not in LENGTH_TYPES])
def test_length_cannot_be_changed_for_non_variable_types(ctype: ColumnType) -> None:
    cat = _test_table(key("ID", T.INT64), column_with_defaults("VAL", ctype))
    error = refused(cat, ErrorCode.VALIDATION_ERROR, _alter("VAL", length=2))
    assert f"column type {ctype} does not take a length" in error.message


def test_length_cannot_be_decreased() -> None:
    cat = _test_table(key("ID", T.INT64), col("VAL", T.STRING, length=10))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", length=2))
    assert "cannot shorten STRING from 10 to 2" in error.message


def test_not_null_constraint_cannot_be_added_to_nullable_column() -> None:
    cat = _test_table(key("ID", T.INT64), col("VAL", T.INT64))
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter("VAL", nullable=False))
    assert "cannot set NOT NULL on existing column VAL" in error.message


@pytest.mark.parametrize("schema", RESERVED)
def test_alter_column_exception_is_thrown_if_schema_is_reserved(schema: str) -> None:
    text = f"ALTER TABLE {schema}.T ALTER COLUMN C DROP NOT NULL"
    error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
    assert f"objects in system schema {schema} cannot be changed" in error.message


@pytest.mark.parametrize("interval", ["INTERVAL YEAR TO MONTH", "INTERVAL DAY TO SECOND"])
@pytest.mark.parametrize("nullability", ["NOT NULL DEFAULT NULL", "NULL"])
def test_add_column_reject_interval_types(interval: str, nullability: str) -> None:
    """The suite's ``rejectIntervalTypes``: ADD COLUMN of Ignite's PERIOD or DURATION."""
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID INT PRIMARY KEY)")
    text = f"ALTER TABLE T ADD COLUMN P {interval} {nullability}"
    error = bad_shape(lambda: applied(cat, text))
    assert f"unsupported column type {interval}" in str(error)
