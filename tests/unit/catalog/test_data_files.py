"""Data commits as values: their stored form across versions, and which files are visible."""

from __future__ import annotations

import msgpack

from catalog import data_files as stored
from catalog.data_files import DataCommit, DataFile, DataMode, IcebergSnapshot

STORED_BEFORE_ICEBERG = msgpack.packb(
    {
        "table_id": 7,
        "seq": 1,
        "commit_ts": 1 << 20,
        "schema_version": 1,
        "mode": "append",
        "files": [{"path": "p0/a.parquet", "partition": 0, "rows": 2, "size": 10}],
        "request_id": "spark-write-1",
    }
)
"""A commit as stored before commits named removed files or Iceberg snapshots."""


def _file(name: str) -> DataFile:
    return DataFile(path=f"p0/{name}.parquet", partition=0, rows=1, size=10)


def _commit(
    seq: int, files: list[str], removed: list[str] | None = None, mode: DataMode = "append"
) -> DataCommit:
    return DataCommit(
        table_id=7,
        seq=seq,
        commit_ts=seq,
        schema_version=1,
        mode=mode,
        files=tuple(_file(f) for f in files),
        request_id=f"w{seq}",
        removed=None if removed is None else tuple(f"p0/{r}.parquet" for r in removed),
    )


def test_a_commit_stored_before_iceberg_snapshots_decodes_and_encodes_the_same() -> None:
    commit = stored.decode_data_commit(STORED_BEFORE_ICEBERG)
    assert (commit.removed, commit.iceberg) == (None, None)
    assert stored.encode_data_commit(commit) == STORED_BEFORE_ICEBERG


def test_a_commit_of_an_iceberg_snapshot_round_trips() -> None:
    snapshot = IcebergSnapshot(
        snapshot_id=-5,
        parent_id=3,
        manifest_list="/w/table_7/metadata/snap-5.avro",
        operation="overwrite",
        summary={"added-records": "2"},
        timestamp_ms=1_700_000_000_000,
        sequence_number=2,
    )
    commit = _commit(2, ["b"], removed=["a"]).model_copy(update={"iceberg": snapshot})
    assert stored.decode_data_commit(stored.encode_data_commit(commit)) == commit


def test_visible_files_leave_out_what_later_commits_removed() -> None:
    commits = [_commit(1, ["a", "b"]), _commit(2, ["c"], removed=["a"]), _commit(3, ["d"])]
    shown = stored.visible_files(commits)
    assert [[f.path for f in c.files] for c in shown] == [
        ["p0/b.parquet"],
        ["p0/c.parquet"],
        ["p0/d.parquet"],
    ]
    assert shown[1] == commits[1]
    rewritten = [*commits, _commit(4, ["e"], removed=["c", "d"])]
    assert [f.path for c in stored.visible_files(rewritten) for f in c.files] == [
        "p0/b.parquet",
        "p0/e.parquet",
    ]
    overwritten = [*commits, _commit(4, ["e"], mode="overwrite")]
    assert [c.seq for c in stored.visible_files(overwritten)] == [4]
