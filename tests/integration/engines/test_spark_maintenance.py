"""Spark with Iceberg's runtime keeps a table: metadata tables, procedures, DROP TABLE PURGE.

Iceberg's metadata tables (``t.snapshots``, ``t.history``, ``t.files``, ``t.partitions``,
``t.refs``) are read from the metadata and manifests the catalog serves.
``rewrite_data_files`` commits a ``replace`` snapshot, one data commit that removes the small
files and adds the compacted ones. ``remove_orphan_files`` lists the table's folder: the
catalog's own files there (the Spark source's data files, the manifests the server writes
for them) are reachable from the snapshots it serves, and its metadata files live beside the
folder (``<warehouse>/metadata/table_<id>/``), so only files nothing names go.
``DROP TABLE ... PURGE`` drops the table, and Spark deletes the files itself; with the
catalog option ``rest-catalog-purge`` it asks the server (``purgeRequested=true``), which
leaves them to the catalog's own data expiry.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest

from tests.integration.engines.test_spark_rows import ROWS, SparkTable
from tests.integration.engines.test_spark_rows import table as table  # the fixture
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)

TEN_DAYS_S = 10 * 24 * 3600


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_metadata_tables_list_the_snapshots_files_and_partitions(table: SparkTable) -> None:
    table.create()
    table.sql("DELETE FROM {t} WHERE id = 5")
    table.sql("ALTER TABLE {t} CREATE TAG v1")
    served = [s.snapshot_id for s in table.loaded().snapshots()]
    snapshots = table.sql("SELECT snapshot_id, operation FROM {t}.snapshots ORDER BY committed_at")
    assert snapshots == list(zip(served, ["append", "append", "delete"], strict=True))
    history = table.sql("SELECT snapshot_id, is_current_ancestor FROM {t}.history")
    assert history == [(s, True) for s in served]
    files = table.sql("SELECT partition.part, record_count FROM {t}.files ORDER BY 1, 2")
    assert files == [("a", 2), ("b", 1), ("b", 1)]  # part c's only file was dropped
    partitions = table.sql(
        "SELECT partition.part, record_count, file_count FROM {t}.partitions ORDER BY 1"
    )
    assert partitions == [("a", 2, 1), ("b", 2, 2)]
    refs = table.sql("SELECT name, type, snapshot_id FROM {t}.refs ORDER BY 1")
    assert refs == [("main", "BRANCH", served[-1]), ("v1", "TAG", served[-1])]


def test_rewrite_data_files_replaces_the_small_files(table: SparkTable) -> None:
    table.create()
    table.sql("INSERT INTO {t} VALUES (6, 'fay', 'b'), (7, 'gus', 'a')")
    before = table.sql("SELECT count(*) FROM {t}.files")
    ((rewritten, added, *_),) = table.sql(
        f"CALL cat.system.rewrite_data_files(table => '{table.namespace}.t', "
        "options => map('min-input-files', '2'))"
    )
    assert (rewritten, added) == (5, 2)  # part a had two files, b three, c one (left)
    assert (before, table.sql("SELECT count(*) FROM {t}.files")) == ([(6,)], [(3,)])
    assert table.operations()[-1] == "replace"
    assert table.read() == sorted([*ROWS, (6, "fay", "b"), (7, "gus", "a")])


def test_remove_orphan_files_keeps_every_file_the_catalog_needs(table: SparkTable) -> None:
    table.create(partitioned=False)
    # A commit of the catalog's own Spark source: its files, and the manifests the server
    # writes for them on the next load, are in the table's folder too.
    table.source_append((6, "fay", "c"))
    table.sql("DELETE FROM {t} WHERE id = 1")  # a file only the history names now
    location = table.location()
    metadata = location.parent / "metadata" / location.name
    orphan = location / "data" / "orphan.parquet"
    pq.write_table(pq.read_table(next(location.glob("data/*.parquet"))), orphan)
    aged = time.time() - TEN_DAYS_S  # older than the procedure's default (three days ago)
    for path in [*location.rglob("*"), *metadata.rglob("*")]:
        os.utime(path, (aged, aged))
    kept = _files(location) - {"data/orphan.parquet"}
    catalog_files = _files(metadata)
    assert catalog_files and any(p.startswith("metadata/snap-") and "-catalog-" in p for p in kept)
    call = f"CALL cat.system.remove_orphan_files(table => '{table.namespace}.t'"
    listed = table.sql(call + ", dry_run => true)")
    assert [Path(str(r[0]).removeprefix("file:")) for r in listed] == [orphan]
    table.sql(call + ")")
    assert (_files(location), _files(metadata)) == (kept, catalog_files)
    assert table.read() == [r for r in [*ROWS, (6, "fay", "c")] if r[0] != 1]
    first = table.loaded().snapshots()[0].snapshot_id
    assert table.sql(f"SELECT id FROM {{t}} VERSION AS OF {first} ORDER BY id") == [
        (1,),
        (2,),
        (3,),
    ]


def test_iceberg_reads_a_spark_source_commit_to_a_partitioned_table(table: SparkTable) -> None:
    table.create()
    table.source_append((6, "fay", "c"))
    assert table.read() == [*ROWS, (6, "fay", "c")]


def test_the_spark_source_writes_the_partitions_iceberg_computes(table: SparkTable) -> None:
    """Each file the source writes holds one Iceberg partition, the one Spark's Iceberg writer
    computes for its rows (bucket, truncate, identity): Spark prunes by them and finds every
    row."""
    table.sql(f"CREATE SCHEMA IF NOT EXISTS cat.{table.namespace}")
    table.sql(
        "CREATE TABLE {t} (id BIGINT, name STRING, part STRING) USING iceberg "
        "PARTITIONED BY (bucket(4, id), truncate(2, name), part)"
    )
    table.sql("INSERT INTO {t} VALUES " + ", ".join(f"({i}, '{n}', '{p}')" for i, n, p in ROWS))
    added = [(10 + i, f"{n}x", p) for i, n, p in ROWS]
    for row in added:
        table.source_append(row)
    assert table.read() == sorted([*ROWS, *added])
    for i, name, part in added:
        pruned = f"SELECT id FROM {{t}} WHERE id = {i} AND name = '{name}' AND part = '{part}'"
        assert table.sql(pruned) == [(i,)]
    listed = {r[0]: r[1] for r in table.sql("SELECT file_path, partition FROM {t}.files")}
    by_source = {tuple(p) for p in listed.values()}
    again = [(i + 100, n, p) for i, n, p in ROWS]  # the same partitions, written by Spark
    table.sql("INSERT INTO {t} VALUES " + ", ".join(f"({i}, '{n}', '{p}')" for i, n, p in again))
    files = {tuple(r[0]) for r in table.sql("SELECT partition FROM {t}.files")}
    assert by_source <= files


def test_drop_table_purge_deletes_the_files_from_spark(table: SparkTable) -> None:
    table.create()
    location = table.location()
    assert any(p.startswith("data/") for p in _files(location))
    table.sql("DROP TABLE {t} PURGE")
    assert not table.pyiceberg.table_exists(f"{table.namespace}.t")
    (drop,) = [e for e in table.recorder.log.since(table.recorder.start) if e.method == "DELETE"]
    assert drop.status == 204 and "purgeRequested=true" not in drop.query
    assert not [p for p in _files(location) if p.startswith("data/")]  # Spark deleted them


def test_drop_table_purge_through_the_catalog_leaves_the_files_to_its_expiry(
    table: SparkTable,
) -> None:
    table.create()
    location = table.location()
    files = _files(location)
    with httpx.Client(base_url=table.server.url) as client:
        before_drop = client.get("/v1/time").json()["now"]
    options = {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest"}
    options |= {".uri": f"{table.server.url}/iceberg", ".rest-catalog-purge": "true"}
    for key, value in options.items():
        table.sql(f"SET `spark.sql.catalog.purging{key}` = {value}")
    table.sql(f"DROP TABLE purging.{table.namespace}.t PURGE")
    assert not table.pyiceberg.table_exists(f"{table.namespace}.t")
    (drop,) = [e for e in table.recorder.log.since(table.recorder.start) if e.method == "DELETE"]
    assert drop.status == 204 and "purgeRequested=true" in drop.query
    # The files stay until the catalog's data expiry deletes the folder of a table no kept
    # version holds: a read pinned before the drop still reads them.
    assert _files(location) == files
    frame = table.spark.read.format("catalog").option("catalog_url", table.server.url)
    pinned = frame.option("as_of", str(before_drop)).load(f'"{table.namespace}"."t"')
    assert sorted((r[0], r[1], r[2]) for r in pinned.collect()) == ROWS
