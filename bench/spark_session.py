"""The local Spark session every Spark benchmark runs in: ``local[2]``, quiet, on loopback."""

from __future__ import annotations

import os
import sys
from typing import Any


def local_session(app_name: str) -> Any:
    """Return a new local Spark session (two cores, 3 GiB driver) with format ``catalog``.

    Python workers run this interpreter; the UI and progress bars are off.
    """
    from pyspark.sql import SparkSession

    from spark.source import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
