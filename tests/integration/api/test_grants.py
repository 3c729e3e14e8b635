"""Grants on a real server: each principal sees and does what it was granted, and no more.

Principals of the role ``none`` hold only their grants. Over the Iceberg REST protocol, what
they may not see is missing (404) and left out of lists, what they see but may not change is
a 403; over ``/v1/ddl`` each command takes its privileges; a creator owns what it made. Who
could do what is answered as of any moment, and a revoke applies at its version.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token
from tests.integration.api.test_event_stream import frames, until_bookmark

COLUMNS = [{"name": "ID", "type": "INT64", "nullable": False}]
ICEBERG_SCHEMA = {
    "type": "struct",
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _table(schema: str, name: str) -> dict[str, Any]:
    return {
        "op": "create_table",
        "schema": schema,
        "name": name,
        "columns": COLUMNS,
        "primary_key": ["ID"],
    }


def _grant(privileges: list[str], on: str, to: str, grantee: str, **names: str) -> dict[str, Any]:
    return {"op": "grant", "privileges": privileges, "on": on, "to": to, "grantee": grantee} | names


class Site:
    """A server with auth on, an admin token, and principals of the role ``none``."""

    def __init__(self, server: RunningServer, store: str) -> None:
        self.server, self.store = server, store
        self.admin = issue_token(store, Role.ADMIN)

    def ddl(self, token: str, *commands: dict[str, Any]) -> httpx.Response:
        return httpx.post(
            f"{self.server.url}/v1/ddl",
            json={"commands": list(commands)},
            headers=_bearer(token),
            timeout=10,
        )

    def admin_ddl(self, *commands: dict[str, Any]) -> int:
        answer = self.ddl(self.admin, *commands)
        assert answer.status_code == 200, answer.text
        version: int = answer.json()["version"]
        return version

    def principal(self, name: str) -> str:
        made = httpx.post(
            f"{self.server.url}/v1/principals",
            json={"name": name, "role": "none"},
            headers=_bearer(self.admin),
            timeout=10,
        )
        assert made.status_code == 201, made.text
        form = {
            "grant_type": "client_credentials",
            "client_id": made.json()["client_id"],
            "client_secret": made.json()["client_secret"],
            "scope": "catalog",
        }
        signed = httpx.post(f"{self.server.url}/iceberg/v1/oauth/tokens", data=form, timeout=10)
        assert signed.status_code == 200, signed.text
        token: str = signed.json()["access_token"]
        return token

    def iceberg(self, method: str, path: str, token: str, **kw: Any) -> httpx.Response:
        return httpx.request(
            method, f"{self.server.url}/iceberg/v1{path}", headers=_bearer(token), timeout=10, **kw
        )

    def get(self, path: str, **params: Any) -> Any:
        answer = httpx.get(
            f"{self.server.url}/v1{path}", params=params, headers=_bearer(self.admin), timeout=10
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    def get_as(self, token: str, path: str, **params: Any) -> Any:
        answer = httpx.get(
            f"{self.server.url}{path}", params=params, headers=_bearer(token), timeout=10
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    def tables(self, schema: str) -> list[str]:
        names: list[str] = self.get(f"/schemas/{schema}/tables")
        return names


@pytest.fixture
def site(api_servers: ServerFactory, tmp_path: Path) -> Site:
    store = f"sqlite:///{tmp_path}/catalog.db"
    return Site(api_servers.start(store, auth="on", sse_heartbeat_s=0.3), store)


def _error(answer: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = answer.json()["error"]
    return error


def test_an_iceberg_client_sees_only_what_it_was_granted(site: Site) -> None:
    ann, bob = site.principal("ann"), site.principal("bob")
    site.admin_ddl(
        {"op": "create_schema", "name": "SALES"},
        {"op": "create_schema", "name": "HR"},
        _table("SALES", "ORDERS"),
        _table("SALES", "ITEMS"),
        _table("HR", "PAY"),
        {"op": "create_role", "name": "MARKETING"},
        _grant(["USAGE"], "schema", "role", "MARKETING", name="SALES"),
        _grant(["SELECT"], "table", "role", "MARKETING", schema="SALES", name="ORDERS"),
        _grant(["USAGE"], "role", "user", "ann", name="MARKETING"),
    )
    listed = site.iceberg("GET", "/namespaces", ann).json()["namespaces"]
    assert listed == [["SALES"]]
    tables = site.iceberg("GET", "/namespaces/SALES/tables", ann).json()["identifiers"]
    assert [t["name"] for t in tables] == ["ORDERS"]
    assert site.iceberg("GET", "/namespaces/SALES/tables/ORDERS", ann).status_code == 200
    hidden = site.iceberg("GET", "/namespaces/SALES/tables/ITEMS", ann)
    assert hidden.status_code == 404
    assert _error(hidden)["type"] == "NoSuchTableException"
    assert _error(hidden)["message"] == "Table does not exist: SALES.ITEMS"
    assert site.iceberg("HEAD", "/namespaces/HR", ann).status_code == 404
    assert site.iceberg("GET", "/namespaces/HR/tables", ann).status_code == 404
    assert site.iceberg("GET", "/namespaces/HR/tables/PAY", ann).status_code == 404
    # Seen but not changeable: a 403 naming the privilege it lacks.
    dropped = site.iceberg("DELETE", "/namespaces/SALES/tables/ORDERS", ann)
    assert dropped.status_code == 403, dropped.text
    assert _error(dropped)["type"] == "ForbiddenException"
    assert "DROP on table SALES.ORDERS" in _error(dropped)["message"]
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "b"}}]}
    altered = site.iceberg("POST", "/namespaces/SALES/tables/ORDERS", ann, json=commit)
    assert altered.status_code == 403 and "ALTER on table SALES.ORDERS" in altered.text
    # The catalog's own reads show ann her part of each version, and nothing of the rest.
    mine = httpx.get(f"{site.server.url}/v1/catalog", headers=_bearer(ann), timeout=10).json()
    assert [s["name"] for s in mine["schemas"]] == ["SALES"]
    assert [t["name"] for t in mine["tables"]] == ["ORDERS"]
    assert [i["name"] for i in mine["indexes"]] == ["ORDERS_PK"]
    assert mine["system_views"] == []
    for path in ("/v1/schemas/SALES/tables/ITEMS", "/v1/schemas/HR/tables/PAY"):
        assert (
            httpx.get(site.server.url + path, headers=_bearer(ann), timeout=10).status_code == 404
        )
    # The timeline and diffs tell ann what changed of her part only.
    timeline = site.get_as(ann, "/v1/versions")["versions"]
    told = [c for v in timeline for c in v["changes"]]
    assert told == [
        "created schema SALES",
        "created zone Default",
        "created table ORDERS",
        "created index ORDERS_PK",
    ]
    assert all(v["entries"] == [] and v["origins"] == [] for v in timeline)
    changed = site.get_as(ann, "/v1/diff", **{"from": 0, "to": timeline[-1]["version"]})
    assert sorted(c["name"] for c in changed["changes"]) == [
        "Default",
        "ORDERS",
        "ORDERS_PK",
        "SALES",
    ]
    # Names resolve ignoring case among what ann sees only: a hidden "sales" is no rival.
    site.admin_ddl({"op": "create_schema", "name": "sales"})
    for path in ("/namespaces/Sales", "/namespaces/Sales/tables/orders"):
        assert site.iceberg("GET", path, ann).status_code == 200, path
    # Bob holds nothing: an empty catalog.
    assert site.iceberg("GET", "/namespaces", bob).json()["namespaces"] == []
    assert site.iceberg("GET", "/namespaces/SALES/tables/ORDERS", bob).status_code == 404
    # Every refusal left the catalog as it was.
    assert sorted(site.tables("SALES")) == ["ITEMS", "ORDERS"]


def test_a_creator_owns_what_it_makes_and_grants_need_manage_grants(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="catalog.audit")
    ann = site.principal("ann")
    site.principal("bob")
    site.admin_ddl(
        {"op": "create_schema", "name": "SALES"},
        {"op": "create_schema", "name": "HR"},
        _grant(["USAGE", "CREATE"], "schema", "user", "ann", name="SALES"),
    )
    made = site.iceberg(
        "POST", "/namespaces/SALES/tables", ann, json={"name": "NEW", "schema": ICEBERG_SCHEMA}
    )
    assert made.status_code == 200, made.text
    assert site.iceberg("GET", "/namespaces/SALES/tables/NEW", ann).status_code == 200
    owned = site.get("/grants", to="user", grantee="ann")["grants"]
    assert "OWNERSHIP ON TABLE SALES.NEW TO USER ann" in [g["words"] for g in owned]
    # Over /v1/ddl, each command takes its privileges; a batch is all or nothing.
    refused = site.ddl(ann, _table("SALES", "MORE"), _table("HR", "PAY"))
    assert refused.status_code == 404, refused.text  # a schema ann may not see is missing
    assert refused.json()["detail"] == "statement 2: schema HR not found"
    assert "MORE" not in site.tables("SALES")
    # Granting takes MANAGE_GRANTS: an owner holds it on what it owns, and nothing else.
    shared = site.ddl(ann, _grant(["SELECT"], "table", "user", "bob", schema="SALES", name="NEW"))
    assert shared.status_code == 200, shared.text
    refused = site.ddl(ann, _grant(["USAGE"], "schema", "user", "bob", name="SALES"))
    assert refused.status_code == 403 and "MANAGE_GRANTS on schema SALES" in refused.text
    # The audit trail: each grant of more than reading, and each refusal with what it lacked.
    audit = [json.loads(r.getMessage()) for r in caplog.records if r.name == "catalog.audit"]
    granted = [a["grant"] for a in audit if a["decision"] == "granted"]
    assert granted == [
        "CREATE ON SCHEMA SALES TO USER ann",
        "OWNERSHIP ON TABLE SALES.NEW TO USER ann",
    ]
    denied = [
        (a["subject"], a["privilege"], a["object"]) for a in audit if a["decision"] == "denied"
    ]
    assert denied == [
        ("ann", "CREATE", "schema HR"),  # refused as missing, and audited as a denial
        ("ann", "MANAGE_GRANTS", "schema SALES"),
    ]
    # The owner drops its table; its grants go with it, in the same version.
    dropped = site.iceberg("DELETE", "/namespaces/SALES/tables/NEW", ann)
    assert dropped.status_code == 204, dropped.text
    assert "NEW" not in site.tables("SALES")
    left = [g["words"] for g in site.get("/grants")["grants"]]
    assert left == ["USAGE ON SCHEMA SALES TO USER ann", "CREATE ON SCHEMA SALES TO USER ann"]


def test_who_could_is_answered_as_of_any_moment(site: Site) -> None:
    ann = site.principal("ann")
    before = site.admin_ddl(
        {"op": "create_schema", "name": "SALES"},
        _table("SALES", "ORDERS"),
        {"op": "create_role", "name": "ANALYSTS"},
        {"op": "create_role", "name": "MARKETING"},
        _grant(["USAGE", "SELECT"], "schema", "role", "ANALYSTS", name="SALES"),
        _grant(["USAGE"], "role", "role", "MARKETING", name="ANALYSTS"),
        _grant(["USAGE"], "role", "user", "ann", name="MARKETING"),
    )
    assert site.iceberg("GET", "/namespaces/SALES/tables/ORDERS", ann).status_code == 200
    who = site.get("/access", privilege="SELECT", object="SALES.ORDERS", version=before)
    holders = {(h["kind"], h["name"]): h for h in who["holders"]}
    assert set(holders) == {("user", "ann"), ("role", "ANALYSTS"), ("role", "MARKETING")}
    words = {g["id"]: g["words"] for g in who["grants"]}
    chain = [words[i] for i in holders[("user", "ann")]["through"]]
    assert chain == [
        "SELECT ON SCHEMA SALES TO ROLE ANALYSTS",
        "ROLE ANALYSTS TO ROLE MARKETING",
        "ROLE MARKETING TO USER ann",
    ]
    after = site.admin_ddl(
        {
            "op": "revoke",
            "privileges": ["USAGE"],
            "on": "role",
            "name": "MARKETING",
            "to": "user",
            "grantee": "ann",
        }
    )
    gone = site.iceberg("GET", "/namespaces/SALES/tables/ORDERS", ann)
    assert gone.status_code == 404, gone.text
    now = site.get("/access", privilege="SELECT", object="SALES.ORDERS")
    assert ("user", "ann") not in {(h["kind"], h["name"]) for h in now["holders"]}
    then = site.get("/access", privilege="SELECT", object="SALES.ORDERS", version=before)
    assert then["holders"] == who["holders"]  # the past does not change
    diff = site.get("/access/diff", from_version=before, to_version=after)
    assert [g["words"] for g in diff["revoked"]] == ["ROLE MARKETING TO USER ann"]
    assert diff["granted"] == []
    # A grant taken back ends reads of the past too, of what is still there...
    pinned = f"/warehouse@v{before}/namespaces/SALES/tables/ORDERS"
    assert site.iceberg("GET", pinned, ann).status_code == 404
    then_seen = site.get_as(ann, "/v1/catalog", version=before)
    assert then_seen["tables"] == []
    # ... while what was dropped since stays readable as of when ann could read it.
    site.admin_ddl(_grant(["USAGE"], "role", "user", "ann", name="MARKETING"))
    again = site.admin_ddl({"op": "drop_table", "schema": "SALES", "name": "ORDERS"})
    assert site.iceberg("GET", "/namespaces/SALES/tables/ORDERS", ann).status_code == 404
    assert site.iceberg("GET", pinned.replace(f"v{before}", f"v{again - 1}"), ann).is_success


@pytest.mark.timeout(60)
def test_a_subscriber_gets_only_the_events_about_what_it_sees(site: Site) -> None:
    ann = site.principal("ann")
    first = site.admin_ddl(
        {"op": "create_schema", "name": "SALES"},
        _table("SALES", "ORDERS"),
        _table("SALES", "ITEMS"),
        _grant(["USAGE"], "schema", "user", "ann", name="SALES"),
        _grant(["SELECT"], "table", "user", "ann", schema="SALES", name="ORDERS"),
    )
    site.admin_ddl({"op": "create_role", "name": "HIDDEN"})
    site.admin_ddl(
        {
            "op": "add_columns",
            "schema": "SALES",
            "table": "ITEMS",
            "columns": [COLUMNS[0] | {"name": "B", "nullable": True}],
        }
    )
    site.admin_ddl(
        {
            "op": "add_columns",
            "schema": "SALES",
            "table": "ORDERS",
            "columns": [COLUMNS[0] | {"name": "A", "nullable": True}],
        }
    )
    last = site.admin_ddl({"op": "drop_table", "schema": "SALES", "name": "ORDERS"})
    with httpx.Client(base_url=site.server.url, timeout=30, headers=_bearer(ann)) as http:
        params = {"from_version": str(first)}
        with http.stream("GET", "/v1/events", params=params) as stream:
            assert stream.status_code == 200
            seen = until_bookmark(stream, last)
    assert seen == [
        ("SCHEMA_CREATE", "SALES"),
        ("TABLE_CREATE", "ORDERS"),
        ("INDEX_CREATE", "ORDERS_PK"),
        ("TABLE_ALTER", "ORDERS"),
        ("INDEX_REMOVED", "ORDERS_PK"),
        ("TABLE_DROP", "ORDERS"),
    ]


@pytest.mark.timeout(60)
def test_a_stream_ends_when_its_principal_is_dropped(site: Site) -> None:
    ann = site.principal("ann")
    http = httpx.Client(base_url=site.server.url, timeout=30, headers=_bearer(ann))
    with http, http.stream("GET", "/v1/events") as stream:
        assert stream.status_code == 200
        dropped = httpx.delete(
            f"{site.server.url}/v1/principals/ann", headers=_bearer(site.admin), timeout=10
        )
        assert dropped.status_code in (200, 204), dropped.text
        error = next(f for f in frames(stream) if f.get("event") == "error")
    body = json.loads(error["data"])
    assert body["code"] == "UNAUTHENTICATED"
    assert body["detail"].startswith("principal ann no longer exists: sign in again")
    assert body["resume"]
