"""Deterministic catalog values whose encodings are kept as golden files.

Snapshots are written in format 2 (``catalog.snapshots``), updates in format 3 (with who asked
for each request and why), every other kind still in format 1. The older files of those two
kinds stay beside them, read but no longer written.

Regenerate (only when adding a new golden file, never to paper over a change):
``python -m tests.golden.catalog_values``.
"""

from __future__ import annotations

from pathlib import Path

from catalog import Catalog, ColumnType, VersionedUpdate, prepare
from catalog import commands as c
from catalog.commands import CommandBase
from catalog.data.expiry import encode_compactions
from catalog.data.files import encode_data_commit
from catalog.data.iceberg_refs import RefType, SnapshotRef
from catalog.data.iceberg_table import UNSORTED, IcebergTableState, PartitionField, PartitionSpec
from catalog.descriptors import TableDescriptor, ZoneDescriptor
from catalog.entries import EntryBase
from catalog.errors import AlreadyExistsError, BatchPosition, ErrorCode, ValidationError
from catalog.marshalling import encode_commands, encode_entries, encode_update
from catalog.origin import UpdateOrigin
from catalog.properties import properties_of
from catalog.snapshots import encode_snapshot
from catalog.wire import encode_descriptor, encode_refusal
from tests.golden.data_values import (
    golden_compactions,
    golden_data_commit,
    golden_located_compactions,
    golden_main_removed_data_commit,
    golden_merged_data_commit,
    golden_partitioned_data_commit,
    golden_position_deletes_data_commit,
    golden_registered_data_commit,
    golden_row_lineage_data_commit,
)
from tests.golden.grant_values import golden_grant_files
from tests.golden.nested_values import golden_nested_files
from tests.golden.principal_values import golden_principal_files
from tests.golden.view_values import golden_view_files
from tests.unit.catalog.helpers import catalog_with_default_zone

GOLDEN_DIR = Path(__file__).parent / "catalog"


def golden_commands() -> list[CommandBase]:
    """Return a batch that touches every kind of object and most column types."""
    return [
        c.CreateSchema(name="SALES"),
        c.CreateZone(name="Z3", partitions=8, replicas=3, storage_profiles=["default", "ssd"]),
        c.CreateTable(
            schema="SALES",
            name="ORDERS",
            columns=[
                c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                c.Column(name="REGION", type=ColumnType.STRING, length=16, nullable=False),
                c.Column(
                    name="AMOUNT", type=ColumnType.DECIMAL, precision=18, scale=2, default="0"
                ),
                c.Column(name="PLACED", type=ColumnType.TIMESTAMP_TZ, precision=3),
                c.Column(name="DAY", type=ColumnType.DATE, default="2024-02-29"),
                c.Column(name="TAG", type=ColumnType.BYTES, length=4, default="cafe"),
                c.Column(name="RATE", type=ColumnType.FLOAT32, default=0.5),
                c.Column(name="OK", type=ColumnType.BOOLEAN, default=True),
                c.Column(name="REF", type=ColumnType.UUID),
                c.Column(name="AT", type=ColumnType.TIME, precision=0, default="12:00:00"),
            ],
            primary_key=["ID", "REGION"],
            primary_key_kind="sorted",
            colocation_columns=["REGION"],
            zone="Z3",
        ),
        c.CreateIndex(
            schema="SALES",
            table="ORDERS",
            name="ORDERS_BY_DAY",
            columns=["DAY", c.IndexColumnSpec(name="AMOUNT", collation="DESC_NULLS_LAST")],
        ),
    ]


