"""A replace's commit: told from other commits, its commands, and its data as snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from api.iceberg.commits import commit_commands
from api.iceberg.errors import IcebergError
from api.iceberg.metadata import table_metadata
from api.iceberg.replaces import replacement
from api.iceberg.requirements import TableRequirement
from api.iceberg.snapshots import snapshots_of
from api.iceberg.updates import TableUpdate
from catalog import ColumnType, ValidationError
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.columns import AddColumnsCommand, AlterColumnCommand, DropColumnsCommand
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


REQUIREMENTS: TypeAdapter[list[TableRequirement]] = TypeAdapter(list[TableRequirement])


def test_a_replace_of_a_table_without_data_is_told_by_its_requirements() -> None:
    """Java's replace asserts no current schema id; a schema change always does."""
    schema_changed = REQUIREMENTS.validate_python(
        [{"type": "assert-current-schema-id", "current-schema-id": 1}]
    )
    found = replacement(_updates(CURRENT), [], empty=True)
    assert found is not None and found.chain is None and not found.removes_main
    assert replacement(_updates(CURRENT), schema_changed, empty=True) is None
    assert replacement(_updates(CURRENT), [], empty=False) is None


def _field(field_id: int, name: str, kind: str, required: bool) -> dict[str, Any]:
    return {"id": field_id, "name": name, "required": required, "type": kind}


def _new_schema(*fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = {"type": "struct", "schema-id": 9, "fields": list(fields)}
    return {"action": "add-schema", "schema": schema}, {**CURRENT, "schema-id": -1}


def _commands(cat: Catalog, *bodies: dict[str, Any], replace: bool) -> list[CommandBase]:
    table = cat.table("PUBLIC", "T")
    metadata = table_metadata(table, "/w", 0)
    return commit_commands("PUBLIC", table, metadata, _updates(*bodies), replace=replace)


ID, DAY = _field(1, "ID", "long", False), _field(2, "DAY", "date", False)


def test_a_replace_adds_required_fields_and_its_rows_count_from_its_version() -> None:
    cat = _partitioned()
    bodies = _new_schema(ID, DAY, _field(3, "N", "long", True))
    commands = _commands(cat, *bodies, replace=True)
    added = [x for x in commands if isinstance(x, AddColumnsCommand)]
    assert len(added) == 1 and added[0].replaces_rows
    table = prepare(cat, commands).catalog.table("PUBLIC", "T")
    column = table.column("N")
    assert column is not None and not column.nullable
    assert table.rows_from == table.schema_version == 2
    with pytest.raises(ValidationError, match="NOT NULL column N needs a default value"):
        _commands(cat, *bodies, replace=False)


def test_a_replace_makes_a_field_required_and_a_schema_change_may_not() -> None:
    cat = _partitioned()
    bodies = _new_schema({**ID, "required": True}, DAY)
    commands = _commands(cat, *bodies, replace=True)
    assert [type(x) for x in commands] == [AlterColumnCommand]
    table = prepare(cat, commands).catalog.table("PUBLIC", "T")
    assert table.rows_from == 2
    with pytest.raises(ValidationError, match="cannot set NOT NULL on existing column ID"):
        prepare(cat, _commands(cat, *bodies, replace=False))


def test_a_replace_adding_only_optional_fields_keeps_every_row() -> None:
    cat = _partitioned()
    commands = _commands(cat, *_new_schema(ID, DAY, _field(3, "N", "long", False)), replace=True)
    assert not any(isinstance(x, AddColumnsCommand) and x.replaces_rows for x in commands)
    assert prepare(cat, commands).catalog.table("PUBLIC", "T").rows_from == 0


def test_a_replace_brings_back_a_dropped_field_by_its_id() -> None:
    """As a replace staged before another one that dropped the field does."""
    added = c.AddColumns(table="T", columns=[c.Column(name="X", type=ColumnType.INT64)])
    cat = prepare(_partitioned(), [added, c.DropColumns(table="T", columns=["X"])]).catalog
    bodies = _new_schema(ID, DAY, _field(3, "X", "long", False))
    commands = _commands(cat, *bodies, replace=True)
    table = prepare(cat, commands).catalog.table("PUBLIC", "T")
    assert [(col.id, col.name) for col in table.columns] == [(1, "ID"), (2, "DAY"), (3, "X")]
    assert table.rows_from == table.schema_version == 4
    with pytest.raises(IcebergError, match="never reuses a column id"):
        _commands(cat, *bodies, replace=False)
