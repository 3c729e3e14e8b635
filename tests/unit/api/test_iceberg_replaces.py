"""A replace's commit: told from other commits, its commands, and its data as snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from api.iceberg.commits import commit_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.replaces import replacement
from api.iceberg.snapshots import snapshots_of
from api.iceberg.updates import TableUpdate
from catalog import ColumnType, ValidationError
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands.columns import DropColumnsCommand
from catalog.commands.iceberg_tables import AlterTableIcebergCommand
from catalog.data.files import DataCommit
from catalog.data.iceberg_identity import sequence_numbers, snapshot_id_of
from catalog.descriptors import TableDescriptor
from catalog.prepare import prepare
from tests.unit.api.test_iceberg_refs import COMMITS

UPDATES: TypeAdapter[list[TableUpdate]] = TypeAdapter(list[TableUpdate])

SNAPSHOT: dict[str, Any] = {
    "action": "add-snapshot",
    "snapshot": {
        "snapshot-id": 77,
        "sequence-number": 3,
        "timestamp-ms": 1,
        "manifest-list": "/w/metadata/snap-77.avro",
        "summary": {"operation": "overwrite"},
    },
}
MAIN = {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 77}
REMOVE_MAIN = {"action": "remove-snapshot-ref", "ref-name": "main"}
CURRENT = {"action": "set-current-schema", "schema-id": 1}


def _updates(*bodies: dict[str, Any]) -> list[TableUpdate]:
    return UPDATES.validate_python(list(bodies))


@pytest.mark.parametrize(
    ("bodies", "replaces"),
    [
        ([CURRENT, REMOVE_MAIN], True),
        ([CURRENT, REMOVE_MAIN, SNAPSHOT, MAIN], True),
        ([CURRENT, SNAPSHOT, MAIN], True),  # a table without a snapshot: none to remove
        ([REMOVE_MAIN], False),  # main removed alone stays refused
        ([SNAPSHOT, MAIN], False),  # an append
        (
            [
                CURRENT,
                {**SNAPSHOT, "snapshot": {**SNAPSHOT["snapshot"], "parent-snapshot-id": 5}},
                MAIN,
            ],
            False,
        ),
    ],
)
def test_a_replace_is_told_from_other_commits(bodies: list[dict[str, Any]], replaces: bool) -> None:
    found = replacement(_updates(*bodies))
    assert (found is not None) == replaces
    if found is not None:
        assert found.changes == _updates(CURRENT)
        assert (found.chain is not None) == (SNAPSHOT in bodies)


def _partitioned() -> Catalog:
    columns = [
        c.Column(name="ID", type=ColumnType.INT64),
        c.Column(name="DAY", type=ColumnType.DATE),
    ]
    day = c.PartitionFieldSpec(source="DAY", transform="day")
    created = c.CreateTable(
        name="T",
        columns=columns,
        primary_key=(),
        keyless=True,
        iceberg=c.IcebergTableSpec(partition_spec=c.NewPartitionSpec(fields=[day])),
    )
    return prepare(Catalog.initial(), [created]).catalog


def _replace(cat: Catalog, *bodies: dict[str, Any]) -> TableDescriptor:
    table = cat.table("PUBLIC", "T")
    metadata = table_metadata(table, "/w", 0)
    commands = commit_commands("PUBLIC", table, metadata, _updates(*bodies), replace=True)
    return prepare(cat, commands).catalog.table("PUBLIC", "T")


def test_a_replace_drops_a_partition_source_once_the_new_spec_is_the_default() -> None:
    cat = _partitioned()
    schema = {
        "type": "struct",
        "schema-id": 2,
        "fields": [
            {"id": 1, "name": "ID", "required": False, "type": "long"},
            {"id": 3, "name": "NOTE", "required": False, "type": "string"},
        ],
    }
    unpartitioned = {"action": "add-spec", "spec": {"spec-id": 1, "fields": []}}
    bodies = (
        {"action": "add-schema", "schema": schema},
        {"action": "set-current-schema", "schema-id": -1},
        unpartitioned,
        {"action": "set-default-spec", "spec-id": -1},
    )
    table = cat.table("PUBLIC", "T")
    commands = commit_commands(
        "PUBLIC", table, table_metadata(table, "/w", 0), _updates(*bodies), replace=True
    )
    assert isinstance(commands[-1], DropColumnsCommand)
    assert any(isinstance(x, AlterTableIcebergCommand) for x in commands[:-1])
    replaced = prepare(cat, commands).catalog.table("PUBLIC", "T")
    assert [(col.id, col.name) for col in replaced.columns] == [(1, "ID"), (3, "NOTE")]
    assert replaced.iceberg is not None and replaced.iceberg.default_spec.fields == ()
    with pytest.raises(ValidationError, match="default partition spec partitions by it"):
        commit = commit_commands(
            "PUBLIC", table, table_metadata(table, "/w", 0), _updates(*bodies[:2])
        )
        prepare(cat, commit)


def test_a_replace_may_make_an_earlier_schema_current_again() -> None:
    cat = _partitioned()
    added = prepare(
        cat, [c.AddColumns(table="T", columns=[c.Column(name="X", type=ColumnType.INT32)])]
    )
    table = _replace(added.catalog, {"action": "set-current-schema", "schema-id": 1})
    assert [col.name for col in table.columns] == ["ID", "DAY"]
    assert table.schema_version == 3  # a new version with the earlier one's columns


def _commit(seq: int, **more: Any) -> DataCommit:
    """Return the refs tests' data commit ``seq`` (an append of one file), with ``more``."""
    return DataCommit.model_validate({**COMMITS[seq - 1].model_dump(), **more})


def test_main_removed_is_no_snapshot_and_the_next_commit_is_made_on_none() -> None:
    removed = _commit(2, mode="overwrite", files=[], main_removed=True)
    commits = [_commit(1), removed]
    listed = snapshots_of("/w", commits)
    assert listed.current_snapshot_id is None and listed.refs == {}
    first = snapshot_id_of(commits[0])
    assert [s["snapshot-id"] for s in listed.snapshots] == [first]
    assert [e["snapshot-id"] for e in listed.snapshot_log] == [first]
    assert listed.last_sequence_number == 2  # taken by the removal: the next is 3
    after = snapshots_of("/w", [*commits, _commit(3)])
    assert after.snapshots[-1].get("parent-snapshot-id") is None
    assert after.refs["main"]["snapshot-id"] == after.current_snapshot_id
    assert sequence_numbers([*commits, _commit(3)]) == [1, 2, 3]


def test_a_replace_snapshot_is_made_on_none_and_may_reuse_a_number() -> None:
    replaced = {
        "snapshot_id": 5,
        "manifest_list": "/w/m.avro",
        "operation": "overwrite",
        "timestamp_ms": 1,
        "sequence_number": 2,
    }
    commits = [
        _commit(1),
        _commit(2, mode="overwrite", iceberg=replaced),
        _commit(3, mode="overwrite", iceberg={**replaced, "snapshot_id": 6}),
        _commit(4),
    ]
    listed = snapshots_of("/w", commits)
    assert [s.get("parent-snapshot-id") for s in listed.snapshots] == [None, None, None, 6]
    assert sequence_numbers(commits) == [1, 2, 2, 3]
    assert listed.last_sequence_number == 3
