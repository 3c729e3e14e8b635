"""The Spark driver of ``test_cluster_on_s3``: a process of its own on a standalone cluster.

A process holds one SparkContext, and in a full run the test process already holds the Spark
tests' local one; so the driver of the cluster's application runs here, started by
``SparkDriver``, as ``spark-submit`` would start it on an edge machine. It holds no S3 keys:
the catalog source asks the catalog for short-lived ones and hands them to its tasks.

One JSON request a line in, one JSON answer a line out (``{"error": ...}`` when it failed):

- ``{"op": "write", "urls": U, "first": F, "count": N, "partitions": P, "hold_s": S}``:
  append rows ``ID`` F..F+N-1 (``NAME`` ``e<ID>``) in P tasks to PUBLIC.EVENTS through the
  catalog at U (comma-separated); with S > 0 each task's first attempt waits S seconds
  before it writes, and ``{"running": true}`` comes first, once the tasks run. Answers
  ``{"ok": seconds}``.
- ``{"op": "read", "urls": U, "as_of": A}``: the table's IDs as of A (None: now).
- ``{"op": "probe", "tasks": T}``: per task, the AWS variables it sees and its folder.
- ``{"op": "executors"}``: per executor id, the tasks it ran.

Configuration is ``key=value`` arguments (Spark settings, ``spark.master`` among them).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

TABLE = "PUBLIC.EVENTS"
SCHEMA = "ID bigint, NAME string"
EXECUTORS_TIMEOUT_S = 90.0


def _error_text(e: BaseException) -> str:
    text = str(e)
    java = getattr(e, "java_exception", None)
    if java is not None:
        text = f"{java.getClass().getName()}: {java.getMessage()}"
        cause = java.getCause()
        while cause is not None:
            text += f" (caused by {cause.getClass().getName()}: {cause.getMessage()})"
            cause = cause.getCause()
    return f"{type(e).__name__}: {text}"


def _rows(hold_s: float) -> Callable[[Iterator[int]], Iterator[tuple[int, str]]]:
    def rows(ids: Iterator[int]) -> Iterator[tuple[int, str]]:
        from pyspark import TaskContext

        context = TaskContext.get()  # runs in the executor: this goes there by value
        if context is not None and context.attemptNumber() == 0:
            time.sleep(hold_s)  # a task's first attempt only
        for i in ids:
            yield i, f"e{i}"

    return rows


def _probe(_: int) -> tuple[list[str], str]:
    return sorted(k for k in os.environ if k.startswith("AWS_")), os.getcwd()


class Driver:
    """The session and the requests it serves."""

    def __init__(self, session: Any) -> None:
        self.spark = session
        self.out = sys.stdout

    def send(self, answer: dict[str, Any]) -> None:
        self.out.write(json.dumps(answer) + "\n")
        self.out.flush()

    def executors(self) -> dict[str, int]:
        listed = self.spark.sparkContext._jsc.sc().statusStore().executorList(True)
        found = (listed.apply(i) for i in range(listed.size()))
        return {e.id(): int(e.totalTasks()) for e in found if e.id() != "driver"}

    def wait_for_executors(self, count: int) -> None:
        deadline = time.monotonic() + EXECUTORS_TIMEOUT_S
        while len(self.executors()) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{count} executors did not register: {self.executors()}")
            time.sleep(0.2)

    def write(self, request: dict[str, Any]) -> dict[str, Any]:
        first, count, hold = request["first"], request["count"], request.get("hold_s", 0)
        tasks = request["partitions"]
        if hold:  # rows made in Python, so a task can wait
            ids = self.spark.sparkContext.parallelize(range(first, first + count), tasks)
            frame = self.spark.createDataFrame(ids.mapPartitions(_rows(hold)), SCHEMA)
        else:
            frame = self.spark.range(first, first + count, numPartitions=tasks)
            frame = frame.selectExpr("ID", "concat('e', CAST(ID AS STRING)) AS NAME")
        writer = frame.write.format("catalog").option("catalog_url", request["urls"])
        # The write runs on this thread (the session's); another one tells when tasks run.
        finished = threading.Event()
        watching = threading.Thread(target=self._announce_running, args=(finished,))
        if hold:
            watching.start()
        began = time.monotonic()
        try:
            writer.mode("append").save(TABLE)
        finally:
            finished.set()
            if hold:
                watching.join()
        return {"ok": time.monotonic() - began}

    def _announce_running(self, finished: threading.Event) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        while not finished.wait(0.05):
            if tracker.getActiveStageIds():
                self.send({"running": True})
                return

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "write":
            return self.write(request)
        if op == "read":
            reader = self.spark.read.format("catalog").option("catalog_url", request["urls"])
            if request.get("as_of") is not None:
                reader = reader.option("as_of", str(request["as_of"]))
            return {"ids": sorted(row.ID for row in reader.load(TABLE).select("ID").collect())}
        if op == "probe":
            tasks = request["tasks"]
            rdd = self.spark.sparkContext.parallelize(range(tasks), tasks)
            return {"tasks": rdd.map(_probe).collect()}
        if op == "executors":
            return {"executors": self.executors()}
        raise ValueError(f"no such op: {op}")


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession

    from spark.source import register

    builder = SparkSession.builder.appName("cluster-on-s3")
    for arg in argv:
        key, _, value = arg.partition("=")
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    driver = Driver(session)
    try:
        driver.wait_for_executors(int(session.conf.get("spark.cores.max") or "1"))
    except TimeoutError as e:
        driver.send({"error": str(e)})
        session.stop()
        return 1
    driver.send({"ready": session.version, "app": session.sparkContext.applicationId})
    for line in sys.stdin:
        try:
            answer = driver.handle(json.loads(line))
        except Exception as e:  # every failure goes back to the test
            answer = {"error": _error_text(e)}
        driver.send(answer)
    session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
