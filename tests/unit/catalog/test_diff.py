"""``diff``: what changed between two catalogs, object by object and down to columns."""

from __future__ import annotations

from catalog import ColumnType, IndexStatus
from catalog import commands as c
from catalog.diff import Change, ChangeKind, ColumnChange, FieldChange, diff
from tests.unit.catalog.helpers import (
    apply,
    catalog_with_default_zone,
    col,
    key,
    with_index,
    with_table,
)


def _only(changes: list[Change]) -> Change:
    assert len(changes) == 1, changes
    return changes[0]


def test_an_added_table_comes_whole_and_a_dropped_one_as_it_was() -> None:
    empty = catalog_with_default_zone()
    cat = with_table(empty)
    table = cat.table("PUBLIC", "T")
    added = diff(empty, cat)
    assert [(ch.object_type, ch.name, ch.change) for ch in added] == [
        ("table", "T", ChangeKind.ADDED),
        ("index", "T_PK", ChangeKind.ADDED),
    ]
    assert added[0].after == table and added[0].before is None and not added[0].columns
    dropped = diff(cat, apply(cat, c.DropTable(name="T")))
    assert [(ch.name, ch.change) for ch in dropped] == [
        ("T", ChangeKind.DROPPED),
        ("T_PK", ChangeKind.DROPPED),
    ]
    assert dropped[0].before == table and dropped[0].after is None


def test_one_column_added_to_a_wide_table_is_a_diff_of_one_column() -> None:
    wide = with_table(columns=(key(), *(col(f"C{i}") for i in range(2_000))))
    after = apply(wide, c.AddColumns(table="T", columns=(col("NOTE", ColumnType.STRING),)))
    change = _only(diff(wide, after))
    assert (change.change, change.before, change.after) == (ChangeKind.ALTERED, None, None)
    assert change.fields == (FieldChange("schema_version", 1, 2),)
    note = after.table("PUBLIC", "T").column("NOTE")
    assert change.columns == (ColumnChange(note.id, "NOTE", ChangeKind.ADDED, after=note),)  # type: ignore[union-attr]


def test_altered_and_dropped_columns_say_what_changed() -> None:
    cat = with_table(columns=(key(), col("A"), col("B", ColumnType.STRING), col("GONE")))
    after = apply(
        cat,
        c.AlterColumn(table="T", column="A", type=ColumnType.INT64, default=7),
        c.AlterColumn(table="T", column="B", nullable=True),
        c.RenameColumn(table="T", column="B", new_name="LABEL"),
        c.DropColumns(table="T", columns=("GONE",)),
    )
    before_table = cat.table("PUBLIC", "T")
    change = _only(diff(cat, after))
    assert FieldChange("schema_version", 1, 4) in change.fields
    by_name = {col_change.name: col_change for col_change in change.columns}
    assert set(by_name) == {"A", "LABEL", "GONE"}
    assert by_name["A"].change is ChangeKind.ALTERED
    assert by_name["A"].fields == (
        FieldChange("type", "INT32", "INT64"),
        FieldChange("default", None, 7),
    )
    assert by_name["LABEL"].fields == (FieldChange("name", "B", "LABEL"),)
    assert by_name["GONE"] == ColumnChange(
        3, "GONE", ChangeKind.DROPPED, before=before_table.column("GONE")
    )


def test_a_rename_and_an_index_status_are_property_changes() -> None:
    cat = with_index(with_table(), "T_BY_A", ("A",))
    after = apply(
        cat,
        c.RenameTable(name="T", new_name="ORDERS"),
        c.StartBuildingIndex(name="T_BY_A"),
    )
    changes = diff(cat, after)
    assert [(ch.object_type, ch.name, ch.fields) for ch in changes] == [
        ("table", "ORDERS", (FieldChange("name", "T", "ORDERS"),)),
        ("index", "ORDERS_PK", (FieldChange("name", "T_PK", "ORDERS_PK"),)),  # follows its table
        (
            "index",
            "T_BY_A",
            (FieldChange("status", IndexStatus.REGISTERED.value, IndexStatus.BUILDING.value),),
        ),
    ]
    assert all(ch.change is ChangeKind.ALTERED and not ch.columns for ch in changes)


def test_a_zone_change_lists_its_properties() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z", partitions=4, replicas=1))
    after = apply(cat, c.AlterZone(name="Z", replicas=3))
    change = _only(diff(cat, after))
    assert (change.object_type, change.name, change.change) == ("zone", "Z", ChangeKind.ALTERED)
    assert FieldChange("replicas", 1, 3) in change.fields
    assert all(f.field != "id" for f in change.fields)


def test_equal_catalogs_have_no_changes() -> None:
    cat = with_table()
    assert diff(cat, cat) == []
