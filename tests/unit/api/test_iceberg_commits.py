"""A commit's requirements against a table's metadata, and which updates it takes."""

from __future__ import annotations

import pytest

from api.iceberg.commits import check_requirements, commit_commands, unchanged_since_read
from api.iceberg.errors import IcebergError
from api.iceberg.metadata import table_metadata
from api.iceberg.models import TableMetadata, TableRequirement, TableUpdate
from api.iceberg.snapshots import Snapshots
from catalog import CatalogError, ColumnType, ErrorCode
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.descriptors import TableDescriptor
from catalog.prepare import prepare


def _table() -> tuple[TableDescriptor, TableMetadata]:
    columns = [c.Column(name="ID", type=ColumnType.INT64, nullable=False)]
    created = c.CreateTable(name="T", columns=columns, primary_key=["ID"])
    table = prepare(Catalog.initial(), [created]).catalog.table("PUBLIC", "T")
    return table, table_metadata(table, "/w", 0)


def _requirement(**members: object) -> TableRequirement:
    return TableRequirement.model_validate(members)


@pytest.mark.parametrize(
    "requirement",
    [
        {"type": "assert-current-schema-id", "current-schema-id": 1},
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 0},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
        {"type": "assert-default-spec-id", "default-spec-id": 0},
        {"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
    ],
)
def test_requirements_that_hold_pass(requirement: dict[str, object]) -> None:
    _, metadata = _table()
    check_requirements([_requirement(**requirement)], metadata, "PUBLIC.T")


@pytest.mark.parametrize(
    ("requirement", "reason"),
    [
        ({"type": "assert-create"}, "the table already exists"),
        ({"type": "assert-current-schema-id", "current-schema-id": 7}, "is 1, not 7"),
        ({"type": "assert-table-uuid", "uuid": "0-0"}, "table uuid is"),
        (
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 5},
            "branch or tag main does not exist",
        ),
    ],
)
def test_a_requirement_that_fails_fails_the_commit(
    requirement: dict[str, object], reason: str
) -> None:
    _, metadata = _table()
    with pytest.raises(IcebergError, match=reason) as failed:
        check_requirements([_requirement(**requirement)], metadata, "PUBLIC.T")
    assert (failed.value.type, failed.value.status) == ("CommitFailedException", 409)


def test_the_table_uuid_requirement_holds_for_the_same_table() -> None:
    _, metadata = _table()
    same = _requirement(type="assert-table-uuid", uuid=metadata.table_uuid)
    check_requirements([same], metadata, "PUBLIC.T")


def test_a_new_location_is_refused_and_says_what_is_kept() -> None:
    table, metadata = _table()
    with pytest.raises(IcebergError, match="keeps its location") as refused:
        commit_commands("PUBLIC", table, metadata, [TableUpdate(action="set-location")])
    assert refused.value.status == 400


@pytest.mark.parametrize("action", ["add-spec", "add-sort-order", "upgrade-format-version"])
def test_updates_of_layout_need_their_members(action: str) -> None:
    table, metadata = _table()
    with pytest.raises(IcebergError, match="missing its members"):
        commit_commands("PUBLIC", table, metadata, [TableUpdate(action=action)])


def test_specs_orders_and_any_property_become_one_iceberg_command() -> None:
    table, metadata = _table()
    updates = [
        TableUpdate.model_validate(u)
        for u in [
            {
                "action": "add-spec",
                "spec": {
                    "spec-id": 1,
                    "fields": [
                        {"source-id": 0, "field-id": 1000, "name": "b", "transform": "bucket[4]"}
                    ],
                },
            },
            {"action": "set-default-spec", "spec-id": -1},
            {
                "action": "add-sort-order",
                "sort-order": {
                    "order-id": 1,
                    "fields": [
                        {
                            "source-id": 0,
                            "transform": "identity",
                            "direction": "desc",
                            "null-order": "nulls-last",
                        }
                    ],
                },
            },
            {"action": "set-default-sort-order", "sort-order-id": -1},
            {"action": "set-properties", "updates": {"owner": "me", "stale-rows-fraction": "0.5"}},
        ]
    ]
    commands = commit_commands("PUBLIC", table, metadata, updates)
    assert [type(command).__name__ for command in commands] == [
        "AlterTablePropertiesCommand",
        "AlterTableIcebergCommand",
    ]
    cat = prepare(
        Catalog.initial(),
        [
            c.CreateTable(
                name="T",
                columns=[c.Column(name="ID", type=ColumnType.INT64, nullable=False)],
                primary_key=["ID"],
            ),
            *commands,
        ],
    ).catalog
    changed = cat.table("PUBLIC", "T")
    served = table_metadata(changed, "/w", 0)
    assert (served.default_spec_id, served.last_partition_id, served.default_sort_order_id) == (
        1,
        1000,
        1,
    )
    assert served.properties["owner"] == "me"
    assert served.properties["stale-rows-fraction"] == "0.5"
    check_requirements(
        [
            _requirement(type="assert-default-spec-id", **{"default-spec-id": 1}),
            _requirement(
                type="assert-last-assigned-partition-id", **{"last-assigned-partition-id": 1000}
            ),
        ],
        served,
        "PUBLIC.T",
    )


def test_an_added_schema_must_become_current() -> None:
    table, metadata = _table()
    added = TableUpdate.model_validate({"action": "add-schema", "schema": metadata.schemas[-1]})
    with pytest.raises(IcebergError, match="must be made current"):
        commit_commands("PUBLIC", table, metadata, [added])


def test_requirements_are_checked_again_on_the_version_a_commit_is_judged_on() -> None:
    columns = [c.Column(name="ID", type=ColumnType.INT64, nullable=False)]
    created = c.CreateTable(name="T", columns=columns, primary_key=["ID"])
    read = prepare(Catalog.initial(), [created]).catalog
    table = read.table("PUBLIC", "T")
    unchanged = unchanged_since_read(
        [_requirement(type="assert-current-schema-id", **{"current-schema-id": 1})],
        table.id,
        "/w",
        "PUBLIC.T",
        Snapshots(),
    )
    unchanged(read)  # nothing changed since the read
    added = c.AddColumns(table="T", columns=[c.Column(name="B", type=ColumnType.INT32)])
    with pytest.raises(CatalogError) as moved:
        unchanged(prepare(read, [added]).catalog)  # another writer's change landed first
    assert moved.value.code is ErrorCode.PRECONDITION_FAILED
    assert "assert-current-schema-id" in moved.value.message
    with pytest.raises(CatalogError) as dropped:
        unchanged(prepare(read, [c.DropTable(name="T")]).catalog)
    assert dropped.value.code is ErrorCode.TABLE_NOT_FOUND
