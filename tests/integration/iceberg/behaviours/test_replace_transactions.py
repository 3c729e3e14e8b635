"""``CatalogTests``' replace transactions, through Iceberg's Java ``RESTCatalog``.

Java's client builds a replace client-side from the loaded table (``replaceTransaction()``,
``createOrReplaceTransaction()`` of a table that exists, ``newReplaceTableTransaction``) and
commits it as one request: ``assert-table-uuid`` (with the requirements of its updates), a
new schema (fields matched to the table's by name keep their ids), spec and sort order made
current, ``main`` removed, properties, then the transaction's snapshots with ``main`` at the
last. A replace keeps the table's uuid, history and metadata log. The concurrent forms stage
two replaces of one table and commit them in the other order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
from py4j.java_gateway import JavaObject

from tests.integration.iceberg.behaviours.java_client import (
    JavaCatalog,
    JavaSuite,
    assert_equal,
    assert_files,
    assert_uuids_match,
    check_table_properties,
    current,
    previous_metadata_files,
    raises_java,
)

pytestmark = pytest.mark.timeout(120)

COMMIT_FAILED = "org.apache.iceberg.exceptions.CommitFailedException"
PROPERTIES = {"user": "someone", "created-at": "2022-02-25T00:38:19"}
How = Literal["replace", "create or replace"]


def begin(builder: JavaObject, how: How) -> JavaObject:
    """Begin ``builder``'s replace transaction (or its create-or-replace one)."""
    if how == "replace":
        return builder.replaceTransaction()
    return builder.createOrReplaceTransaction()


def replace_of_existing(
    java: JavaCatalog, how: How, requested: Path | None
) -> tuple[JavaObject, JavaObject, JavaObject]:
    """Create ``TABLE`` with ``OTHER_SCHEMA``, begin replacing it with ``SCHEMA``, append A.

    With ``requested``, the replace also asks for that location, ``SPEC``, ``WRITE_ORDER``
    and ``PROPERTIES`` (the "complete" forms). Checks that the table has not changed yet.

    Returns:
        the table as created, the replace transaction (not committed) and FILE_A.
    """
    catalog, suite = java.catalog, java.suite
    catalog.createNamespace(suite.ns)
    original = catalog.buildTable(suite.table, suite.other_schema).create()
    assert catalog.tableExists(suite.table)
    builder = catalog.buildTable(suite.table, suite.schema)
    if requested is not None:
        builder = (
            builder.withLocation(requested.as_uri())
            .withPartitionSpec(suite.spec)
            .withSortOrder(suite.write_order)
            .withProperties(PROPERTIES)
        )
    replace = begin(builder, how)
    assert catalog.tableExists(suite.table)
    file_a = suite.file_a(replace.table())
    replace.newFastAppend().appendFile(file_a).commit()

    table = catalog.loadTable(suite.table)
    assert_equal(table.schema().asStruct(), suite.other_schema.asStruct())
    assert table.spec().isUnpartitioned()
    assert table.sortOrder().isUnsorted()
    assert table.properties().get("created-at") != PROPERTIES["created-at"]
    assert_uuids_match(original, table)
    assert_files(table)
    return original, replace, file_a


def check_replaced(java: JavaCatalog, original: JavaObject, file_a: JavaObject) -> JavaObject:
    """Check ``TABLE`` after the replace: the new schema, the same uuid, FILE_A, one log entry."""
    catalog = java.catalog
    assert catalog.tableExists(java.suite.table)
    loaded = catalog.loadTable(java.suite.table)
    assert_equal(loaded.schema().asStruct(), java.suite.replace_schema.asStruct())
    assert_uuids_match(original, loaded)
    assert_files(loaded, file_a)
    assert previous_metadata_files(loaded) == 1
    return loaded


def simple_replace(java: JavaCatalog, how: How) -> None:
    original, replace, file_a = replace_of_existing(java, how, None)
    replace.commitTransaction()
    original.refresh()  # a refresh checks the uuid
    check_replaced(java, original, file_a)


