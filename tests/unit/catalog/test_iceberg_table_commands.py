"""Tables without a key, a table's Iceberg state (create and alter_table_iceberg), and the
properties of schemas."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import CatalogEvent, ColumnType, ErrorCode
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.data.iceberg_table import (
    IcebergTableState,
    NullOrder,
    PartitionField,
    PartitionSpec,
    SortDirection,
    check_state,
)
from catalog.errors import ValidationError
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    catalog_with_default_zone,
    col,
    create_table,
    entry_types,
    events,
    refused,
    run,
)

COLUMNS = (
    col("id", ColumnType.INT64),
    col("ts", ColumnType.TIMESTAMP_TZ),
    col("day", ColumnType.DATE),
    col("name", ColumnType.STRING),
    col("ok", ColumnType.BOOLEAN),
    col("at", ColumnType.TIME),
)


def keyless(name: str = "E", **iceberg: Any) -> c.CreateTableCommand:
    """Return a keyless table created as an Iceberg engine creates it."""
    return c.CreateTable(
        name=name,
        columns=COLUMNS,
        primary_key=(),
        keyless=True,
        iceberg=c.IcebergTableSpec(**iceberg),
    )


def spec(*fields: tuple[str, str], **kw: Any) -> c.NewPartitionSpec:
    return c.NewPartitionSpec(
        fields=[c.PartitionFieldSpec(source=s, transform=t) for s, t in fields], **kw
    )


def alter(**kw: Any) -> c.AlterTableIcebergCommand:
    return c.AlterTableIceberg(table="E", **kw)


@pytest.fixture
def lake() -> Catalog:
    return apply(catalog_with_default_zone(), keyless())


# -- tables without a key -------------------------------------------------------------------


def test_a_keyless_table_has_no_key_index_and_no_colocation(lake: Catalog) -> None:
    table = lake.table("PUBLIC", "E")
    assert (table.pk_index_id, table.primary_key, table.colocation_columns) == (None, (), ())
    assert not table.has_primary_key
    assert lake.table_indexes(table.id) == []
    assert [col.id for col in table.columns] == [1, 2, 3, 4, 5, 6]  # Iceberg's ids start at 1
    assert table.next_column_id == 7


def test_a_keyless_table_makes_one_entry_and_one_id() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, keyless())
    assert entry_types(prepared) == ["new_table", "object_id_gen"]
    assert prepared.catalog.object_id_gen == cat.object_id_gen + 1


def test_a_table_needs_a_key_unless_it_says_it_is_keyless() -> None:
    error = bad_shape(lambda: c.CreateTable(name="E", columns=COLUMNS, primary_key=()))
    assert "keyless" in error.message


@pytest.mark.parametrize(
    "extra",
    [
        {"primary_key": ("id",)},
        {"primary_key_name": "E_KEY"},
        {"colocation_columns": ("id",)},
        {"primary_key_kind": "sorted"},
    ],
)
def test_a_keyless_table_takes_no_key_options(extra: dict[str, Any]) -> None:
    body = {"name": "E", "columns": COLUMNS, "primary_key": (), "keyless": True, **extra}
    error = bad_shape(lambda: c.CreateTable(**body))
    assert "keyless" in error.message


def test_a_table_created_by_sql_keeps_ids_from_0_and_no_iceberg_state() -> None:
    cat = apply(catalog_with_default_zone(), create_table())
    table = cat.table("PUBLIC", "T")
    assert table.columns[0].id == 0
    assert table.iceberg is None
    assert table.pk_index_id == table.id + 1


def test_a_keyless_table_renames_without_a_key_index(lake: Catalog) -> None:
    prepared = run(lake, c.RenameTable(name="E", new_name="F"))
    assert entry_types(prepared) == ["rename_table"]
    assert prepared.catalog.table("PUBLIC", "F").pk_index_id is None


def test_a_keyless_table_drops_and_takes_indexes(lake: Catalog) -> None:
    cat = apply(lake, c.CreateIndex(table="E", name="E_BY_ID", columns=["id"], unique=True))
    cat = apply(cat, c.DropColumns(table="E", columns=["name"]))
    prepared = run(cat, c.DropTable(name="E"))
    assert entry_types(prepared) == ["remove_index", "drop_table"]


# -- the Iceberg state a table is created with ----------------------------------------------


def test_a_table_is_created_partitioned_sorted_and_with_properties() -> None:
    command = keyless(
        partition_spec=spec(("ts", "day"), ("id", "bucket[8]"), ("name", "truncate[2]")),
        sort_order=c.NewSortOrder(
            fields=[c.SortFieldSpec(source="ts", direction="desc"), c.SortFieldSpec(source="id")]
        ),
        properties={"owner": "me", "write.format.default": "parquet"},
        column_docs={"id": "the event"},
    )
    state = apply(catalog_with_default_zone(), command).table("PUBLIC", "E").iceberg
    assert state is not None
    (spec0,) = state.specs
    assert [(f.field_id, f.name, f.transform) for f in spec0.fields] == [
        (1000, "ts_day", "day"),
        (1001, "id_bucket", "bucket[8]"),
        (1002, "name_trunc", "truncate[2]"),
    ]
    assert (state.default_spec_id, state.last_partition_id) == (0, 1002)
    assert state.default_sort_order_id == 1
    order = state.default_sort_order.fields
    assert [(f.source_id, f.direction, f.null_order) for f in order] == [
        (2, SortDirection.DESC, NullOrder.NULLS_LAST),
        (1, SortDirection.ASC, NullOrder.NULLS_FIRST),
    ]
    assert state.property_map() == {"owner": "me", "write.format.default": "parquet"}
    assert state.doc_of(1) == "the event"
    assert state.format_version == 2


def test_a_table_created_unpartitioned_has_the_default_state(lake: Catalog) -> None:
    assert lake.table("PUBLIC", "E").iceberg == IcebergTableState()


@pytest.mark.parametrize(
    ("source", "transform"),
    [
        ("ok", "bucket[4]"),
        ("ok", "truncate[4]"),
        ("id", "day"),
        ("day", "hour"),
        ("name", "year"),
        ("at", "month"),
        ("id", "bucket[0]"),
        ("id", "zorder"),
    ],
)
def test_a_transform_must_suit_its_column(source: str, transform: str) -> None:
    with pytest.raises(ValidationError):
        apply(catalog_with_default_zone(), keyless(partition_spec=spec((source, transform))))


@pytest.mark.parametrize(
    ("source", "transform"),
    [("id", "identity"), ("ts", "hour"), ("day", "month"), ("ok", "void"), ("at", "bucket[3]")],
)
def test_suitable_transforms_are_taken(source: str, transform: str) -> None:
    apply(catalog_with_default_zone(), keyless(partition_spec=spec((source, transform))))


def test_a_spec_takes_one_transform_of_a_column_once() -> None:
    twice = c.NewPartitionSpec(
        fields=[
            c.PartitionFieldSpec(source="id", transform="bucket[2]", name="a"),
            c.PartitionFieldSpec(source="id", transform="bucket[2]", name="b"),
        ]
    )
    with pytest.raises(ValidationError, match="twice"):
        apply(catalog_with_default_zone(), keyless(partition_spec=twice))


def test_a_partition_source_must_be_a_column() -> None:
    refused(
        catalog_with_default_zone(),
        ErrorCode.COLUMN_NOT_FOUND,
        keyless(partition_spec=spec(("nope", "identity"))),
    )


def test_an_unknown_format_version_is_refused() -> None:
    with pytest.raises(ValidationError):
        apply(catalog_with_default_zone(), keyless(format_version=4))


# -- alter_table_iceberg --------------------------------------------------------------------


def test_a_spec_is_added_and_made_default(lake: Catalog) -> None:
    prepared = run(lake, alter(add_specs=[spec(("ts", "day"))], default_spec_id=-1))
    assert entry_types(prepared) == ["set_table_iceberg"]
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    table = prepared.catalog.table("PUBLIC", "E")
    assert table.schema_version == 1
    state = table.iceberg
    assert state is not None
    assert (state.default_spec_id, state.last_partition_id) == (1, 1000)
    assert [s.spec_id for s in state.specs] == [0, 1]


def test_field_ids_are_kept_for_the_same_field_and_new_ones_grow(lake: Catalog) -> None:
    cat = apply(lake, alter(add_specs=[spec(("ts", "day"), ("id", "bucket[4]"))]))
    cat = apply(cat, alter(add_specs=[spec(("ts", "day"), ("name", "identity"))]))
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    assert [f.field_id for f in state.specs[2].fields] == [1000, 1002]
    assert state.last_partition_id == 1002


def test_a_field_id_given_for_another_field_is_refused(lake: Catalog) -> None:
    cat = apply(lake, alter(add_specs=[spec(("ts", "day"))]))
    reuse = c.NewPartitionSpec(
        fields=[c.PartitionFieldSpec(source="id", transform="identity", field_id=1000)]
    )
    error = refused(cat, ErrorCode.VALIDATION_ERROR, alter(add_specs=[reuse]))
    assert "1000" in error.message


def test_an_equal_spec_is_reused_and_an_unchanged_state_is_a_no_op(lake: Catalog) -> None:
    cat = apply(lake, alter(add_specs=[spec(("ts", "day"))], default_spec_id=-1))
    prepared = run(cat, alter(add_specs=[spec(("ts", "day"))], default_spec_id=-1))
    assert prepared.entries == ()


def test_a_default_must_exist_and_the_default_spec_stays(lake: Catalog) -> None:
    refused(lake, ErrorCode.VALIDATION_ERROR, alter(default_spec_id=7))
    refused(lake, ErrorCode.VALIDATION_ERROR, alter(default_sort_order_id=3))
    refused(lake, ErrorCode.VALIDATION_ERROR, alter(default_spec_id=-1))
    refused(lake, ErrorCode.VALIDATION_ERROR, alter(remove_spec_ids=[0]))


def test_old_specs_are_removed(lake: Catalog) -> None:
    cat = apply(lake, alter(add_specs=[spec(("ts", "day"))], default_spec_id=-1))
    cat = apply(cat, alter(remove_spec_ids=[0, 9]))
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    assert [s.spec_id for s in state.specs] == [1]


def test_a_sort_order_is_added_and_made_default(lake: Catalog) -> None:
    order = c.NewSortOrder(fields=[c.SortFieldSpec(source="name", null_order="nulls-last")])
    cat = apply(lake, alter(add_sort_orders=[order], default_sort_order_id=-1))
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    assert state.default_sort_order_id == 1
    assert state.default_sort_order.fields[0].null_order is NullOrder.NULLS_LAST


def test_a_spec_or_order_id_taken_meanwhile_gives_the_next_one(lake: Catalog) -> None:
    by_name = c.NewSortOrder(order_id=1, fields=[c.SortFieldSpec(source="name")])
    by_id = c.NewSortOrder(order_id=1, fields=[c.SortFieldSpec(source="id")])
    cat = apply(lake, alter(add_sort_orders=[by_name], add_specs=[spec(("ts", "day"))]))
    taken = spec(("id", "identity"), spec_id=1)
    cat = apply(
        cat,
        alter(add_sort_orders=[by_id], default_sort_order_id=-1, add_specs=[taken]),
    )
    table = cat.table("PUBLIC", "E")
    state, id_column = table.iceberg, table.column("id")
    assert state is not None and id_column is not None
    assert [o.order_id for o in state.sort_orders] == [0, 1, 2]
    assert state.default_sort_order.fields[0].source_id == id_column.id
    assert [s.spec_id for s in state.specs] == [0, 1, 2]


def test_properties_are_set_and_removed_verbatim(lake: Catalog) -> None:
    cat = apply(lake, alter(set_properties={"owner": "x", "a.b": "1"}))
    cat = apply(cat, alter(remove_properties=["a.b", "missing"]))
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    assert state.property_map() == {"owner": "x"}


def test_the_format_version_only_goes_up(lake: Catalog) -> None:
    cat = apply(lake, alter(format_version=3))
    refused(cat, ErrorCode.VALIDATION_ERROR, alter(format_version=2))
    bad_shape(lambda: alter(format_version=9))


def test_a_table_made_by_sql_takes_iceberg_state() -> None:
    cat = apply(catalog_with_default_zone(), create_table())
    cat = apply(cat, c.AlterTableIceberg(table="T", set_properties={"owner": "me"}))
    state = cat.table("PUBLIC", "T").iceberg
    assert state is not None
    assert state.property_map() == {"owner": "me"}
    assert state.specs == IcebergTableState().specs


def test_a_column_the_default_spec_or_order_uses_cannot_be_dropped(lake: Catalog) -> None:
    order = c.NewSortOrder(fields=[c.SortFieldSpec(source="name")])
    cat = apply(
        lake,
        alter(
            add_specs=[spec(("ts", "day"))],
            default_spec_id=-1,
            add_sort_orders=[order],
            default_sort_order_id=-1,
        ),
    )
    error = refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="E", columns=["ts"]))
    assert "partition spec" in error.message
    error = refused(cat, ErrorCode.VALIDATION_ERROR, c.DropColumns(table="E", columns=["name"]))
    assert "sort order" in error.message
    # Once the default spec no longer uses it, the column goes; the old spec stays.
    cat = apply(cat, alter(default_spec_id=0, default_sort_order_id=0))
    cat = apply(cat, c.DropColumns(table="E", columns=["ts", "name"]))
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    assert len(state.specs) == 2


def test_a_rename_keeps_specs_valid(lake: Catalog) -> None:
    cat = apply(lake, alter(add_specs=[spec(("ts", "day"))], default_spec_id=-1))
    cat = apply(cat, c.RenameColumn(table="E", column="ts", new_name="event_ts"))
    table = cat.table("PUBLIC", "E")
    assert table.iceberg is not None
    assert table.column_by_id(table.iceberg.default_spec.fields[0].source_id) is not None
    apply(cat, c.DropColumns(table="E", columns=["name"]))


def test_check_state_refuses_what_iceberg_refuses() -> None:
    low = PartitionSpec(
        spec_id=1,
        fields=(PartitionField(source_id=1, field_id=999, name="x", transform="identity"),),
    )
    with pytest.raises(ValidationError, match="above 999"):
        check_state(IcebergTableState(specs=(low,), default_spec_id=1))
    with pytest.raises(ValidationError, match="given twice"):
        check_state(IcebergTableState(specs=(low, low), default_spec_id=1))


# -- schema properties ----------------------------------------------------------------------


def test_a_schema_keeps_its_properties() -> None:
    cat = apply(
        catalog_with_default_zone(), c.CreateSchema(name="S", properties={"owner": "spark"})
    )
    assert dict((p.name, p.value) for p in cat.schema("S").properties) == {"owner": "spark"}
    prepared = run(
        cat,
        c.AlterSchemaProperties(name="S", set_properties={"a": "1"}, remove_properties=["owner"]),
    )
    assert events(prepared) == [CatalogEvent.SCHEMA_ALTER]
    assert [(p.name, p.value) for p in prepared.catalog.schema("S").properties] == [("a", "1")]
    assert run(prepared.catalog, c.AlterSchemaProperties(name="S")).entries == ()


def test_schema_properties_of_a_missing_or_system_schema_are_refused() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.AlterSchemaProperties(name="NOPE"))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterSchemaProperties(name="SYSTEM"))
    assert run(cat, c.AlterSchemaProperties(name="NOPE", if_exists=True)).entries == ()
