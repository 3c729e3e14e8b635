"""Views over Iceberg REST: created, listed, loaded, replaced, renamed and dropped, and as of T.

PyIceberg creates, loads, lists and drops views; replaces and renames go as the spec's JSON
bodies, as Java's client sends them (``behaviours/test_views`` runs that client itself).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchViewError, ViewAlreadyExistsError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_pins import pinned

pytestmark = pytest.mark.timeout(60)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False, doc="the event"),
    NestedField(2, "kind", StringType(), required=False),
)


def version(sql: str, dialect: str = "spark", schema_id: int = 0) -> ViewVersion:
    """Return a view version of one query, as an engine sends it."""
    return ViewVersion(
        version_id=1,
        schema_id=schema_id,
        timestamp_ms=int(time.time() * 1000),
        summary={"engine-name": dialect},
        representations=[SQLViewRepresentation(type="sql", sql=sql, dialect=dialect)],
        default_namespace=["PUBLIC"],
    )


def _views(server: RunningServer, path: str = "") -> str:
    return f"{server.url}/iceberg/v1/namespaces/PUBLIC/views{path}"


def replace_body(uuid: str, sql: str, dialect: str, **extra: Any) -> dict[str, Any]:
    """A replace as Java's client sends it: a new schema and version made current (-1)."""
    return {
        "requirements": [{"type": "assert-view-uuid", "uuid": uuid}],
        "updates": [
            {
                "action": "add-schema",
                "schema": {
                    "type": "struct",
                    "schema-id": 1,
                    "fields": [{"id": 1, "name": "n", "required": True, "type": "long"}],
                },
                "last-column-id": 1,
            },
            {
                "action": "add-view-version",
                "view-version": {
                    "version-id": 2,
                    "timestamp-ms": int(time.time() * 1000),
                    "schema-id": -1,
                    "summary": {},
                    "representations": [{"type": "sql", "sql": sql, "dialect": dialect}],
                    "default-namespace": ["PUBLIC"],
                },
            },
            {"action": "set-current-view-version", "view-version-id": -1},
            *extra.get("updates", []),
        ],
    }


def test_a_view_is_created_loaded_listed_and_dropped(iceberg: RestCatalog) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    view = iceberg.create_view("PUBLIC.RECENT", SCHEMA, version("SELECT id, kind FROM events"))
    metadata = view.metadata
    assert metadata.current_version_id == 1
    assert metadata.versions[0].representations[0].root.sql == "SELECT id, kind FROM events"
    assert [f.name for f in metadata.schemas[0].fields] == ["id", "kind"]
    assert metadata.schemas[0].fields[0].doc == "the event"

    loaded = iceberg.load_view("PUBLIC.RECENT")
    assert loaded.metadata.view_uuid == metadata.view_uuid
    assert iceberg.list_views("PUBLIC") == [("PUBLIC", "RECENT")]
    assert iceberg.list_tables("PUBLIC") == [("PUBLIC", "EVENTS")]
    assert iceberg.view_exists("PUBLIC.RECENT")

    iceberg.drop_view("PUBLIC.RECENT")
    assert not iceberg.view_exists("PUBLIC.RECENT")
    with pytest.raises(NoSuchViewError):
        iceberg.load_view("PUBLIC.RECENT")
    with pytest.raises(NoSuchViewError):
        iceberg.drop_view("PUBLIC.RECENT")


