"""The README's Spark examples run as written: the Python snippet and the example job.

Only the catalog URL and the warehouse path are swapped (and Spark is bound to loopback).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.api.servers import RunningServer

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
SECTION = README.split("## Spark\n", 1)[1].split("\n## ", 1)[0]
DEFAULT_URL = "http://127.0.0.1:8000"
LOOPBACK = ["--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1"]


def _block(language: str) -> str:
    (block,) = [b.split("```", 1)[0] for b in SECTION.split(f"```{language}\n")[1:]]
    return block


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_python_example(catalog_server: RunningServer, tmp_path: Path) -> None:
    code = _block("python").replace(DEFAULT_URL, catalog_server.url)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "struct<ID:bigint,KIND:string>" in lines
    assert "|  1|click|   web|" in lines
    assert "|  2| view|" in lines


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_pipeline_job_under_spark_submit(
    catalog_server: RunningServer, tmp_path: Path
) -> None:
    (line,) = _block("sh").strip().splitlines()
    argv = shlex.split(line.replace(DEFAULT_URL, catalog_server.url))
    assert argv[0] == "spark-submit"
    argv[0] = str(Path(sys.executable).parent / "spark-submit")
    argv[argv.index("--warehouse") + 1] = str(tmp_path / "warehouse")
    done = subprocess.run(
        [argv[0], *LOOPBACK, "--conf", "spark.ui.enabled=false", *argv[1:]],
        env=_env(),
        cwd=ROOT,
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
