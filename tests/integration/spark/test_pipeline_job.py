"""The example job runs end to end under spark-submit against a real catalog server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.api.servers import RunningServer

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_pipeline_job_under_spark_submit(catalog_server: RunningServer, tmp_path: Path) -> None:
    spark_submit = Path(sys.executable).parent / "spark-submit"
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [
            str(spark_submit),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.sql.shuffle.partitions=1",
            str(ROOT / "spark" / "jobs" / "pipeline.py"),
            "--catalog-url",
            catalog_server.url,
            "--warehouse",
            str(tmp_path / "warehouse"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    for n in range(1, 6):
        assert f"[stage {n}]" in out
    lines = out.splitlines()
    summary = [line for line in lines if line.startswith("  as of ")]
    assert len(summary) == 4
    assert "0 rows; columns: ID bigint, QTY int, CUSTOMER string" in summary[0]
    assert "5 rows; columns: ID bigint, QTY int, CUSTOMER string" in summary[1]
    assert "5 rows; columns: ID bigint, QTY bigint, CLIENT string, CHANNEL string" in summary[2]
    assert "8 rows; columns: ID bigint, QTY bigint, CLIENT string, CHANNEL string" in summary[3]
    assert "    (1, 3, 'ada', 'shop')" in lines
    assert "    (6, 4000000000, 'ken', 'web')" in lines
    assert "pipeline finished" in out