def complete_replace(java: JavaCatalog, how: How, tmp_path: Path) -> None:
    requested = tmp_path / "warehouse" / "requested" / "newdb" / "newtable"  # the server's
    original, replace, file_a = replace_of_existing(java, how, requested)
    replace.commitTransaction()
    original.refresh()
    loaded = check_replaced(java, original, file_a)
    assert_equal(loaded.spec(), java.suite.replace_spec)
    assert_equal(loaded.sortOrder(), java.suite.replace_write_order)
    assert dict(loaded.properties()).items() >= PROPERTIES.items()
    assert original.location() == requested.as_uri()  # overridesRequestedLocation() is false


@dataclass(frozen=True)
class Replace:
    """What one of two racing replaces asks for: ``JavaSuite`` attribute names."""

    schema: str = "schema"
    spec: str | None = None
    order: str | None = None

    def begin(self, java: JavaCatalog) -> JavaObject:
        """Begin this replace of ``TABLE``."""
        suite: JavaSuite = java.suite
        builder = java.catalog.buildTable(suite.table, getattr(suite, self.schema))
        if self.spec is not None:
            builder = builder.withPartitionSpec(getattr(suite, self.spec))
        if self.order is not None:
            builder = builder.withSortOrder(getattr(suite, self.order))
        return builder.replaceTransaction()


@dataclass(frozen=True)
class Race:
    """Two replaces of one table, staged second-then-first and committed first-then-second."""

    original: JavaObject
    after_first: JavaObject
    second: JavaObject
    file_c: JavaObject

    def finish(self, java: JavaCatalog) -> JavaObject:
        """Commit the second replace; check the uuid and FILE_C; return the table loaded."""
        self.second.commitTransaction()
        loaded = java.catalog.loadTable(java.suite.table)
        assert_uuids_match(self.original, loaded)
        assert_files(loaded, self.file_c)
        return loaded

    def refused(self, java: JavaCatalog, kind: str) -> None:
        """The second replace's commit fails: the last assigned ``kind`` id moved on under it."""
        message = f"Commit failed: Requirement failed: last assigned {kind} id changed"
        with raises_java(java.jvm, COMMIT_FAILED, message):
            self.second.commitTransaction()


def race(java: JavaCatalog, created: str, second: Replace, first: Replace) -> Race:
    """Create ``TABLE`` with schema ``created`` and FILE_A; race ``second`` and ``first``.

    ``second`` (appending FILE_C) is begun first, then ``first`` (appending FILE_B) is
    begun and committed; the table after it keeps its uuid and holds FILE_B alone.
    """
    catalog, suite = java.catalog, java.suite
    catalog.createNamespace(suite.ns)
    create = catalog.buildTable(suite.table, getattr(suite, created)).createTransaction()
    file_a = suite.file_a(create.table())
    create.newFastAppend().appendFile(file_a).commit()
    create.commitTransaction()
    original = catalog.loadTable(suite.table)
    assert_files(original, file_a)

    staged = second.begin(java)
    file_c = suite.file_c(staged.table())
    staged.newFastAppend().appendFile(file_c).commit()
    winner = first.begin(java)
    file_b = suite.file_b(winner.table())
    winner.newFastAppend().appendFile(file_b).commit()
    winner.commitTransaction()
    after_first = catalog.loadTable(suite.table)
    assert_uuids_match(original, after_first)
    assert_files(after_first, file_b)
    return Race(original, after_first, staged, file_c)


def unchanged_layout(table: JavaObject, original: JavaObject) -> None:
    """The table has the original's schema, no partitioning and no order."""
    assert_equal(table.schema().asStruct(), original.schema().asStruct())
    assert table.spec().isUnpartitioned()
    assert table.sortOrder().isUnsorted()


def test_default_table_properties_replace_transaction(java: JavaCatalog) -> None:
    check_table_properties(java, "default", "replace transaction")


def test_replace_transaction_requires_table_exists(java: JavaCatalog) -> None:
    java.catalog.createNamespace(java.suite.ns)
    missing = "org.apache.iceberg.exceptions.NoSuchTableException"
    with raises_java(java.jvm, missing, "Table does not exist: newdb.newtable"):
        java.catalog.buildTable(java.suite.table, java.suite.schema).replaceTransaction()


def test_override_table_properties_replace_transaction(java: JavaCatalog) -> None:
    check_table_properties(java, "override", "replace transaction")


