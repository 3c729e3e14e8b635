"""A replace of a table, sent as Java's REST client sends it (``RESTSessionCatalog``).

Java's replace transaction commits ``POST /v1/namespaces/{ns}/tables/{t}`` with the
requirements of ``UpdateRequirements.forReplaceTable`` and the updates of
``TableMetadata.buildReplacement``; PyIceberg has no replace, so the bodies are sent as they
are, and an RTAS snapshot's files and manifest list are written by PyIceberg on the table as
the replace leaves it (no branch main, the new schema current).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import StagedTable, Table
from pyiceberg.types import IntegerType, LongType, NestedField, StringType

from api.client import CatalogClient
from api.client.errors import InvalidRequestError
from catalog.data.files import table_rows
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids
from tests.integration.iceberg.test_spark_commits import spark_commit

pytestmark = pytest.mark.timeout(60)

PEOPLE = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
)
"""The table before the replace: no identifier fields (a table without a key)."""

REPLACED = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(3, "score", IntegerType(), required=False),
    schema_id=1,
)
"""The replacement as Java assigns its ids: ``id`` keeps 1, ``score`` takes 3 (after 2)."""


def _people(iceberg: RestCatalog) -> Table:
    """Create PUBLIC.PEOPLE with rows 1 and 2."""
    table = iceberg.create_table("PUBLIC.PEOPLE", PEOPLE)
    table.append(pa.Table.from_pylist([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]))
    loaded: Table = iceberg.load_table("PUBLIC.PEOPLE")
    return loaded


def _schema(schema: Schema) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(schema.model_dump_json())
    return body


def _replace_updates(table: Table, schema: Schema | None = REPLACED) -> list[dict[str, Any]]:
    """Return the updates of a replace with ``schema`` (None: the current one), no data."""
    updates: list[dict[str, Any]] = [
        {"action": "set-default-spec", "spec-id": 0},
        {"action": "set-default-sort-order", "sort-order-id": 0},
    ]
    if table.current_snapshot() is not None:
        updates.append({"action": "remove-snapshot-ref", "ref-name": "main"})
    if schema is None:
        updates.insert(0, {"action": "set-current-schema", "schema-id": table.schema().schema_id})
    else:
        last = max(table.metadata.last_column_id, schema.highest_field_id)
        updates += [
            {"action": "add-schema", "schema": _schema(schema), "last-column-id": last},
            {"action": "set-current-schema", "schema-id": -1},
        ]
    updates.append({"action": "set-properties", "updates": {"owner": "root"}})
    return updates


def _requirements(table: Table, *, uuid: str | None = None) -> list[dict[str, Any]]:
    return [
        {"type": "assert-table-uuid", "uuid": uuid or str(table.metadata.table_uuid)},
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2},
    ]


def _rtas_snapshot(
    iceberg: RestCatalog, table: Table, schema: Schema, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Write ``rows`` as the replace's snapshot (made on none); return its two updates."""
    schema_id = max(s.schema_id for s in table.metadata.schemas) + 1
    schema = Schema(*schema.fields, schema_id=schema_id)
    metadata = table.metadata.model_copy(
        update={
            "schemas": [*table.metadata.schemas, schema],
            "current_schema_id": schema_id,
            "last_column_id": max(table.metadata.last_column_id, schema.highest_field_id),
            "current_snapshot_id": None,
            "refs": {},
        }
    )
    staged = StagedTable(
        identifier=table.name(),
        metadata=metadata,
        metadata_location=table.metadata_location,
        io=table.io,
        catalog=iceberg,
    )
    transaction = staged.transaction()
    transaction.append(pa.Table.from_pylist(rows, schema=schema.as_arrow()))
    updates: list[dict[str, Any]] = [json.loads(u.model_dump_json()) for u in transaction._updates]
    return updates


def check_made_on_none(before: Table, after: Table) -> None:
    """Check that ``after``'s snapshot, a replace's, is made on none and follows ``before``'s.

    The snapshot log keeps the snapshot before the replace (Java's
    ``testReplaceTableKeepsSnapshotLog``).
    """
    current, previous = after.current_snapshot(), before.current_snapshot()
    assert current is not None and previous is not None
    assert current.parent_snapshot_id is None
    log = [e.snapshot_id for e in after.metadata.snapshot_log]
    assert log == [previous.snapshot_id, current.snapshot_id]


