"""Ports of Ignite's ``CatalogTableTest``: ALTER COLUMN (type, precision, length, scale,
NOT NULL, default).

Only widening changes are applied (INT8 → INT16 → INT32 → INT64, FLOAT32 → FLOAT64, a longer
STRING or BYTES, a DECIMAL with more precision), DROP NOT NULL outside the key, and any
constant default; a key column keeps its type and NOT NULL. Ignite counts catalog versions;
here a change applied is a batch with entries and a new table schema version, a no-op a batch
without entries.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, ColumnType, ErrorCode, Prepared
from catalog import commands as c
from catalog.column_types import PLAIN_TYPES
from tests.unit.catalog.helpers import apply, bad_shape, col, key, refused, run
from tests.unit.catalog.ignite.ignite_column_types import (
    LENGTH_TYPES,
    PRECISION_TYPES,
    column_with_defaults,
    is_supported_column_type_change,
)
from tests.unit.catalog.ignite.support import applied, not_applied, simple_table, sql_refused

T = ColumnType
ALTER = "ALTER TABLE TEST_TABLE ALTER COLUMN {column} {action}"


def _table_with(*columns: c.Column) -> Catalog:
    """Ignite's ``simpleTable(name, columns)``: TEST_TABLE keyed by ``ID INT`` and ``columns``."""
    create = c.CreateTable(
        name="TEST_TABLE", columns=(key("ID", T.INT32), *columns), primary_key=("ID",)
    )
    return apply(Catalog.initial(), create)


def _alter(column: str, **fields: Any) -> c.AlterColumnCommand:
    return c.AlterColumn(table="TEST_TABLE", column=column, **fields)


def _changed(cat: Catalog, column: str, **fields: Any) -> Prepared:
    """Run ALTER COLUMN ``column`` with ``fields``; it must apply one change."""
    prepared = run(cat, _alter(column, **fields))
    assert len(prepared.entries) == 1, f"{column} {fields} changed nothing"
    return prepared


def _unchanged(cat: Catalog, column: str, **fields: Any) -> None:
    """Run ALTER COLUMN ``column`` with ``fields``; it must be accepted as a no-op."""
    assert not run(cat, _alter(column, **fields)).entries, f"{column} {fields} changed"


def _version(cat: Catalog) -> int:
    return cat.table("PUBLIC", "TEST_TABLE").schema_version


def test_alter_column_increments_table_version() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE TEST_TABLE (KEY1 INT PRIMARY KEY, VAL1 INT)")
    cat = applied(cat, ALTER.format(column="VAL1", action="SET DATA TYPE BIGINT"))
    assert _version(cat) == 2


def test_alter_column_default() -> None:
    cat = simple_table()
    column = cat.table("PUBLIC", "TEST_TABLE").column("VAL")
    assert column is not None and column.default is None
    # (literal, the default after it, whether it changes the column): NULL -> NULL is a no-op,
    # NULL -> 1 applies, 1 -> 1 is a no-op, 1 -> 2 and 2 -> NULL apply.
    steps = [("NULL", None, False), ("1", 1, True), ("1", 1, False), ("2", 2, True)]
    steps.append(("NULL", None, True))
    version = _version(cat)
    for literal, expected, changes in steps:
        text = ALTER.format(column="VAL", action=f"SET DEFAULT {literal}")
        if changes:
            cat = applied(cat, text)
            version += 1
        else:
            not_applied(cat, text)
        column = cat.table("PUBLIC", "TEST_TABLE").column("VAL")
        assert column is not None and column.default == expected, text
        assert _version(cat) == version


def test_alter_column_not_null() -> None:
    cat = simple_table()
    not_applied(cat, ALTER.format(column="VAL", action="DROP NOT NULL"))
    not_applied(cat, ALTER.format(column="VAL_NOT_NULL", action="SET NOT NULL"))
    cat = applied(cat, ALTER.format(column="VAL_NOT_NULL", action="DROP NOT NULL"))
    assert _version(cat) == 2

    text = ALTER.format(column="ID", action="DROP NOT NULL")
    error = sql_refused(cat, ErrorCode.UNSUPPORTED_CHANGE, text)
    assert "cannot drop NOT NULL of primary-key column ID" in error.message
    # SET NOT NULL would make the rows already written invalid.
    for column in ("VAL", "VAL_NOT_NULL"):
        text = ALTER.format(column=column, action="SET NOT NULL")
        error = sql_refused(cat, ErrorCode.UNSUPPORTED_CHANGE, text)
        assert f"cannot set NOT NULL on existing column {column}" in error.message


def test_alter_column_type_precision() -> None:
    cat = _table_with(
        col("COL_DECIMAL1", T.DECIMAL, precision=10, scale=1),
        col("COL_DECIMAL2", T.DECIMAL, precision=11, scale=1),
    )
    cat = _changed(cat, "COL_DECIMAL1", type=T.DECIMAL, precision=11).catalog
    changed = cat.table("PUBLIC", "TEST_TABLE").column("COL_DECIMAL1")
    assert changed is not None and (changed.precision, changed.scale) == (11, 1)
    _unchanged(cat, "COL_DECIMAL2", type=T.DECIMAL, precision=11)
    _unchanged(cat, "COL_DECIMAL1", type=T.DECIMAL, precision=11)
    for column in ("COL_DECIMAL1", "COL_DECIMAL2"):
        command = _alter(column, type=T.DECIMAL, precision=10)
        error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, command)
        assert "cannot decrease the precision of a DECIMAL column" in error.message


