"""The README's Spark examples run as written, twice, each in a fresh shell.

Only the catalog URL is swapped (each table's data goes to the folder it records in the
server's warehouse, the test's own), and Spark is bound to loopback
(``SPARK_LOCAL_IP``, as a machine with several addresses would need). The shell has the
system's PATH and activates the venv as the README says, so Spark's Python workers run the
venv's Python without ``PYSPARK_PYTHON``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.api.servers import RunningServer
from tests.integration.api.test_readme import (
    ROOT,
    VENV_ACTIVATE,
    as_written,
    fresh_shell_env,
    python_example,
    run_in_fresh_shell,
)
from tests.integration.spark.standalone import StandaloneCluster

README = (ROOT / "README.md").read_text()
SECTION = README.split("## Spark\n", 1)[1].split("\n## ", 1)[0]


def _blocks(language: str) -> list[str]:
    return [b.split("```", 1)[0] for b in SECTION.split(f"```{language}\n")[1:]]


LOOPBACK = (
    "--conf spark.driver.bindAddress=127.0.0.1 --conf spark.driver.host=127.0.0.1 "
    "--conf spark.ui.enabled=false"
)
_NOT_SHIPPED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__")


def _env() -> dict[str, str]:
    return fresh_shell_env(SPARK_LOCAL_IP="127.0.0.1")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_python_example(
    catalog_server: RunningServer, tmp_path: Path, warehouse: Path
) -> None:
    (code,) = _blocks("python")
    code = as_written(code, catalog_server.url)
    for attempt in (1, 2):  # the example starts over on every run
        script = python_example(code, tmp_path, "example.py")
        done = run_in_fresh_shell(as_written(script, catalog_server.url), _env(), ROOT, 300)
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        lines = done.stdout.splitlines()
        assert "struct<ID:bigint,KIND:string>" in lines
        assert "|  1|click|   web|" in lines
        assert "|  2| view|" in lines
        assert any(line.startswith(f"{warehouse}/table_") for line in lines)  # its location
        assert {"|click|  1|", "| view|  1|"} <= set(lines)  # the view, in Spark SQL


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_pipeline_job_under_spark_submit(
    catalog_server: RunningServer, tmp_path: Path
) -> None:
    local, _ = _blocks("sh")
    (line,) = local.strip().splitlines()
    assert line.startswith("spark-submit ")
    command = as_written(line, catalog_server.url)
    command = command.replace("spark-submit ", f"spark-submit {LOOPBACK} ", 1)
    for attempt in (1, 2):  # a second run drops the first run's table and starts over
        done = run_in_fresh_shell(f". {VENV_ACTIVATE}\n{command}\n", _env(), ROOT, 300)
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        assert ("dropped the PUBLIC.PIPELINE_ORDERS of an earlier run" in done.stdout) == (
            attempt == 2
        )
        _assert_pipeline_ran(done.stdout)


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_pipeline_job_on_a_standalone_cluster(
    catalog_server: RunningServer, tmp_path: Path
) -> None:
    """The cluster block as written: the wheel built here, the job on a master and a worker."""
    _, block = _blocks("sh")
    script = as_written(block, catalog_server.url)
    cluster = StandaloneCluster(tmp_path / "cluster")
    try:
        cluster.wait_for_worker()
        script = script.replace("spark://HOST:7077", cluster.url)
        script = script.replace("spark-submit ", f"spark-submit {LOOPBACK} ", 1)
        # The checkout stays clean: the shell works in a copy of what the block needs.
        work = tmp_path / "checkout"
        shutil.copytree(ROOT, work, ignore=_NOT_SHIPPED)
        (work / ".venv").symlink_to(ROOT / ".venv")
        done = run_in_fresh_shell(f". {VENV_ACTIVATE}\n{script}\n", _env(), work, 600)
        assert done.returncode == 0, (done.stderr[-3000:], cluster.worker.log_tail())
        _assert_pipeline_ran(done.stdout)
        # The executors ran the shipped wheel: the worker fetched it into the app's folder.
        shipped = list(cluster.work_dir.glob("app-*/*/event_catalog-0.1.0-py3-none-any.whl"))
        assert shipped, sorted(p.name for p in cluster.work_dir.rglob("*"))
    finally:
        cluster.stop()


def _assert_pipeline_ran(out: str) -> None:
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