def golden_commands_v2() -> list[CommandBase]:
    """Return the golden batch and commands with the fields format 2 of commands added.

    A named, sorted primary key with collations, a key column whose default is a function, a
    storage profile and table properties; a zone with auto-adjust timers and a consistency
    mode; IF EXISTS on a table's columns and on a rename.
    """
    return [
        *golden_commands(),
        c.CreateZone(
            name="Z_HA",
            replicas=3,
            auto_scale_up_s=30,
            auto_scale_down_s="OFF",
            consistency_mode="HIGH_AVAILABILITY",
        ),
        c.AlterZone(name="Z_HA", auto_scale_down_s=300),
        c.CreateTable(
            schema="SALES",
            name="RETURNS",
            columns=[
                c.Column(
                    name="RETURN_ID",
                    type=ColumnType.UUID,
                    nullable=False,
                    default_function="RAND_UUID",
                ),
                c.Column(name="ORDER_ID", type=ColumnType.INT64, nullable=False),
                c.Column(name="AT", type=ColumnType.TIMESTAMP, nullable=False),
            ],
            primary_key=["RETURN_ID", "ORDER_ID", "AT"],
            primary_key_kind="sorted",
            primary_key_name="RETURNS_KEY",
            primary_key_collations=["ASC_NULLS_FIRST", "ASC_NULLS_LAST", "DESC_NULLS_FIRST"],
            zone="Z3",
            storage_profile="ssd",
            stale_rows_fraction=0.5,
            min_stale_rows_count=100,
        ),
        c.AddColumns(
            schema="SALES",
            table="RETURNS",
            columns=[c.Column(name="REASON", type=ColumnType.STRING)],
            if_not_exists=True,
            if_table_exists=True,
        ),
        c.DropColumns(
            schema="SALES", table="GONE", columns=["X"], if_exists=True, if_table_exists=True
        ),
        c.AlterColumn(
            schema="SALES", table="GONE", column="X", nullable=True, if_table_exists=True
        ),
        c.RenameColumn(
            schema="SALES", table="GONE", column="X", new_name="Y", if_table_exists=True
        ),
        c.RenameTable(schema="SALES", name="GONE", new_name="GONER", if_exists=True),
        c.RenameIndex(schema="SALES", name="GONE_IDX", new_name="GONER_IDX", if_exists=True),
        c.AlterTableProperties(schema="SALES", table="RETURNS", min_stale_rows_count=1000),
    ]


def golden_iceberg_commands() -> list[CommandBase]:
    """Return commands an Iceberg engine's requests make: namespace properties, a table
    without a key created partitioned, sorted and with properties, and its later changes."""
    return [
        c.CreateSchema(name="LAKE", properties={"owner": "spark", "comment": "raw events"}),
        c.AlterSchemaProperties(
            name="LAKE", set_properties={"location": "s3://lake"}, remove_properties=["comment"]
        ),
        c.CreateTable(
            schema="LAKE",
            name="EVENTS",
            columns=[
                c.Column(name="id", type=ColumnType.INT64),
                c.Column(name="ts", type=ColumnType.TIMESTAMP_TZ, precision=6),
                c.Column(name="kind", type=ColumnType.STRING),
            ],
            primary_key=[],
            keyless=True,
            iceberg=c.IcebergTableSpec(
                partition_spec=c.NewPartitionSpec(
                    fields=[
                        c.PartitionFieldSpec(source="ts", transform="day"),
                        c.PartitionFieldSpec(source="id", transform="bucket[16]"),
                    ]
                ),
                sort_order=c.NewSortOrder(fields=[c.SortFieldSpec(source="ts", direction="desc")]),
                properties={"owner": "spark", "write.format.default": "parquet"},
                column_docs={"kind": "what happened"},
            ),
        ),
        c.AlterTableIceberg(
            schema="LAKE",
            table="EVENTS",
            add_specs=[
                c.NewPartitionSpec(
                    fields=[
                        c.PartitionFieldSpec(source="ts", transform="day"),
                        c.PartitionFieldSpec(source="kind", transform="truncate[4]"),
                    ]
                )
            ],
            default_spec_id=-1,
            add_sort_orders=[c.NewSortOrder(fields=[c.SortFieldSpec(source="id")])],
            default_sort_order_id=-1,
            set_properties={"commit.retry.num-retries": "5"},
            remove_properties=["write.format.default"],
            format_version=3,
        ),
    ]


def golden_uuid_commands() -> list[CommandBase]:
    """Return a create transaction's table: created with the uuid its engine assigned."""
    return [
        c.CreateTable(
            schema="LAKE",
            name="STAGED",
            columns=[c.Column(name="id", type=ColumnType.INT64)],
            primary_key=[],
            keyless=True,
            iceberg=c.IcebergTableSpec(table_uuid="0b7e2c55-4a8e-4d6f-9c31-5f1e2d3c4b5a"),
        ),
    ]


