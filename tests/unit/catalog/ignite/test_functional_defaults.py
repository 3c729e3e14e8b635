"""Ports of Ignite's functional-default tests: ``DEFAULT RAND_UUID`` on a UUID key column.

From ``CatalogTableTest.testFunctionalDefaultTypeMismatch``,
``AlterTableAddColumnCommandValidationTest.cannotAddColumnWithFunctionalDefault`` and
``AlterTableAlterColumnCommandValidationTest`` (``functionalDefaultCannotBeAppliedToValueColumn``,
``invalidFunctionalDefaultCannotBeAppliedToPkColumn``); and how the default is stored.
"""

from __future__ import annotations

import msgpack
import pytest

from catalog import Catalog, ColumnType
from catalog import commands as c
from catalog.descriptors import ColumnDescriptor
from catalog.snapshots import decode_snapshot, encode_snapshot
from catalog.wire import compile_decoder, to_wire
from tests.unit.catalog.helpers import bad_shape
from tests.unit.catalog.ignite.support import applied

KEYED = "CREATE TABLE T (ID UUID DEFAULT RAND_UUID PRIMARY KEY, V INT)"


@pytest.mark.parametrize("spelling", ["RAND_UUID", "RAND_UUID()", "rand_uuid"])
def test_functional_default_on_a_uuid_key(spelling: str) -> None:
    cat = applied(Catalog.initial(), KEYED.replace("RAND_UUID", spelling))
    column = cat.table("PUBLIC", "T").column("ID")
    assert column is not None
    assert (column.default, column.default_function) == (None, "RAND_UUID")


def test_functional_default_type_mismatch() -> None:
    error = bad_shape(lambda: applied(Catalog.initial(), KEYED.replace("ID UUID", "ID BIGINT")))
    assert "RAND_UUID gives a UUID value, the column is INT64" in str(error)


def test_functional_default_unknown_function() -> None:
    error = bad_shape(lambda: applied(Catalog.initial(), KEYED.replace("RAND_UUID", "NO_SUCH()")))
    assert "NO_SUCH cannot be a default (the default functions: RAND_UUID)" in str(error)


def test_functional_default_only_on_key_columns() -> None:
    text = "CREATE TABLE T (ID INT PRIMARY KEY, U UUID DEFAULT RAND_UUID)"
    error = bad_shape(lambda: applied(Catalog.initial(), text))
    assert "only primary-key columns take a default function" in str(error)


def test_cannot_add_column_with_functional_default() -> None:
    cat = applied(Catalog.initial(), KEYED)
    error = bad_shape(lambda: applied(cat, "ALTER TABLE T ADD COLUMN U UUID DEFAULT RAND_UUID"))
    assert "only primary-key columns take a default function" in str(error)


def test_functional_default_cannot_be_applied_to_value_column() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID UUID PRIMARY KEY, U UUID)")
    error = bad_shape(lambda: applied(cat, "ALTER TABLE T ALTER COLUMN U SET DEFAULT RAND_UUID"))
    assert "only primary-key columns take a default function" in str(error)


def test_invalid_functional_default_cannot_be_applied_to_pk_column() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID BIGINT PRIMARY KEY, V INT)")
    error = bad_shape(lambda: applied(cat, "ALTER TABLE T ALTER COLUMN ID SET DEFAULT RAND_UUID"))
    assert "RAND_UUID gives a UUID value" in str(error)


def test_alter_key_column_default_between_function_and_constant() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID UUID PRIMARY KEY, V INT)")
    cat = applied(cat, "ALTER TABLE T ALTER COLUMN ID SET DEFAULT RAND_UUID")
    assert cat.table("PUBLIC", "T").column("ID").default_function == "RAND_UUID"  # type: ignore[union-attr]
    constant = "'00000000-0000-0000-0000-000000000001'"
    cat = applied(cat, f"ALTER TABLE T ALTER COLUMN ID SET DEFAULT {constant}")
    column = cat.table("PUBLIC", "T").column("ID")
    assert column is not None and column.default_function is None and column.default
    cat = applied(cat, "ALTER TABLE T ALTER COLUMN ID SET DEFAULT RAND_UUID")
    cat = applied(cat, "ALTER TABLE T ALTER COLUMN ID DROP DEFAULT")
    column = cat.table("PUBLIC", "T").column("ID")
    assert column is not None and (column.default, column.default_function) == (None, None)


def test_a_column_takes_a_constant_or_a_function() -> None:
    error = bad_shape(
        lambda: c.Column(name="ID", type=ColumnType.UUID, default="x", default_function="RAND_UUID")
    )
    assert "give one" in str(error)


def test_stored_columns_without_a_function_keep_their_first_format() -> None:
    """The default function is appended to a stored column only when there is one, so
    columns without one are stored as before (older readers and digests unchanged), and a
    stored column of the first format reads with no function."""
    cat = applied(Catalog.initial(), KEYED)
    table = cat.table("PUBLIC", "T")
    key_column, value_column = table.columns
    assert len(to_wire(key_column)) == 9 and len(to_wire(value_column)) == 8
    first_format = msgpack.packb(to_wire(value_column))
    decoded = compile_decoder(ColumnDescriptor)(msgpack.unpackb(first_format))
    assert decoded == value_column and decoded.default_function is None
    again = decode_snapshot(encode_snapshot(cat))
    assert again.digest() == cat.digest()
    assert again.table("PUBLIC", "T").column("ID") == key_column
