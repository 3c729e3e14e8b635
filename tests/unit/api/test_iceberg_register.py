"""Register: what a metadata file becomes, and the files refused with a 400 naming them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.iceberg.errors import IcebergError
from api.iceberg.models import TableMetadata
from api.iceberg.register import branch_lines, logged_times, main_line, register_command

FILE = "/w/metadata/table_3/catalog-v4.metadata.json"
UUID = "5b0f6c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b"


def _snapshot(snapshot_id: int, parent: int | None, sequence_number: int) -> dict[str, Any]:
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": sequence_number,
        "timestamp-ms": 1_700_000_000_000 + sequence_number,
        "manifest-list": f"/w/lake/t/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": "append"},
        "schema-id": 2,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    return snapshot


GOOD: dict[str, Any] = {
    "format-version": 2,
    "table-uuid": UUID,
    "location": "file:///w/lake/t",
    "last-sequence-number": 2,
    "last-updated-ms": 1_700_000_000_002,
    "last-column-id": 7,
    "current-schema-id": 2,
    "schemas": [
        {
            "type": "struct",
            "schema-id": 2,
            "identifier-field-ids": [3],
            "fields": [
                {"id": 3, "name": "ID", "type": "long", "required": True, "doc": "the id"},
                {"id": 6, "name": "NOTE", "type": "string", "required": False},
            ],
        }
    ],
    "partition-specs": [
        {
            "spec-id": 0,
            "fields": [
                {"source-id": 3, "field-id": 1000, "name": "ID_bucket", "transform": "bucket[4]"}
            ],
        }
    ],
    "default-spec-id": 0,
    "last-partition-id": 1000,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "default-sort-order-id": 0,
    "properties": {"owner": "someone", "stale-rows-fraction": "0.5"},
    "snapshots": [_snapshot(11, None, 1), _snapshot(12, 11, 2), _snapshot(99, 11, 3)],
    "current-snapshot-id": 12,
    "refs": {
        "main": {"snapshot-id": 12, "type": "branch"},
        "v1": {"snapshot-id": 11, "type": "tag"},
    },
}


def _with(**changes: Any) -> TableMetadata:
    body = copy.deepcopy(GOOD)
    body.update({k.replace("_", "-"): v for k, v in changes.items()})
    return TableMetadata.model_validate(body)


def test_a_file_becomes_a_create_with_its_ids_state_and_location() -> None:
    command = register_command("LAKE", "T", _with(), FILE)
    assert [c.name for c in command.columns] == ["ID", "NOTE"]
    assert (command.column_ids, command.schema_version, command.last_column_id) == ((3, 6), 2, 7)
    assert command.primary_key == ("ID",)
    assert command.location == "file:///w/lake/t"
    assert command.stale_rows_fraction == 0.5
    assert command.iceberg is not None and command.iceberg.registered is not None
    state = command.iceberg.registered
    assert (state.table_uuid, state.last_partition_id) == (UUID, 1000)
    assert [r.name for r in state.refs] == ["v1"]
    assert state.property_map() == {"owner": "someone"}
    assert command.iceberg.column_docs == {"ID": "the id"}


_NESTED_SCHEMA = {
    "type": "struct",
    "schema-id": 2,
    "identifier-field-ids": [3],
    "fields": [
        {"id": 3, "name": "ID", "type": "long", "required": True},
        {
            "id": 4,
            "name": "S",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {
                        "id": 7,
                        "name": "TAGS",
                        "required": False,
                        "type": {
                            "type": "list",
                            "element-id": 5,
                            "element": "string",
                            "element-required": False,
                        },
                    }
                ],
            },
        },
    ],
}


def test_a_files_nested_fields_keep_their_ids() -> None:
    command = register_command("LAKE", "T", _with(schemas=[_NESTED_SCHEMA]), FILE)
    assert command.column_ids == (3, 4)
    [tags] = command.columns[1].fields
    assert (tags.name, tags.id, [(e.name, e.id) for e in tags.fields]) == (
        "TAGS",
        7,
        [("element", 5)],
    )


def test_a_spec_of_a_nested_field_is_refused_naming_the_file_and_the_field() -> None:
    spec = {"spec-id": 0, "fields": [{"source-id": 5, "field-id": 1000, "name": "t"}]}
    metadata = _with(schemas=[_NESTED_SCHEMA], partition_specs=[spec])
    refusal = r"partition spec 0 uses the nested field S\.TAGS\.element;"
    with pytest.raises(IcebergError, match=refusal) as e:
        register_command("LAKE", "T", metadata, FILE)
    assert e.value.status == 400 and FILE in e.value.message


def test_main_line_is_the_current_snapshot_and_its_parents_oldest_first() -> None:
    assert [s.snapshot_id for s in main_line(_with(), FILE)] == [11, 12]
    assert main_line(_with(current_snapshot_id=-1, refs={}), FILE) == []


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"format_version": 1}, "format version 2"),
        ({"current_schema_id": 5}, "current-schema-id 5"),
        ({"table_uuid": "not-a-uuid"}, "table-uuid is not a uuid"),
        ({"table_uuid": UUID.upper()}, "canonical form"),
        ({"partition_specs": [{"spec-id": 0, "fields": [{"source-id": 3}]}]}, "spec or order"),
        ({"refs": {"v1": {"type": "tag"}}}, "a ref cannot be read"),
    ],
)
def test_what_the_catalog_cannot_keep_is_refused_naming_the_file(
    changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(IcebergError, match=named) as refused:
        register_command("LAKE", "T", _with(**changes), FILE)
    assert refused.value.status == 400 and FILE in refused.value.message


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"current_snapshot_id": 5}, "current snapshot 5 is not listed"),
        ({"snapshots": [_snapshot(11, None, 2), _snapshot(12, 11, 1)]}, "increasing sequence"),
        ({"snapshots": [{"snapshot-id": 12}]}, "a snapshot cannot be read"),
    ],
)
def test_a_history_the_catalog_cannot_keep_is_refused_naming_the_file(
    changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(IcebergError, match=named) as refused:
        main_line(_with(**changes), FILE)
    assert refused.value.status == 400 and FILE in refused.value.message


def test_the_lines_of_branches_off_main_are_kept_as_branch_snapshots() -> None:
    snapshots = [*(_snapshot(i, i - 1 if i > 11 else None, i - 10) for i in (11, 12))]
    snapshots += [_snapshot(21, 11, 3), _snapshot(22, 21, 5), _snapshot(31, 12, 4)]
    refs = {
        "main": {"snapshot-id": 12, "type": "branch"},
        "audit": {"snapshot-id": 22, "type": "branch"},
        "v1": {"snapshot-id": 31, "type": "tag"},
    }
    metadata = _with(snapshots=snapshots, refs=refs, current_snapshot_id=12)
    assert [s.snapshot_id for s in branch_lines(metadata, FILE)] == [21, 31, 22]
    registered = register_command("LAKE", "T", metadata, FILE).iceberg
    state = registered.registered if registered is not None else None
    assert state is not None
    kept = [(b.snapshot_id, b.parent_id, b.sequence_number) for b in state.branch_snapshots]
    assert kept == [(21, 11, 3), (31, 12, 4), (22, 21, 5)]
    unlisted = _with(snapshots=snapshots, refs={**refs, "b": {"snapshot-id": 77, "type": "branch"}})
    with pytest.raises(IcebergError, match="names snapshot 77, which the file does not list"):
        branch_lines(unlisted, FILE)


def test_the_history_it_came_with_runs_forward_and_stops_at_the_register() -> None:
    log = [
        {"snapshot-id": 11, "timestamp-ms": 500},
        {"snapshot-id": 12, "timestamp-ms": 400},  # behind the one before it
        {"snapshot-id": 11, "timestamp-ms": "soon"},  # not a time
        {"snapshot-id": 99, "timestamp-ms": 900},  # off main's line
    ]
    metadata = _with(snapshot_log=log)
    line = main_line(metadata, FILE)
    assert logged_times(metadata, line, now_ms=10_000) == {11: 500, 12: 500}
    assert logged_times(metadata, line, now_ms=450) == {11: 450, 12: 450}
    assert logged_times(_with(), line, now_ms=10_000) == {}  # no log: register times serve
    only_later = _with(snapshot_log=[{"snapshot-id": 12, "timestamp-ms": 700}])
    assert logged_times(only_later, line, now_ms=10_000) == {11: 700, 12: 700}  # in order