def golden_iceberg_snapshot_commands() -> list[CommandBase]:
    """Return what Iceberg keeps of a table's snapshots: a tag and a branch with retention,
    an expiry mark, statistics files and a removed schema (on ``golden_iceberg_commands``)."""
    stats = '{"snapshot-id":8000000000000000001,"statistics-path":"/w/s.puffin"}'
    return [
        c.AddColumns(
            schema="LAKE", table="EVENTS", columns=[c.Column(name="n", type=ColumnType.INT32)]
        ),
        c.AlterTableIceberg(
            schema="LAKE",
            table="EVENTS",
            set_refs=[
                {"name": "v1", "snapshot_id": 8_000_000_000_000_000_001, "type": "tag"},
                {
                    "name": "audit",
                    "snapshot_id": 8_000_000_000_000_000_002,
                    "type": "branch",
                    "max_ref_age_ms": 86_400_000,
                    "max_snapshot_age_ms": 3_600_000,
                    "min_snapshots_to_keep": 2,
                },
            ],
            remove_refs=["old"],
            expire_below=3,
            set_statistics=[{"snapshot_id": 8_000_000_000_000_000_001, "document": stats}],
            remove_statistics=[7],
            set_partition_statistics=[
                {"snapshot_id": 8_000_000_000_000_000_002, "document": '{"snapshot-id":1}'}
            ],
            remove_partition_statistics=[8],
            remove_schemas=[1],
        ),
    ]


def golden_branch_commands() -> list[CommandBase]:
    """Return two snapshots written to branch audit (on ``golden_snapshots_catalog``), then
    the removal of one of them."""
    made = {
        "parent_id": 8_000_000_000_000_000_002,
        "manifest_list": "/w/lake/events/metadata/snap-9.avro",
        "operation": "append",
        "summary": [{"name": "added-records", "value": "4"}],
        "timestamp_ms": 1_700_000_000_500,
        "schema_version": 2,
    }
    second = {**made, "parent_id": 9, "manifest_list": "/w/lake/events/metadata/snap-10.avro"}
    return [
        c.AlterTableIceberg(
            schema="LAKE",
            table="EVENTS",
            add_branch_snapshots=[
                {**made, "snapshot_id": 9, "sequence_number": 4},
                {**second, "snapshot_id": 10, "sequence_number": 5, "first_row_id": 40},
            ],
            set_refs=[{"name": "audit", "snapshot_id": 10, "type": "branch"}],
        ),
        c.AlterTableIceberg(schema="LAKE", table="EVENTS", remove_branch_snapshots=[9]),
    ]


def golden_branch_prepared() -> tuple[Catalog, list[EntryBase]]:
    """Return the catalog after ``golden_branch_commands``' first command, and its entries."""
    made = prepare(golden_snapshots_catalog(), golden_branch_commands()[:1])
    return made.catalog, list(made.entries)


GOLDEN_WAREHOUSE = "/w"
"""The warehouse the location goldens are made in."""


def golden_location_commands() -> list[CommandBase]:
    """Return a table registered from a metadata file (its location, field ids, schema id and
    whole Iceberg state kept), and a table moved by ``set-location``."""
    registered = IcebergTableState(
        specs=(
            PartitionSpec(
                spec_id=0,
                fields=(
                    PartitionField(source_id=3, field_id=1000, name="id_b", transform="bucket[4]"),
                ),
            ),
        ),
        last_partition_id=1000,
        sort_orders=(UNSORTED,),
        properties=properties_of({"owner": "someone"}),
        table_uuid="7d3e2c55-4a8e-4d6f-9c31-5f1e2d3c4b5a",
        refs=(SnapshotRef(name="v1", snapshot_id=8_000_000_000_000_000_001, type=RefType.TAG),),
    )
    columns = [
        c.Column(name="id", type=ColumnType.INT64, nullable=False),
        c.Column(name="note", type=ColumnType.STRING),
    ]
    return [
        c.CreateTable(
            schema="LAKE",
            name="ADOPTED",
            columns=columns,
            primary_key=[],
            keyless=True,
            iceberg=c.IcebergTableSpec(registered=registered, column_docs={"id": "the id"}),
            location="file:///w/lake/adopted",
            column_ids=[3, 5],
            schema_version=4,
            last_column_id=6,
        ),
        c.AlterTableIceberg(schema="LAKE", table="EVENTS", location="/w/lake/events"),
    ]


