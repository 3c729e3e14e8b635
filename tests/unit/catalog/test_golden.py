"""Golden files: every stored catalog shape of every format must decode, forever."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog.access import Caller, holds
from catalog.data.expiry import decode_compactions
from catalog.data.files import decode_data_commit
from catalog.descriptors import (
    GrantDescriptor,
    GranteeKind,
    Privilege,
    RoleDescriptor,
    SecurableKind,
    TableDescriptor,
    ViewDescriptor,
)
from catalog.errors import CatalogError, ValidationError
from catalog.marshalling import decode_commands, decode_entries, decode_update
from catalog.prepare import prepare
from catalog.snapshots import decode_snapshot, encode_snapshot
from catalog.wire import decode_descriptor, decode_refusal
from tests.golden.catalog_values import (
    GOLDEN_DIR,
    OLDER_FORMAT_FILES,
    golden_branch_commands,
    golden_branch_prepared,
    golden_catalogs,
    golden_commands,
    golden_commands_v2,
    golden_files,
    golden_iceberg_catalog,
    golden_iceberg_commands,
    golden_iceberg_entries,
    golden_iceberg_snapshot_commands,
    golden_keyed_entries,
    golden_keyed_table,
    golden_located_refusal,
    golden_location_commands,
    golden_location_prepared,
    golden_refusal,
    golden_replaced_rows_commands,
    golden_replaced_rows_prepared,
    golden_snapshots_catalog,
    golden_snapshots_entries,
    golden_stamped,
    golden_system_view_commands,
    golden_timed_zone,
    golden_uuid_catalog,
    golden_uuid_commands,
    golden_viewed,
)
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
from tests.golden.grant_values import (
    golden_grant,
    golden_grant_catalog,
    golden_grant_commands,
    golden_grant_update,
    golden_grantee,
)
from tests.golden.nested_values import (
    golden_nested_catalog,
    golden_nested_commands,
    golden_nested_update,
)
from tests.golden.principal_values import golden_principal_catalog, golden_principal_update
from tests.golden.view_values import (
    golden_view_catalog,
    golden_view_commands,
    golden_view_update,
)

DECODERS: dict[str, Callable[[bytes], Any]] = {
    "update": decode_update,
    "snapshot": decode_snapshot,
    "entries": decode_entries,
    "commands": decode_commands,
    "descriptor": decode_descriptor,
    "refusal": lambda data: _refusal_fields(decode_refusal(data)),
    "datacommit": decode_data_commit,
    "dataexpiry": decode_compactions,
}


def _refusal_fields(error: CatalogError) -> tuple[object, ...]:
    details = error.details if isinstance(error, ValidationError) else []
    return type(error), error.code, error.message, details, error.position


def test_every_golden_file_is_present() -> None:
    names = [*golden_files(), *OLDER_FORMAT_FILES]
    missing = [name for name in names if not (GOLDEN_DIR / name).exists()]
    assert not missing


@pytest.mark.parametrize("name", sorted([*golden_files(), *OLDER_FORMAT_FILES]))
def test_golden_file_decodes_to_the_expected_value(name: str) -> None:
    data = (GOLDEN_DIR / name).read_bytes()
    decoded = DECODERS[name.split("_")[0]](data)
    v1, v2, update = golden_catalogs()
    expected: dict[str, Any] = {
        "update_v1.bin": update.model_copy(update={"origins": ()}),  # before origins
        "update_v3.bin": update,
        "update_v4.bin": golden_stamped()[1],
        "snapshot_initial_v1.bin": v1,
        "snapshot_v1.bin": v2,
        "snapshot_initial_v2.bin": v1,
        "snapshot_v2.bin": v2,
        "entries_v1.bin": list(update.entries),
        "entries_v2.bin": golden_keyed_entries(),
        "commands_v1.bin": golden_commands(),
        "commands_v2.bin": golden_commands_v2(),
        "commands_v3.bin": [*golden_commands_v2(), *golden_iceberg_commands()],
        "entries_v3.bin": golden_iceberg_entries(),
        "commands_v5.bin": [
            *golden_commands_v2(),
            *golden_iceberg_commands(),
            *golden_iceberg_snapshot_commands(),
        ],
        "entries_v4.bin": golden_snapshots_entries(),
        "descriptor_table_v5.bin": golden_snapshots_catalog().table("LAKE", "EVENTS"),
        "descriptor_table_v3.bin": golden_iceberg_catalog().table("LAKE", "EVENTS"),
        "descriptor_schema_v3.bin": golden_iceberg_catalog().schema("LAKE"),
        "commands_v4.bin": golden_uuid_commands(),
        "descriptor_table_v4.bin": golden_uuid_catalog().table("LAKE", "STAGED"),
        "snapshot_iceberg_v2.bin": golden_iceberg_catalog(),
        "descriptor_table_v1.bin": v2.table("SALES", "ORDERS"),
        "descriptor_table_v2.bin": golden_keyed_table(),
        "descriptor_index_v1.bin": v2.index("SALES", "ORDERS_BY_DAY"),
        "descriptor_zone_v1.bin": v2.zone("Z3"),
        "descriptor_zone_v2.bin": golden_timed_zone(),
        "descriptor_schema_v1.bin": v2.schema("SALES"),
        "descriptor_schema_v2.bin": golden_stamped()[0].schema("SALES"),
        "snapshot_system_views_v2.bin": golden_viewed()[0],
        "entries_system_views_v1.bin": list(golden_viewed()[1].entries),
        "commands_system_views_v1.bin": golden_system_view_commands(),
        "descriptor_system_view_v1.bin": golden_viewed()[0].system_views()[0],
        "refusal_v1.bin": _refusal_fields(golden_refusal()),
        "refusal_v2.bin": _refusal_fields(golden_located_refusal()),
        "datacommit_v1.bin": golden_data_commit(),
        "datacommit_merged_v1.bin": golden_merged_data_commit(),
        "datacommit_replace_v1.bin": golden_main_removed_data_commit(),
        "datacommit_position_deletes_v1.bin": golden_position_deletes_data_commit(),
        "datacommit_registered_v1.bin": golden_registered_data_commit(),
        "datacommit_iceberg_partition_v1.bin": golden_partitioned_data_commit(),
        "datacommit_row_lineage_v1.bin": golden_row_lineage_data_commit(),
        "dataexpiry_v1.bin": golden_compactions(),
        "commands_table_location_v1.bin": golden_location_commands(),
        "entries_table_location_v1.bin": golden_location_prepared()[1],
        "descriptor_table_location_v1.bin": golden_location_prepared()[0].table("LAKE", "ADOPTED"),
        "dataexpiry_table_location_v1.bin": golden_located_compactions(),
        "commands_replaced_rows_v1.bin": golden_replaced_rows_commands(),
        "entries_replaced_rows_v1.bin": golden_replaced_rows_prepared()[1],
        "descriptor_table_replaced_rows_v1.bin": golden_replaced_rows_prepared()[0].table(
            "LAKE", "ADOPTED"
        ),
        "commands_branch_snapshots_v1.bin": golden_branch_commands(),
        "entries_branch_snapshots_v1.bin": golden_branch_prepared()[1],
        "descriptor_table_branch_snapshots_v1.bin": golden_branch_prepared()[0].table(
            "LAKE", "EVENTS"
        ),
        "snapshot_views_v2.bin": golden_view_catalog(),
        "update_views_v3.bin": golden_view_update()[1],
        "entries_views_v1.bin": list(golden_view_update()[1].entries),
        "commands_views_v1.bin": golden_view_commands(),
        "descriptor_view_v1.bin": golden_view_catalog().view("REPORTS", "DAILY"),
        "snapshot_principals_v2.bin": golden_principal_catalog(),
        "update_principals_v3.bin": golden_principal_update()[1],
        "entries_principals_v1.bin": list(golden_principal_update()[1].entries),
        "descriptor_principal_v1.bin": golden_principal_catalog().principal("etl"),
        "snapshot_grants_v2.bin": golden_grant_catalog(),
        "update_grants_v3.bin": golden_grant_update()[1],
        "entries_grants_v1.bin": list(golden_grant_update()[1].entries),
        "commands_grants_v1.bin": golden_grant_commands(),
        "descriptor_grant_v1.bin": golden_grant(),
        "descriptor_role_v1.bin": golden_grant_catalog().role("ANALYSTS"),
        "snapshot_nested_v2.bin": golden_nested_catalog(),
        "update_nested_v3.bin": golden_nested_update()[1],
        "entries_nested_v1.bin": list(golden_nested_update()[1].entries),
        "commands_nested_v1.bin": golden_nested_commands(),
        "descriptor_table_nested_v1.bin": golden_nested_catalog().table("LAKE", "EVENTS"),
    }
    assert decoded == expected[name]


@pytest.mark.parametrize("name", ["update_v1.bin", "update_v3.bin"])
def test_golden_update_replays_to_the_golden_snapshot(name: str) -> None:
    v1 = decode_snapshot((GOLDEN_DIR / "snapshot_initial_v1.bin").read_bytes())
    update = decode_update((GOLDEN_DIR / name).read_bytes())
    v2 = decode_snapshot((GOLDEN_DIR / "snapshot_v1.bin").read_bytes())
    assert update.apply_to(v1).digest() == v2.digest()
    table = v2.table("SALES", "ORDERS")
    assert table.schema_version == 4
    assert [c.name for c in table.columns][-1] == "NOTE"


def test_writers_reproduce_the_golden_bytes_of_the_format_they_write() -> None:
    """Today's encoders reproduce the golden bytes of the newest format of each kind."""
    for name, data in golden_files().items():
        assert (GOLDEN_DIR / name).read_bytes() == data, name


