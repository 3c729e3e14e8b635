"""A Spark standalone cluster on loopback: one master and its workers, by pyspark's launcher.

Each runs ``spark-class`` from the pyspark package (the same launcher a cluster machine runs)
in its own process, stopped by its own pid. Every worker has a working folder of its own (its
executors' folders), as machines that share no disk would.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pyspark

from deploy.managed_process import ManagedProcess
from tests.integration.api.servers import free_port

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
_LOOPBACK = {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}


class SparkDaemon(ManagedProcess):
    """A master or a worker of the standalone cluster, its output in ``log_path``."""

    def __init__(self, log_path: Path, main_class: str, *args: str, java_options: str = "") -> None:
        super().__init__(log_path, stop_timeout_s=20)
        env = {**_LOOPBACK, "SPARK_DAEMON_JAVA_OPTS": java_options.strip()}
        self._popen([str(SPARK_CLASS), main_class, *args], env=env)


class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores each, their folders under ``root``.

    Worker ``i`` works in ``work_dirs[i]`` (``root/work``, then ``root/work1``, ...) and logs
    to ``root/worker.log`` (``worker1.log``, ...); ``worker`` and ``work_dir`` are the first's.
    ``java_options`` go to the master's and the workers' JVMs (``SPARK_DAEMON_JAVA_OPTS``).
    """

    def __init__(
        self,
        root: Path,
        *,
        workers: int = 1,
        cores: int = 1,
        memory: str = "1g",
        java_options: str = "",
    ) -> None:
        self.port, self.ui_port = free_port(), free_port()
        suffixes = ["", *(str(i) for i in range(1, workers))]
        self.work_dirs = [root / f"work{s}" for s in suffixes]
        self.master = SparkDaemon(
            root / "master.log",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *("--webui-port", str(self.ui_port)),
            # Its REST submission server would listen on the fixed port 6066.
            java_options=f"-Dspark.master.rest.enabled=false {java_options}",
        )
        self.workers: list[SparkDaemon] = []
        try:
            for suffix, work_dir in zip(suffixes, self.work_dirs, strict=True):
                self.workers.append(
                    SparkDaemon(
                        root / f"worker{suffix}.log",
                        "org.apache.spark.deploy.worker.Worker",
                        *("--host", "127.0.0.1", "--webui-port", str(free_port())),
                        *("--cores", str(cores), "--memory", memory, "--work-dir", str(work_dir)),
                        self.url,
                        java_options=java_options,
                    )
                )
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """Return the master's URL, as ``spark-submit --master`` takes it."""
        return f"spark://127.0.0.1:{self.port}"

    @property
    def worker(self) -> SparkDaemon:
        """The first worker."""
        return self.workers[0]

    @property
    def work_dir(self) -> Path:
        """The first worker's working folder."""
        return self.work_dirs[0]

    def wait_for_worker(self, timeout_s: float = 120) -> None:
        """Wait until every worker has registered with the master.

        Raises:
            TimeoutError: they did not, within ``timeout_s`` (with every log's tail).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status = httpx.get(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2).json()
                if status.get("aliveworkers", 0) >= len(self.workers):
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)
        logs = "".join(
            f"\n{daemon.log_path.name}:\n{daemon.log_tail()}"
            for daemon in (self.master, *self.workers)
        )
        raise TimeoutError(f"{len(self.workers)} worker(s) not registered in {timeout_s:g} s{logs}")

    def stop(self) -> None:
        """Stop the workers (each by its pid), then the master."""
        try:
            for worker in self.workers:
                worker.terminate()  # SIGTERM all first: they stop side by side
            for worker in self.workers:
                worker.stop()
        finally:
            self.master.stop()