def test_replace_table_keeps_snapshot_log(java: JavaCatalog) -> None:
    catalog, suite = java.catalog, java.suite
    catalog.createNamespace(suite.ns)
    catalog.createTable(suite.table, suite.schema)
    table = catalog.loadTable(suite.table)
    table.newAppend().appendFile(suite.file_a(table)).commit()
    before = current(table).snapshotLog()
    assert before.size() == 1

    replace = catalog.newReplaceTableTransaction(suite.table, suite.schema, False)
    replace.newAppend().appendFile(suite.file_a(replace.table())).commit()
    replace.commitTransaction()
    table.refresh()
    after = current(table).snapshotLog()
    assert after.size() == 2
    assert after.get(0).equals(before.get(0))
    assert not after.get(1).equals(before.get(0))


def test_create_or_replace_replace_transaction_replace(java: JavaCatalog) -> None:
    simple_replace(java, "create or replace")


def test_concurrent_replace_transactions(java: JavaCatalog) -> None:
    raced = race(java, "schema", Replace(), Replace())
    unchanged_layout(raced.after_first, raced.original)
    unchanged_layout(raced.finish(java), raced.original)


def test_complete_create_or_replace_transaction_replace(java: JavaCatalog, tmp_path: Path) -> None:
    complete_replace(java, "create or replace", tmp_path)


def test_concurrent_replace_transaction_schema(java: JavaCatalog) -> None:
    other = Replace(schema="other_schema")
    raced = race(java, "other_schema", other, Replace())
    assert_equal(raced.after_first.schema().asStruct(), java.suite.replace_schema.asStruct())
    after_second = raced.finish(java)
    assert_equal(after_second.schema().asStruct(), raced.original.schema().asStruct())


def test_replace_transaction(java: JavaCatalog) -> None:
    simple_replace(java, "replace")


def test_concurrent_replace_transaction_schema2(java: JavaCatalog) -> None:
    other = Replace(schema="other_schema")
    raced = race(java, "other_schema", Replace(), other)
    assert_equal(raced.after_first.schema().asStruct(), raced.original.schema().asStruct())
    after_second = raced.finish(java)
    assert_equal(after_second.schema().asStruct(), java.suite.replace_schema.asStruct())


def test_complete_replace_transaction(java: JavaCatalog, tmp_path: Path) -> None:
    complete_replace(java, "replace", tmp_path)


def test_concurrent_replace_transaction_schema_conflict(java: JavaCatalog) -> None:
    raced = race(java, "other_schema", Replace(), Replace())
    assert_equal(raced.after_first.schema().asStruct(), java.suite.replace_schema.asStruct())
    raced.refused(java, "field")  # though its schema is alike


def test_concurrent_replace_transaction_partition_spec(java: JavaCatalog) -> None:
    raced = race(java, "schema", Replace(), Replace(spec="spec"))
    assert_equal(raced.after_first.spec().fields(), java.suite.table_spec.fields())
    assert raced.finish(java).spec().isUnpartitioned()


def test_concurrent_replace_transaction_partition_spec2(java: JavaCatalog) -> None:
    raced = race(java, "schema", Replace(spec="spec"), Replace())
    assert raced.after_first.spec().isUnpartitioned()
    after_second = raced.finish(java)
    assert_equal(after_second.spec().fields(), java.suite.table_spec.fields())


def test_concurrent_replace_transaction_partition_spec_conflict(java: JavaCatalog) -> None:
    partitioned = Replace(spec="spec")
    raced = race(java, "schema", partitioned, partitioned)
    assert_equal(raced.after_first.spec().fields(), java.suite.table_spec.fields())
    raced.refused(java, "partition")  # though its spec is alike


def test_concurrent_replace_transaction_sort_order(java: JavaCatalog) -> None:
    raced = race(java, "schema", Replace(), Replace(order="write_order"))
    assert_equal(raced.after_first.sortOrder(), java.suite.table_write_order)
    assert raced.finish(java).sortOrder().isUnsorted()


def test_concurrent_replace_transaction_sort_order_conflict(java: JavaCatalog) -> None:
    second, first = Replace(order="write_order"), Replace(order="descending_order")
    raced = race(java, "schema", second, first)
    assert raced.after_first.sortOrder().isSorted()
    after_second = raced.finish(java)
    assert_equal(after_second.sortOrder().fields(), java.suite.table_write_order.fields())