def test_an_update_of_format_3_says_who_asked_and_why() -> None:
    update = decode_update((GOLDEN_DIR / "update_v3.bin").read_bytes())
    (origin,) = update.origins
    assert (origin.principal, origin.client, origin.request_id) == ("alice@sales", "cli", "req-1")
    assert origin.message == "orders for the sales team"
    assert update.origin_of(len(update.entries) - 1) == origin
    assert update.origin_of(len(update.entries)) is None


@pytest.mark.parametrize("old", sorted(n for n in OLDER_FORMAT_FILES if n.startswith("snapshot")))
def test_older_snapshot_formats_load_as_the_same_catalog(old: str) -> None:
    """A format-1 snapshot gives the descriptors and digest of its format-2 twin."""
    new = (GOLDEN_DIR / OLDER_FORMAT_FILES[old]).read_bytes()
    from_old = decode_snapshot((GOLDEN_DIR / old).read_bytes())
    from_new = decode_snapshot(new)
    assert from_old.digest() == from_new.digest()
    assert from_old.schemas() == from_new.schemas()
    assert from_old.zones() == from_new.zones()
    assert from_old.tables() == from_new.tables()
    assert from_old.indexes() == from_new.indexes()
    assert encode_snapshot(from_old) == new


def test_a_stamped_update_stamps_what_it_changes_with_its_activation() -> None:
    """Format-4 updates stamp; the same entries unstamped (format 3) leave tokens at 0."""
    v1, v2, _ = golden_catalogs()
    stamped_v2, _ = golden_stamped()
    activation = stamped_v2.activation_ts
    assert stamped_v2.schema("SALES").update_ts == activation
    assert stamped_v2.table("SALES", "ORDERS").update_ts == activation
    assert stamped_v2.index("SALES", "ORDERS_BY_DAY").update_ts == activation
    assert stamped_v2.zone("Z3").update_ts == activation
    assert stamped_v2.schema("PUBLIC").update_ts == 0  # untouched
    assert v2.table("SALES", "ORDERS").update_ts == 0
    again = decode_update((GOLDEN_DIR / "update_v4.bin").read_bytes()).apply_to(v1)
    assert again.digest() == stamped_v2.digest()


