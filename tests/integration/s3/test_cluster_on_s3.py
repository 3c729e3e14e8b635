"""A cluster that shares no disk: catalog nodes on etcd, tables on S3, Spark on two workers.

Three ``catalog serve`` processes on a 3-member etcd cluster keep their warehouse on SeaweedFS
(``s3://lake/wh``); only they hold S3 keys (in their own environment). A Spark standalone
cluster of a master and two workers, each in a working folder of its own, runs one
application whose driver is a process of its own (``spark_driver.py``); neither it nor any
executor holds keys: the catalog source asks the catalog for short-lived ones per job.

1. Job 1 appends rows in several tasks; the timestamp of its data commit is the pinned point.
2. While job 2's tasks run, the first catalog node (first in every client's URL list) is
   killed (SIGKILL): job 2's commit goes to another node; the node is started again.
3. The S3 server is killed while job 3's tasks run: the job fails with a definite error and
   commits nothing, and no key is handed out meanwhile; the server is started again on its
   ports and data, and the same write goes through.
4. A read pinned at job 1's commit sees exactly job 1's rows on the other nodes and on the
   restarted node alone, and a read now sees every row; both workers ran tasks.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pyarrow.fs as pafs
import pytest

from api.client import CatalogClient
from deploy.etcd_server import EtcdCluster
from deploy.local_cluster import CatalogProcess
from tests.integration.api.servers import free_port
from tests.integration.engines.conftest import stop_group
from tests.integration.s3.conftest import BUCKET, WAREHOUSE
from tests.integration.spark.standalone import StandaloneCluster
from tests.seaweedfs import SeaweedFS

pytestmark = pytest.mark.slow

TABLE = "PUBLIC.EVENTS"
WORKERS = 2
JOB1 = (1, 40, 4)
"""First ID, rows and tasks of job 1 (its commit is the pinned point)."""
JOB2 = (41, 30, 2)
"""Job 2: written while a catalog node is killed."""
JOB3 = (71, 20, 2)
"""Job 3: fails as S3 is killed under it, then is written again."""
HOLD_S = 3.0
"""How long the first attempt of a task of jobs 2 and 3 waits before it writes: the catalog
node, or S3, is killed meanwhile."""
DRIVER_READY_S = 120.0
JOB_S = 120.0
STOP_S = 20.0
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""Short-lived JVMs on a small machine: the quick compiler only, one GC thread."""
DRIVER = Path(__file__).with_name("spark_driver.py")


def _catalog_nodes(etcd: EtcdCluster, s3: SeaweedFS, folder: Path) -> list[CatalogProcess]:
    """Return three catalog nodes (not started) on ``etcd``, their warehouse on ``s3``.

    Node ``i`` lists the etcd members from member ``i`` on; the S3 keys are in its own
    environment only.
    """
    env = {
        "AWS_ACCESS_KEY_ID": s3.admin.access_key,
        "AWS_SECRET_ACCESS_KEY": s3.admin.secret_key,
        "AWS_REGION": s3.region,
        "CATALOG_S3_ENDPOINT": s3.endpoint_url,
        "CATALOG_WAREHOUSE": WAREHOUSE,
    }
    endpoints = etcd.endpoints
    nodes = []
    for i in range(3):
        members = endpoints[i:] + endpoints[:i]
        store = f"etcd://{','.join(members)}/catalog"
        nodes.append(
            CatalogProcess(
                f"n{i}",
                free_port(),
                store,
                folder / f"n{i}.log",
                delay_ms=100,
                max_clock_skew_ms=100,
                env=env,
            )
        )
    return nodes


def _stop_nodes(nodes: list[CatalogProcess]) -> None:
    """Stop every node by its pid: SIGTERM to all first, so they shut down side by side."""
    for node in nodes:
        node.terminate()
    for node in nodes:
        node.stop()


