"""A Spark SQL shell in its own process: one JSON request a line in, one JSON answer out.

The engines' Spark runs in a process of its own so that its JVM (with Iceberg's runtime on
its class path and Iceberg's session extensions) never meets the catalog's own Spark tests,
which share one JVM per test process. Started by ``SparkShell`` (conftest), stopped by it.

Request: ``{"sql": "..."}``. Answer: ``{"rows": [[...], ...]}`` or ``{"error": "Class: text"}``.
In a row, a struct is the list of its fields' values, an array a list, a map the list of its
``[key, value]`` pairs, and a value JSON has no type for (a decimal, a date) its text.
Configuration comes as ``--conf key=value`` arguments.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):  # a struct comes as a Row, which is a tuple
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return [[_plain(k), _plain(v)] for k, v in value.items()]
    return str(value)


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName("engine-tests")
    for arg in argv:
        key, _, value = arg.partition("=")
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    out = sys.stdout
    out.write(json.dumps({"ready": session.version}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            rows = session.sql(request["sql"]).collect()
            answer: dict[str, Any] = {"rows": [[_plain(v) for v in row] for row in rows]}
        except Exception as e:  # every failure goes back to the test
            text = str(e)
            java = getattr(e, "java_exception", None)
            if java is not None:
                text = f"{java.getClass().getName()}: {java.getMessage()}"
                cause = java.getCause()
                while cause is not None:  # an internal error says what it is only in its cause
                    text += f" (caused by {cause.getClass().getName()}: {cause.getMessage()})"
                    cause = cause.getCause()
            answer = {"error": f"{type(e).__name__}: {text}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
