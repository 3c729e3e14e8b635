"""Tags, branches, snapshot expiry, statistics and removed schemas: checked, stored, listed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from api.iceberg.commits import commit_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import TableMetadata
from api.iceberg.snapshots import Snapshots, snapshots_of
from api.iceberg.updates import TableUpdate
from catalog import ColumnType, ValidationError
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.data.files import DataCommit
from catalog.data.iceberg_identity import snapshot_id_of
from catalog.data.iceberg_refs import RefType
from catalog.descriptors import TableDescriptor
from catalog.prepare import prepare

UPDATE: TypeAdapter[TableUpdate] = TypeAdapter(TableUpdate)


def _commits(count: int) -> list[DataCommit]:
    return [
        DataCommit.model_validate(
            {
                "table_id": 1,
                "seq": seq,
                "commit_ts": seq << 16,
                "schema_version": 1,
                "mode": "append",
                "files": [{"path": f"f{seq}.parquet", "partition": 0, "rows": 1, "size": 1}],
                "request_id": f"r{seq}",
            }
        )
        for seq in range(1, count + 1)
    ]


COMMITS = _commits(4)
IDS = [snapshot_id_of(commit) for commit in COMMITS]


def _state() -> tuple[Catalog, TableDescriptor]:
    columns = [c.Column(name="ID", type=ColumnType.INT64, nullable=False)]
    created = c.CreateTable(name="T", columns=columns, primary_key=["ID"])
    cat = prepare(Catalog.initial(), [created]).catalog
    return cat, cat.table("PUBLIC", "T")


def _metadata(table: TableDescriptor) -> TableMetadata:
    return table_metadata(table, "/w", 0, snapshots_of("/w", COMMITS, state=table.iceberg))


def _commit(cat: Catalog, *updates: dict[str, Any]) -> tuple[Catalog, TableDescriptor]:
    table = cat.table("PUBLIC", "T")
    parsed = [UPDATE.validate_python(u) for u in updates]
    commands = commit_commands("PUBLIC", table, _metadata(table), parsed)
    after = prepare(cat, commands).catalog
    return after, after.table("PUBLIC", "T")


def _tag(name: str, snapshot_id: int, **more: Any) -> dict[str, Any]:
    body = {"action": "set-snapshot-ref", "ref-name": name, "type": "tag"}
    return {**body, "snapshot-id": snapshot_id, **more}


def test_a_tag_and_a_branch_are_kept_and_listed_beside_main() -> None:
    cat, _ = _state()
    branch = {**_tag("dev", IDS[2], **{"min-snapshots-to-keep": 3}), "type": "branch"}
    cat, table = _commit(cat, _tag("v1", IDS[0], **{"max-ref-age-ms": 1000}), branch)
    assert table.iceberg is not None
    assert [(r.name, r.type) for r in table.iceberg.refs] == [
        ("dev", RefType.BRANCH),
        ("v1", RefType.TAG),
    ]
    refs = _metadata(table).refs
    assert refs["main"] == {"snapshot-id": IDS[-1], "type": "branch"}
    assert refs["v1"] == {"snapshot-id": IDS[0], "type": "tag", "max-ref-age-ms": 1000}
    assert refs["dev"] == {"snapshot-id": IDS[2], "type": "branch", "min-snapshots-to-keep": 3}
    cat, table = _commit(cat, {"action": "remove-snapshot-ref", "ref-name": "v1"})
    assert set(_metadata(table).refs) == {"main", "dev"}


@pytest.mark.parametrize(
    ("update", "reason"),
    [
        (_tag("v1", 42), "has no such snapshot"),
        (_tag("v1", IDS[0], **{"min-snapshots-to-keep": 1}), "those are a branch's"),
        (_tag("v1", IDS[0], **{"max-ref-age-ms": 0}), "must be positive"),
        ({"action": "remove-snapshot-ref", "ref-name": "main"}, "branch main is the table's"),
    ],
)
def test_a_ref_iceberg_refuses_is_refused(update: dict[str, Any], reason: str) -> None:
    cat, _ = _state()
    with pytest.raises(ValidationError, match=reason):
        _commit(cat, update)


def test_removed_snapshots_are_no_longer_listed_but_a_tagged_one_stays() -> None:
    cat, _ = _state()
    cat, _ = _commit(cat, _tag("v1", IDS[0]))
    cat, table = _commit(cat, {"action": "remove-snapshots", "snapshot-ids": IDS[1:3]})
    assert table.iceberg is not None and table.iceberg.expired_below == 4
    listed = _metadata(table)
    assert [s["snapshot-id"] for s in listed.snapshots] == [IDS[0], IDS[3]]
    assert [e["snapshot-id"] for e in listed.snapshot_log] == [IDS[3]]
    assert listed.refs["v1"]["snapshot-id"] == IDS[0]
    refs_only = snapshots_of("/w", COMMITS, state=table.iceberg, refs_only=True)
    assert [s["snapshot-id"] for s in refs_only.snapshots] == [IDS[0], IDS[3]]


@pytest.mark.parametrize(
    ("removed", "reason"),
    [
        ([IDS[3]], "is the current snapshot"),
        ([IDS[0]], "is tag v1's"),
        ([IDS[2]], "expire oldest first"),
    ],
)
def test_a_removal_that_would_drop_what_must_stay_is_refused(
    removed: list[int], reason: str
) -> None:
    cat, _ = _state()
    cat, _ = _commit(cat, _tag("v1", IDS[0]))
    with pytest.raises(ValidationError, match=reason):
        _commit(cat, {"action": "remove-snapshots", "snapshot-ids": removed})


def test_removing_snapshots_already_gone_changes_nothing() -> None:
    _, table = _state()
    parsed = [UPDATE.validate_python({"action": "remove-snapshots", "snapshot-ids": [7]})]
    assert commit_commands("PUBLIC", table, _metadata(table), parsed) == []


STATISTICS = {
    "snapshot-id": IDS[1],
    "statistics-path": "/w/metadata/stats.puffin",
    "file-size-in-bytes": 10,
    "file-footer-size-in-bytes": 4,
    "blob-metadata": [
        {
            "type": "apache-datasketches-theta-v1",
            "snapshot-id": IDS[1],
            "sequence-number": 2,
            "fields": [1],
            "properties": {"ndv": "3"},
        }
    ],
}
PARTITION_STATISTICS = {
    "snapshot-id": IDS[1],
    "statistics-path": "/w/metadata/p.parquet",
    "file-size-in-bytes": 10,
}


def test_statistics_files_are_kept_verbatim_and_removed() -> None:
    cat, _ = _state()
    cat, table = _commit(
        cat,
        {"action": "set-statistics", "statistics": STATISTICS},
        {"action": "set-partition-statistics", "partition-statistics": PARTITION_STATISTICS},
    )
    assert table.iceberg is not None
    (kept,) = table.iceberg.statistics
    assert (kept.snapshot_id, json.loads(kept.document)) == (IDS[1], STATISTICS)
    (partition,) = table.iceberg.partition_statistics
    assert json.loads(partition.document) == PARTITION_STATISTICS
    served = _metadata(table).model_dump(by_alias=True)
    assert served["statistics"] == [STATISTICS]
    assert served["partition-statistics"] == [PARTITION_STATISTICS]
    cat, table = _commit(
        cat,
        {"action": "remove-statistics", "snapshot-id": IDS[1]},
        {"action": "remove-partition-statistics", "snapshot-id": IDS[1]},
    )
    served = _metadata(table).model_dump(by_alias=True)
    assert (served["statistics"], served["partition-statistics"]) == ([], [])


def test_statistics_of_an_unknown_snapshot_are_refused() -> None:
    cat, _ = _state()
    with pytest.raises(ValidationError, match="statistics of snapshot 42"):
        _commit(cat, {"action": "set-statistics", "statistics": {**STATISTICS, "snapshot-id": 42}})


def test_a_removed_schema_is_no_longer_served_but_the_current_one_stays() -> None:
    cat, _ = _state()
    added = c.AddColumns(table="T", columns=[c.Column(name="B", type=ColumnType.INT32)])
    cat = prepare(cat, [added]).catalog
    cat, table = _commit(cat, {"action": "remove-schemas", "schema-ids": [1, 9]})
    assert table.iceberg is not None and table.iceberg.removed_schemas == (1,)
    assert [s.schema_id for s in _metadata(table).schemas] == [2]
    assert len(table.versions) == 2  # the catalog keeps it for reads as of earlier moments
    with pytest.raises(ValidationError, match="schema 2 is the current schema"):
        _commit(cat, {"action": "remove-schemas", "schema-ids": [2]})


def test_no_snapshot_no_ref() -> None:
    assert snapshots_of("/w", []) == Snapshots()
