"""Real query engines on the catalog's Iceberg REST endpoint: DuckDB, Spark with Iceberg's own
runtime, and Trino.

One catalog server serves every engine test of the run (SQLite store, auth off on loopback,
its warehouse in a temporary folder); it records each ``/iceberg`` request it answers, so a
test that fails names the requests the server refused (``recorder.report()``). Each test works
in a namespace of its own. PyIceberg seeds tables and rows (``seed``): its data files land
in the server's warehouse, where the engines read them.

The engines and what they need come from ``make engines`` (Maven Central and PyPI, cached in
``.cache/``): Iceberg's Spark runtime jar (with Iceberg's AWS bundle, for S3) and the PySpark
it is built for, and a Trino server. DuckDB and its extensions come with the ``test`` extra.
No engine process gets the test process's ``AWS_`` settings (``engine_env``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from api.server.config import ServerSettings
from tests.integration.api.servers import TOKEN_SECRET_FILE, RunningServer, free_port
from tests.integration.engines.recording import RecordingMiddleware, RequestLog

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache"
# Iceberg 1.12.0 ships Spark runtimes up to Spark 4.1 (none for 4.2 or 4.3): the runtime for
# 4.1 fails on Spark 4.3 (IncompatibleClassChangeError: SparkView implements Spark's View,
# which became a class), so its Spark runs on PySpark 4.1.4, installed beside the project's.
ICEBERG_SPARK_JAR = CACHE / "jars" / "iceberg-spark-runtime-4.1_2.13-1.12.0.jar"
ICEBERG_PYSPARK = CACHE / "pyspark-4.1"
ICEBERG_AWS_JAR = CACHE / "jars" / "iceberg-aws-bundle-1.12.0.jar"
"""The AWS SDK that Iceberg's S3FileIO needs, for tables on S3 (test_s3_engines)."""
TRINO_HOME = CACHE / "trino" / "trino-server-core-476"
SETUP_HINT = "run `make engines` (it fetches the engines into .cache/)"

ENGINE_START_TIMEOUT_S = 180.0
NODE_ANNOUNCE_TIMEOUT_S = 60.0
"""How long a Trino statement refused for want of a node is sent again."""
STOP_TIMEOUT_S = 30.0

PEOPLE = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
    identifier_field_ids=[1],
)
"""The table the tests seed: the catalog needs identifier fields (its primary key)."""


class EngineError(Exception):
    """A statement an engine refused; the text is the engine's."""


# --- the catalog server ---------------------------------------------------------------------


def catalog_settings(folder: Path, **more: Any) -> ServerSettings:
    """Return the settings of an engine tests' catalog server keeping its store in ``folder``."""
    return ServerSettings(
        store=f"sqlite:///{folder}/catalog.db",
        node_name="n1",
        host="127.0.0.1",
        port=free_port(),
        delay_ms=20,
        max_clock_skew_ms=10,
        token_secret_file=TOKEN_SECRET_FILE,
        warehouse=str(folder / "warehouse"),
        **more,
    )


def engine_env(**more: str) -> dict[str, str]:
    """Return the environment of an engine's process: the test process's without any ``AWS_``
    setting (an engine on S3 holds only what the catalog hands it), and ``more``."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**kept, **more}


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop a process started in a session of its own, with everything it started."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(STOP_TIMEOUT_S)


@pytest.fixture(scope="session")
def request_log() -> RequestLog:
    return RequestLog()


@pytest.fixture(scope="session")
def engine_server(
    tmp_path_factory: pytest.TempPathFactory, request_log: RequestLog
) -> Iterator[RunningServer]:
    """One catalog server for every engine test, recording the requests it answers."""
    server = RunningServer(catalog_settings(tmp_path_factory.mktemp("engine-catalog")))
    server.app.add_middleware(RecordingMiddleware, log=request_log)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Recorder:
    """The requests the catalog server answered since the test began."""

    def __init__(self, log: RequestLog) -> None:
        self.log = log
        self.start = log.mark()

    def report(self) -> str:
        return self.log.report(self.start)

    def failures(self) -> list[str]:
        return [str(e) for e in self.log.failures(self.start)]


@pytest.fixture
def recorder(request_log: RequestLog) -> Recorder:
    return Recorder(request_log)


@pytest.fixture
def pyiceberg(engine_server: RunningServer) -> RestCatalog:
    loaded = load_catalog("seed", type="rest", uri=f"{engine_server.url}/iceberg")
    assert isinstance(loaded, RestCatalog)
    return loaded


@pytest.fixture
def namespace() -> str:
    """A namespace name of this test's own (lower case: Spark and Trino fold names)."""
    return f"ns_{uuid.uuid4().hex[:10]}"


Seed = Callable[[str, str, list[tuple[int, str | None]]], Table]


