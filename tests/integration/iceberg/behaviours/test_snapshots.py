"""``CatalogTests``' append, transaction and metadata-file behaviours, through PyIceberg."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import LongType, NestedField

from tests.integration.iceberg.behaviours.support import (
    NS,
    SCHEMA,
    SPEC,
    TABLE,
    TABLE_SCHEMA,
    assert_files,
    fast_append,
    file_a,
    file_b,
    file_c,
    metadata_file_locations,
)

pytestmark = pytest.mark.timeout(60)


def test_append(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA, partition_spec=SPEC)
    assert_files(table)
    a = file_a(table)
    fast_append(table, a)
    assert_files(iceberg.load_table(TABLE), a)


def test_concurrent_append_empty_table(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA, partition_spec=SPEC)
    assert_files(table)
    a, b = file_a(table), file_b(table)
    pending = table.transaction()  # an append whose manifests are written, not committed
    with pending.update_snapshot().fast_append() as append:
        append.append_data_file(a)
    fast_append(iceberg.load_table(TABLE), b)
    assert_files(iceberg.load_table(TABLE), b)
    pending.commit_transaction()  # retried on the new head
    assert_files(iceberg.load_table(TABLE), a, b)


def test_concurrent_append_non_empty_table(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA, partition_spec=SPEC)
    assert_files(table)
    a, b, c = file_a(table), file_b(table), file_c(table)
    fast_append(iceberg.load_table(TABLE), c)
    table = iceberg.load_table(TABLE)  # Java's FastAppend refreshes the table first
    pending = table.transaction()
    with pending.update_snapshot().fast_append() as append:
        append.append_data_file(a)
    fast_append(iceberg.load_table(TABLE), b)
    assert_files(iceberg.load_table(TABLE), b, c)
    pending.commit_transaction()
    assert_files(iceberg.load_table(TABLE), a, b, c)


def test_update_transaction(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with table.transaction() as transaction:
        with transaction.update_schema() as schema:
            schema.add_column("new_col", LongType())
        with transaction.update_spec() as spec:
            spec.add_field("id", BucketTransform(16), "shard")
    loaded = iceberg.load_table(TABLE)
    expected = Schema(*TABLE_SCHEMA.fields, NestedField(3, "new_col", LongType(), required=False))
    assert loaded.schema().as_struct() == expected.as_struct()
    assert [(f.source_id, f.transform, f.name) for f in loaded.spec().fields] == [
        (1, BucketTransform(16), "shard")
    ]
    assert len(loaded.metadata.metadata_log) == 1  # assertPreviousMetadataFileCount(loaded, 1)


def test_metadata_file_locations_removal_after_commit(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    for name in ("a", "b", "c"):
        with table.update_schema() as update:
            update.add_column(name, LongType())
    assert len(metadata_file_locations(table)) == 4
    assert None not in metadata_file_locations(table)
    keep = 2
    with table.transaction() as transaction:
        transaction.set_properties(
            {
                "write.metadata.delete-after-commit.enabled": "true",
                "write.metadata.previous-versions-max": str(keep),
            }
        )
    assert len(metadata_file_locations(table)) == keep + 1
    for i in range(1, 6):
        with table.update_schema() as update:
            update.add_column(f"d{i}", LongType())
        assert len(metadata_file_locations(table)) == keep + 1
    keep = 4
    with table.transaction() as transaction:
        transaction.set_properties({"write.metadata.previous-versions-max": str(keep)})
    for i in range(1, 11):
        with table.update_schema() as update:
            update.add_column(f"e{i}", LongType())
        assert len(metadata_file_locations(table)) == keep + 1