def test_views_and_tables_share_their_namespace(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    iceberg.create_view("PUBLIC.RECENT", SCHEMA, version("SELECT 1"))
    with pytest.raises(ViewAlreadyExistsError, match=r"View already exists: PUBLIC\.RECENT"):
        iceberg.create_view("PUBLIC.RECENT", SCHEMA, version("SELECT 1"))
    with pytest.raises(Exception, match=r"Table with same name already exists: PUBLIC\.EVENTS"):
        iceberg.create_view("PUBLIC.EVENTS", SCHEMA, version("SELECT 1"))
    with pytest.raises(Exception, match=r"View with same name already exists: PUBLIC\.RECENT"):
        iceberg.create_table("PUBLIC.RECENT", EVENTS)
    renamed = requests.post(
        f"{iceberg_server.url}/iceberg/v1/tables/rename",
        json={
            "source": {"namespace": ["PUBLIC"], "name": "EVENTS"},
            "destination": {"namespace": ["PUBLIC"], "name": "RECENT"},
        },
        timeout=10,
    )
    assert renamed.status_code == 409
    assert "Cannot rename PUBLIC.EVENTS to PUBLIC.RECENT. View already exists" in renamed.text
    dropped = requests.delete(f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC", timeout=10)
    assert dropped.status_code == 409  # its table and its view


def test_a_replace_adds_a_version_and_keeps_every_dialect(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    view = iceberg.create_view("PUBLIC.V", SCHEMA, version("SELECT id, kind FROM events"))
    uuid = view.metadata.view_uuid
    body = replace_body(uuid, "SELECT count(*) AS n FROM events", "spark")
    answer = requests.post(_views(iceberg_server, "/V"), json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    metadata = answer.json()["metadata"]
    assert metadata["current-version-id"] == 2
    assert [s["schema-id"] for s in metadata["schemas"]] == [0, 1]
    assert [e["version-id"] for e in metadata["version-log"]] == [1, 2]
    assert metadata["versions"][1]["schema-id"] == 1

    # the same version again changes nothing; a version with the trino text alone drops spark
    again = requests.post(_views(iceberg_server, "/V"), json=body, timeout=10)
    assert again.json()["metadata"]["current-version-id"] == 2
    trino_only = replace_body(uuid, "SELECT count(*) AS n FROM events", "trino")
    refused = requests.post(_views(iceberg_server, "/V"), json=trino_only, timeout=10)
    assert refused.status_code == 400
    assert "drops the spark query" in refused.json()["error"]["message"]

    stale = replace_body("00000000-0000-0000-0000-000000000000", "SELECT 2 AS n", "spark")
    conflict = requests.post(_views(iceberg_server, "/V"), json=stale, timeout=10)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["type"] == "CommitFailedException"


def test_a_view_keeps_its_newest_versions(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    view = iceberg.create_view(
        "PUBLIC.V",
        SCHEMA,
        version("SELECT 0 AS n"),
        properties={"version.history.num-entries": "3"},
    )
    uuid = view.metadata.view_uuid
    for n in range(1, 6):
        body = replace_body(uuid, f"SELECT {n} AS n", "spark")
        assert requests.post(_views(iceberg_server, "/V"), json=body, timeout=10).ok
    metadata = iceberg.load_view("PUBLIC.V").metadata
    assert [v.version_id for v in metadata.versions] == [4, 5, 6]
    assert metadata.current_version_id == 6
    assert [e.version_id for e in metadata.version_log] == [4, 5, 6]


def test_views_are_renamed_across_namespaces(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    iceberg.create_namespace("OTHER")
    iceberg.create_view("PUBLIC.V", SCHEMA, version("SELECT 1"))
    iceberg.create_view("PUBLIC.W", SCHEMA, version("SELECT 2"))

    def rename(to_namespace: str, to_name: str, name: str = "V") -> requests.Response:
        return requests.post(
            f"{iceberg_server.url}/iceberg/v1/views/rename",
            json={
                "source": {"namespace": ["PUBLIC"], "name": name},
                "destination": {"namespace": [to_namespace], "name": to_name},
            },
            timeout=10,
        )

    taken = rename("PUBLIC", "W")
    assert taken.status_code == 409
    assert "Cannot rename PUBLIC.V to PUBLIC.W. View already exists" in taken.text
    missing = rename("NOWHERE", "V")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "NoSuchNamespaceException"
    assert rename("OTHER", "MOVED").status_code == 204
    assert iceberg.list_views("OTHER") == [("OTHER", "MOVED")]
    assert iceberg.list_views("PUBLIC") == [("PUBLIC", "W")]
    gone = rename("PUBLIC", "X")
    assert gone.status_code == 404
    assert gone.json()["error"]["type"] == "NoSuchViewException"


def test_bad_views_are_refused_with_what_is_wrong(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    def create(**changes: Any) -> requests.Response:
        body: dict[str, Any] = {
            "name": "BAD",
            "schema": {
                "type": "struct",
                "schema-id": 0,
                "fields": [{"id": 1, "name": "a", "required": False, "type": "long"}],
            },
            "view-version": {
                "version-id": 1,
                "timestamp-ms": 1,
                "schema-id": 0,
                "summary": {},
                "representations": [{"type": "sql", "sql": "SELECT 1 AS a", "dialect": "spark"}],
                "default-namespace": ["PUBLIC"],
            },
            "properties": {},
        }
        for key, value in changes.items():
            if key == "fields":
                body["schema"]["fields"] = value
            else:
                body["view-version"][key] = value
        return requests.post(_views(iceberg_server), json=body, timeout=10)

    twice = [{"id": 1, "name": "a", "required": False, "type": "long"}] * 2
    cases = {
        "duplicate column name in view BAD: a": create(fields=twice),
        "the spark query of a view is blank": create(
            representations=[{"type": "sql", "sql": " ", "dialect": "spark"}]
        ),
        "Cannot add multiple queries for dialect spark": create(
            representations=[
                {"type": "sql", "sql": "SELECT 1 AS a", "dialect": "spark"},
                {"type": "sql", "sql": "SELECT 2 AS a", "dialect": "SPARK"},
            ]
        ),
        "at least one SQL representation": create(representations=[]),
        "dialect": create(representations=[{"type": "sql", "sql": "SELECT 1", "dialect": "a b"}]),
    }
    for expected, answer in cases.items():
        assert answer.status_code == 400, (expected, answer.text)
        assert expected in answer.json()["error"]["message"], answer.text
    assert iceberg.list_views("PUBLIC") == []


def test_a_pinned_catalog_sees_views_as_of_its_moment(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    view = iceberg.create_view("PUBLIC.V", SCHEMA, version("SELECT 1 AS n"))
    before = client.versions().latest
    body = replace_body(view.metadata.view_uuid, "SELECT 2 AS n", "spark")
    assert requests.post(_views(iceberg_server, "/V"), json=body, timeout=10).ok
    iceberg.create_view("PUBLIC.LATER", SCHEMA, version("SELECT 3"))

    at = pinned(iceberg_server, f"main@v{before}")
    assert at.list_views("PUBLIC") == [("PUBLIC", "V")]
    then = at.load_view("PUBLIC.V").metadata
    assert then.current_version_id == 1
    assert then.versions[-1].representations[0].root.sql == "SELECT 1 AS n"
    refused = requests.delete(
        f"{iceberg_server.url}/iceberg/v1/main@v{before}/namespaces/PUBLIC/views/V", timeout=10
    )
    assert refused.status_code == 406
    assert iceberg.load_view("PUBLIC.V").metadata.current_version_id == 2

    diff = client.diff(before, client.versions().latest)
    kinds = {(c.object_type, c.name, c.change) for c in diff.changes}
    assert ("view", "V", "altered") in kinds
    assert ("view", "LATER", "added") in kinds