def test_a_replace_of_the_rows_stores_its_floor_and_the_ids_it_gave() -> None:
    table = decode_descriptor((GOLDEN_DIR / "descriptor_table_replaced_rows_v1.bin").read_bytes())
    assert isinstance(table, TableDescriptor)
    assert (table.schema_version, table.rows_from, table.next_column_id) == (6, 6, 8)
    assert [(col.id, col.name, col.nullable) for col in table.columns] == [
        (3, "id", False),
        (5, "note", False),
        (4, "kind", False),
        (7, "at", True),
    ]


def test_the_golden_view_update_replays_to_the_golden_view_snapshot() -> None:
    v1 = decode_snapshot((GOLDEN_DIR / "snapshot_initial_v2.bin").read_bytes())
    update = decode_update((GOLDEN_DIR / "update_views_v3.bin").read_bytes())
    v2 = decode_snapshot((GOLDEN_DIR / "snapshot_views_v2.bin").read_bytes())
    assert update.apply_to(v1).digest() == v2.digest()
    assert [(v.schema_id, v.name) for v in v2.views()] == [(3, "DAILY"), (3, "LATEST")]
    assert all(v.update_ts == v2.activation_ts for v in v2.views())


def test_a_golden_view_keeps_its_history_as_iceberg_trims_it() -> None:
    view = decode_descriptor((GOLDEN_DIR / "descriptor_view_v1.bin").read_bytes())
    assert isinstance(view, ViewDescriptor)
    assert (view.id, view.uuid) == (4, "5f0c6a1e-8d2b-4c7a-9e3f-1a2b3c4d5e6f")
    assert (view.current_version_id, [v.version_id for v in view.versions]) == (2, [2, 3])
    assert [(e.version_id, e.timestamp_ms - 1_700_000_000_000) for e in view.log] == [
        (2, 1_000),
        (3, 2_000),
        (2, 3_000),
    ]
    assert [s.schema_id for s in view.schemas] == [0, 1, 2]
    assert [(c.id, c.name) for c in view.columns] == [(1, "DAY"), (2, "TOTAL"), (3, "NOTES")]
    assert view.location == "s3://warehouse/reports/daily-3"


