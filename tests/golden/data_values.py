"""Deterministic data-plane values whose encodings are kept as golden files: data commits and
the expiry's record of compactions (see ``catalog_values`` for how golden files are made).
"""

from __future__ import annotations

from catalog.data.expiry import Compaction
from catalog.data.files import DataCommit


def golden_data_commit() -> DataCommit:
    """A data commit using every field: statistics of each kind of bound, removals, a snapshot."""
    stats = [
        {"column_id": 1, "nulls": 0, "lower": 1, "upper": 9_000_000_000},
        {"column_id": 2, "nulls": 3, "lower": "a", "upper": "zz"},
        {"column_id": 3, "nulls": 0, "lower": -1.5, "upper": 2.25},
        {"column_id": 4, "nulls": 0, "lower": False, "upper": True},
        {"column_id": 5, "nulls": 7},
    ]
    files = [
        {"path": "data/p=0/a.parquet", "partition": 0, "rows": 10, "size": 2048, "stats": stats},
        {"path": "b.parquet", "partition": 3, "rows": 1, "size": 512},
    ]
    snapshot = {
        "snapshot_id": 8_000_000_000_000_000_001,
        "parent_id": -42,
        "manifest_list": "metadata/snap-1.avro",
        "operation": "overwrite",
        "summary": {"added-records": "11"},
        "timestamp_ms": 1_700_000_000_000,
        "sequence_number": 4,
    }
    return DataCommit.model_validate(
        {
            "table_id": 12,
            "seq": 4,
            "commit_ts": (1_700_000_000_000 << 16) | 3,
            "schema_version": 2,
            "mode": "append",
            "files": files,
            "request_id": "iceberg-12-8000000000000000001",
            "removed": ["old.parquet"],
            "iceberg": snapshot,
        }
    )


def golden_merged_data_commit() -> DataCommit:
    """A data commit that merged the ones before it: a file of an older schema version, and
    the sequence number it keeps."""
    commit = golden_data_commit()
    older, newer = commit.files
    body = commit.model_dump(exclude={"removed", "iceberg"})
    body.update(
        seq=9,
        mode="overwrite",
        files=[older.model_copy(update={"schema_version": 1}), newer],
        request_id="spark-write-9",
        sequence_number=11,
    )
    return DataCommit.model_validate(body)


def golden_main_removed_data_commit() -> DataCommit:
    """The data commit of an Iceberg replace that adds no snapshot: branch main removed."""
    body = golden_data_commit().model_dump(exclude={"removed", "iceberg"})
    body.update(
        seq=5,
        mode="overwrite",
        files=[],
        request_id="iceberg-12-main-removed-after-4-v2",
        main_removed=True,
    )
    return DataCommit.model_validate(body)


def golden_compactions() -> list[Compaction]:
    """The compactions an expiry record keeps: one with dropped tables, one without."""
    return [
        Compaction(1_700_000_000_000, (1_699_999_000_000 << 16) | 1, (7, 9)),
        Compaction(1_700_000_600_000, 1_700_000_000_000 << 16),
    ]


def golden_located_compactions() -> list[Compaction]:
    """A compaction that dropped a table whose location was not its warehouse folder."""
    return [
        Compaction(1_700_000_900_000, 1_700_000_300_000 << 16, (7, 9), ((9, "file:///w/lake/x"),))
    ]


def golden_position_deletes_data_commit() -> DataCommit:
    """A commit of an engine's merge-on-read delete: one position delete file, a snapshot."""
    return DataCommit.model_validate(
        {
            "table_id": 12,
            "seq": 6,
            "commit_ts": (1_700_000_100_000 << 16) | 1,
            "schema_version": 2,
            "mode": "append",
            "files": [
                {
                    "path": "data/00000-1-deletes.parquet",
                    "partition": 0,
                    "rows": 2,
                    "size": 1500,
                    "content": "position-deletes",
                }
            ],
            "request_id": "iceberg-12-8000000000000000002",
            "iceberg": {
                "snapshot_id": 8_000_000_000_000_000_002,
                "parent_id": 8_000_000_000_000_000_001,
                "manifest_list": "metadata/snap-2.avro",
                "operation": "delete",
                "summary": {"added-position-deletes": "2"},
                "timestamp_ms": 1_700_000_100_000,
                "sequence_number": 6,
            },
        }
    )


def golden_registered_data_commit() -> DataCommit:
    """A commit of a registered table's snapshot: its time in the history it came with."""
    body = golden_position_deletes_data_commit().model_dump()
    body.update(
        seq=1,
        files=[{"path": "data/00000-0-a.parquet", "partition": 0, "rows": 3, "size": 900}],
        request_id="iceberg-12-8000000000000000002",
    )
    body["iceberg"].update(operation="append", logged_ms=1_690_000_000_000, summary={})
    return DataCommit.model_validate(body)


def golden_row_lineage_data_commit() -> DataCommit:
    """A commit of an engine's snapshot of a format version 3 table: the row ids it gave out."""
    body = golden_registered_data_commit().model_dump()
    body["iceberg"].update(logged_ms=None, first_row_id=1_000, added_rows=3)
    return DataCommit.model_validate(body)


def golden_partitioned_data_commit() -> DataCommit:
    """A Spark source commit to a table an Iceberg engine partitioned: each file's partition."""
    partition = {"spec_id": 1, "values": [3, "ab", None, 19782, True, -1.5]}
    body = golden_data_commit().model_dump(exclude={"removed", "iceberg"})
    body.update(
        seq=7,
        files=[
            {
                "path": "p0/w-0-a.parquet",
                "partition": 0,
                "rows": 2,
                "size": 700,
                "iceberg_partition": partition,
            }
        ],
        request_id="spark-write-0123456789abcdef",
    )
    return DataCommit.model_validate(body)