class SparkDriver:
    """The application's driver (``spark_driver.py``) in a process group of its own."""

    def __init__(self, master: str, folder: Path, cores: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        confs = {
            "spark.master": master,
            "spark.cores.max": str(cores),
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            # A task that cannot reach S3 fails its job at once: a retry fails the same way.
            "spark.task.maxFailures": "1",
            "spark.driver.memory": "512m",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": str(cores),
            "spark.sql.warehouse.dir": str(folder / "spark-warehouse"),
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.driver.extraJavaOptions": QUICK_JVM,
            "spark.executor.extraJavaOptions": QUICK_JVM,
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.pop("SPARK_HOME", None)  # the driver runs the venv's pyspark
        env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
        self.log_path = folder / "driver.log"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(DRIVER), *(f"{k}={v}" for k, v in confs.items())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=folder,
                start_new_session=True,
            )
        self._lines: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdout is not None
        self._pump_thread = threading.Thread(
            target=self._pump, args=(self.process.stdout,), daemon=True
        )
        self._pump_thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(b"")

    def answer(self, timeout_s: float = JOB_S) -> dict[str, Any]:
        """Return the driver's next answer.

        Raises:
            AssertionError: none within ``timeout_s``, or the driver ended (with its log).
        """
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no answer in {timeout_s:g} s: {self.log_tail()}") from None
        assert line, f"the driver ended: {self.log_tail()}"
        found: dict[str, Any] = json.loads(line)
        return found

    def send(self, **request: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def ask(self, **request: Any) -> dict[str, Any]:
        """Send a request; return its answer, failing the test on an error."""
        self.send(**request)
        answer = self.answer()
        assert "error" not in answer, answer["error"]
        return answer

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Close its input (it stops its session), then stop its group by its pid."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_S)
        stop_group(self.process)
        self._pump_thread.join(5)
        if self.process.stdout is not None:
            self.process.stdout.close()


def _job(first: int, count: int, tasks: int) -> dict[str, int]:
    return {"first": first, "count": count, "partitions": tasks}


def _ids(*jobs: tuple[int, int, int]) -> list[int]:
    return sorted(i for first, count, _ in jobs for i in range(first, first + count))


def _parquet_files(s3: SeaweedFS, location: str) -> set[str]:
    found = s3.filesystem().get_file_info(
        pafs.FileSelector(location.removeprefix("s3://"), recursive=True, allow_not_found=True)
    )
    return {f.path for f in found if f.path.endswith(".parquet")}


def _executor_workers(spark: StandaloneCluster, app: str) -> dict[str, int]:
    """Return, per executor id of ``app``, the worker whose working folder holds it."""
    where: dict[str, int] = {}
    for worker, folder in enumerate(spark.work_dirs):
        if (folder / app).is_dir():
            for executor in (folder / app).iterdir():
                where[executor.name] = worker
    return where


def test_catalog_nodes_spark_and_s3_share_no_disk_and_survive_kills(
    etcd_cluster: EtcdCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    began = time.monotonic()
    phases: dict[str, float] = {}

    def phase(name: str) -> None:
        phases[name] = time.monotonic() - began - sum(phases.values())

    for name in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)  # neither Spark's processes nor this one hold keys
    with contextlib.ExitStack() as stack:
        spark = StandaloneCluster(tmp_path / "spark", workers=WORKERS, java_options=QUICK_JVM)
        stack.callback(spark.stop)
        s3 = SeaweedFS(tmp_path / "s3")
        stack.callback(s3.stop)
        s3.start()
        s3.create_bucket(BUCKET)
        spark.wait_for_worker()
        driver = SparkDriver(spark.url, tmp_path / "driver", WORKERS)  # starts meanwhile
        stack.callback(driver.stop)
        nodes = _catalog_nodes(etcd_cluster, s3, tmp_path / "nodes")
        stack.callback(_stop_nodes, nodes)
        nodes[0].spawn()  # it creates the cluster; the others join it
        nodes[0].wait_ready()
        for node in nodes[1:]:
            node.spawn()
        for node in nodes[1:]:
            node.wait_ready()
        urls = ",".join(node.url for node in nodes)
        client = stack.enter_context(CatalogClient(urls))
        client.sql(f"CREATE TABLE {TABLE} (ID BIGINT PRIMARY KEY, NAME VARCHAR(20))")
        table = client.table("PUBLIC", "EVENTS")
        assert table.location is not None and table.location.startswith(f"{WAREHOUSE}/table_")
        ready = driver.answer(DRIVER_READY_S)
        assert "ready" in ready, ready
        phase("start")

        # 1. Job 1 writes in several tasks; its commit's timestamp is the pinned point.
        driver.ask(op="write", urls=urls, **_job(*JOB1))
        (commit1,) = client.data_commits(table.id).commits
        pinned = commit1.commit_ts
        assert len(_parquet_files(s3, table.location)) >= JOB1[2], "each task wrote to S3"
        phase("job 1")

        # 2. The first node of every URL list is killed while job 2's tasks run.
        driver.send(op="write", urls=urls, hold_s=HOLD_S, **_job(*JOB2))
        assert driver.answer() == {"running": True}
        nodes[0].kill()
        killed_at = client.now()  # from a surviving node
        done = driver.answer()
        assert "ok" in done, done
        commit2 = client.data_commits(table.id).commits[-1]
        assert commit2.seq == 2 and commit2.commit_ts > killed_at, "committed after the kill"
        nodes[0].spawn()  # on its port again
        phase("job 2, node killed")

        # 3. S3 is killed while job 3's tasks run: they cannot write, the job fails and
        # commits nothing; a node that holds no keys yet hands out none meanwhile (n2 never
        # did: n0 came first in every list). S3 comes back on its data, job 3 goes through.
        nodes[0].wait_ready()
        files = _parquet_files(s3, table.location)
        driver.send(op="write", urls=urls, hold_s=HOLD_S, **_job(*JOB3))
        assert driver.answer() == {"running": True}
        s3.kill()
        failed = driver.answer().get("error", "")
        assert "NETWORK_CONNECTION" in failed, failed  # the tasks could not reach S3
        driver.send(op="write", urls=nodes[2].url, **_job(*JOB3))
        refused = driver.answer().get("error", "")
        assert "OBJECT_STORE_UNAVAILABLE" in refused and "no keys were handed out" in refused
        for key in (s3.admin.access_key, s3.admin.secret_key):
            assert key not in failed and key not in refused
        assert len(client.data_commits(table.id).commits) == 2, "a failed write committed"
        s3.start()
        assert _parquet_files(s3, table.location) == files, "a failed write left files"
        driver.ask(op="write", urls=urls, **_job(*JOB3))
        assert len(client.data_commits(table.id).commits) == 3
        phase("job 3, S3 killed")

        # 4. Reads at the pinned point and now: the restarted node answers as the others do.
        alone, others = nodes[0].url, f"{nodes[1].url},{nodes[2].url}"
        assert driver.ask(op="read", urls=others, as_of=pinned)["ids"] == _ids(JOB1)
        assert driver.ask(op="read", urls=alone, as_of=pinned)["ids"] == _ids(JOB1)
        assert driver.ask(op="read", urls=alone, as_of=None)["ids"] == _ids(JOB1, JOB2, JOB3)
        with CatalogClient(alone) as restarted, CatalogClient(others) as rest:
            now = restarted.now()
            assert restarted.data_commits(table.id, at=now) == rest.data_commits(table.id, at=now)
            assert restarted.data_commits(table.id, at=pinned).commits == [commit1]
        phase("reads")

        # Both workers ran tasks, each in its own folder; no task saw a key.
        tasks = driver.ask(op="executors")["executors"]
        on_worker = _executor_workers(spark, ready["app"])
        assert sorted(on_worker.values()) == list(range(WORKERS)), on_worker
        assert set(tasks) == set(on_worker), (tasks, on_worker)
        assert all(count > 0 for count in tasks.values()), tasks
        for aws, folder in driver.ask(op="probe", tasks=2 * WORKERS)["tasks"]:
            assert aws == [], "an executor holds S3 keys"
            assert any(Path(folder).is_relative_to(d) for d in spark.work_dirs), folder
        assert not list((tmp_path / "spark").rglob("*.parquet")), "data went to a worker's disk"
        print(
            f"\ncluster on S3: {time.monotonic() - began:.1f} s ("
            + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())
            + f"); tasks per executor {tasks}"
        )
