"""Trino's iceberg connector evolves, partitions, time-travels and deletes from a table."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from tests.integration.engines.conftest import Recorder, TrinoServer
from tests.integration.engines.engines import TrinoEngine
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def trino(trino_engine: TrinoServer, namespace: str, recorder: Recorder) -> TrinoEngine:
    engine = TrinoEngine(trino_engine)
    run(engine, f"CREATE SCHEMA cat.{namespace}", recorder)
    return engine


def test_alter_table_evolves_the_schema_and_keeps_the_rows(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    t = f"cat.{namespace}.t"
    run(trino, f"CREATE TABLE {t} (id BIGINT, name VARCHAR)", recorder)
    run(trino, f"INSERT INTO {t} VALUES (1, 'ann')", recorder)
    run(trino, f"ALTER TABLE {t} ADD COLUMN score INTEGER", recorder)
    run(trino, f"ALTER TABLE {t} RENAME COLUMN name TO label", recorder)
    run(trino, f"INSERT INTO {t} VALUES (2, 'bo', 20)", recorder)
    run(trino, f"ALTER TABLE {t} DROP COLUMN score", recorder)
    assert run(trino, f"SELECT id, label FROM {t} ORDER BY id", recorder) == [
        [1, "ann"],
        [2, "bo"],
    ]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id"), (2, "label")]
    assert table.scan().to_arrow().sort_by("id").to_pylist() == [
        {"id": 1, "label": "ann"},
        {"id": 2, "label": "bo"},
    ]


def _one_row(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> tuple[str, Table, Snapshot]:
    """Create table t with Trino and insert row 1; return its name, the table, its snapshot."""
    t = f"cat.{namespace}.t"
    run(trino, f"CREATE TABLE {t} (id BIGINT)", recorder)
    run(trino, f"INSERT INTO {t} VALUES (1)", recorder)
    loaded = pyiceberg.load_table(f"{namespace}.t")
    snapshot = loaded.current_snapshot()
    assert snapshot is not None
    return t, loaded, snapshot


def test_reads_a_table_as_of_a_snapshot_and_a_timestamp(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    t, loaded, first = _one_row(trino, pyiceberg, namespace, recorder)
    visible_ms = loaded.metadata.snapshot_log[-1].timestamp_ms  # when it became current
    run(trino, f"INSERT INTO {t} VALUES (2)", recorder)
    at_first = f"SELECT id FROM {t} FOR VERSION AS OF {first.snapshot_id} ORDER BY id"
    assert run(trino, at_first, recorder) == [[1]]
    # Trino reads the snapshot current at the timestamp: the snapshot log's, the time the
    # catalog made it visible (reads "as of" that time agree), not the writer's timestamp-ms.
    when = f"from_unixtime_nanos({visible_ms} * 1000000) AT TIME ZONE 'UTC'"
    at_time = f"SELECT id FROM {t} FOR TIMESTAMP AS OF {when} ORDER BY id"
    assert run(trino, at_time, recorder) == [[1]]
    assert run(trino, f"SELECT id FROM {t} ORDER BY id", recorder) == [[1], [2]]


def test_a_partitioned_table_reads_back_by_partition(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    t = f"cat.{namespace}.t"
    run(
        trino,
        f"CREATE TABLE {t} (id BIGINT, day DATE) "
        "WITH (partitioning = ARRAY['day(day)', 'bucket(id, 4)'])",
        recorder,
    )
    run(
        trino,
        f"INSERT INTO {t} VALUES (1, DATE '2026-01-01'), (2, DATE '2026-01-02'), "
        "(3, DATE '2026-01-02')",
        recorder,
    )
    assert run(
        trino, f"SELECT id FROM {t} WHERE day = DATE '2026-01-02' ORDER BY id", recorder
    ) == [
        [2],
        [3],
    ]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [f.transform.__class__.__name__ for f in table.spec().fields] == [
        "DayTransform",
        "BucketTransform",
    ]
    files = run(trino, f'SELECT count(*) FROM cat.{namespace}."t$files"', recorder)
    count = files[0][0]
    assert isinstance(count, int) and count >= 2  # a file per partition: two days at least


def test_deletes_whole_files_and_changes_rows_with_delete_files(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    """Trino deletes whole files (a partition's) as a metadata change, and some rows of a
    file with a position delete file (``DELETE``, ``UPDATE``, ``MERGE``)."""
    t = f"cat.{namespace}.t"
    run(
        trino,
        f"CREATE TABLE {t} (id BIGINT, part INTEGER) WITH (partitioning = ARRAY['part'])",
        recorder,
    )
    run(trino, f"INSERT INTO {t} VALUES (1, 1), (2, 1), (3, 2), (4, 1)", recorder)
    run(trino, f"DELETE FROM {t} WHERE part = 2", recorder)
    run(trino, f"DELETE FROM {t} WHERE id = 1", recorder)
    run(trino, f"UPDATE {t} SET id = 20 WHERE id = 2", recorder)
    run(
        trino,
        f"MERGE INTO {t} AS target USING (VALUES (4, 1), (5, 1)) AS source (id, part) "
        "ON target.id = source.id WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT (id, part) VALUES (source.id, source.part)",
        recorder,
    )
    assert run(trino, f"SELECT id FROM {t} ORDER BY id", recorder) == [[5], [20]]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [5, 20]


def test_reads_a_branch_and_a_tag_by_name(
    trino: TrinoEngine, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    t, table, head = _one_row(trino, pyiceberg, namespace, recorder)
    table.manage_snapshots().create_tag(head.snapshot_id, "v1").create_branch(
        head.snapshot_id, "audit"
    ).commit()
    table = pyiceberg.load_table(f"{namespace}.t")
    audited = pa.Table.from_pylist([{"id": 2}], schema=table.schema().as_arrow())
    table.append(audited, branch="audit")  # write-audit-publish: main's readers see none
    run(trino, f"INSERT INTO {t} VALUES (3)", recorder)
    on_branch = f"SELECT id FROM {t} FOR VERSION AS OF 'audit' ORDER BY id"
    assert run(trino, on_branch, recorder) == [[1], [2]]
    assert run(trino, f"SELECT id FROM {t} FOR VERSION AS OF 'v1'", recorder) == [[1]]
    assert run(trino, f"SELECT id FROM {t} ORDER BY id", recorder) == [[1], [3]]
