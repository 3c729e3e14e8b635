"""The SQL of a Spark view over a table's files: each file read with the columns it was
written with, whether its commit was merged with others or not."""

from __future__ import annotations

from catalog import Catalog
from catalog import commands as c
from catalog.data.files import DataCommit, DataFile
from catalog.data.merge import merged
from catalog.descriptors.tables import TableVersion
from spark.views import view_sql
from tests.unit.catalog.helpers import apply, col, create_table


def test_a_merged_commit_reads_each_file_with_the_columns_it_was_written_with() -> None:
    first = apply(Catalog.initial(), create_table("T"))
    old = first.table("PUBLIC", "T")
    added = c.AddColumns(schema="PUBLIC", table="T", columns=[col("X")])
    table = apply(first, added).table("PUBLIC", "T")
    history = [TableVersion(version=1, columns=old.columns)]

    def commit(seq: int, path: str, schema_version: int) -> DataCommit:
        return DataCommit(
            table_id=table.id,
            seq=seq,
            commit_ts=seq,
            schema_version=schema_version,
            mode="append",
            files=(DataFile(path=path, partition=0, rows=1, size=1),),
            request_id=f"r{seq}",
        )

    commits = [commit(1, "a.parquet", 1), commit(2, "b.parquet", 2)]
    folder = "/w/table_1"
    sql = view_sql(table, history, commits, folder)
    assert view_sql(table, history, [merged(commits)], folder) == sql
    older, newer = sql.split("\nUNION ALL\n")
    assert "AS `X`" in older and "CAST(NULL" in older and "a.parquet" in older
    assert "CAST(`X` AS" in newer and "b.parquet" in newer
