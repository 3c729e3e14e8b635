"""Columns made required by a replace of a table's rows, and the files that stay its rows."""

from __future__ import annotations

from catalog import Catalog, CatalogEvent, ColumnType, ErrorCode
from catalog import commands as c
from catalog.data.files import DataCommit, DataFile, table_rows
from catalog.data.iceberg_table import IcebergTableState, PartitionSpec, SortOrder
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    col,
    entry_types,
    events,
    refused,
    run,
    with_table,
)

REQUIRED = col("C", ColumnType.INT64, nullable=False)


def _iceberg_table() -> Catalog:
    """Return a table with an Iceberg state: properties, a sort order, a doc."""
    spec = c.IcebergTableSpec(
        sort_order=c.NewSortOrder(fields=[c.SortFieldSpec(source="A")]),
        properties={"owner": "someone"},
        column_docs={"A": "a number"},
    )
    return with_table(iceberg=spec)


def test_a_replace_adds_a_not_null_column_without_a_default() -> None:
    cat = with_table()
    prepared = run(cat, c.AddColumns(table="T", columns=(REQUIRED,), replaces_rows=True))
    assert entry_types(prepared) == ["new_columns", "set_table_iceberg"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER, CatalogEvent.TABLE_ALTER]
    table = prepared.catalog.table("PUBLIC", "T")
    added = table.column("C")
    assert added is not None and not added.nullable and added.default is None
    assert table.schema_version == 2
    assert table.rows_from == 2
    # A table the catalog's SQL made gets the default state, its rows floor aside.
    assert table.iceberg == IcebergTableState(rows_from=2)


def test_without_a_replace_a_not_null_column_still_needs_a_default() -> None:
    error = bad_shape(lambda: c.AddColumns(table="T", columns=(REQUIRED,)))
    assert error.message.endswith(": NOT NULL column C needs a default value")
    assert with_table().table("PUBLIC", "T").rows_from == 0


def test_a_replace_makes_an_existing_column_not_null() -> None:
    cat = with_table()
    prepared = run(cat, c.AlterColumn(table="T", column="A", nullable=False, replaces_rows=True))
    assert entry_types(prepared) == ["alter_column", "set_table_iceberg"]
    table = prepared.catalog.table("PUBLIC", "T")
    column = table.column("A")
    assert column is not None and not column.nullable
    assert (table.schema_version, table.rows_from) == (2, 2)


def test_without_a_replace_a_column_still_cannot_become_not_null() -> None:
    error = refused(
        with_table(),
        ErrorCode.UNSUPPORTED_CHANGE,
        c.AlterColumn(table="T", column="A", nullable=False),
    )
    assert error.message == "cannot set NOT NULL on existing column A"


def test_the_floor_changes_nothing_else_of_the_iceberg_state() -> None:
    cat = _iceberg_table()
    before = cat.table("PUBLIC", "T")
    assert before.iceberg is not None
    after = apply(cat, c.AddColumns(table="T", columns=(REQUIRED,), replaces_rows=True)).table(
        "PUBLIC", "T"
    )
    assert after.iceberg == before.iceberg.model_copy(update={"rows_from": 2})
    # The same columns added without the flag: the same table but for the floor.
    plain = apply(cat, c.AddColumns(table="T", columns=(col("D"),))).table("PUBLIC", "T")
    flagged = apply(cat, c.AddColumns(table="T", columns=(col("D"),), replaces_rows=True))
    assert flagged.table("PUBLIC", "T") == plain.model_copy(update={"iceberg": after.iceberg})
    assert after.iceberg.sort_orders != (SortOrder(order_id=0),)
    assert after.iceberg.specs == (PartitionSpec(spec_id=0),)


def test_a_replace_batch_counts_rows_from_its_last_required_change() -> None:
    """As an Iceberg replace sends them: alterations, additions, then the Iceberg state."""
    cat = _iceberg_table()
    table = apply(
        cat,
        c.AlterColumn(table="T", column="B", nullable=False, replaces_rows=True),
        c.AddColumns(table="T", columns=(REQUIRED, col("D")), replaces_rows=True),
        c.AlterTableIceberg(table="T", set_properties={"k": "v"}),
    ).table("PUBLIC", "T")
    assert table.schema_version == 3  # B made NOT NULL: 2; C and D added: 3
    assert table.rows_from == 3
    assert table.iceberg is not None and table.iceberg.property_map()["k"] == "v"
    again = apply(
        apply(cat, c.AddColumns(table="T", columns=(REQUIRED,), replaces_rows=True)),
        c.AddColumns(table="T", columns=(col("E"),)),
    ).table("PUBLIC", "T")
    assert (again.schema_version, again.rows_from) == (3, 2)  # later changes keep the floor


def test_a_replace_flag_round_trips_and_is_left_out_when_false() -> None:
    plain = c.AddColumns(table="T", columns=(col("D"),))
    assert "replaces_rows" not in plain.model_dump(mode="json")
    flagged = c.AlterColumn(table="T", column="A", nullable=False, replaces_rows=True)
    dumped = flagged.model_dump(mode="json")
    assert dumped["replaces_rows"] is True
    assert c.parse([dumped]) == [flagged]
    assert "replaces_rows" not in c.AlterColumn(table="T", column="A").model_dump(mode="json")


def _file(name: str, schema_version: int | None = None) -> DataFile:
    return DataFile(
        path=f"p0/{name}.parquet", partition=0, rows=1, size=10, schema_version=schema_version
    )


def _commit(seq: int, schema_version: int, files: list[DataFile]) -> DataCommit:
    return DataCommit(
        table_id=7,
        seq=seq,
        commit_ts=seq,
        schema_version=schema_version,
        mode="append",
        files=tuple(files),
        request_id=f"r{seq}",
    )


def test_table_rows_keeps_the_files_written_from_the_floor_on() -> None:
    old, new = _commit(1, 1, [_file("a")]), _commit(2, 3, [_file("b")])
    # A merged commit names each earlier file's own schema version.
    merged = _commit(3, 3, [_file("c", schema_version=2), _file("d")])
    commits = [old, new, merged]
    assert table_rows(commits, 0) == commits
    kept = table_rows(commits, 3)
    assert [[f.path for f in x.files] for x in kept] == [[], ["p0/b.parquet"], ["p0/d.parquet"]]
    assert kept[1] is new
    assert [[f.path for f in x.files] for x in table_rows(commits, 2)][2] == [
        "p0/c.parquet",
        "p0/d.parquet",
    ]
