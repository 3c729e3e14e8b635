"""One local Spark session for the whole run, and a catalog server for each test.

The session: ``local[1]``, UI off, one shuffle partition, the test interpreter for Python
workers, UTC session time zone, bound to loopback. Starting it takes seconds; reuse is the
only way Spark tests stay fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark.source import register
from tests.integration.api.servers import RunningServer, ServerFactory


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[1]")
        .appName("catalog-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A fresh warehouse folder: the catalog server's."""
    return tmp_path / "warehouse"


@pytest.fixture
def catalog_server(store_url: str, warehouse: Path) -> Iterator[RunningServer]:
    """A catalog server (delay 20 ms, skew 10 ms) on a fresh store of each backend."""
    factory = ServerFactory()
    try:
        yield factory.start(store_url, warehouse=str(warehouse))
    finally:
        factory.stop_all()
