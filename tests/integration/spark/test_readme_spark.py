"""The README's Spark examples run as written, twice, each in a fresh shell.

Only the catalog URL and the warehouse path are swapped, and Spark is bound to loopback
(``SPARK_LOCAL_IP``, as a machine with several addresses would need). The shell has the
system's PATH and activates the venv as the README says, so Spark's Python workers run the
venv's Python without ``PYSPARK_PYTHON``.
"""

from __future__ import annotations

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

README = (ROOT / "README.md").read_text()
SECTION = README.split("## Spark\n", 1)[1].split("\n## ", 1)[0]


def _block(language: str) -> str:
    (block,) = [b.split("```", 1)[0] for b in SECTION.split(f"```{language}\n")[1:]]
    return block


def _env() -> dict[str, str]:
    return fresh_shell_env(SPARK_LOCAL_IP="127.0.0.1")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_python_example(catalog_server: RunningServer, tmp_path: Path) -> None:
    code = as_written(_block("python"), catalog_server.url)
    for attempt in (1, 2):  # the example starts over on every run
        script = python_example(code, tmp_path, "example.py")
        done = run_in_fresh_shell(as_written(script, catalog_server.url), _env(), ROOT, 300)
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        lines = done.stdout.splitlines()
        assert "struct<ID:bigint,KIND:string>" in lines
        assert "|  1|click|   web|" in lines
        assert "|  2| view|" in lines


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_readme_pipeline_job_under_spark_submit(
    catalog_server: RunningServer, tmp_path: Path
) -> None:
    (line,) = _block("sh").strip().splitlines()
    assert line.startswith("spark-submit ")
    warehouse = str(tmp_path / "warehouse")
    loopback = "--conf spark.driver.bindAddress=127.0.0.1 --conf spark.driver.host=127.0.0.1"
    command = as_written(line, catalog_server.url).replace("./warehouse", warehouse)
    command = command.replace(
        "spark-submit ", f"spark-submit {loopback} --conf spark.ui.enabled=false ", 1
    )
    for attempt in (1, 2):  # a second run drops the first run's table and starts over
        done = run_in_fresh_shell(f". {VENV_ACTIVATE}\n{command}\n", _env(), ROOT, 300)
        out = done.stdout
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        assert ("dropped the PUBLIC.PIPELINE_ORDERS of an earlier run" in out) == (attempt == 2)
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
