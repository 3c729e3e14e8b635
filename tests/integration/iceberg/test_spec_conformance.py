"""The answers the Iceberg REST spec (``open-api/rest-catalog-open-api.yaml``) prescribes.

Through PyIceberg, and through plain HTTP where the spec's detail (a header, a status, a member
left out) is what a test must see. The required members below are the spec's ``required``
lists; every other member is optional and, when it holds no value, absent (never ``null``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from api.iceberg.paths import ENDPOINTS
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import ORDERS

pytestmark = pytest.mark.timeout(60)

REQUIRED: dict[str, tuple[str, ...]] = {
    "LoadTableResult": ("metadata",),
    "CommitTableResponse": ("metadata-location", "metadata"),
    "TableMetadata": ("format-version", "table-uuid"),
    "Schema": ("type", "fields"),
    "StructField": ("id", "name", "type", "required"),
    "PartitionSpec": ("fields",),
    "PartitionField": ("source-id", "transform", "name"),
    "SortOrder": ("order-id", "fields"),
    "SortField": ("source-id", "transform", "direction", "null-order"),
    "Snapshot": ("snapshot-id", "timestamp-ms", "manifest-list", "summary"),
    "SnapshotReference": ("type", "snapshot-id"),
    "SnapshotLog": ("snapshot-id", "timestamp-ms"),
    "CatalogConfig": ("defaults", "overrides"),
    "GetNamespaceResponse": ("namespace",),
    "UpdateNamespacePropertiesResponse": ("updated", "removed"),
    "ErrorModel": ("message", "type", "code"),
}
"""The spec's required members of each answer this server gives."""


def _has(kind: str, body: dict[str, Any]) -> None:
    missing = [m for m in REQUIRED[kind] if m not in body]
    assert not missing, f"{kind} lacks {missing}: {body}"


def _no_null(body: object, where: str = "") -> None:
    """Assert that no member anywhere in ``body`` is ``null``."""
    if isinstance(body, dict):
        for key, value in body.items():
            assert value is not None, f"{where}.{key} is null"
            _no_null(value, f"{where}.{key}")
    elif isinstance(body, list):
        for i, item in enumerate(body):
            _no_null(item, f"{where}[{i}]")


def _table_answer(body: dict[str, Any], kind: str = "LoadTableResult") -> None:
    """Check a table answer against the spec's required lists, and that nothing is null."""
    _no_null(body)
    _has(kind, body)
    metadata = body["metadata"]
    _has("TableMetadata", metadata)
    for schema in metadata["schemas"]:
        _has("Schema", schema)
        for field in schema["fields"]:
            _has("StructField", field)
    for spec in metadata["partition-specs"]:
        _has("PartitionSpec", spec)
        for field in spec["fields"]:
            _has("PartitionField", field)
    for order in metadata["sort-orders"]:
        _has("SortOrder", order)
        for field in order["fields"]:
            _has("SortField", field)
    for snapshot in metadata["snapshots"]:
        _has("Snapshot", snapshot)
        assert "operation" in snapshot["summary"]
    for ref in metadata["refs"].values():
        _has("SnapshotReference", ref)
    for entry in metadata["snapshot-log"]:
        _has("SnapshotLog", entry)


