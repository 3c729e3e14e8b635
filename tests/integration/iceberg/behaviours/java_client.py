"""Iceberg's own Java REST client (``org.apache.iceberg.rest.RESTCatalog``), driven from Python.

The behaviours PyIceberg cannot express run through the client the Java suite runs: one JVM
(py4j's gateway) per test session, with Iceberg's Spark runtime jar and the Hadoop of the
PySpark it is built for on its class path (both from ``make engines``), ended through its
own process at the end. Each test builds a ``RESTCatalog`` on its own server, initialized with the
properties the RCK gives its client (``RCKUtils.initCatalogClient``: ``table-default.*`` and
``table-override.*``), and Java objects (schemas, specs, orders, data files) through
``java.jvm``; ``JavaSuite`` holds ``CatalogTests``' constants as Java objects.

``FILE_A`` and its kin are real two-row Parquet files under the table's ``data`` folder, as
in ``support``: this catalog records only data files that exist in the table's folder.
A Java exception reaches Python as py4j's ``Py4JJavaError``; ``raises_java`` checks its class
and message as Java's ``assertThatThrownBy`` does.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import pytest
from py4j.java_gateway import GatewayParameters, JavaGateway, JavaObject, launch_gateway
from py4j.protocol import Py4JJavaError

from tests.integration.engines.conftest import ICEBERG_PYSPARK, ICEBERG_SPARK_JAR, SETUP_HINT
from tests.integration.iceberg.behaviours.support import write_rows

STOP_TIMEOUT_S = 30.0
REPORTER_SOURCE = Path(__file__).with_name("java") / "CountingMetricsReporter.java"
REPORTER = "catalogtests.CountingMetricsReporter"
"""A ``MetricsReporter`` a catalog loads by name (compiled with ``javac`` at start)."""

RCK_PROPERTIES = {
    "table-default.default-key1": "catalog-default-key1",
    "table-default.default-key2": "catalog-default-key2",
    "table-default.override-key3": "catalog-default-key3",
    "table-override.override-key3": "catalog-override-key3",
    "table-override.override-key4": "catalog-override-key4",
}
"""The table defaults and overrides the RCK's client is initialized with."""
PROPERTY_CASES = {
    "default": (
        "default-key2",
        "catalog-overridden-key2",
        {"default-key1": "catalog-default-key1", "default-key2": "catalog-overridden-key2"},
    ),
    "override": (
        "override-key4",
        "catalog-overridden-key4",
        {
            "default-key1": "catalog-default-key1",
            "default-key2": "catalog-default-key2",
            "override-key3": "catalog-override-key3",
            "override-key4": "catalog-override-key4",
        },
    ),
}
"""``testDefaultTableProperties``' and ``testOverrideTableProperties``' property set by the
create, its value, and the properties the table must then hold besides ``prop1``."""


class JavaSide:
    """A JVM with Iceberg's client on its class path, reached through a py4j gateway."""

    def __init__(self, folder: Path) -> None:
        """Compile the test reporter into ``folder`` and start the JVM (its output: ``jvm.log``).

        Raises:
            pytest.skip.Exception: the engines are not fetched (``make engines``).
            RuntimeError: no ``javac`` on the path, or it refused the reporter.
        """
        jars = ICEBERG_PYSPARK / "pyspark" / "jars"
        if not ICEBERG_SPARK_JAR.exists() or not jars.is_dir():
            pytest.skip(f"{ICEBERG_SPARK_JAR} or {jars} is missing: {SETUP_HINT}")
        classpath = [str(ICEBERG_SPARK_JAR), str(jars / "*")]
        if shutil.which("javac") is None:
            raise RuntimeError(f"javac (a JDK) is needed to compile {REPORTER_SOURCE}")
        compiled = subprocess.run(
            ["javac", "-d", str(folder), "-cp", ":".join(classpath), str(REPORTER_SOURCE)],
            capture_output=True,
            text=True,
        )
        if compiled.returncode != 0:
            raise RuntimeError(f"javac could not compile {REPORTER_SOURCE}: {compiled.stderr}")
        self.log_path = folder / "jvm.log"
        self._log = self.log_path.open("w")
        port, self.process = launch_gateway(
            classpath=":".join([str(folder), *classpath]),
            javaopts=["-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"],
            die_on_exit=True,
            redirect_stdout=self._log,
            redirect_stderr=self._log,
            return_proc=True,
        )
        self.gateway = JavaGateway(
            gateway_parameters=GatewayParameters(port=port, auto_convert=True)
        )
        self.jvm: Any = self.gateway.jvm
        self.suite = JavaSuite(self)

    def stop(self) -> None:
        """Close the gateway and end the JVM (its stdin closes; killed by pid if it lingers)."""
        self.gateway.close()
        if self.process.stdin is not None:
            self.process.stdin.close()  # die_on_exit: the gateway server exits on a broken pipe
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT_S)
        self._log.close()

    def rest_catalog(self, server_url: str, **extra: str) -> JavaObject:
        """Return a ``RESTCatalog`` of the server at ``server_url``, as the RCK initializes one."""
        catalog = self.jvm.org.apache.iceberg.rest.RESTCatalog()
        catalog.setConf(self.jvm.org.apache.hadoop.conf.Configuration())
        catalog.initialize(
            "rck_catalog", {"uri": f"{server_url}/iceberg", **RCK_PROPERTIES, **extra}
        )
        return catalog

    def identifier(self, dotted: str) -> JavaObject:
        """Return the ``TableIdentifier`` a dotted name parses to (``ns.tbl``)."""
        return self.jvm.org.apache.iceberg.catalog.TableIdentifier.parse(dotted)

    def namespace(self, name: str) -> JavaObject:
        """Return the one-level ``Namespace`` ``name``."""
        levels = self.gateway.new_array(self.jvm.java.lang.String, 1)
        levels[0] = name
        return self.jvm.org.apache.iceberg.catalog.Namespace.of(levels)

    def reported(self, kind: str) -> int:
        """How many ``kind`` (scans, commits, closes) the test reporter saw; starts it again."""
        count: int = self.jvm.catalogtests.CountingMetricsReporter.take(kind)
        return count


