"""Attempts to get round grants, each refused with nothing written and nothing hidden told.

Ann (role ``none``) holds ``USAGE`` and ``CREATE`` on SALES; bob (role ``none``) holds
nothing, unless a test grants it; SECRET.PAY is the admin's, and SALES.ORDERS too.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.api.servers import ServerFactory
from tests.integration.api.test_grants import (
    ICEBERG_SCHEMA,
    Site,
    _bearer,
    _grant,
    _table,
)


@pytest.fixture
def site(api_servers: ServerFactory, tmp_path: Path) -> Site:
    store = f"sqlite:///{tmp_path}/catalog.db"
    return Site(api_servers.start(store, auth="on"), store)


@pytest.fixture
def people(site: Site) -> tuple[str, str]:
    ann, bob = site.principal("ann"), site.principal("bob")
    site.admin_ddl(
        {"op": "create_schema", "name": "SALES"},
        {"op": "create_schema", "name": "SECRET"},
        _table("SALES", "ORDERS"),
        _table("SECRET", "PAY"),
        _grant(["USAGE", "CREATE"], "schema", "user", "ann", name="SALES"),
    )
    return ann, bob


def _secret_tables(site: Site) -> list[str]:
    return sorted(site.tables("SECRET"))


def test_a_batch_is_judged_whole_even_past_a_command_its_check_cannot_try(
    site: Site, people: tuple[str, str]
) -> None:
    ann, _ = people
    made = site.iceberg(
        "POST", "/namespaces/SALES/tables", ann, json={"name": "MINE", "schema": ICEBERG_SCHEMA}
    )
    warehouse = made.json()["metadata"]["location"].rsplit("/", 1)[0]
    refused = site.ddl(
        ann,
        _table("SALES", "ELSEWHERE") | {"location": f"{warehouse}/elsewhere"},
        {"op": "drop_table", "schema": "SECRET", "name": "PAY"},
        _grant(["OWNERSHIP"], "catalog", "user", "ann"),
    )
    assert refused.status_code == 404, refused.text  # SECRET is missing, as ann sees it
    assert refused.json()["detail"] == "statement 2: table SECRET.PAY not found"
    assert _secret_tables(site) == ["PAY"]
    assert "ELSEWHERE" not in site.tables("SALES")
    assert [g["words"] for g in site.get("/grants", kind="catalog")["grants"]] == []


def test_a_cached_table_answer_is_no_way_round_its_visibility(
    site: Site, people: tuple[str, str]
) -> None:
    _, bob = people
    path = f"{site.server.url}/v1/schemas/SECRET/tables/PAY"
    assert httpx.get(path, headers=_bearer(site.admin), timeout=10).status_code == 200
    assert httpx.get(path, headers=_bearer(bob), timeout=10).status_code == 404


def test_views_cannot_be_taken_over_nor_read_hidden_tables(
    site: Site, people: tuple[str, str]
) -> None:
    ann, _ = people

    def sql(text: str, token: str = ann) -> httpx.Response:
        return httpx.post(
            f"{site.server.url}/v1/sql", json={"sql": text}, headers=_bearer(token), timeout=10
        )

    assert sql("CREATE VIEW SALES.REPORT AS SELECT ID FROM SALES.ORDERS", site.admin).is_success

    taken = sql("CREATE OR REPLACE VIEW SALES.REPORT AS SELECT 2 AS TWO")
    assert taken.status_code == 404, taken.text  # a view ann may not see is missing to her
    peek = sql("CREATE VIEW SALES.PEEK AS SELECT * FROM SECRET.PAY")
    assert peek.status_code == 422, peek.text
    assert "SECRET.PAY" in peek.json()["detail"]  # as ann wrote it: there is none she sees
    views = site.get("/views")["views"]
    assert [v["name"] for v in views] == ["REPORT"]


def test_a_commit_answers_metadata_only_to_who_may_load_it(
    site: Site, people: tuple[str, str]
) -> None:
    _, bob = people
    site.admin_ddl(
        _grant(["USAGE"], "schema", "user", "bob", name="SALES"),
        _grant(["DROP"], "table", "user", "bob", schema="SALES", name="ORDERS"),
    )
    empty: dict[str, list[Any]] = {"requirements": [], "updates": []}
    answer = site.iceberg("POST", "/namespaces/SALES/tables/ORDERS", bob, json=empty)
    assert answer.status_code == 403, answer.text
    assert "metadata" not in answer.json()


def test_a_table_id_names_nothing_hidden(site: Site, people: tuple[str, str]) -> None:
    _, bob = people
    table_id = site.get("/schemas/SECRET/tables/PAY")["table"]["id"]
    for method in ("GET", "POST"):
        body: dict[str, Any] = {
            "table_id": table_id,
            "files": [],
            "schema_version": 1,
            "mode": "append",
            "request_id": "r1",
        }
        answer = httpx.request(
            method,
            f"{site.server.url}/v1/data/commits",
            params={"table_id": table_id} if method == "GET" else None,
            json=body if method == "POST" else None,
            headers=_bearer(bob),
            timeout=10,
        )
        assert answer.status_code == 404, answer.text
        assert "PAY" not in answer.text and "SECRET" not in answer.text


def test_the_power_to_grant_does_not_make_itself_owner(site: Site, people: tuple[str, str]) -> None:
    _, bob = people
    site.admin_ddl(_grant(["USAGE", "MANAGE_GRANTS"], "schema", "user", "bob", name="SALES"))
    assert site.ddl(bob, _grant(["SELECT"], "schema", "user", "ann", name="SALES")).is_success
    for privileges in (["OWNERSHIP"], ["MANAGE_GRANTS"]):
        refused = site.ddl(bob, _grant(privileges, "schema", "user", "bob", name="SALES"))
        assert refused.status_code == 403, refused.text
        assert "OWNERSHIP on schema SALES" in refused.json()["detail"]
    refused = site.ddl(bob, _grant(["OWNERSHIP"], "catalog", "user", "bob"))
    assert refused.status_code == 403, refused.text


def test_a_change_that_changes_nothing_is_not_audited_as_a_grant(
    site: Site, people: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    ann, bob = people
    caplog.set_level(logging.WARNING, logger="catalog.audit")
    site.admin_ddl(_grant(["MODIFY"], "table", "user", "bob", schema="SALES", name="ORDERS"))
    caplog.clear()
    again = site.ddl(ann, _table("SALES", "ORDERS") | {"if_not_exists": True})
    assert again.status_code == 404 or again.json()["applied"] == [False]
    audit = [json.loads(r.getMessage()) for r in caplog.records if r.name == "catalog.audit"]
    assert [a for a in audit if a["decision"] == "granted"] == []
    assert bob  # bob's grant was the admin's, audited then