def _commit(
    server: RunningServer,
    requirements: list[dict[str, Any]],
    updates: list[dict[str, Any]],
    table: str = "PEOPLE",
) -> requests.Response:
    url = f"{server.url}/iceberg/v1/namespaces/PUBLIC/tables/{table}"
    return requests.post(url, json={"requirements": requirements, "updates": updates}, timeout=30)


def _visible(client: CatalogClient, at: int | None = None) -> list[str]:
    table_id = client.table("PUBLIC", "PEOPLE").id
    return [f.path for c in client.data_commits(table_id, at).commits for f in c.files]


def test_an_rtas_is_one_catalog_version_and_one_overwrite(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    old_files = _visible(client)
    before = client.now()
    version = client.versions().latest
    rows = [{"id": 7, "score": 70}]
    snapshot = _rtas_snapshot(iceberg, table, REPLACED, rows)
    answer = _commit(iceberg_server, _requirements(table), [*_replace_updates(table), *snapshot])
    assert answer.status_code == 200, answer.text
    assert client.versions().latest == version + 1  # the table's changes: one catalog version
    replaced = iceberg.load_table("PUBLIC.PEOPLE")
    assert [(f.field_id, f.name) for f in replaced.schema().fields] == [(1, "id"), (3, "score")]
    assert replaced.metadata.table_uuid == table.metadata.table_uuid
    assert replaced.scan().to_arrow().to_pylist() == rows
    check_made_on_none(table, replaced)
    assert replaced.properties["owner"] == "root"
    described = client.table("PUBLIC", "PEOPLE")
    assert [(c.id, c.name) for c in described.columns] == [(1, "id"), (3, "score")]
    new_files = _visible(client)
    assert len(new_files) == 1 and not set(new_files) & set(old_files)
    assert _visible(client, before) == old_files  # a read as of before still reads the old


def test_a_replace_without_data_leaves_no_current_snapshot(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    before = client.now()
    answer = _commit(iceberg_server, _requirements(table), _replace_updates(table))
    assert answer.status_code == 200, answer.text
    served = answer.json()["metadata"]
    assert served.get("current-snapshot-id", -1) == -1
    assert "main" not in served["refs"]
    replaced = iceberg.load_table("PUBLIC.PEOPLE")
    assert replaced.current_snapshot() is None
    assert len(replaced.snapshots()) == 1 and len(replaced.metadata.snapshot_log) == 1
    assert replaced.scan().to_arrow().num_rows == 0
    assert _visible(client) == []
    assert len(_visible(client, before)) == 1
    # The next append is made on no snapshot, and follows the highest sequence number.
    replaced.append(pa.Table.from_pylist([{"id": 9, "score": 1}], schema=REPLACED.as_arrow()))
    appended = iceberg.load_table("PUBLIC.PEOPLE")
    current = appended.current_snapshot()
    assert current is not None and current.parent_snapshot_id is None
    assert appended.scan().to_arrow().to_pylist() == [{"id": 9, "score": 1}]
    assert len(_visible(client)) == 1


def test_a_replace_with_a_spec_and_an_order_makes_them_the_defaults(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    bucket = {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[16]"}
    by_id = {"source-id": 1, "transform": "identity"}
    by_id.update({"direction": "asc", "null-order": "nulls-first"})
    kept, _, _, *removal = _replace_updates(table, None)  # the defaults are set below
    updates = [
        kept,
        *removal,
        {"action": "add-spec", "spec": {"spec-id": 1, "fields": [bucket]}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [by_id]}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
    ]
    requirements = [
        *_requirements(table)[:1],
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
    ]
    answer = _commit(iceberg_server, requirements, updates)
    assert answer.status_code == 200, answer.text
    replaced = iceberg.load_table("PUBLIC.PEOPLE")
    assert [(f.field_id, str(f.transform)) for f in replaced.spec().fields] == [
        (1000, "bucket[16]")
    ]
    assert [f.source_id for f in replaced.sort_order().fields] == [1]
    again = _commit(iceberg_server, requirements, updates)  # staged on the table before
    assert again.status_code == 409, again.text
    assert "last assigned partition id changed" in again.json()["error"]["message"]


def test_the_spark_sources_commit_after_a_replace_is_made_on_none(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    requirements = _requirements(iceberg.create_table("PUBLIC.EVENTS", EVENTS))[:1]
    spark_commit(client, iceberg_server, range(1, 3))
    updates = _replace_updates(iceberg.load_table("PUBLIC.EVENTS"), None)
    answer = _commit(iceberg_server, requirements, updates, "EVENTS")
    assert answer.status_code == 200, answer.text
    spark_commit(client, iceberg_server, range(5, 7))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [5, 6]
    current = loaded.current_snapshot()
    assert current is not None and current.parent_snapshot_id is None
    assert len(loaded.snapshots()) == 2


def test_a_replace_that_keeps_the_schema_sets_the_current_one(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    version = client.versions().latest
    answer = _commit(iceberg_server, _requirements(table)[:1], _replace_updates(table, None))
    assert answer.status_code == 200, answer.text
    assert client.versions().latest == version + 1  # the property; the schema stays
    replaced = iceberg.load_table("PUBLIC.PEOPLE")
    assert replaced.schema() == table.schema()
    assert replaced.current_snapshot() is None


def test_an_earlier_schema_made_current_again_drops_the_later_columns(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    first = table.schema().schema_id
    with table.update_schema() as update:
        update.add_column("extra", StringType())
    table = iceberg.load_table("PUBLIC.PEOPLE")
    updates = [
        {"action": "set-current-schema", "schema-id": first},
        *_replace_updates(table, None)[1:],
    ]
    answer = _commit(iceberg_server, _requirements(table)[:1], updates)
    assert answer.status_code == 200, answer.text
    fields = iceberg.load_table("PUBLIC.PEOPLE").schema().fields
    assert [(f.field_id, f.name) for f in fields] == [(1, "id"), (2, "name")]


def test_a_replace_that_adds_a_required_field_leaves_no_row_without_it(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    required = Schema(*REPLACED.fields[:1], NestedField(3, "score", IntegerType(), required=True))
    answer = _commit(iceberg_server, _requirements(table), _replace_updates(table, required))
    assert answer.status_code == 200, answer.text
    replaced = iceberg.load_table("PUBLIC.PEOPLE")
    assert [(f.name, f.required) for f in replaced.schema().fields] == [
        ("id", False),
        ("score", True),
    ]
    assert replaced.scan().to_arrow().num_rows == 0
    version = client.versions().latest
    described = client.table("PUBLIC", "PEOPLE", version=version)
    # score added at version 2 (rows count from it), name dropped last, at 3.
    assert (described.rows_from, described.schema_version) == (2, 3)
    # As of the replace's catalog version, before its data commit removed them, the old
    # files are still visible commits; they are no rows of the table at that version.
    at = client.catalog(version=version).activation_ts
    commits = client.data_commits(described.id, at).commits
    assert [f for c in commits for f in c.files]
    assert [f for c in table_rows(commits, described.rows_from) for f in c.files] == []
    with pytest.raises(InvalidRequestError, match="was replaced") as refused:
        client.commit_data(
            described.id, [], schema_version=1, mode="append", request_id="old-schema-append"
        )
    assert refused.value.code == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("schema", "rule"),
    [
        (
            Schema(NestedField(1, "id", StringType(), required=False), schema_id=1),
            "cannot change column type",
        ),
        (
            Schema(
                NestedField(1, "id", LongType(), required=True),
                identifier_field_ids=[1],
                schema_id=1,
            ),
            "primary key",
        ),
        (
            Schema(
                NestedField(2, "name", StringType(), required=False),
                NestedField(1, "id", LongType(), required=False),
                schema_id=1,
            ),
            "cannot reorder",
        ),
    ],
)
def test_a_replace_the_catalog_refuses_is_a_400_and_writes_nothing(
    iceberg: RestCatalog,
    client: CatalogClient,
    iceberg_server: RunningServer,
    schema: Schema,
    rule: str,
) -> None:
    table = _people(iceberg)
    version = client.versions().latest
    files = _visible(client)
    answer = _commit(iceberg_server, _requirements(table), _replace_updates(table, schema))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "BadRequestException"
    assert rule in error["message"]
    assert client.versions().latest == version
    assert _visible(client) == files
    assert iceberg.load_table("PUBLIC.PEOPLE").current_snapshot() == table.current_snapshot()


def test_an_rtas_whose_manifest_list_is_missing_writes_nothing(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    version, files = client.versions().latest, _visible(client)
    added, main = _rtas_snapshot(iceberg, table, REPLACED, [{"id": 7, "score": 70}])
    listed = added["snapshot"]["manifest-list"]
    added["snapshot"]["manifest-list"] = listed.replace("snap-", "missing-snap-")
    answer = _commit(iceberg_server, _requirements(table), [*_replace_updates(table), added, main])
    assert answer.status_code == 400, answer.text
    assert client.versions().latest == version
    assert _visible(client) == files


def test_a_replace_of_another_table_or_a_missing_one_is_refused(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    version = client.versions().latest
    other = "00000000-0000-4000-8000-000000000000"
    answer = _commit(iceberg_server, _requirements(table, uuid=other), _replace_updates(table))
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["type"] == "CommitFailedException"
    assert "UUID does not match" in answer.json()["error"]["message"]
    assert client.versions().latest == version
    missing = requests.post(
        f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables/NOPE",
        json={"requirements": _requirements(table), "updates": _replace_updates(table)},
        timeout=30,
    )
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["type"] == "NoSuchTableException"
    loaded = requests.get(f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables/NOPE")
    assert loaded.status_code == 404  # Java's replaceTransaction() loads the table first


def test_concurrent_replaces_both_land_and_the_later_reads_alone(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    """``testConcurrentReplaceTransactions``: two replaces staged on the same table."""
    table = _people(iceberg)
    same = Schema(*PEOPLE.fields, schema_id=0)
    second = _rtas_snapshot(iceberg, table, same, [{"id": 3, "name": "c"}])
    first = _rtas_snapshot(iceberg, table, same, [{"id": 4, "name": "d"}])
    updates = _replace_updates(table, None)
    for snapshot, expected in ((first, {"id": 4, "name": "d"}), (second, {"id": 3, "name": "c"})):
        answer = _commit(iceberg_server, _requirements(table)[:1], [*updates, *snapshot])
        assert answer.status_code == 200, answer.text
        assert iceberg.load_table("PUBLIC.PEOPLE").scan().to_arrow().to_pylist() == [expected]
        assert len(_visible(client)) == 1
    stale = _rtas_snapshot(iceberg, table, REPLACED, [{"id": 5, "score": 5}])
    iceberg.load_table("PUBLIC.PEOPLE").update_schema().add_column("x", StringType()).commit()
    answer = _commit(iceberg_server, _requirements(table), [*_replace_updates(table), *stale])
    assert answer.status_code == 409, answer.text
    assert "last assigned field id changed" in answer.json()["error"]["message"]


SAME_FILE_NAME = (
    "a replace staged before another one that landed, changing nothing in the catalog, gets "
    "the other's metadata file name (same catalog version, same last sequence number, its "
    "snapshot reusing the other's number), and the file already there holds the other's state"
)


@pytest.mark.xfail(strict=True, reason=SAME_FILE_NAME)
def test_the_later_of_two_staged_replaces_names_a_file_of_its_own(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = _people(iceberg)
    staged = [
        _rtas_snapshot(iceberg, table, Schema(*PEOPLE.fields), [{"id": i, "name": "x"}])
        for i in (3, 4)
    ]
    answers = [
        _commit(iceberg_server, _requirements(table)[:1], [*_replace_updates(table, None), *s])
        for s in staged
    ]
    last = answers[-1].json()
    written = Path(last["metadata-location"].removeprefix("file://")).read_text()
    assert json.loads(written)["current-snapshot-id"] == last["metadata"]["current-snapshot-id"]
