"""Golden data commits of Iceberg's row-level deletes (merge-on-read)."""

from __future__ import annotations

from catalog.data.files import DataCommit


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
