"""Spark with Iceberg's runtime changes rows: DELETE, UPDATE and MERGE INTO on the catalog.

Copy-on-write (Iceberg's default for format 2) rewrites the data files that hold a changed
row: each statement is one ``overwrite`` (or ``delete``) snapshot that removes files and adds
their rewritten rows, which the catalog records as one data commit (``removed``). Every change
is read back by Spark, by PyIceberg and by the catalog's own Spark source
(``format("catalog")``). Merge-on-read writes position delete files instead, which the catalog
records with their data commit and every reader applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table
from pyspark.sql import SparkSession

from api.iceberg.manifests import stored_path
from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import Recorder, SparkShell
from tests.integration.engines.engines import SparkEngine
from tests.integration.engines.test_smoke import run
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)

Row = tuple[int, str, str]

ROWS: list[Row] = [(1, "ann", "a"), (2, "bob", "a"), (3, "cy", "b"), (4, "di", "b"), (5, "ed", "c")]
"""(id, name, part): ``part`` partitions the table; two inserts, one file a partition each."""

MODES = ("write.delete.mode", "write.update.mode", "write.merge.mode")


@dataclass
class SparkTable:
    """Table ``t`` of a test's namespace, changed by Spark and read by every reader."""

    shell: SparkShell
    pyiceberg: RestCatalog
    spark: SparkSession
    server: RunningServer
    namespace: str
    recorder: Recorder

    @property
    def name(self) -> str:
        """Return the table's name in Spark."""
        return f"cat.{self.namespace}.t"

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """Run ``statement`` on Spark (``{t}`` names the table); return its rows."""
        rows = run(SparkEngine(self.shell), statement.format(t=self.name), self.recorder)
        return [tuple(r) for r in rows]

    def create(self, mode: str = "copy-on-write", *, partitioned: bool = True) -> None:
        """Create the table (partitioned by ``part``, changing rows in ``mode``) with ROWS."""
        properties = ", ".join(f"'{m}'='{mode}'" for m in MODES)
        partitions = "PARTITIONED BY (part) " if partitioned else ""
        self.sql(f"CREATE SCHEMA IF NOT EXISTS cat.{self.namespace}")
        self.sql(
            "CREATE TABLE {t} (id BIGINT, name STRING, part STRING) USING iceberg "
            f"{partitions}TBLPROPERTIES ({properties})"
        )
        for rows in (ROWS[:3], ROWS[3:]):
            self.sql(
                "INSERT INTO {t} VALUES " + ", ".join(f"({i}, '{n}', '{p}')" for i, n, p in rows)
            )

    def loaded(self) -> Table:
        """Return the table as PyIceberg loads it."""
        loaded: Table = self.pyiceberg.load_table(f"{self.namespace}.t")
        return loaded

    def location(self) -> Path:
        """Return the table's folder."""
        return Path(stored_path(self.loaded().location()))

    def data_commits(self) -> list[dict[str, Any]]:
        """Return the table's data commits as the catalog records them, every one."""
        table_id = int(self.location().name.removeprefix("table_"))
        query = {"table_id": str(table_id), "history": "true"}
        answer = httpx.get(f"{self.server.url}/v1/data/commits", params=query)
        answer.raise_for_status()
        commits: list[dict[str, Any]] = answer.json()["commits"]
        return commits

    def operations(self) -> list[str]:
        """Return the operation of each snapshot of the table, oldest first."""
        return [s.summary.operation.value for s in self.loaded().snapshots() if s.summary]

    def source_append(self, row: Row) -> None:
        """Append ``row`` with the catalog's own Spark source, then have Spark load it anew."""
        frame = self.spark.createDataFrame([row], "id BIGINT, name STRING, part STRING")
        writer = frame.write.format("catalog").option("catalog_url", self.server.url)
        writer.mode("append").save(f'"{self.namespace}"."t"')
        self.sql("REFRESH TABLE {t}")  # Spark's catalog caches the table it loaded

    def read(self) -> list[Row]:
        """Return the rows as Spark reads them, checked against PyIceberg and the source."""
        statement = "SELECT id, name, part FROM {t} ORDER BY id"
        by_spark: list[Row] = [(r[0], r[1], r[2]) for r in self.sql(statement)]
        arrow = self.loaded().scan().to_arrow().sort_by("id")
        by_pyiceberg = list(
            zip(*(arrow.column(c).to_pylist() for c in ("id", "name", "part")), strict=True)
        )
        frame = self.spark.read.format("catalog").option("catalog_url", self.server.url)
        source = frame.load(f'"{self.namespace}"."t"').orderBy("id").collect()
        assert by_pyiceberg == by_spark, "PyIceberg reads other rows than Spark"
        assert [(r[0], r[1], r[2]) for r in source] == by_spark, "the Spark source reads others"
        return by_spark