@dataclass(frozen=True)
class JavaCatalog:
    """A test's ``RESTCatalog`` (Java's ``catalog()``) of its server, and the JVM it lives in."""

    side: JavaSide
    catalog: JavaObject
    server_url: str

    @property
    def suite(self) -> JavaSuite:
        """``CatalogTests``' constants in this JVM."""
        return self.side.suite

    @property
    def jvm(self) -> Any:
        """The JVM's classes (``jvm.org.apache.iceberg...``)."""
        return self.side.jvm


class JavaSuite:
    """``CatalogTests``' identifiers, schemas, specs and orders, as Java objects of one JVM."""

    def __init__(self, side: JavaSide) -> None:
        """Build the constants with ``side``'s classes."""
        jvm = side.jvm
        self.ns = side.namespace("newdb")
        self.table = side.identifier("newdb.newtable")
        self.tbl = side.identifier("ns.tbl")
        iceberg = jvm.org.apache.iceberg
        types = iceberg.types.Types
        field = types.NestedField

        bucket = iceberg.expressions.Expressions.bucket("id", 16)

        def schema(first_id: int) -> JavaObject:
            return iceberg.Schema(
                [
                    field.required(first_id, "id", types.IntegerType.get(), "unique ID 🤪"),
                    field.required(first_id + 1, "data", types.StringType.get()),
                ]
            )

        def spec(of: JavaObject) -> JavaObject:
            return iceberg.PartitionSpec.builderFor(of).bucket("id", 16)

        def order(of: JavaObject) -> JavaObject:
            return iceberg.SortOrder.builderFor(of).asc(bucket).asc("id").build()

        self.schema = schema(3)
        self.table_schema = schema(1)
        self.replace_schema = schema(2)
        self.other_schema = iceberg.Schema([field.required(1, "some_id", types.IntegerType.get())])
        self.spec = spec(self.schema).build()
        self.table_spec = spec(self.table_schema).build()
        self.replace_spec = spec(self.replace_schema).withSpecId(1).build()
        self.write_order = order(self.schema)
        self.table_write_order = order(self.table_schema)
        self.replace_write_order = order(self.replace_schema)
        self.descending_order = (
            iceberg.SortOrder.builderFor(self.schema).desc(bucket).desc("id").build()
        )
        self.jvm = jvm

    def data_file(self, table: JavaObject, name: str, partition: str | None) -> JavaObject:
        """Write a two-row Parquet file ``name`` under ``table``'s ``data`` folder; its entry.

        Args:
            table: a ``Table`` (or a transaction's ``table()``): its location and spec.
            name: the file's name.
            partition: Java's ``withPartitionPath`` (``id_bucket=0``) for a partitioned spec.
        """
        written = write_rows(Path(urlparse(table.location()).path), name)
        builder = (
            self.jvm.org.apache.iceberg.DataFiles.builder(table.spec())
            .withPath(written.as_uri())
            .withFileSizeInBytes(written.stat().st_size)
            .withRecordCount(2)
        )
        if partition is not None:
            builder = builder.withPartitionPath(partition)
        return builder.build()

    def _file(self, table: JavaObject, letter: str, bucket: int) -> JavaObject:
        partition = f"id_bucket={bucket}" if table.spec().isPartitioned() else None
        return self.data_file(table, f"data-{letter}.parquet", partition)

    def file_a(self, table: JavaObject) -> JavaObject:
        """``FILE_A``: ``data-a.parquet``, bucket 0 when ``table`` is partitioned."""
        return self._file(table, "a", 0)

    def file_b(self, table: JavaObject) -> JavaObject:
        """``FILE_B``: ``data-b.parquet``, bucket 1 when ``table`` is partitioned."""
        return self._file(table, "b", 1)

    def file_c(self, table: JavaObject) -> JavaObject:
        """``FILE_C``: ``data-c.parquet``, bucket 2 when ``table`` is partitioned."""
        return self._file(table, "c", 2)