@pytest.fixture
def seed(pyiceberg: RestCatalog) -> Seed:
    """Create ``namespace.table`` (PEOPLE) with PyIceberg and append ``rows`` (id, name)."""

    def make(namespace: str, table: str, rows: list[tuple[int, str | None]]) -> Table:
        if (namespace,) not in pyiceberg.list_namespaces():
            pyiceberg.create_namespace(namespace)
        created = pyiceberg.create_table(f"{namespace}.{table}", PEOPLE)
        if rows:
            created.append(
                pa.Table.from_pylist(
                    [{"id": i, "name": n} for i, n in rows], schema=created.schema().as_arrow()
                )
            )
        loaded = pyiceberg.load_table(f"{namespace}.{table}")
        assert isinstance(loaded, Table)
        return loaded

    return make


def engine_failure(statement: str, error: BaseException, recorder: Recorder) -> str:
    """Return a failure message naming the statement, the engine's error and the server's."""
    return (
        f"{statement}\n  engine: {str(error)[:2000]}\n  catalog server refused:\n    "
        + recorder.report().replace("\n", "\n    ")
        + "\n  last requests:\n    "
        + "\n    ".join(str(e)[:1500] for e in recorder.log.since(recorder.start)[-3:])
    )


# --- DuckDB ---------------------------------------------------------------------------------


def duckdb_extension_directory() -> str:
    """Return the folder the duckdb-ext-* wheels put their extensions in (v<X>/<platform>)."""
    import duckdb_ext

    return str(Path(next(iter(duckdb_ext.__path__))) / "extensions")


