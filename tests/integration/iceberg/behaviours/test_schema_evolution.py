"""``CatalogTests``' schema-update behaviours, through PyIceberg's RestCatalog.

Java's suite runs them with ``supportsServerSideRetry()`` true (the RCK's default), so a
conflict must be refused by the server with its requirement's own words ("Requirement failed:
..."), which is what these tests read.
"""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table.update import (
    AddSchemaUpdate,
    AssertCurrentSchemaId,
    AssertLastAssignedFieldId,
    AssertTableUUID,
    SetCurrentSchemaUpdate,
)
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import LongType, NestedField, StringType

from tests.integration.iceberg.behaviours.support import (
    NS,
    OTHER_SCHEMA,
    SCHEMA,
    TABLE,
    TABLE_SCHEMA,
    struct,
)

pytestmark = pytest.mark.timeout(60)


def test_update_table_schema(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with table.update_schema() as update:
        update.add_column("new_col", LongType())
    expected = Schema(*TABLE_SCHEMA.fields, NestedField(3, "new_col", LongType(), required=False))
    assert struct(iceberg.load_table(TABLE).schema()) == struct(expected)


def test_uuid_validation(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_schema().add_column("new_col", LongType())
    iceberg.drop_table(TABLE)
    iceberg.create_table(TABLE, OTHER_SCHEMA)
    with pytest.raises(CommitFailedException, match="Requirement failed: UUID does not match"):
        update.commit()
    assert struct(iceberg.load_table(TABLE).schema()) == struct(OTHER_SCHEMA)


def test_update_table_schema_server_side_retry(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_schema().add_column("new_col", LongType())
    # a concurrent spec change: the schema update's requirements still hold
    with iceberg.load_table(TABLE).update_spec() as spec:
        spec.add_field("id", BucketTransform(16), "shard")
    update.commit()
    expected = Schema(*TABLE_SCHEMA.fields, NestedField(3, "new_col", LongType(), required=False))
    assert struct(iceberg.load_table(TABLE).schema()) == struct(expected)


def test_update_table_schema_conflict(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    update = table.update_schema().add_column("new_col", LongType())
    with iceberg.load_table(TABLE).update_schema() as concurrent:
        concurrent.delete_column("data")
    expected = Schema(TABLE_SCHEMA.fields[0])
    with pytest.raises(CommitFailedException, match="Requirement failed: current schema changed"):
        update.commit()
    assert struct(iceberg.load_table(TABLE).schema()) == struct(expected)


def test_update_table_schema_assignment_conflict(iceberg: RestCatalog) -> None:
    """PyIceberg's schema update asserts only the current schema id; Java's also asserts the
    last assigned field id, first, so the commit is sent as Java's client sends it."""
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with iceberg.load_table(TABLE).update_schema() as concurrent:
        concurrent.add_column("another_col", StringType())
    expected = Schema(
        *TABLE_SCHEMA.fields, NestedField(3, "another_col", StringType(), required=False)
    )
    current = table.metadata.current_schema_id
    new_schema = Schema(
        *TABLE_SCHEMA.fields,
        NestedField(3, "new_col", LongType(), required=False),
        schema_id=current + 1,
    )
    with pytest.raises(
        CommitFailedException, match="Requirement failed: last assigned field id changed"
    ):
        iceberg.commit_table(
            table,
            requirements=(
                AssertTableUUID(uuid=table.metadata.table_uuid),
                AssertLastAssignedFieldId(last_assigned_field_id=2),
                AssertCurrentSchemaId(current_schema_id=current),
            ),
            updates=(AddSchemaUpdate(schema_=new_schema), SetCurrentSchemaUpdate(schema_id=-1)),
        )
    assert struct(iceberg.load_table(TABLE).schema()) == struct(expected)


def test_update_table_schema_then_revert(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    table = iceberg.create_table(TABLE, SCHEMA)
    with table.update_schema() as update:
        update.add_column("col1", StringType())
        update.add_column("col2", StringType())
        update.add_column("col3", StringType())
    with table.update_schema() as update:
        update.delete_column("col1")
        update.delete_column("col2")
        update.delete_column("col3")
    assert struct(table.schema()) == struct(TABLE_SCHEMA)