@pytest.mark.parametrize("ctype", [t for t in PLAIN_TYPES if t is not T.DECIMAL])
def test_alter_column_type_any_precision_change_is_rejected(ctype: ColumnType) -> None:
    length = {"length": 1 << 5} if ctype in LENGTH_TYPES else {}
    if ctype not in PRECISION_TYPES:
        error = bad_shape(lambda: col("COL_PRECISION", ctype, precision=3, **length))
        assert f"column type {ctype} does not take a precision" in str(error)
        return
    cat = _table_with(col("COL_PRECISION", ctype, precision=3))
    for precision in (2, 4):
        command = _alter("COL_PRECISION", type=ctype, precision=precision)
        error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, command)
        assert f"cannot change the precision of a {ctype} column" in error.message


@pytest.mark.parametrize("ctype", [T.STRING, T.BYTES])
def test_alter_column_type_length(ctype: ColumnType) -> None:
    name = f"COL_{ctype}"
    cat = _changed(_table_with(col(name, ctype, length=10)), name, type=ctype, length=11).catalog
    assert _version(cat) == 2
    error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter(name, type=ctype, length=10))
    assert f"cannot shorten {ctype} from 11 to 10" in error.message
    _unchanged(cat, name, type=ctype, length=11)
    _unchanged(cat, name, type=ctype)  # no length: the column keeps its own
    column = cat.table("PUBLIC", "TEST_TABLE").column(name)
    assert column is not None and column.length == 11


@pytest.mark.parametrize("ctype", [t for t in PLAIN_TYPES if t not in LENGTH_TYPES])
def test_alter_column_type_any_length_change_is_rejected(ctype: ColumnType) -> None:
    error = bad_shape(lambda: column_with_defaults("COL_PRECISION", ctype, length=10))
    assert f"column type {ctype} does not take a length" in str(error)


@pytest.mark.parametrize("ctype", list(PLAIN_TYPES))
def test_alter_column_type_scale_is_rejected(ctype: ColumnType) -> None:
    name = f"COL_{ctype}"
    if ctype is not T.DECIMAL:
        error = bad_shape(lambda: column_with_defaults(name, ctype, scale=3))
        assert f"column type {ctype} does not take a scale" in str(error)
        return
    cat = _table_with(col(name, ctype, precision=11, scale=3))
    _unchanged(cat, name, type=ctype)
    _unchanged(cat, name, type=ctype, scale=3)
    for scale in (4, 2):
        error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, _alter(name, type=ctype, scale=scale))
        assert "cannot change the scale of a DECIMAL column" in error.message


@pytest.mark.parametrize("target", list(PLAIN_TYPES))
def test_alter_column_type(target: ColumnType) -> None:
    """Every column type set to ``target``: only Ignite's widenings (and no change) pass."""
    cat = _table_with(*(column_with_defaults(f"COL_{t}", t) for t in PLAIN_TYPES))
    version = _version(cat)
    for source in PLAIN_TYPES:
        name = f"COL_{source}"
        command = _alter(name, type=target)
        if source is target:
            assert not run(cat, command).entries, name
        elif is_supported_column_type_change(source, target):
            cat = run(cat, command).catalog
            version += 1
            column = cat.table("PUBLIC", "TEST_TABLE").column(name)
            assert column is not None and column.type is target
        else:
            error = refused(cat, ErrorCode.UNSUPPORTED_CHANGE, command)
            assert f"{source} to {target}" in error.message
        assert _version(cat) == version, f"{source} -> {target}"


def test_alter_column_type_rejected_for_primary_key() -> None:
    text = ALTER.format(column="ID", action="SET DATA TYPE BIGINT")
    error = sql_refused(simple_table(), ErrorCode.UNSUPPORTED_CHANGE, text)
    assert "cannot change the type of primary-key column ID" in error.message


def test_alter_column_multiple_changes() -> None:
    """``SET DATA TYPE BIGINT NULL DEFAULT NULL``: three changes in one command, one version."""
    changes: dict[str, Any] = {"type": T.INT64, "nullable": True, "default": None}
    cat = _changed(simple_table(), "VAL_NOT_NULL", **changes).catalog
    assert _version(cat) == 2
    column = cat.table("PUBLIC", "TEST_TABLE").column("VAL_NOT_NULL")
    assert column is not None
    assert (column.default, column.nullable, column.type) == (None, True, T.INT64)

    # Only the default differs now.
    cat = _changed(cat, "VAL_NOT_NULL", **{**changes, "default": 2}).catalog
    assert _version(cat) == 3
    column = cat.table("PUBLIC", "TEST_TABLE").column("VAL_NOT_NULL")
    assert column is not None and column.default == 2
    _unchanged(cat, "VAL_NOT_NULL", **{**changes, "default": 2})
