"""Spark with Iceberg's runtime: tags, branches and expire_snapshots against the catalog."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog

from tests.integration.engines.conftest import EngineError, Recorder, Seed, SparkShell
from tests.integration.engines.engines import SparkEngine
from tests.integration.engines.test_smoke import ROWS
from tests.integration.engines.test_smoke import run as run_on

pytestmark = pytest.mark.timeout(240)


def _rows(spark: SparkShell, statement: str, recorder: Recorder) -> list[tuple[object, ...]]:
    return [tuple(r) for r in run_on(SparkEngine(spark), statement, recorder)]


def test_a_tag_reads_its_snapshot_and_a_branch_takes_no_writes(
    spark_engine: SparkShell,
    seed: Seed,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
) -> None:
    seed(namespace, "people", ROWS)
    t = f"cat.{namespace}.people"
    _rows(spark_engine, f"ALTER TABLE {t} CREATE TAG v1", recorder)
    _rows(spark_engine, f"ALTER TABLE {t} CREATE BRANCH b1", recorder)
    _rows(spark_engine, f"INSERT INTO {t} VALUES (3, 'cy')", recorder)
    tagged = _rows(
        spark_engine, f"SELECT id, name FROM {t} VERSION AS OF 'v1' ORDER BY id", recorder
    )
    assert tagged == ROWS
    refs = pyiceberg.load_table(f"{namespace}.people").metadata.refs
    assert (refs["v1"].snapshot_ref_type, refs["b1"].snapshot_ref_type) == ("tag", "branch")
    assert refs["v1"].snapshot_id == refs["b1"].snapshot_id != refs["main"].snapshot_id
    # A write-audit-publish write to branch b1 (``INSERT INTO t.branch_b1`` is not tried: Spark
    # first loads ns.people as a namespace, which the catalog answers with 404).
    _rows(spark_engine, f"ALTER TABLE {t} SET TBLPROPERTIES ('write.wap.enabled'='true')", recorder)
    _rows(spark_engine, "SET spark.wap.branch = b1", recorder)
    try:
        with pytest.raises(EngineError, match="only go to branch main, not b1"):
            spark_engine.sql(f"INSERT INTO {t} VALUES (4, 'di')")
    finally:
        _rows(spark_engine, "RESET spark.wap.branch", recorder)
    _rows(spark_engine, f"ALTER TABLE {t} DROP TAG v1", recorder)
    _rows(spark_engine, f"ALTER TABLE {t} DROP BRANCH b1", recorder)
    assert set(pyiceberg.load_table(f"{namespace}.people").metadata.refs) == {"main"}


def test_expire_snapshots_leaves_the_current_and_the_tagged_snapshots(
    spark_engine: SparkShell,
    seed: Seed,
    pyiceberg: RestCatalog,
    namespace: str,
    recorder: Recorder,
) -> None:
    seed(namespace, "people", ROWS)
    t = f"cat.{namespace}.people"
    _rows(spark_engine, f"ALTER TABLE {t} CREATE TAG v1", recorder)
    for i in (3, 4):
        _rows(spark_engine, f"INSERT INTO {t} VALUES ({i}, 'x')", recorder)
    before = [s.snapshot_id for s in pyiceberg.load_table(f"{namespace}.people").snapshots()]
    assert len(before) == 3
    _rows(
        spark_engine,
        f"CALL cat.system.expire_snapshots(table => '{namespace}.people', "
        "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
        recorder,
    )
    after = [s.snapshot_id for s in pyiceberg.load_table(f"{namespace}.people").snapshots()]
    assert after == [before[0], before[2]]  # the tagged one and the current one
    rows = _rows(spark_engine, f"SELECT id FROM {t} ORDER BY id", recorder)
    assert rows == [(1,), (2,), (3,), (4,)]
    tagged = _rows(spark_engine, f"SELECT id FROM {t} VERSION AS OF 'v1' ORDER BY id", recorder)
    assert tagged == [(1,), (2,)]