def golden_location_prepared() -> tuple[Catalog, list[EntryBase]]:
    """Return the catalog after ``golden_location_commands`` and the entries they make."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    base = prepare(
        v1, [*golden_commands_v2(), *golden_iceberg_commands()], warehouse=GOLDEN_WAREHOUSE
    ).catalog
    made = prepare(base, golden_location_commands(), warehouse=GOLDEN_WAREHOUSE)
    return made.catalog, list(made.entries)


def golden_replaced_rows_commands() -> list[CommandBase]:
    """Return the commands of a replace of the registered table's rows: a column made NOT
    NULL, and columns added NOT NULL without a default, one taking an id never given out."""
    return [
        c.AlterColumn(
            schema="LAKE", table="ADOPTED", column="note", nullable=False, replaces_rows=True
        ),
        c.AddColumns(
            schema="LAKE",
            table="ADOPTED",
            columns=[
                c.Column(name="kind", type=ColumnType.STRING, nullable=False),
                c.Column(name="at", type=ColumnType.TIMESTAMP_TZ, precision=6),
            ],
            replaces_rows=True,
            column_ids=[4, 7],
        ),
    ]


def golden_replaced_rows_prepared() -> tuple[Catalog, list[EntryBase]]:
    """Return the catalog after ``golden_replaced_rows_commands`` and the entries they make."""
    base = golden_location_prepared()[0]
    made = prepare(base, golden_replaced_rows_commands(), warehouse=GOLDEN_WAREHOUSE)
    return made.catalog, list(made.entries)


def golden_uuid_catalog() -> Catalog:
    """Return the catalog after the Iceberg commands and ``golden_uuid_commands``."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    commands = [*golden_commands_v2(), *golden_iceberg_commands(), *golden_uuid_commands()]
    return prepare(v1, commands).catalog


def golden_snapshots_catalog() -> Catalog:
    """Return the catalog after ``golden_iceberg_snapshot_commands`` too."""
    return prepare(golden_iceberg_catalog(), golden_iceberg_snapshot_commands()).catalog


def golden_snapshots_entries() -> list[EntryBase]:
    """Return the entries ``golden_iceberg_snapshot_commands`` make."""
    return list(prepare(golden_iceberg_catalog(), golden_iceberg_snapshot_commands()).entries)


def golden_iceberg_catalog() -> Catalog:
    """Return the catalog after ``golden_commands_v2`` and ``golden_iceberg_commands``."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    return prepare(v1, [*golden_commands_v2(), *golden_iceberg_commands()]).catalog


def golden_iceberg_entries() -> list[EntryBase]:
    """Return the entries ``golden_iceberg_commands`` make on top of ``golden_commands_v2``."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    v2 = prepare(v1, golden_commands_v2()).catalog
    return list(prepare(v2, golden_iceberg_commands()).entries)


def golden_keyed_table() -> TableDescriptor:
    """Return the table of ``golden_commands_v2``: a default function, a named sorted key."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    return prepare(v1, golden_commands_v2()).catalog.table("SALES", "RETURNS")


def golden_timed_zone() -> ZoneDescriptor:
    """Return the zone of ``golden_commands_v2`` with timers and a consistency mode."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    return prepare(v1, golden_commands_v2()).catalog.zone("Z_HA")


