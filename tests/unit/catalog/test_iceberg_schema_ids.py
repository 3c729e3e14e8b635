"""The Iceberg schema ids of a table's schema versions, and the removal of schemas by id."""

from __future__ import annotations

from catalog import ColumnType, ErrorCode
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.data.iceberg_schemas import current_schema_id, served_schema_ids
from catalog.descriptors import TableDescriptor
from tests.unit.catalog.helpers import apply, col, refused, with_table


def _table(cat: Catalog) -> TableDescriptor:
    table = cat.find_table("PUBLIC", "T")
    assert table is not None
    return table


def _add(name: str) -> c.AddColumnsCommand:
    return c.AddColumns(table="T", columns=(col(name, ColumnType.STRING),))


def _drop(name: str) -> c.DropColumnsCommand:
    return c.DropColumns(table="T", columns=(name,))


def _remove(*schema_ids: int) -> c.AlterTableIcebergCommand:
    return c.AlterTableIceberg(table="T", remove_schemas=schema_ids)


def test_each_version_is_served_under_its_own_number_until_one_gives_back_an_earlier_schema() -> (
    None
):
    cat = apply(with_table(), _add("X"))
    assert served_schema_ids(_table(cat)) == {1: 1, 2: 2}
    cat = apply(cat, _drop("X"))  # version 3 has version 1's columns
    assert served_schema_ids(_table(cat)) == {1: 1, 2: 2, 3: 1}
    assert current_schema_id(_table(cat)) == 1
    cat = apply(cat, _add("Y"))  # a column of a new id: a schema of its own
    assert served_schema_ids(_table(cat)) == {1: 1, 2: 2, 3: 1, 4: 4}


def test_removing_an_id_removes_every_version_served_under_it() -> None:
    cat = apply(with_table(), _add("X"), _drop("X"), _add("Y"))
    cat = apply(cat, _remove(1, 2))
    table = _table(cat)
    assert table.iceberg is not None
    assert table.iceberg.removed_schemas == (1, 2, 3)
    assert served_schema_ids(table) == {4: 4}


def test_the_current_schema_cannot_be_removed_by_the_id_it_is_served_under() -> None:
    cat = apply(with_table(), _add("X"), _drop("X"))  # version 3, served as 1
    error = refused(cat, ErrorCode.VALIDATION_ERROR, _remove(1))
    assert "schema 1 is the current schema" in str(error)
    cat = apply(cat, _remove(2, 99))  # an id the table does not serve is no error
    assert served_schema_ids(_table(cat)) == {1: 1, 3: 1}


def test_a_version_made_after_its_equal_was_removed_is_served_under_its_own_number() -> None:
    cat = apply(with_table(), _add("X"))
    cat = apply(cat, _remove(1), _drop("X"))  # version 3 has removed version 1's columns
    assert served_schema_ids(_table(cat)) == {2: 2, 3: 3}
