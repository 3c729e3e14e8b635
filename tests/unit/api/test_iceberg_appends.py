"""Which snapshot updates a commit may make, and the branch requirement against snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from api.iceberg.appends import added_snapshots
from api.iceberg.commits import check_requirements
from api.iceberg.errors import IcebergError
from api.iceberg.models import TableMetadata
from api.iceberg.requirements import TableRequirement
from api.iceberg.updates import CommitChanges, SetPropertiesUpdate, TableUpdate

UPDATE: TypeAdapter[TableUpdate] = TypeAdapter(TableUpdate)
REQUIREMENT: TypeAdapter[TableRequirement] = TypeAdapter(TableRequirement)


def _snapshot(snapshot_id: int, parent: int | None) -> TableUpdate:
    body: dict[str, object] = {"snapshot-id": snapshot_id, "parent-snapshot-id": parent}
    body |= {
        "sequence-number": 1,
        "timestamp-ms": 1,
        "manifest-list": "/w/m.avro",
        "summary": {"operation": "append"},
    }
    return UPDATE.validate_python({"action": "add-snapshot", "snapshot": body})


def _ref(snapshot_id: int, name: str = "main", kind: str = "branch") -> TableUpdate:
    body = {"action": "set-snapshot-ref", "ref-name": name, "type": kind}
    return UPDATE.validate_python({**body, "snapshot-id": snapshot_id})


def test_a_commit_without_snapshots_is_no_data_commit() -> None:
    assert added_snapshots([SetPropertiesUpdate(updates={})]) is None


def test_snapshots_made_one_on_another_are_one_chain() -> None:
    chain = added_snapshots([_snapshot(1, None), _ref(1), _snapshot(2, 1), _ref(2)])
    assert [s.snapshot_id for s in chain or ()] == [1, 2]


@pytest.mark.parametrize(
    ("updates", "reason"),
    [
        ([_snapshot(1, None), _ref(1), SetPropertiesUpdate(updates={})], "no other change"),
        ([_snapshot(1, None)], "head of branch main"),
        ([_snapshot(1, None), _ref(1, name="dev")], "only go to branch main, not dev"),
        ([_snapshot(1, None), _ref(1), _ref(1, name="v1", kind="tag")], "not v1"),
        ([_snapshot(1, None), _ref(1, kind="tag")], "head of branch main"),
        ([_snapshot(1, None), _ref(2)], "head of branch main"),
        ([_snapshot(1, None), _snapshot(2, 7), _ref(2)], "is not made on snapshot 1"),
    ],
)
def test_other_snapshot_updates_are_refused(updates: list[TableUpdate], reason: str) -> None:
    with pytest.raises(IcebergError, match=reason) as refused:
        added_snapshots(updates)
    assert refused.value.status == 400


def test_main_is_not_moved_without_a_new_snapshot() -> None:
    assert added_snapshots([_ref(1)]) is None  # not a data commit: the update refuses itself
    with pytest.raises(IcebergError, match="moves forward only") as refused:
        _ref(1).apply(CommitChanges())
    assert refused.value.status == 400


def test_a_tag_or_branch_without_a_new_snapshot_is_no_data_commit() -> None:
    changes = CommitChanges()
    for update in [_ref(1, name="v1", kind="tag"), _ref(1, name="dev")]:
        assert added_snapshots([update]) is None
        update.apply(changes)
    assert [(r.name, r.type) for r in changes.set_refs] == [("v1", "tag"), ("dev", "branch")]


def _metadata(refs: dict[str, dict[str, Any]]) -> TableMetadata:
    return TableMetadata.model_validate(
        {
            "table-uuid": "u",
            "location": "/w",
            "last-updated-ms": 0,
            "last-column-id": 1,
            "schemas": [],
            "current-schema-id": 1,
            "refs": refs,
        }
    )


@pytest.mark.parametrize(
    ("asked", "refs", "reason"),
    [
        (None, {}, None),
        (5, {"main": {"snapshot-id": 5, "type": "branch"}}, None),
        (None, {"main": {"snapshot-id": 5, "type": "branch"}}, "branch main exists, at snapshot 5"),
        (4, {"main": {"snapshot-id": 5, "type": "branch"}}, "branch main is at snapshot 5, not 4"),
        (4, {}, "branch or tag main does not exist"),
    ],
)
def test_the_branch_requirement_names_the_current_snapshot(
    asked: int | None, refs: dict[str, dict[str, Any]], reason: str | None
) -> None:
    requirement = REQUIREMENT.validate_python(
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": asked}
    )
    if reason is None:
        check_requirements([requirement], _metadata(refs), "PUBLIC.T")
        return
    with pytest.raises(IcebergError, match=reason) as failed:
        check_requirements([requirement], _metadata(refs), "PUBLIC.T")
    assert failed.value.status == 409
