"""A commit's requirements against a table's metadata, and which updates it takes."""

from __future__ import annotations

import typing

import pydantic
import pytest
from pydantic import TypeAdapter

from api.iceberg.commits import (
    CommitTableRequest,
    check_requirements,
    commit_commands,
    unchanged_since_read,
)
from api.iceberg.errors import IcebergError
from api.iceberg.metadata import table_metadata
from api.iceberg.models import TableMetadata
from api.iceberg.requirements import TableRequirement
from api.iceberg.snapshots import Snapshots
from api.iceberg.updates import AddSchemaUpdate, TableUpdate
from catalog import CatalogError, ColumnType, ErrorCode
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.descriptors import TableDescriptor
from catalog.prepare import prepare


def _table() -> tuple[TableDescriptor, TableMetadata]:
    columns = [c.Column(name="ID", type=ColumnType.INT64, nullable=False)]
    created = c.CreateTable(name="T", columns=columns, primary_key=["ID"])
    table = prepare(Catalog.initial(), [created]).catalog.table("PUBLIC", "T")
    return table, table_metadata(table, "/w", 0)


REQUIREMENT: TypeAdapter[TableRequirement] = TypeAdapter(TableRequirement)
UPDATE: TypeAdapter[TableUpdate] = TypeAdapter(TableUpdate)

REQUIREMENT_KINDS = {
    "assert-create",
    "assert-table-uuid",
    "assert-ref-snapshot-id",
    "assert-last-assigned-field-id",
    "assert-current-schema-id",
    "assert-last-assigned-partition-id",
    "assert-default-spec-id",
    "assert-default-sort-order-id",
}
"""Every ``TableRequirement`` of the Iceberg REST catalog's OpenAPI document."""