@pytest.fixture
def table(
    spark_engine: SparkShell,
    pyiceberg: RestCatalog,
    spark: SparkSession,  # noqa: F811
    engine_server: RunningServer,
    namespace: str,
    recorder: Recorder,
) -> SparkTable:
    """Table ``t`` of the test's namespace (not created yet)."""
    return SparkTable(spark_engine, pyiceberg, spark, engine_server, namespace, recorder)


def test_copy_on_write_delete_removes_the_rows_in_place(table: SparkTable) -> None:
    table.create()
    table.sql("DELETE FROM {t} WHERE id IN (2, 4)")
    assert table.read() == [r for r in ROWS if r[0] not in (2, 4)]
    assert table.operations() == ["append", "append", "overwrite"]
    rewritten = table.loaded().current_snapshot()
    assert rewritten is not None and rewritten.summary is not None
    assert rewritten.summary["deleted-data-files"] == "2"
    # One data commit: the two files that held a deleted row out, the one with rows left
    # (id 1; id 4 was alone in its file) written again.
    *earlier, last = table.data_commits()
    assert last["iceberg"]["snapshot_id"] == rewritten.snapshot_id
    written = {f["path"] for c in earlier for f in c["files"]}
    assert [f["rows"] for f in last["files"]] == [1]
    assert len(set(last["removed"]) & written) == 2


def test_a_delete_of_whole_partitions_drops_their_files(table: SparkTable) -> None:
    table.create()
    table.sql("DELETE FROM {t} WHERE part = 'b'")
    assert table.read() == [r for r in ROWS if r[2] != "b"]
    assert table.operations()[-1] == "delete"


def test_copy_on_write_update_rewrites_the_rows(table: SparkTable) -> None:
    table.create()
    table.sql("UPDATE {t} SET name = upper(name) WHERE part = 'a' OR id = 5")
    expected = [(i, n.upper() if p == "a" or i == 5 else n, p) for i, n, p in ROWS]
    assert table.read() == expected
    assert table.operations()[-1] == "overwrite"


def test_copy_on_write_merge_updates_deletes_and_inserts(table: SparkTable) -> None:
    table.create()
    table.sql(
        "MERGE INTO {t} AS target USING (SELECT * FROM VALUES (1, 'ANN', 'a'), (3, NULL, 'b'), "
        "(6, 'fay', 'c') AS s(id, name, part)) AS source ON target.id = source.id "
        "WHEN MATCHED AND source.name IS NULL THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET target.name = source.name "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    expected = [(1, "ANN", "a"), (2, "bob", "a"), (4, "di", "b"), (5, "ed", "c"), (6, "fay", "c")]
    assert table.read() == expected
    assert table.operations()[-1] == "overwrite"
    # The snapshot before it still reads as it was.
    second = table.loaded().snapshots()[1].snapshot_id
    assert table.sql(f"SELECT id, name, part FROM {{t}} VERSION AS OF {second} ORDER BY id") == ROWS


UPDATED = [(i, "x" if i == 2 else n, p) for i, n, p in ROWS]


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("DELETE FROM {t} WHERE id = 2", [r for r in ROWS if r[0] != 2]),
        ("UPDATE {t} SET name = 'x' WHERE id = 2", UPDATED),
        (
            "MERGE INTO {t} AS target USING (SELECT 2 AS id) AS source ON target.id = source.id "
            "WHEN MATCHED THEN DELETE",
            [r for r in ROWS if r[0] != 2],
        ),
    ],
    ids=["delete", "update", "merge"],
)
def test_merge_on_read_writes_delete_files_every_reader_applies(
    table: SparkTable, statement: str, expected: list[Row]
) -> None:
    table.create("merge-on-read")
    table.sql(statement)
    assert table.read() == expected  # Spark, PyIceberg and the catalog's Spark source
    *_, last = table.data_commits()
    assert "position-deletes" in [f.get("content") for f in last["files"]]
    second = table.loaded().snapshots()[1].snapshot_id  # before the change: as it was
    assert table.sql(f"SELECT id, name, part FROM {{t}} VERSION AS OF {second} ORDER BY id") == ROWS


def test_compaction_after_merge_on_read_keeps_the_rows_deleted(table: SparkTable) -> None:
    table.create("merge-on-read")
    table.sql("DELETE FROM {t} WHERE id IN (1, 4)")
    table.sql(
        f"CALL cat.system.rewrite_data_files(table => '{table.namespace}.t', "
        "options => map('min-input-files', '1', 'delete-file-threshold', '1'))"
    )
    assert table.read() == [r for r in ROWS if r[0] not in (1, 4)]
    assert table.operations()[-1] == "replace"