def golden_keyed_entries() -> list[EntryBase]:
    """Return the entries ``golden_commands_v2`` makes: the new table fields and entry."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    return list(prepare(v1, golden_commands_v2()).entries)


def golden_catalogs() -> tuple[Catalog, Catalog, VersionedUpdate]:
    """Return version 1, version 2 (after the golden batch plus alters) and update 2."""
    v1 = catalog_with_default_zone(activation_ts=1_700_000_000_000 << 16)
    batch = [
        *golden_commands(),
        c.AddColumns(
            schema="SALES", table="ORDERS", columns=[c.Column(name="NOTE", type="STRING")]
        ),
        c.AlterColumn(schema="SALES", table="ORDERS", column="RATE", type="FLOAT64"),
        c.DropColumns(schema="SALES", table="ORDERS", columns=["REF"]),
    ]
    prepared = prepare(v1, batch)
    update = VersionedUpdate(
        version=2,
        proposal_ts=(1_700_000_000_500 << 16) + 3,
        delay_ms=500,
        entries=prepared.entries,
        requests=[{"request_id": "req-1", "applied": [True] * len(batch)}],
        origins=[
            UpdateOrigin(
                principal="alice@sales",
                client="cli",
                message="orders for the sales team",
                request_id="req-1",
                entries=len(prepared.entries),
            )
        ],
    )
    return v1, update.apply_to(v1), update


def golden_stamped() -> tuple[Catalog, VersionedUpdate]:
    """Return version 2 and update 2 as written now: the update stamps what it changes."""
    v1, _, update = golden_catalogs()
    stamped = update.model_copy(update={"stamps": True})
    return stamped.apply_to(v1), stamped


def golden_system_view_commands() -> list[CommandBase]:
    """Return a node's registration of two system views, one of each type."""
    return [
        c.CreateSystemView(
            name="NODES",
            columns=[
                c.Column(name="NODE_NAME", type="STRING", length=64, nullable=False),
                c.Column(name="APPLIED_VERSION", type="INT64"),
            ],
            view_type="NODE",
        ),
        c.CreateSystemView(
            name="ZONES", columns=[c.Column(name="ZONE_NAME", type="STRING")], view_type="CLUSTER"
        ),
    ]


def golden_viewed() -> tuple[Catalog, VersionedUpdate]:
    """Return version 3 (version 2 as written now, then the system views) and update 3."""
    v2, _ = golden_stamped()
    prepared = prepare(v2, golden_system_view_commands())
    update = VersionedUpdate(
        version=3,
        proposal_ts=(1_700_000_001_000 << 16) + 1,
        delay_ms=500,
        entries=prepared.entries,
        stamps=True,
    )
    return update.apply_to(v2), update


def golden_refusal() -> ValidationError:
    """A refusal as recorded under a refused request id."""
    return ValidationError(
        "column ID: type INT64 cannot change to STRING",
        code=ErrorCode.UNSUPPORTED_CHANGE,
        details=[{"loc": ["commands", 0, "type"], "msg": "not a widening"}],
    )


def golden_located_refusal() -> AlreadyExistsError:
    """A refusal of the second statement of a SQL batch, with where it stands."""
    error = AlreadyExistsError("table PUBLIC.A already exists", code=ErrorCode.TABLE_EXISTS)
    error.position = BatchPosition(2, 3, 5)
    return error


OLDER_FORMAT_FILES = {
    "snapshot_initial_v1.bin": "snapshot_initial_v2.bin",
    "snapshot_v1.bin": "snapshot_v2.bin",
    "update_v1.bin": "update_v3.bin",
    "commands_v1.bin": "commands_v2.bin",
    "commands_v2.bin": "commands_v3.bin",
    "commands_v3.bin": "commands_v5.bin",
}
"""Golden files today's writers no longer produce, each with the file of the format written now
that replaces it (for catalogs and updates, the same value)."""