@pytest.fixture
def http(iceberg_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{iceberg_server.url}/iceberg/v1", timeout=10) as client:
        yield client


def _append(iceberg: RestCatalog, name: str, ids: range) -> None:
    table = iceberg.load_table(name)
    table.append(
        pa.Table.from_pylist(
            [{"ID": i, "REGION": "eu", "AMOUNT": None, "NOTE": None} for i in ids],
            schema=table.schema().as_arrow(),
        )
    )


# --- 1. optional members left out, required ones kept ---------------------------------------


def test_answers_leave_out_optional_members_and_keep_required_ones(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    loaded = http.get("/namespaces/PUBLIC/tables/ORDERS").json()
    _table_answer(loaded)
    # No snapshot yet, no docs: absent, not null; the metadata file is named.
    assert "current-snapshot-id" not in loaded["metadata"]
    assert loaded["metadata-location"].endswith(".metadata.json")
    assert all("doc" not in f for f in loaded["metadata"]["schemas"][-1]["fields"])
    _append(iceberg, "PUBLIC.ORDERS", range(3))
    _table_answer(http.get("/namespaces/PUBLIC/tables/ORDERS").json())
    config = http.get("/config").json()
    _no_null(config)
    _has("CatalogConfig", config)
    namespace = http.get("/namespaces/PUBLIC").json()
    _has("GetNamespaceResponse", namespace)
    changed = http.post("/namespaces/PUBLIC/properties", json={"updates": {"a": "1"}}).json()
    _no_null(changed)
    _has("UpdateNamespacePropertiesResponse", changed)
    refused = http.get("/namespaces/NOPE").json()
    _has("ErrorModel", refused["error"])


# --- 2. errors as the Java client reads them ------------------------------------------------


def test_a_table_in_a_missing_namespace_is_no_such_table(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    with pytest.raises(NoSuchTableError, match=r"Table does not exist: NOPE\.T"):
        iceberg.load_table("NOPE.T")
    assert not iceberg.table_exists("NOPE.T")
    for answer in (
        http.get("/namespaces/NOPE/tables/T"),
        http.delete("/namespaces/NOPE/tables/T"),
        http.post("/namespaces/NOPE/tables/T", json={"requirements": [], "updates": []}),
    ):
        assert answer.status_code == 404
        assert answer.json()["error"]["type"] == "NoSuchTableException"
    # Listing or creating in it still names the missing namespace.
    assert http.get("/namespaces/NOPE/tables").json()["error"]["type"] == (
        "NoSuchNamespaceException"
    )


def test_a_missing_parent_is_no_such_namespace(iceberg: RestCatalog, http: httpx.Client) -> None:
    assert iceberg.list_namespaces("PUBLIC") == []
    with pytest.raises(NoSuchNamespaceError, match="Namespace does not exist: NOPE"):
        iceberg.list_namespaces("NOPE")
    refused = http.get("/namespaces", params={"parent": "NOPE"})
    assert refused.status_code == 404
    assert refused.json()["error"]["type"] == "NoSuchNamespaceException"


# --- 3. the endpoints advertised are the ones served ----------------------------------------


def test_config_lists_the_endpoints_served(http: httpx.Client) -> None:
    config = http.get("/config", params={"warehouse": "any"}).json()
    assert config == {"defaults": {}, "overrides": {}, "endpoints": list(ENDPOINTS)}
    # Each answers (not 404 for an unknown path, not 405 for an unknown method).
    for endpoint in config["endpoints"]:
        method, path = endpoint.split(" ")
        path = path.replace("/v1/{prefix}", "").format(namespace="NOPE", table="T", view="V")
        answered = http.request(method, path, json={})
        assert answered.status_code != 405, endpoint
        if answered.status_code == 404 and method != "HEAD":  # the object, not the route
            assert answered.json()["error"]["type"] in (
                "NoSuchNamespaceException",
                "NoSuchTableException",
                "NoSuchViewException",
            ), endpoint


# --- 4. paging ------------------------------------------------------------------------------


def _pages(http: httpx.Client, path: str, member: str, size: int) -> list[list[Any]]:
    pages, token = [], ""
    while True:
        body = http.get(path, params={"pageToken": token, "pageSize": size}).json()
        _no_null(body)
        pages.append(body[member])
        if "next-page-token" not in body:
            return pages
        token = body["next-page-token"]


def test_lists_page_with_a_token_and_answer_all_without(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    for name in ("A", "B", "C", "D"):
        iceberg.create_namespace(name)
        iceberg.create_table(f"A.T{name}", ORDERS)
    everything = http.get("/namespaces", params={"pageSize": 2}).json()
    assert everything == {"namespaces": [["A"], ["B"], ["C"], ["D"], ["PUBLIC"], ["SYSTEM"]]}
    assert _pages(http, "/namespaces", "namespaces", 2) == [
        [["A"], ["B"]],
        [["C"], ["D"]],
        [["PUBLIC"], ["SYSTEM"]],
    ]
    pages = _pages(http, "/namespaces/A/tables", "identifiers", 2)
    assert [[t["name"] for t in page] for page in pages] == [["TA", "TB"], ["TC", "TD"]]
    assert len(iceberg.list_tables("A")) == 4


# --- 5. ETag, If-None-Match, snapshots=refs, access delegation --------------------------------


def test_table_answers_carry_an_etag_that_answers_304_while_unchanged(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    created = http.post(
        "/namespaces/PUBLIC/tables",
        json={"name": "ORDERS", "schema": json.loads(ORDERS.model_dump_json())},
    )
    assert created.status_code == 200 and created.headers["ETag"].startswith('"')
    path = "/namespaces/PUBLIC/tables/ORDERS"
    loaded = http.get(path, headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
    etag = loaded.headers["ETag"]
    unchanged = http.get(path, headers={"If-None-Match": etag})
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["ETag"] == etag
    assert http.get(path, headers={"If-None-Match": '"other", W/' + etag}).status_code == 304
    assert http.get(path, headers={"If-None-Match": '"other"'}).status_code == 200
    _append(iceberg, "PUBLIC.ORDERS", range(2))
    changed = http.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    committed = http.post(
        path,
        json={
            "requirements": [],
            "updates": [{"action": "set-properties", "updates": {"owner": "ann"}}],
        },
    )
    assert committed.status_code == 200 and "ETag" in committed.headers
    _table_answer(committed.json(), "CommitTableResponse")


def test_snapshots_refs_answers_only_the_referenced_snapshots(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    _append(iceberg, "PUBLIC.ORDERS", range(2))
    _append(iceberg, "PUBLIC.ORDERS", range(2, 4))
    path = "/namespaces/PUBLIC/tables/ORDERS"
    every = http.get(path, params={"snapshots": "all"})
    refs = http.get(path, params={"snapshots": "refs"})
    assert http.get(path).json() == every.json()
    current = every.json()["metadata"]["current-snapshot-id"]
    assert len(every.json()["metadata"]["snapshots"]) == 2
    assert [s["snapshot-id"] for s in refs.json()["metadata"]["snapshots"]] == [current]
    assert refs.headers["ETag"] != every.headers["ETag"]
    assert http.get(path, params={"snapshots": "some"}).status_code == 400


# --- 6. metrics reports ---------------------------------------------------------------------

SCAN_REPORT = {
    "report-type": "scan-report",
    "table-name": "c.PUBLIC.ORDERS",
    "snapshot-id": 1,
    "filter": True,
    "schema-id": 0,
    "projected-field-ids": [1],
    "projected-field-names": ["ID"],
    "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds"}},
}
COMMIT_REPORT = {
    "report-type": "commit-report",
    "table-name": "c.PUBLIC.ORDERS",
    "snapshot-id": 1,
    "sequence-number": 1,
    "operation": "append",
    "metrics": {},
    "metadata": {"engine": "test"},
}


def test_metrics_reports_are_counted(
    iceberg: RestCatalog, http: httpx.Client, iceberg_server: RunningServer
) -> None:
    iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    path = "/namespaces/PUBLIC/tables/ORDERS/metrics"
    assert http.post(path, json=SCAN_REPORT).status_code == 204
    assert http.post(path, json=SCAN_REPORT).status_code == 204
    assert http.post(path, json=COMMIT_REPORT).status_code == 204
    malformed = http.post(path, json={"report-type": "scan-report", "table-name": "t"})
    assert malformed.status_code == 400
    assert "malformed scan-report" in malformed.json()["error"]["message"]
    missing = http.post("/namespaces/PUBLIC/tables/NOPE/metrics", json=SCAN_REPORT)
    assert missing.json()["error"]["type"] == "NoSuchTableException"
    exported = httpx.get(f"{iceberg_server.url}/metrics", timeout=10).text
    assert 'catalog_iceberg_metrics_reports_total{report_type="scan-report"} 2.0' in exported
    assert 'catalog_iceberg_metrics_reports_total{report_type="commit-report"} 1.0' in exported


# --- 7. unknown query parameters ------------------------------------------------------------


def test_unknown_query_parameters_are_ignored(
    http: httpx.Client, iceberg_server: RunningServer
) -> None:
    assert http.get("/config", params={"newer-client-option": "1"}).status_code == 200
    assert http.get("/namespaces", params={"returnProperties": "true"}).status_code == 200
    # The catalog's own API still refuses them.
    own = httpx.get(f"{iceberg_server.url}/v1/schemas", params={"nope": "1"}, timeout=10)
    assert (own.status_code, own.json()["code"]) == (400, "UNKNOWN_PARAMETER")


# --- 8. names matching ignoring case --------------------------------------------------------


def test_a_name_matching_one_object_ignoring_case_resolves_to_it(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    created = iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    listed = http.get("/namespaces/public/tables").json()
    assert listed == {"identifiers": [{"namespace": ["PUBLIC"], "name": "ORDERS"}]}
    loaded = iceberg.load_table("public.orders")
    assert loaded.metadata.table_uuid == created.metadata.table_uuid
    assert iceberg.table_exists("Public.Orders")
    assert http.get("/namespaces/public").json()["namespace"] == ["PUBLIC"]
    _append(iceberg, "public.orders", range(2))  # a commit by the lower-case names
    assert iceberg.load_table("PUBLIC.ORDERS").scan().to_arrow().num_rows == 2
    iceberg.drop_table("public.orders")
    assert not iceberg.table_exists("PUBLIC.ORDERS")


def test_an_exact_match_wins_and_two_inexact_ones_are_refused(
    iceberg: RestCatalog, http: httpx.Client
) -> None:
    iceberg.create_namespace("Sales")
    iceberg.create_namespace("SALES")
    iceberg.create_table("SALES.ORDERS", ORDERS)
    assert iceberg.list_tables("SALES") == [("SALES", "ORDERS")]
    assert iceberg.list_tables("Sales") == []
    refused = http.get("/namespaces/sales")
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "namespace sales is ambiguous: it matches SALES and Sales ignoring case; name one exactly"
    )
    iceberg.create_table("SALES.Orders", ORDERS)
    assert iceberg.load_table("SALES.Orders").name() == ("SALES", "Orders")
    refused = http.get("/namespaces/SALES/tables/orders")
    assert "matches ORDERS and Orders" in refused.json()["error"]["message"]


# --- 9. column docs -------------------------------------------------------------------------


def test_column_docs_are_kept_and_answered(iceberg: RestCatalog, http: httpx.Client) -> None:
    documented = Schema(
        NestedField(1, "ID", LongType(), required=True, doc="the order"),
        NestedField(2, "NOTE", StringType(), required=False),
        identifier_field_ids=[1],
    )
    table = iceberg.create_table("PUBLIC.NOTES", documented)
    assert table.schema().find_field("ID").doc == "the order"
    with table.update_schema() as update:
        update.update_column("NOTE", doc="free text")
    reloaded = iceberg.load_table("PUBLIC.NOTES").schema()
    assert [(f.name, f.doc) for f in reloaded.fields] == [
        ("ID", "the order"),
        ("NOTE", "free text"),
    ]
    fields = http.get("/namespaces/PUBLIC/tables/NOTES").json()["metadata"]["schemas"][-1]
    assert [f.get("doc") for f in fields["fields"]] == ["the order", "free text"]


# --- 10. HEAD and DELETE --------------------------------------------------------------------


def test_head_answers_204_or_404_and_delete_204(iceberg: RestCatalog, http: httpx.Client) -> None:
    iceberg.create_namespace("SALES")
    iceberg.create_table("SALES.ORDERS", ORDERS)
    assert http.head("/namespaces/SALES").status_code == 204
    assert http.head("/namespaces/NOPE").status_code == 404
    assert http.head("/namespaces/SALES/tables/ORDERS").status_code == 204
    assert http.head("/namespaces/SALES/tables/NOPE").status_code == 404
    assert http.head("/namespaces/NOPE/tables/ORDERS").status_code == 404
    dropped = http.delete("/namespaces/SALES/tables/ORDERS")
    assert (dropped.status_code, dropped.content) == (204, b"")
    dropped = http.delete("/namespaces/SALES")
    assert (dropped.status_code, dropped.content) == (204, b"")