REFUSED_UPDATES: list[dict[str, object]] = [
    {"action": "assign-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
    {
        "action": "add-encryption-key",
        "encryption-key": {"key-id": "k", "encrypted-key-metadata": "AAAA"},
    },
    {"action": "remove-encryption-key", "key-id": "k"},
]
"""A valid update of each kind the catalog does not make."""

MADE_UPDATES = {
    "upgrade-format-version",
    "add-spec",
    "set-default-spec",
    "add-sort-order",
    "set-default-sort-order",
    "remove-partition-specs",
    "add-schema",
    "set-current-schema",
    "set-properties",
    "remove-properties",
    "add-snapshot",
    "set-snapshot-ref",
    "remove-snapshot-ref",
    "remove-snapshots",
    "set-statistics",
    "remove-statistics",
    "set-partition-statistics",
    "remove-partition-statistics",
    "remove-schemas",
    "set-location",
}
"""The kinds it makes (``add-snapshot`` with ``set-snapshot-ref`` main as a data commit)."""


def _tags(union: object, member: str) -> set[str]:
    kinds = typing.get_args(typing.get_args(union)[0])
    return {typing.get_args(k.model_fields[member].annotation)[0] for k in kinds}


def _requirement(**members: object) -> TableRequirement:
    return REQUIREMENT.validate_python(members)


def test_every_kind_of_the_protocol_is_modelled() -> None:
    assert _tags(TableRequirement, "type") == REQUIREMENT_KINDS
    refused = {str(u["action"]) for u in REFUSED_UPDATES}
    assert _tags(TableUpdate, "action") == refused | MADE_UPDATES
    assert not refused & MADE_UPDATES


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


@pytest.mark.parametrize("body", REFUSED_UPDATES, ids=lambda b: str(b["action"]))
def test_updates_the_catalog_does_not_make_are_refused_and_say_what_is_kept(
    body: dict[str, object],
) -> None:
    table, metadata = _table()
    update = UPDATE.validate_python(body)
    with pytest.raises(IcebergError, match="keeps its uuid") as refused:
        commit_commands("PUBLIC", table, metadata, [update])
    assert refused.value.status == 400
    assert refused.value.message.startswith(f"update {body['action']} is refused: ")


def test_a_format_version_not_served_is_refused_and_3_is_an_upgrade() -> None:
    table, metadata = _table()
    update = UPDATE.validate_python({"action": "upgrade-format-version", "format-version": 4})
    with pytest.raises(IcebergError, match="upgrade-format-version 4") as refused:
        commit_commands("PUBLIC", table, metadata, [update])
    assert refused.value.status == 400
    update = UPDATE.validate_python({"action": "upgrade-format-version", "format-version": 3})
    [command] = commit_commands("PUBLIC", table, metadata, [update])
    assert isinstance(command, AlterTableIcebergCommand) and command.format_version == 3


def test_specs_orders_and_any_property_become_one_iceberg_command() -> None:
    table, metadata = _table()
    bucket = {"source-id": 0, "field-id": 1000, "name": "b", "transform": "bucket[4]"}
    descending = {
        "source-id": 0,
        "transform": "identity",
        "direction": "desc",
        "null-order": "nulls-last",
    }
    updates = [
        UPDATE.validate_python(u)
        for u in [
            {"action": "add-spec", "spec": {"spec-id": 1, "fields": [bucket]}},
            {"action": "set-default-spec", "spec-id": -1},
            {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [descending]}},
            {"action": "set-default-sort-order", "sort-order-id": -1},
            {"action": "set-properties", "updates": {"owner": "me", "stale-rows-fraction": "0.5"}},
        ]
    ]
    commands = commit_commands("PUBLIC", table, metadata, updates)
    assert [type(command).__name__ for command in commands] == [
        "AlterTablePropertiesCommand",
        "AlterTableIcebergCommand",
    ]
    columns = [c.Column(name="ID", type=ColumnType.INT64, nullable=False)]
    created = c.CreateTable(name="T", columns=columns, primary_key=["ID"])
    changed = prepare(Catalog.initial(), [created, *commands]).catalog.table("PUBLIC", "T")
    served = table_metadata(changed, "/w", 0)
    assert (served.default_spec_id, served.last_partition_id, served.default_sort_order_id) == (
        1,
        1000,
        1,
    )
    assert served.properties["owner"] == "me"
    assert served.properties["stale-rows-fraction"] == "0.5"
    held = [
        _requirement(type="assert-default-spec-id", **{"default-spec-id": 1}),
        _requirement(
            type="assert-last-assigned-partition-id", **{"last-assigned-partition-id": 1000}
        ),
    ]
    check_requirements(held, served, "PUBLIC.T")


@pytest.mark.parametrize(
    ("body", "tag"),
    [
        ({"updates": [{"action": "move-table"}]}, "'move-table'"),
        ({"updates": [{"action": "add-view-version", "view-version": {}}]}, "'add-view-version'"),
        ({"requirements": [{"type": "assert-nothing"}]}, "'assert-nothing'"),
        ({"updates": [{"location": "/elsewhere"}]}, "'action'"),
    ],
)
def test_an_unknown_kind_is_refused_when_the_body_is_read(
    body: dict[str, object], tag: str
) -> None:
    with pytest.raises(pydantic.ValidationError) as refused:
        CommitTableRequest.model_validate(body)
    (error,) = refused.value.errors()
    assert tag in error["msg"]
    assert "Update" not in error["msg"] and "Assert" not in error["msg"]  # no class names


def test_a_kind_without_its_members_is_refused_when_the_body_is_read() -> None:
    with pytest.raises(pydantic.ValidationError) as refused:
        CommitTableRequest.model_validate({"updates": [{"action": "set-current-schema"}]})
    (error,) = refused.value.errors()
    assert error["loc"] == ("updates", 0, "set-current-schema", "schema-id")


def test_an_added_schema_must_become_current() -> None:
    table, metadata = _table()
    added = AddSchemaUpdate.model_validate({"schema": metadata.schemas[-1]})
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