def test_the_golden_grant_update_replays_to_the_golden_grant_snapshot() -> None:
    v1 = decode_snapshot((GOLDEN_DIR / "snapshot_initial_v2.bin").read_bytes())
    update = decode_update((GOLDEN_DIR / "update_grants_v3.bin").read_bytes())
    v2 = decode_snapshot((GOLDEN_DIR / "snapshot_grants_v2.bin").read_bytes())
    assert update.apply_to(v1).digest() == v2.digest()
    commands = decode_commands((GOLDEN_DIR / "commands_grants_v1.bin").read_bytes())
    entries = decode_entries((GOLDEN_DIR / "entries_grants_v1.bin").read_bytes())
    assert (
        list(prepare(v1, [golden_grantee(), *commands]).entries) == entries == list(update.entries)
    )
    assert [r.name for r in v2.roles()] == ["ANALYSTS", "OWNERS"]
    assert len(v2.grants()) == 5 and all(g.update_ts == v2.activation_ts for g in v2.grants())
    # alice reaches SALES through ANALYSTS and may write ORDERS; ANALYSTS' SELECT was revoked
    alice = Caller(v2.principal("alice").id)
    orders = v2.table("SALES", "ORDERS").id
    assert holds(v2, alice, Privilege.MODIFY, SecurableKind.TABLE, orders)
    assert not holds(v2, alice, Privilege.SELECT, SecurableKind.TABLE, orders)


def test_a_golden_grant_and_role_keep_their_ids_and_what_they_name() -> None:
    grant = decode_descriptor((GOLDEN_DIR / "descriptor_grant_v1.bin").read_bytes())
    assert isinstance(grant, GrantDescriptor)
    assert (grant.privilege, grant.on, grant.on_id, grant.to, grant.to_id) == (
        Privilege.MODIFY,
        SecurableKind.TABLE,
        5,
        GranteeKind.USER,
        3,
    )
    assert (grant.id, grant.update_ts >> 16) == (13, 1_700_000_001_500)
    role = decode_descriptor((GOLDEN_DIR / "descriptor_role_v1.bin").read_bytes())
    assert isinstance(role, RoleDescriptor)
    assert (role.id, role.name, role.update_ts >> 16) == (7, "ANALYSTS", 1_700_000_001_500)


def test_the_golden_nested_update_replays_to_the_golden_nested_snapshot() -> None:
    v1, _ = golden_nested_update()
    update = decode_update((GOLDEN_DIR / "update_nested_v3.bin").read_bytes())
    snapshot = decode_snapshot((GOLDEN_DIR / "snapshot_nested_v2.bin").read_bytes())
    assert update.apply_to(v1).digest() == snapshot.digest()
    table = snapshot.table("LAKE", "EVENTS")
    payload = table.column("PAYLOAD")
    assert payload is not None
    assert [(f.name, f.id) for f in payload.fields] == [("ORIGIN", 4), ("N", 5), ("ITEMS", 6)]
    (element,) = payload.fields[2].fields
    assert [(f.name, f.id, f.nullable) for f in element.fields] == [
        ("PRICE", 9, True),
        ("QTY", 13, True),
    ]
    assert table.next_column_id == 14