def planned_paths(table: JavaObject) -> list[str]:
    """The data files a scan of ``table`` plans, sorted (Java's ``newScan().planFiles()``)."""
    tasks = table.newScan().planFiles()
    try:
        paths: list[str] = []
        found = tasks.iterator()
        while found.hasNext():
            paths.append(found.next().file().location())
        return sorted(paths)
    finally:
        tasks.close()


def assert_files(table: JavaObject, *files: JavaObject) -> None:
    """Java's ``assertFiles``: the scan plans exactly ``files`` (none: ``assertNoFiles``)."""
    assert planned_paths(table) == sorted(f.location() for f in files)


def assert_equal(actual: JavaObject, expected: JavaObject) -> None:
    """Assert Java's ``actual.equals(expected)``, naming both when they differ."""
    assert actual.equals(expected), f"{actual.toString()} != {expected.toString()}"


def current(table: JavaObject) -> JavaObject:
    """The table's ``TableMetadata`` (``((BaseTable) table).operations().current()``)."""
    return table.operations().current()


def assert_uuids_match(expected: JavaObject, actual: JavaObject) -> None:
    """Java's ``assertUUIDsMatch``: both tables have the same ``table-uuid``."""
    assert current(actual).uuid() == current(expected).uuid()


def previous_metadata_files(table: JavaObject) -> int:
    """How many previous metadata files the table's metadata names (``previousFiles()``)."""
    count: int = current(table).previousFiles().size()
    return count


@contextmanager
def raises_java(jvm: Any, error: str, message_start: str) -> Iterator[None]:
    """Expect a Java exception that is an instance of class ``error``, its message starting so.

    Args:
        jvm: the JVM's ``jvm`` view (to find the class).
        error: the exception class's full name (``org.apache.iceberg.exceptions...``).
        message_start: the start of its message (Java's ``hasMessageStartingWith``).
    """
    with pytest.raises(Py4JJavaError) as caught:
        yield
    thrown = caught.value.java_exception
    described = f"{thrown.getClass().getName()}: {thrown.getMessage()}"
    assert jvm.java.lang.Class.forName(error).isInstance(thrown), described
    assert str(thrown.getMessage()).startswith(message_start), described


def check_table_properties(
    java: JavaCatalog,
    case: Literal["default", "override"],
    how: Literal["create", "create transaction", "replace transaction"],
) -> None:
    """``testDefaultTableProperties`` and ``testOverrideTableProperties`` and their forms.

    ``TBL`` is created (or, for a replace, replaced with ``OTHER_SCHEMA``) with one property
    of ``PROPERTY_CASES`` and ``prop1``; it must hold the catalog's defaults under the
    create's properties and its overrides over them; then it is dropped.
    """
    key, value, expected = PROPERTY_CASES[case]
    catalog, suite = java.catalog, java.suite
    catalog.createNamespace(suite.tbl.namespace())
    schema = suite.schema
    if how == "replace transaction":
        catalog.createTable(suite.tbl, schema)
        assert catalog.tableExists(suite.tbl)
        schema = suite.other_schema
    else:
        assert not catalog.tableExists(suite.tbl)
    builder = catalog.buildTable(suite.tbl, schema).withProperty(key, value)
    builder = builder.withProperty("prop1", "val1")
    expected = {**expected, "prop1": "val1"}
    if how == "create":
        assert dict(builder.create().properties()).items() >= expected.items()
    elif how == "create transaction":
        builder.createTransaction().commitTransaction()
    else:
        builder.replaceTransaction().commitTransaction()
    assert dict(catalog.loadTable(suite.tbl).properties()).items() >= expected.items()
    assert catalog.dropTable(suite.tbl)
