"""What engines keep per table and namespace, through PyIceberg: tables without a key,
partition specs, sort orders, any property, column docs, format version, and namespace
properties. Each change is one catalog version."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError, CommitFailedException
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from api.client import CatalogApiError, CatalogClient
from tests.integration.api.servers import RunningServer

pytestmark = pytest.mark.timeout(60)

LOG = Schema(
    NestedField(1, "id", LongType(), required=False, doc="the event id"),
    NestedField(2, "ts", TimestamptzType(), required=False),
    NestedField(3, "kind", StringType(), required=False),
)
"""A table without identifier fields, as engines create them."""

BY_DAY = PartitionSpec(
    PartitionField(2, 1000, DayTransform(), "ts_day"),
    PartitionField(1, 1001, BucketTransform(8), "id_bucket"),
)
NEWEST_FIRST = SortOrder(
    SortField(2, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST), order_id=1
)


def _latest(client: CatalogClient) -> int:
    return client.versions().latest


def test_a_table_without_identifier_fields_is_created_partitioned_and_sorted(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    created = iceberg.create_table(
        "PUBLIC.LOG",
        LOG,
        partition_spec=BY_DAY,
        sort_order=NEWEST_FIRST,
        properties={"owner": "spark", "write.format.default": "parquet"},
    )
    table = client.table("PUBLIC", "LOG")
    assert (table.primary_key, table.pk_index_id, table.colocation_columns) == ((), None, ())
    assert [col.id for col in table.columns] == [1, 2, 3]
    loaded = iceberg.load_table("PUBLIC.LOG")
    for answer in (created, loaded):
        assert answer.schema().identifier_field_ids == []
        assert [(f.field_id, f.name) for f in answer.spec().fields] == [
            (1000, "ts_day"),
            (1001, "id_bucket"),
        ]
        assert answer.spec().fields[1].transform == BucketTransform(8)
        assert answer.metadata.last_partition_id == 1001
        order = answer.sort_order()
        assert order.order_id == 1
        assert order.fields[0].direction == SortDirection.DESC
        assert answer.properties["owner"] == "spark"
        assert answer.properties["write.format.default"] == "parquet"
        assert answer.schema().find_field("id").doc == "the event id"


def test_a_table_made_by_sql_is_served_as_before(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    client.sql("CREATE TABLE T (ID BIGINT PRIMARY KEY, V VARCHAR)")
    loaded = iceberg.load_table("PUBLIC.T")
    assert loaded.spec().is_unpartitioned()
    assert loaded.sort_order().is_unsorted
    assert loaded.properties == {"stale-rows-fraction": "0.2", "min-stale-rows-count": "500"}
    assert loaded.schema().fields[0].field_id == 0


def test_a_spec_evolves_in_one_catalog_version(iceberg: RestCatalog, client: CatalogClient) -> None:
    table = iceberg.create_table("PUBLIC.LOG", LOG)
    stale = iceberg.load_table("PUBLIC.LOG")
    before = _latest(client)
    with table.update_spec() as update:
        update.add_field("ts", DayTransform(), "ts_day")
    assert _latest(client) == before + 1
    loaded = iceberg.load_table("PUBLIC.LOG")
    assert loaded.metadata.default_spec_id == 1
    assert [(f.field_id, f.name) for f in loaded.spec().fields] == [(1000, "ts_day")]
    assert loaded.metadata.last_partition_id == 1000
    assert len(loaded.specs()) == 2
    # A writer that read before the change asserts the spec it saw: its commit fails.
    with pytest.raises(CommitFailedException, match="last-assigned-partition-id is 1000"):  # noqa: SIM117
        with stale.update_spec() as late:
            late.add_field("kind", IdentityTransform(), "kind")
    assert _latest(client) == before + 1
    # Iceberg's rule, kept by the catalog whoever asks: the default spec's source stays.
    with pytest.raises(CatalogApiError, match="column ts cannot be dropped"):
        client.execute({"op": "drop_columns", "table": "LOG", "columns": ["ts"]})


def test_a_sort_order_is_replaced(iceberg: RestCatalog, client: CatalogClient) -> None:
    table = iceberg.create_table("PUBLIC.LOG", LOG)
    with table.update_sort_order() as replace:
        replace.desc("ts", IdentityTransform(), NullOrder.NULLS_LAST)
    loaded = iceberg.load_table("PUBLIC.LOG")
    assert loaded.metadata.default_sort_order_id == 1
    assert loaded.sort_order().fields[0].source_id == 2


def test_any_property_and_a_schema_change_are_one_catalog_version(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.LOG", LOG, properties={"owner": "me", "a": "1"})
    before = _latest(client)
    with table.transaction() as transaction:
        transaction.set_properties({"commit.retry.num-retries": "5", "stale-rows-fraction": "0.5"})
        transaction.remove_properties("a")
        with transaction.update_schema() as schema:
            schema.add_column("note", StringType(), doc="free text")
    assert _latest(client) == before + 1
    loaded = iceberg.load_table("PUBLIC.LOG")
    assert loaded.properties == {
        "owner": "me",
        "commit.retry.num-retries": "5",
        "stale-rows-fraction": "0.5",
        "min-stale-rows-count": "500",
    }
    assert loaded.schema().find_field("note").doc == "free text"
    assert client.table("PUBLIC", "LOG").stale_rows_fraction == 0.5


def test_old_specs_are_removed_and_format_version_1_refused(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    with pytest.raises(BadRequestError, match=r"format versions 2 and 3.*not '1'"):
        iceberg.create_table("PUBLIC.OLD", LOG, properties={"format-version": "1"})
    table = iceberg.create_table("PUBLIC.LOG", LOG, properties={"format-version": "2"})
    assert table.metadata.format_version == 2
    with table.update_spec() as update:
        update.add_field("kind", IdentityTransform(), "kind")
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables/LOG"
    body = {
        "requirements": [{"type": "assert-default-spec-id", "default-spec-id": 1}],
        "updates": [
            {"action": "remove-partition-specs", "spec-ids": [0]},
            {"action": "upgrade-format-version", "format-version": 2},
        ],
    }
    answer = httpx.post(url, json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    metadata = answer.json()["metadata"]
    assert metadata["format-version"] == 2
    assert [s["spec-id"] for s in metadata["partition-specs"]] == [1]
    body["updates"] = [{"action": "upgrade-format-version", "format-version": 4}]
    refused = httpx.post(url, json=body, timeout=10)
    assert refused.status_code == 400
    assert "format versions 2 and 3" in refused.json()["error"]["message"]


def test_namespace_properties_are_kept(iceberg: RestCatalog, client: CatalogClient) -> None:
    iceberg.create_namespace("LAKE", {"owner": "spark", "comment": "raw"})
    assert iceberg.load_namespace_properties("LAKE") == {"owner": "spark", "comment": "raw"}
    before = _latest(client)
    summary = iceberg.update_namespace_properties(
        "LAKE", removals={"comment", "missing"}, updates={"location": "s3://lake"}
    )
    assert _latest(client) == before + 1
    assert summary.updated == ["location"]
    assert summary.removed == ["comment"]
    assert summary.missing == ["missing"]
    assert iceberg.load_namespace_properties("LAKE") == {"owner": "spark", "location": "s3://lake"}
    with pytest.raises(Exception, match="both updated and removed"):
        iceberg.update_namespace_properties("LAKE", removals={"owner"}, updates={"owner": "x"})


def test_a_table_that_asks_for_it_deletes_its_earlier_metadata_files(
    iceberg: RestCatalog,
) -> None:
    table = iceberg.create_table(
        "PUBLIC.LOG",
        LOG,
        properties={
            "write.metadata.delete-after-commit.enabled": "true",
            "write.metadata.previous-versions-max": "2",
        },
    )
    folder = Path(table.metadata_location.removeprefix("file://")).parent
    for name in ("a", "b", "c", "d"):
        with table.update_schema() as update:
            update.add_column(name, StringType())
    on_disk = sorted(p.name for p in folder.iterdir())
    logged = [Path(e.metadata_file).name for e in table.metadata.metadata_log]
    assert len(logged) == 2
    assert on_disk == sorted([*logged, Path(table.metadata_location).name])
    # A table that does not ask keeps every file (the log lists the last 100).
    kept = iceberg.create_table("PUBLIC.KEPT", LOG)
    for name in ("a", "b", "c"):
        with kept.update_schema() as update:
            update.add_column(name, StringType())
    assert len(kept.metadata.metadata_log) == 3
    assert len(list(Path(kept.metadata_location.removeprefix("file://")).parent.iterdir())) == 4
