"""Spark with Iceberg's runtime: tags, branches and expire_snapshots against the catalog."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table

from tests.integration.engines.conftest import Recorder, Seed, SparkShell
from tests.integration.engines.engines import SparkEngine
from tests.integration.engines.test_smoke import ROWS
from tests.integration.engines.test_smoke import run as run_on

pytestmark = pytest.mark.timeout(240)


@dataclass
class People:
    """Table ``people`` (ROWS) seeded in the test's namespace, changed through Spark."""

    spark: SparkShell
    pyiceberg: RestCatalog
    namespace: str
    recorder: Recorder

    @property
    def t(self) -> str:
        """Return the table's name in Spark."""
        return f"cat.{self.namespace}.people"

    def rows(self, statement: str) -> list[tuple[object, ...]]:
        """Run ``statement`` on Spark; a refusal fails the test naming the server's answer."""
        return [tuple(r) for r in run_on(SparkEngine(self.spark), statement, self.recorder)]

    def table(self) -> Table:
        """Return the table as PyIceberg loads it."""
        loaded: Table = self.pyiceberg.load_table(f"{self.namespace}.people")
        return loaded


@pytest.fixture
def people(
    spark_engine: SparkShell, seed: Seed, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> People:
    seed(namespace, "people", ROWS)
    return People(spark_engine, pyiceberg, namespace, recorder)


def test_a_tag_reads_its_snapshot_and_a_branch_takes_writes_main_never_sees(
    people: People,
) -> None:
    t, namespace = people.t, people.namespace
    people.rows(f"ALTER TABLE {t} CREATE TAG v1")
    people.rows(f"ALTER TABLE {t} CREATE BRANCH b1")
    people.rows(f"INSERT INTO {t} VALUES (3, 'cy')")
    tagged = people.rows(f"SELECT id, name FROM {t} VERSION AS OF 'v1' ORDER BY id")
    assert tagged == ROWS
    refs = people.table().metadata.refs
    assert (refs["v1"].snapshot_ref_type, refs["b1"].snapshot_ref_type) == ("tag", "branch")
    assert refs["v1"].snapshot_id == refs["b1"].snapshot_id != refs["main"].snapshot_id
    # Write-audit-publish: writes to branch b1, by name and through spark.wap.branch.
    people.rows(f"INSERT INTO {t}.branch_b1 VALUES (4, 'di')")
    people.rows(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.wap.enabled'='true')")
    people.rows("SET spark.wap.branch = b1")
    try:
        people.rows(f"INSERT INTO {t} VALUES (5, 'ed')")
    finally:
        people.rows("RESET spark.wap.branch")
    on_b1 = people.rows(f"SELECT id FROM {t} VERSION AS OF 'b1' ORDER BY id")
    assert on_b1 == [(1,), (2,), (4,), (5,)]
    assert people.rows(f"SELECT id FROM {t} ORDER BY id") == [(1,), (2,), (3,)]
    assert people.rows(f"SELECT count(*) FROM {t}.refs") == [(3,)]
    people.rows(f"ALTER TABLE {t} DROP TAG v1")
    people.rows(f"ALTER TABLE {t} DROP BRANCH b1")
    assert set(people.table().metadata.refs) == {"main"}
    # A branch made on main's head is published by moving main to it (a fast-forward).
    people.rows(f"ALTER TABLE {t} CREATE BRANCH b2")
    people.rows(f"INSERT INTO {t}.branch_b2 VALUES (6, 'fy')")
    people.rows(f"CALL cat.system.fast_forward('{namespace}.people', 'main', 'b2')")
    assert people.rows(f"SELECT id FROM {t} ORDER BY id") == [(1,), (2,), (3,), (6,)]


def test_expire_snapshots_leaves_the_current_and_the_tagged_snapshots(people: People) -> None:
    t, namespace = people.t, people.namespace
    people.rows(f"ALTER TABLE {t} CREATE TAG v1")
    for i in (3, 4):
        people.rows(f"INSERT INTO {t} VALUES ({i}, 'x')")
    before = [s.snapshot_id for s in people.table().snapshots()]
    assert len(before) == 3
    people.rows(
        f"CALL cat.system.expire_snapshots(table => '{namespace}.people', "
        "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
    )
    after = [s.snapshot_id for s in people.table().snapshots()]
    assert after == [before[0], before[2]]  # the tagged one and the current one
    rows = people.rows(f"SELECT id FROM {t} ORDER BY id")
    assert rows == [(1,), (2,), (3,), (4,)]
    tagged = people.rows(f"SELECT id FROM {t} VERSION AS OF 'v1' ORDER BY id")
    assert tagged == [(1,), (2,)]
