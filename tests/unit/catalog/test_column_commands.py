"""add_columns, drop_columns and alter_column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog import Catalog, CatalogError, CatalogEvent, ColumnType, ErrorCode, IndexStatus, prepare
from catalog import commands as c
from catalog.column_types import DefaultValue
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    col,
    create_table,
    entry_types,
    events,
    key,
    refused,
    run,
    with_index,
    with_table,
)

# -- add_columns -------------------------------------------------------------------------------


def test_add_columns() -> None:
    cat = with_table()
    before = cat.table("PUBLIC", "T")
    prepared = run(
        cat,
        c.AddColumns(
            table="T",
            columns=(
                col("C", ColumnType.UUID),
                col("D", ColumnType.INT8, nullable=False, default=1),
            ),
        ),
    )
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_columns"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    table = prepared.catalog.table("PUBLIC", "T")
    assert table.id == before.id
    assert [(x.id, x.name) for x in table.columns] == [
        (0, "ID"),
        (1, "A"),
        (2, "B"),
        (3, "C"),
        (4, "D"),
    ]
    assert table.next_column_id == 5
    assert table.schema_version == 2
    assert table.version(1).columns == before.columns  # history is kept
    assert table.version(2).columns == table.columns
    d = table.column("D")
    assert d is not None
    assert (d.nullable, d.default) == (False, 1)
    assert prepared.catalog.object_id_gen == cat.object_id_gen  # column ids are per table


def test_add_columns_twice_bumps_the_version_twice() -> None:
    cat = apply(
        with_table(),
        c.AddColumns(table="T", columns=(col("C"),)),
        c.AddColumns(table="T", columns=(col("D"),)),
    )
    table = cat.table("PUBLIC", "T")
    assert table.schema_version == 3
    assert [v.version for v in table.versions] == [1, 2, 3]
    assert [x.id for x in table.columns] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: c.AddColumns(table="T", columns=()), id="no-columns"),
        pytest.param(lambda: c.AddColumns(table="T", columns=(col("C"), col("C"))), id="duplicate"),
        pytest.param(
            lambda: c.AddColumns(table="T", columns=(col("C", nullable=False),)),
            id="not-null-without-default",
        ),
        pytest.param(
            lambda: c.AddColumns(table="T", columns=(col("C", ColumnType.INT8, default=128),)),
            id="default-out-of-range",
        ),
        pytest.param(
            lambda: c.AddColumns(table="T", columns=(col("C", ColumnType.STRING, length=0),)),
            id="bad-length",
        ),
    ],
)
def test_add_columns_refused_by_its_shape(build: Callable[[], object]) -> None:
    bad_shape(build)


def test_add_columns_refused_against_the_catalog() -> None:
    cat = with_table()
    refused(cat, ErrorCode.COLUMN_EXISTS, c.AddColumns(table="T", columns=(col("A"),)))
    refused(cat, ErrorCode.COLUMN_EXISTS, c.AddColumns(table="T", columns=(col("C"), col("ID"))))
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.AddColumns(table="X", columns=(col("C"),)))
    refused(
        cat,
        ErrorCode.COLUMN_EXISTS,
        c.AddColumns(table="T", columns=(col("C"),)),
        c.AddColumns(table="T", columns=(col("C"),)),
    )
    # Names are case-sensitive.
    cat = apply(cat, c.AddColumns(table="T", columns=(col("a"),)))
    assert cat.table("PUBLIC", "T").column("a") is not None


def test_column_ids_are_never_reused() -> None:
    cat = with_table()
    cat = apply(cat, c.DropColumns(table="T", columns=("B",)))
    cat = apply(cat, c.AddColumns(table="T", columns=(col("B", ColumnType.STRING),)))
    table = cat.table("PUBLIC", "T")
    b = table.column("B")
    assert b is not None
    assert b.id == 3
    assert table.next_column_id == 4
    assert table.schema_version == 3
    assert [x.name for x in table.version(2).columns] == ["ID", "A"]
    # Even dropping the newest column and adding one again moves on.
    cat = apply(
        cat,
        c.DropColumns(table="T", columns=("B",)),
        c.AddColumns(table="T", columns=(col("B"),)),
    )
    b = cat.table("PUBLIC", "T").column("B")
    assert b is not None
    assert b.id == 4


# -- drop_columns ------------------------------------------------------------------------------


def test_drop_columns() -> None:
    cat = with_table(columns=(key(), col("A"), col("B"), col("C")))
    prepared = run(cat, c.DropColumns(table="T", columns=("C", "A")))
    assert entry_types(prepared) == ["drop_columns"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    assert prepared.entries[0].model_dump()["column_ids"] == (3, 1)
    table = prepared.catalog.table("PUBLIC", "T")
    assert [x.name for x in table.columns] == ["ID", "B"]
    assert table.schema_version == 2
    assert table.next_column_id == 4
    assert [x.name for x in table.version(1).columns] == ["ID", "A", "B", "C"]


def test_drop_columns_refused() -> None:
    cat = with_table(columns=(key("K1"), key("K2"), col("A")), primary_key=("K1", "K2"))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="T", columns=("K2",)))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="T", columns=("A", "K1")))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="T", columns=("A", "K1", "K2")))
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.DropColumns(table="T", columns=("X",)))
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.DropColumns(table="T", columns=("a",)))
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.DropColumns(table="X", columns=("A",)))
    refused(
        cat,
        ErrorCode.COLUMN_NOT_FOUND,
        c.DropColumns(table="T", columns=("A",)),
        c.DropColumns(table="T", columns=("A",)),
    )
    bad_shape(lambda: c.DropColumns(table="T", columns=()))
    bad_shape(lambda: c.DropColumns(table="T", columns=("A", "A")))


@pytest.mark.parametrize(
    "status", [IndexStatus.REGISTERED, IndexStatus.BUILDING, IndexStatus.AVAILABLE]
)
def test_drop_column_of_a_live_index_is_refused(status: IndexStatus) -> None:
    cat = with_index(with_table(), "I", ("B", "A"), status=status)
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="T", columns=("A",)))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="T", columns=("B",)))


def test_drop_column_of_a_stopping_index_is_accepted() -> None:
    cat = with_index(with_table(), "I", ("A",), status=IndexStatus.STOPPING)
    cat = apply(cat, c.DropColumns(table="T", columns=("A",)))
    assert cat.table("PUBLIC", "T").column("A") is None


def test_drop_column_after_dropping_its_registered_index() -> None:
    cat = with_index(with_table(), "I", ("A",))
    cat = apply(cat, c.DropIndex(name="I"), c.DropColumns(table="T", columns=("A",)))
    assert cat.table("PUBLIC", "T").column("A") is None


# -- alter_column ------------------------------------------------------------------------------

_WIDENINGS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"type": ColumnType.INT8}, {"type": ColumnType.INT16}),
    ({"type": ColumnType.INT8}, {"type": ColumnType.INT32}),
    ({"type": ColumnType.INT8}, {"type": ColumnType.INT64}),
    ({"type": ColumnType.INT16}, {"type": ColumnType.INT32}),
    ({"type": ColumnType.INT16}, {"type": ColumnType.INT64}),
    ({"type": ColumnType.INT32}, {"type": ColumnType.INT64}),
    ({"type": ColumnType.FLOAT32}, {"type": ColumnType.FLOAT64}),
    ({"type": ColumnType.STRING, "length": 10}, {"length": 11}),
    ({"type": ColumnType.STRING, "length": 10}, {"type": ColumnType.STRING, "length": 1000}),
    ({"type": ColumnType.BYTES, "length": 10}, {"length": 20}),
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"precision": 12}),
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"precision": 38, "scale": 2}),
]

_REFUSED_CHANGES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"type": ColumnType.INT16}, {"type": ColumnType.INT8}),
    ({"type": ColumnType.INT64}, {"type": ColumnType.INT32}),
    ({"type": ColumnType.INT32}, {"type": ColumnType.INT16}),
    ({"type": ColumnType.FLOAT64}, {"type": ColumnType.FLOAT32}),
    ({"type": ColumnType.INT32}, {"type": ColumnType.FLOAT64}),
    ({"type": ColumnType.INT64}, {"type": ColumnType.DECIMAL}),
    ({"type": ColumnType.INT32}, {"type": ColumnType.STRING}),
    ({"type": ColumnType.STRING}, {"type": ColumnType.BYTES}),
    ({"type": ColumnType.BOOLEAN}, {"type": ColumnType.INT8}),
    ({"type": ColumnType.DATE}, {"type": ColumnType.TIMESTAMP}),
    ({"type": ColumnType.TIMESTAMP}, {"type": ColumnType.TIMESTAMP_TZ}),
    ({"type": ColumnType.UUID}, {"type": ColumnType.STRING}),
    ({"type": ColumnType.STRING, "length": 10}, {"length": 9}),
    ({"type": ColumnType.BYTES, "length": 10}, {"length": 1}),
    ({"type": ColumnType.STRING}, {"type": ColumnType.STRING, "length": 10}),  # from 65536
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"precision": 9}),
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"scale": 3}),
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"precision": 12, "scale": 3}),
    ({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2}, {"scale": 0}),
    ({"type": ColumnType.TIME, "precision": 3}, {"precision": 6}),
    ({"type": ColumnType.TIMESTAMP, "precision": 6}, {"precision": 3}),
    ({"type": ColumnType.TIMESTAMP_TZ}, {"precision": 9}),
]


def _table_with(column: dict[str, Any], **extra: Any) -> Catalog:
    return with_table(columns=(key(), c.Column(name="C", **column, **extra)))


@pytest.mark.parametrize(("old", "change"), _WIDENINGS)
def test_alter_column_widening(old: dict[str, Any], change: dict[str, Any]) -> None:
    cat = _table_with(old)
    before = cat.table("PUBLIC", "T").column("C")
    assert before is not None
    prepared = run(cat, c.AlterColumn(table="T", column="C", **change))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["alter_column"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    table = prepared.catalog.table("PUBLIC", "T")
    after = table.column("C")
    assert after is not None
    assert after.id == before.id
    assert after.type is change.get("type", before.type)
    for param in ("precision", "scale", "length"):
        if param in change:
            assert getattr(after, param) == change[param]
    assert table.schema_version == 2
    assert table.version(1).columns[1] == before


@pytest.mark.parametrize(("old", "change"), _REFUSED_CHANGES)
def test_alter_column_other_changes_are_unsupported(
    old: dict[str, Any], change: dict[str, Any]
) -> None:
    cat = _table_with(old)
    refused(cat, ErrorCode.UNSUPPORTED_CHANGE, c.AlterColumn(table="T", column="C", **change))


def test_alter_column_parameters_the_type_does_not_take() -> None:
    cat = _table_with({"type": ColumnType.INT8})
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterColumn(table="T", column="C", length=10))
    refused(
        cat,
        ErrorCode.VALIDATION_ERROR,
        c.AlterColumn(table="T", column="C", type=ColumnType.INT16, precision=3),
    )
    cat = _table_with({"type": ColumnType.STRING})
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterColumn(table="T", column="C", length=0))


@pytest.mark.parametrize(
    "change",
    [
        {"type": ColumnType.INT64},
        {"type": ColumnType.INT32},
        {"nullable": False},
        {"default": 5},
    ],
)
def test_alter_column_without_a_change_is_a_no_op(change: dict[str, Any]) -> None:
    cat = _table_with({"type": ColumnType.INT64}, nullable=False, default=5)
    if change.get("type") is ColumnType.INT32:
        refused(cat, ErrorCode.UNSUPPORTED_CHANGE, c.AlterColumn(table="T", column="C", **change))
        return
    prepared = run(cat, c.AlterColumn(table="T", column="C", **change))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    assert prepared.catalog.table("PUBLIC", "T").schema_version == 1


def test_alter_column_with_nothing_is_a_no_op() -> None:
    prepared = run(with_table(), c.AlterColumn(table="T", column="A"))
    assert prepared.applied == (False,)


def test_parameters_left_out_keep_their_value() -> None:
    cat = _table_with({"type": ColumnType.STRING, "length": 10})
    prepared = run(cat, c.AlterColumn(table="T", column="C", type=ColumnType.STRING))
    assert prepared.applied == (False,)
    cat = _table_with({"type": ColumnType.DECIMAL, "precision": 10, "scale": 2})
    cat = apply(cat, c.AlterColumn(table="T", column="C", precision=11))
    column = cat.table("PUBLIC", "T").column("C")
    assert column is not None
    assert (column.precision, column.scale) == (11, 2)


def test_drop_not_null() -> None:
    cat = _table_with({"type": ColumnType.INT32}, nullable=False, default=0)
    cat = apply(cat, c.AlterColumn(table="T", column="C", nullable=True))
    column = cat.table("PUBLIC", "T").column("C")
    assert column is not None
    assert column.nullable is True
    assert column.default == 0


def test_set_not_null_is_refused() -> None:
    cat = with_table()
    refused(cat, ErrorCode.UNSUPPORTED_CHANGE, c.AlterColumn(table="T", column="A", nullable=False))
    refused(
        cat,
        ErrorCode.UNSUPPORTED_CHANGE,
        c.AlterColumn(table="T", column="A", nullable=False, default=1),
    )


def test_primary_key_column_rules() -> None:
    cat = with_table(
        columns=(key("ID", ColumnType.INT32), key("S", ColumnType.STRING, length=10), col("A")),
        primary_key=("ID", "S"),
    )
    for column, change in (
        ("ID", {"type": ColumnType.INT64}),
        ("ID", {"nullable": True}),
        ("S", {"type": ColumnType.BYTES}),
        # Stricter than Ignite, which lets a key VARCHAR grow: any type parameter is the type.
        ("S", {"length": 20}),
        ("S", {"nullable": True}),
    ):
        refused(
            cat, ErrorCode.UNSUPPORTED_CHANGE, c.AlterColumn(table="T", column=column, **change)
        )
    # A default on a key column may change.
    cat = apply(cat, c.AlterColumn(table="T", column="ID", default=1))
    pk = cat.table("PUBLIC", "T").column("ID")
    assert pk is not None
    assert (pk.type, pk.nullable, pk.default) == (ColumnType.INT32, False, 1)


@pytest.mark.parametrize(
    ("column", "default", "stored"),
    [
        ({"type": ColumnType.INT32}, 42, 42),
        ({"type": ColumnType.DECIMAL, "precision": 5, "scale": 2}, "1.5", "1.50"),
        ({"type": ColumnType.DECIMAL, "precision": 5, "scale": 2}, 3, "3.00"),
        ({"type": ColumnType.BYTES, "length": 4}, "DEADBEEF", "deadbeef"),
        ({"type": ColumnType.FLOAT64}, 1, 1.0),
        ({"type": ColumnType.STRING}, "", ""),
    ],
)
def test_set_default(column: dict[str, Any], default: DefaultValue, stored: DefaultValue) -> None:
    cat = _table_with(column)
    prepared = run(cat, c.AlterColumn(table="T", column="C", default=default))
    assert entry_types(prepared) == ["alter_column"]
    after = prepared.catalog.table("PUBLIC", "T").column("C")
    assert after is not None
    assert after.default == stored
    assert type(after.default) is type(stored)
    assert prepared.catalog.table("PUBLIC", "T").schema_version == 2


def test_drop_default() -> None:
    cat = _table_with({"type": ColumnType.INT32}, default=7)
    cat = apply(cat, c.AlterColumn(table="T", column="C", default=None))
    column = cat.table("PUBLIC", "T").column("C")
    assert column is not None
    assert column.default is None


def test_type_change_keeps_the_default() -> None:
    cat = _table_with({"type": ColumnType.INT8}, default=7)
    cat = apply(cat, c.AlterColumn(table="T", column="C", type=ColumnType.INT64))
    column = cat.table("PUBLIC", "T").column("C")
    assert column is not None
    assert (column.type, column.default) == (ColumnType.INT64, 7)


@pytest.mark.parametrize(
    ("column", "change"),
    [
        ({"type": ColumnType.INT8}, {"default": 128}),
        ({"type": ColumnType.INT8}, {"default": "1"}),
        ({"type": ColumnType.INT8}, {"default": True}),
        ({"type": ColumnType.STRING, "length": 2}, {"default": "abc"}),
        ({"type": ColumnType.DECIMAL, "precision": 3, "scale": 1}, {"default": "1.25"}),
        ({"type": ColumnType.INT8}, {"type": ColumnType.INT16, "default": 40000}),
    ],
)
def test_set_default_that_does_not_fit_is_refused(
    column: dict[str, Any], change: dict[str, Any]
) -> None:
    refused(
        _table_with(column),
        ErrorCode.VALIDATION_ERROR,
        c.AlterColumn(table="T", column="C", **change),
    )


def test_alter_column_not_found() -> None:
    cat = with_table()
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.AlterColumn(table="T", column="X", nullable=True))
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.AlterColumn(table="T", column="a", nullable=True))
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.AlterColumn(table="X", column="A", nullable=True))


def test_alter_column_in_the_batch_that_created_it() -> None:
    cat = Catalog.initial()
    prepared = run(
        cat,
        create_table(columns=(key(), col("A", ColumnType.INT8))),
        c.AlterColumn(table="T", column="A", type=ColumnType.INT32),
        c.AlterColumn(table="T", column="A", type=ColumnType.INT64),
    )
    table = prepared.catalog.table("PUBLIC", "T")
    assert table.schema_version == 3
    assert [v.columns[1].type for v in table.versions] == [
        ColumnType.INT8,
        ColumnType.INT32,
        ColumnType.INT64,
    ]


def test_refused_alter_in_a_batch_changes_nothing() -> None:
    cat = with_table()
    refused(
        cat,
        ErrorCode.UNSUPPORTED_CHANGE,
        c.AlterColumn(table="T", column="A", type=ColumnType.INT64),
        c.AlterColumn(table="T", column="A", type=ColumnType.INT8),
    )
    assert cat.table("PUBLIC", "T").schema_version == 1


def test_drop_columns_if_exists_skips_missing_columns() -> None:
    base = prepare(
        Catalog.initial(),
        [
            c.CreateTable(
                name="T",
                columns=[
                    c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                    c.Column(name="A", type=ColumnType.INT32),
                ],
                primary_key=["ID"],
            )
        ],
    ).catalog
    skipped = prepare(base, [c.DropColumns(table="T", columns=["A", "NOPE"], if_exists=True)])
    assert skipped.applied == (True,)
    assert [col.name for col in skipped.catalog.table("PUBLIC", "T").columns] == ["ID"]
    nothing = prepare(base, [c.DropColumns(table="T", columns=["NOPE"], if_exists=True)])
    assert nothing.applied == (False,)
    assert nothing.entries == ()
    with pytest.raises(CatalogError) as info:
        prepare(base, [c.DropColumns(table="T", columns=["NOPE"])])
    assert info.value.code is ErrorCode.COLUMN_NOT_FOUND


# -- rename_column -----------------------------------------------------------------------------


def test_rename_column_keeps_the_id_and_bumps_the_schema_version() -> None:
    cat = with_table()
    before = cat.table("PUBLIC", "T")
    prepared = run(cat, c.RenameColumn(table="T", column="A", new_name="A2"))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["alter_column"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    table = prepared.catalog.table("PUBLIC", "T")
    assert [(x.id, x.name) for x in table.columns] == [(0, "ID"), (1, "A2"), (2, "B")]
    assert table.schema_version == before.schema_version + 1
    assert table.version(before.schema_version).columns == before.columns


def test_rename_column_to_its_own_name_is_a_no_op() -> None:
    prepared = run(with_table(), c.RenameColumn(table="T", column="A", new_name="A"))
    assert prepared.applied == (False,)


def test_rename_column_refused() -> None:
    cat = with_table()
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.RenameColumn(table="T", column="Z", new_name="Y"))
    refused(cat, ErrorCode.COLUMN_EXISTS, c.RenameColumn(table="T", column="A", new_name="B"))
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.RenameColumn(table="U", column="A", new_name="Y"))