def golden_files() -> dict[str, bytes]:
    """Return the name and current encoding of every golden file today's writers produce."""
    v1, v2, update = golden_catalogs()
    table = v2.table("SALES", "ORDERS")
    return {
        "update_v3.bin": encode_update(update),
        "update_v4.bin": encode_update(golden_stamped()[1]),
        "snapshot_initial_v2.bin": encode_snapshot(v1),
        "snapshot_v2.bin": encode_snapshot(v2),
        "entries_v1.bin": encode_entries(update.entries),
        "entries_v2.bin": encode_entries(golden_keyed_entries()),
        "commands_v5.bin": encode_commands(
            [*golden_commands_v2(), *golden_iceberg_commands(), *golden_iceberg_snapshot_commands()]
        ),
        "entries_v4.bin": encode_entries(golden_snapshots_entries()),
        "descriptor_table_v5.bin": encode_descriptor(
            golden_snapshots_catalog().table("LAKE", "EVENTS")
        ),
        "entries_v3.bin": encode_entries(golden_iceberg_entries()),
        "descriptor_table_v3.bin": encode_descriptor(
            golden_iceberg_catalog().table("LAKE", "EVENTS")
        ),
        "descriptor_schema_v3.bin": encode_descriptor(golden_iceberg_catalog().schema("LAKE")),
        "commands_v4.bin": encode_commands(golden_uuid_commands()),
        "descriptor_table_v4.bin": encode_descriptor(golden_uuid_catalog().table("LAKE", "STAGED")),
        "snapshot_iceberg_v2.bin": encode_snapshot(golden_iceberg_catalog()),
        "descriptor_table_v1.bin": encode_descriptor(table),
        "descriptor_table_v2.bin": encode_descriptor(golden_keyed_table()),
        "descriptor_index_v1.bin": encode_descriptor(v2.index("SALES", "ORDERS_BY_DAY")),
        "descriptor_zone_v1.bin": encode_descriptor(v2.zone("Z3")),
        "descriptor_zone_v2.bin": encode_descriptor(golden_timed_zone()),
        "descriptor_schema_v1.bin": encode_descriptor(v2.schema("SALES")),
        "descriptor_schema_v2.bin": encode_descriptor(golden_stamped()[0].schema("SALES")),
        "snapshot_system_views_v2.bin": encode_snapshot(golden_viewed()[0]),
        "entries_system_views_v1.bin": encode_entries(golden_viewed()[1].entries),
        "commands_system_views_v1.bin": encode_commands(golden_system_view_commands()),
        "descriptor_system_view_v1.bin": encode_descriptor(golden_viewed()[0].system_views()[0]),
        "refusal_v1.bin": encode_refusal(golden_refusal()),
        "refusal_v2.bin": encode_refusal(golden_located_refusal()),
        "datacommit_v1.bin": encode_data_commit(golden_data_commit()),
        "datacommit_merged_v1.bin": encode_data_commit(golden_merged_data_commit()),
        "datacommit_replace_v1.bin": encode_data_commit(golden_main_removed_data_commit()),
        "datacommit_position_deletes_v1.bin": encode_data_commit(
            golden_position_deletes_data_commit()
        ),
        "datacommit_registered_v1.bin": encode_data_commit(golden_registered_data_commit()),
        "datacommit_iceberg_partition_v1.bin": encode_data_commit(golden_partitioned_data_commit()),
        "datacommit_row_lineage_v1.bin": encode_data_commit(golden_row_lineage_data_commit()),
        "dataexpiry_v1.bin": encode_compactions(golden_compactions()),
        "commands_table_location_v1.bin": encode_commands(golden_location_commands()),
        "entries_table_location_v1.bin": encode_entries(golden_location_prepared()[1]),
        "descriptor_table_location_v1.bin": encode_descriptor(
            golden_location_prepared()[0].table("LAKE", "ADOPTED")
        ),
        "dataexpiry_table_location_v1.bin": encode_compactions(golden_located_compactions()),
        "commands_replaced_rows_v1.bin": encode_commands(golden_replaced_rows_commands()),
        "entries_replaced_rows_v1.bin": encode_entries(golden_replaced_rows_prepared()[1]),
        "descriptor_table_replaced_rows_v1.bin": encode_descriptor(
            golden_replaced_rows_prepared()[0].table("LAKE", "ADOPTED")
        ),
        "commands_branch_snapshots_v1.bin": encode_commands(golden_branch_commands()),
        "entries_branch_snapshots_v1.bin": encode_entries(golden_branch_prepared()[1]),
        "descriptor_table_branch_snapshots_v1.bin": encode_descriptor(
            golden_branch_prepared()[0].table("LAKE", "EVENTS")
        ),
        **golden_view_files(),
        **golden_principal_files(),
        **golden_grant_files(),
        **golden_nested_files(),
    }


if __name__ == "__main__":
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name, data in golden_files().items():
        path = GOLDEN_DIR / name
        if path.exists():
            print(f"kept     {path} (golden files are never rewritten)")
            continue
        path.write_bytes(data)
        print(f"written  {path}")
