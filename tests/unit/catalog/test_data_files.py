"""Data commits as values: their stored form across versions, and which files are visible."""

from __future__ import annotations

import random

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.data import files as stored
from catalog.data.files import DataCommit, DataFile, DataMode, IcebergSnapshot
from catalog.data.iceberg_identity import sequence_numbers
from catalog.data.merge import merged

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


def _random_history(rng: random.Random, count: int) -> list[DataCommit]:
    """Appends, overwrites and removals of a table (Spark and Iceberg commits), whose schema
    moves on now and then; a path may come back after it went."""
    commits: list[DataCommit] = []
    version, number = 1, 0
    for seq in range(1, count + 1):
        visible = [f.path for c in stored.visible_files(commits) for f in c.files]
        removed = rng.sample(visible, k=rng.randint(0, min(2, len(visible))))
        version += rng.random() < 0.3
        number += 1
        iceberg = None
        if rng.random() < 0.4:
            number += rng.randint(0, 2)  # an Iceberg writer's numbers may skip
            iceberg = IcebergSnapshot(
                snapshot_id=1000 + seq,
                manifest_list=f"/w/table_7/metadata/snap-{seq}.avro",
                operation="append",
                timestamp_ms=seq,
                sequence_number=number,
            )
        commit = _commit(
            seq,
            [f"f{rng.randrange(3 * count)}" for _ in range(rng.randint(0, 2))],
            removed=[r.removeprefix("p0/").removesuffix(".parquet") for r in removed] or None,
            mode="overwrite" if rng.random() < 0.15 else "append",
        )
        commits.append(commit.model_copy(update={"schema_version": version, "iceberg": iceberg}))
    return commits


def _reads(commits: list[DataCommit], ts: int) -> list[tuple[str, int]]:
    """What a read at ``ts`` gets: each visible file with its schema version, in order."""
    upto = commits[: stored.committed_by(commits, ts)]
    return [(f.path, c.schema_version_of(f)) for c in stored.visible_files(upto) for f in c.files]


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(2, 25), st.data())
def test_merged_commits_read_the_same_at_and_after_the_last_of_them(
    rng: random.Random, count: int, data: st.DataObject
) -> None:
    """Merging a table's first commits (twice over, as rounds of expiry do) changes no read
    at or after the last one merged, nor any later commit's sequence number."""
    commits = _random_history(rng, count)
    first = data.draw(st.integers(1, count), label="first merge")
    second = data.draw(st.integers(first, count), label="second merge")
    once = [merged(commits[:first]), *commits[first:]]
    twice = [merged(once[: second - first + 1]), *once[second - first + 1 :]]
    for after in (once, twice):
        last = count - len(after) + 1  # the number of the merged commit
        assert after[0].seq == last and after[0].merged
        assert stored.decode_data_commit(stored.encode_data_commit(after[0])) == after[0]
        for ts in range(last, count + 2):
            assert _reads(after, ts) == _reads(commits, ts), ts
        assert sequence_numbers(after) == sequence_numbers(commits)[last - 1 :]


def test_only_a_merged_commit_shows_the_fields_of_a_merge_in_its_json() -> None:
    """Clients that do not know a merge's fields read every other commit as before."""
    commit = _commit(1, ["a"])
    body = commit.model_dump(mode="json")
    assert "sequence_number" not in body and "schema_version" not in body["files"][0]
    both = merged([commit, _commit(2, ["b"]).model_copy(update={"schema_version": 2})])
    body = both.model_dump(mode="json")
    assert body["sequence_number"] == 2 and body["files"][0]["schema_version"] == 1