@pytest.fixture
def duckdb(engine_server: RunningServer) -> Iterator[Any]:
    """A DuckDB connection with the catalog attached as ``cat`` (extensions from the wheels)."""
    import duckdb as duck

    con = duck.connect(
        config={
            "extension_directory": duckdb_extension_directory(),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    try:
        for extension in ("httpfs", "avro", "iceberg"):
            con.execute(f"LOAD {extension}")
        con.execute(
            f"ATTACH 'warehouse' AS cat (TYPE iceberg, ENDPOINT '{engine_server.url}/iceberg', "
            "AUTHORIZATION_TYPE 'none')"
        )
        yield con
    finally:
        con.close()


# --- Spark with Iceberg's runtime -----------------------------------------------------------


class SparkShell:
    """A Spark SQL process (``spark_worker.py``) with the catalog as Spark catalog ``cat``."""

    def __init__(
        self, catalog_uri: str, folder: Path, extra: Mapping[str, str] | None = None
    ) -> None:
        """Start Spark; ``extra`` settings (other catalogs, more cores) override the defaults."""
        for needed in (ICEBERG_SPARK_JAR, ICEBERG_AWS_JAR, ICEBERG_PYSPARK):
            if not needed.exists():
                pytest.fail(f"{needed} is missing: {SETUP_HINT}")
        confs = {
            "spark.jars": f"{ICEBERG_SPARK_JAR},{ICEBERG_AWS_JAR}",
            "spark.driver.memory": "1g",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "1",
            "spark.default.parallelism": "1",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.sql.warehouse.dir": str(folder / "spark-warehouse"),
            "spark.sql.extensions": (
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            ),
            "spark.sql.catalog.cat": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.cat.type": "rest",
            "spark.sql.catalog.cat.uri": catalog_uri,
            **(extra or {}),
        }
        env = engine_env(PYTHONPATH=f"{ICEBERG_PYSPARK}{os.pathsep}{ROOT}")
        env.pop("SPARK_HOME", None)
        env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        self.log_path = folder / "spark.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("spark_worker.py"))]
            + [f"{k}={v}" for k, v in confs.items()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=env,
            cwd=folder,
        )
        ready = self._answer()
        if "ready" not in ready:
            self.stop()
            raise RuntimeError(f"Spark did not start: {ready} (log: {self.log_path})")
        self.version: str = ready["ready"]

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Spark process ended (log: {self.log_path})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def sql(self, statement: str) -> list[list[Any]]:
        """Run ``statement``; return its rows, or raise EngineError with Spark's error."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"sql": statement}) + "\n")
        self.process.stdin.flush()
        answer = self._answer()
        if "error" in answer:
            raise EngineError(answer["error"])
        rows: list[list[Any]] = answer["rows"]
        return rows

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()  # the worker stops its session and exits
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT_S)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()


@pytest.fixture(scope="session")
def spark_engine(
    engine_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparkShell]:
    """Spark 4.1 with Iceberg 1.12's runtime, in its own process for the whole run."""
    shell = SparkShell(f"{engine_server.url}/iceberg", tmp_path_factory.mktemp("spark-engine"))
    try:
        yield shell
    finally:
        shell.stop()


# --- Trino ----------------------------------------------------------------------------------


def trino_java_home() -> Path:
    """Return a JDK of version 24 or newer (Trino 476 needs it): TRINO_JAVA_HOME or /usr/lib/jvm."""
    named = os.environ.get("TRINO_JAVA_HOME")
    candidates = [Path(named)] if named else sorted(Path("/usr/lib/jvm").glob("*"))
    for home in candidates:
        release = home / "release"
        if not release.is_file():
            continue
        for line in release.read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                major = line.split("=", 1)[1].strip('"').split(".")[0]
                if major.isdigit() and int(major) >= 24:
                    return home
    pytest.fail("Trino 476 needs a JDK 24 or newer: set TRINO_JAVA_HOME or install one")


class TrinoServer:
    """A single-node Trino (coordinator and worker) with the catalog as Trino catalog ``cat``."""

    def __init__(self, catalog_uri: str, folder: Path) -> None:
        if not (TRINO_HOME / "plugin" / "iceberg").is_dir():
            pytest.fail(f"{TRINO_HOME} with its iceberg plugin is missing: {SETUP_HINT}")
        self.port = free_port()
        etc = folder / "etc"
        (etc / "catalog").mkdir(parents=True)
        self.data = folder / "data"
        (etc / "node.properties").write_text(
            "node.environment=test\nnode.id=engine-tests\n"
            f"node.data-dir={self.data}\nnode.internal-address=127.0.0.1\n"
        )
        (etc / "config.properties").write_text(
            "coordinator=true\nnode-scheduler.include-coordinator=true\n"
            f"http-server.http.port={self.port}\ndiscovery.uri=http://127.0.0.1:{self.port}\n"
            "query.max-memory=512MB\nquery.max-memory-per-node=256MB\n"
            # A single node has no peer to detect failing; on a busy machine its heartbeat
            # to itself times out, and Trino then marks its only node failed mid-run.
            "failure-detector.enabled=false\n"
            # Catalogs made with CREATE CATALOG (a pinned catalog of a test's own).
            "catalog.management=dynamic\n"
            f"log.path={self.data}/var/log/server.log\n"
        )
        (etc / "jvm.config").write_text(
            "-server\n-Xmx1G\n-XX:+UseSerialGC\n-XX:TieredStopAtLevel=1\n"
            "-Djdk.attach.allowAttachSelf=true\n-XX:+EnableDynamicAgentLoading\n"
        )
        (etc / "log.properties").write_text("io.trino=INFO\n")
        (etc / "catalog" / "cat.properties").write_text(
            "connector.name=iceberg\niceberg.catalog.type=rest\n"
            f"iceberg.rest-catalog.uri={catalog_uri}\n"
            "fs.native-local.enabled=true\nlocal.location=/\n"
        )
        java = trino_java_home()
        env = engine_env(JAVA_HOME=str(java), PATH=f"{java}/bin{os.pathsep}{os.environ['PATH']}")
        self.log_path = folder / "launcher.log"
        self._log = self.log_path.open("w")
        # `launcher run` execs the JVM in place: the pid is Trino's own.
        self.process = subprocess.Popen(
            [
                str(TRINO_HOME / "bin" / "launcher"),
                "run",
                f"--etc-dir={etc}",
                f"--data-dir={self.data}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        # Trino answers SELECT 1 before its node manager lists the coordinator as a worker;
        # a scan in between fails with NO_NODES_AVAILABLE, so wait for an active node.
        deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
        active = "SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'"
        while True:
            try:
                if self.sql(active)[0][0] > 0:
                    return
                raise EngineError("no active Trino node yet")
            except Exception as e:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"Trino exited with {self.process.returncode}: see {self.log_path}"
                    ) from e
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"Trino did not answer in {ENGINE_START_TIMEOUT_S} s") from e
                time.sleep(1)

    def sql(self, statement: str) -> list[list[Any]]:
        """Run ``statement``; return its rows, or raise EngineError with Trino's error.

        Trino lists its node as active before the node announces the catalog, and a scan
        in between fails with NO_NODES_AVAILABLE (nothing ran): such a statement is sent
        again, for up to ``NODE_ANNOUNCE_TIMEOUT_S``.
        """
        deadline = time.monotonic() + NODE_ANNOUNCE_TIMEOUT_S
        while True:
            try:
                return self._sql(statement)
            except EngineError as e:
                if not str(e).startswith("NO_NODES_AVAILABLE") or time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def _sql(self, statement: str) -> list[list[Any]]:
        import trino

        connection = trino.dbapi.connect(  # type: ignore[no-untyped-call]
            host="127.0.0.1", port=self.port, user="tests", catalog="cat", request_timeout=120
        )
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(statement)
                return [list(row) for row in cursor.fetchall()]
            except trino.exceptions.TrinoQueryError as e:
                causes = []  # Trino's message often hides the cause: name the chain
                info = e.failure_info
                while info:
                    causes.append(f"{info.get('type')}: {info.get('message')}")
                    info = info.get("cause")
                raise EngineError(f"{e.error_name}: " + " / caused by ".join(causes)) from e
        finally:
            connection.close()

    def server_log(self) -> str:
        path = self.data / "var" / "log" / "server.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        stop_group(self.process)
        self._log.close()


@pytest.fixture(scope="session")
def trino_engine(
    engine_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TrinoServer]:
    """Trino 476 with the iceberg connector on the catalog, for the whole run.

    Its log stays in the run's temporary folder: ``trino-engine*/data/var/log/server.log``.
    """
    server = TrinoServer(f"{engine_server.url}/iceberg", tmp_path_factory.mktemp("trino-engine"))
    try:
        yield server
    finally:
        server.stop()
