"""A Spark standalone cluster on loopback: one master and one worker, by pyspark's launcher.

Both run ``spark-class`` from the pyspark package (the same launcher a cluster machine runs),
each in its own process, stopped by its own pid.
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

    def __init__(self, log_path: Path, main_class: str, *args: str) -> None:
        super().__init__(log_path, stop_timeout_s=20)
        self._popen([str(SPARK_CLASS), main_class, *args], env=_LOOPBACK)


class StandaloneCluster:
    """A master and one worker of ``cores`` cores, their folders under ``root``."""

    def __init__(self, root: Path, *, cores: int = 1, memory: str = "1g") -> None:
        self.port, self.ui_port = free_port(), free_port()
        self.work_dir = root / "work"
        self.master = SparkDaemon(
            root / "master.log",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *("--webui-port", str(self.ui_port)),
        )
        try:
            self.worker = SparkDaemon(
                root / "worker.log",
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--webui-port", str(free_port())),
                *("--cores", str(cores), "--memory", memory, "--work-dir", str(self.work_dir)),
                self.url,
            )
        except BaseException:
            self.master.stop()
            raise

    @property
    def url(self) -> str:
        """Return the master's URL, as ``spark-submit --master`` takes it."""
        return f"spark://127.0.0.1:{self.port}"

    def wait_for_worker(self, timeout_s: float = 120) -> None:
        """Wait until the worker has registered with the master.

        Raises:
            TimeoutError: it did not, within ``timeout_s`` (with both logs' tails).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status = httpx.get(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2).json()
                if status.get("aliveworkers", 0) >= 1:
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)
        raise TimeoutError(
            f"no worker registered in {timeout_s:g} s\nmaster:\n{self.master.log_tail()}\n"
            f"worker:\n{self.worker.log_tail()}"
        )

    def stop(self) -> None:
        """Stop the worker, then the master."""
        try:
            self.worker.stop()
        finally:
            self.master.stop()
