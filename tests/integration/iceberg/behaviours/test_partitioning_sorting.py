"""``CatalogTests``' partition-spec and sort-order behaviours, through PyIceberg.

Java's ``replaceSortOrder().asc(...)`` puts nulls first; PyIceberg's ``update_sort_order()``
(which replaces the order too) is told so. Java's suite compares specs and orders by their
fields where it says "the spec ID may not match", and whole (ids included) where it does not;
so do these tests.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import PartitionField
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField
from pyiceberg.transforms import BucketTransform, IdentityTransform, Transform, TruncateTransform
from pyiceberg.types import StringType

from tests.integration.iceberg.behaviours.support import (
    NS,
    SCHEMA,
    SPEC,
    TABLE,
    TABLE_SPEC,
    TABLE_WRITE_ORDER,
    WRITE_ORDER,
)

pytestmark = pytest.mark.timeout(60)

SHARD = PartitionField(source_id=1, field_id=1000, transform=BucketTransform(16), name="shard")


def ascending(source_id: int, bucket: bool) -> SortField:
    transform: Transform[Any, Any] = BucketTransform(16) if bucket else IdentityTransform()
    return SortField(
        source_id=source_id,
        transform=transform,
        direction=SortDirection.ASC,
        null_order=NullOrder.NULLS_FIRST,
    )


def test_update_table_spec(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with table.update_spec() as update:
        update.add_field("id", BucketTransform(16), "shard")
    assert iceberg.load_table(TABLE).spec().fields == (SHARD,)


def test_update_table_spec_server_side_retry(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_spec().add_field("id", BucketTransform(16), "shard")
    with iceberg.load_table(TABLE).update_schema() as concurrent:
        concurrent.add_column("another_col", StringType())
    update.commit()
    assert iceberg.load_table(TABLE).spec().fields == (SHARD,)


def test_update_table_spec_conflict(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA, partition_spec=SPEC)
    update = table.update_spec().add_field("data", BucketTransform(16), "shard")
    with iceberg.load_table(TABLE).update_spec() as concurrent:
        concurrent.remove_field("id_bucket")
    with pytest.raises(
        CommitFailedException, match="Requirement failed: default partition spec changed"
    ):
        update.commit()
    assert iceberg.load_table(TABLE).spec().fields == ()


def test_update_table_assignment_spec_conflict(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_spec().add_field("id", BucketTransform(16), "shard")
    with iceberg.load_table(TABLE).update_spec() as concurrent:
        concurrent.add_field("id", TruncateTransform(100), "shard")
    expected = PartitionField(
        source_id=1, field_id=1000, transform=TruncateTransform(100), name="shard"
    )
    with pytest.raises(
        CommitFailedException, match="Requirement failed: last assigned partition id changed"
    ):
        update.commit()
    assert iceberg.load_table(TABLE).spec().fields == (expected,)


def test_update_table_spec_then_revert(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(
        TABLE, SCHEMA, partition_spec=SPEC, properties={"format-version": "2"}
    )
    assert table.format_version == 2
    with table.update_spec() as update:
        update.add_identity("id")
    with table.update_spec() as update:
        update.remove_field("id")
    assert table.spec() == TABLE_SPEC


def test_update_table_sort_order(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with table.update_sort_order() as update:
        update.asc("id", BucketTransform(16), NullOrder.NULLS_FIRST)
        update.asc("id", IdentityTransform(), NullOrder.NULLS_FIRST)
    loaded = iceberg.load_table(TABLE).sort_order()
    assert list(loaded.fields) == [ascending(1, True), ascending(1, False)]


def test_update_table_sort_order_server_side_retry(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_sort_order()
    update.asc("id", BucketTransform(16), NullOrder.NULLS_FIRST)
    update.asc("id", IdentityTransform(), NullOrder.NULLS_FIRST)
    with iceberg.load_table(TABLE).update_schema() as concurrent:
        concurrent.add_column("another_col", StringType())
    update.commit()
    loaded = iceberg.load_table(TABLE).sort_order()
    assert list(loaded.fields) == [ascending(1, True), ascending(1, False)]


def test_update_table_order_then_revert(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA, sort_order=WRITE_ORDER)
    with table.update_sort_order() as update:
        update.asc("id", IdentityTransform(), NullOrder.NULLS_FIRST)
    with table.update_sort_order() as update:
        update.asc("id", BucketTransform(16), NullOrder.NULLS_FIRST)
        update.asc("id", IdentityTransform(), NullOrder.NULLS_FIRST)
    assert table.sort_order() == TABLE_WRITE_ORDER
