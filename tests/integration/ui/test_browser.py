"""The catalog browser in a real headless Chromium (Debian's chromium and chromium-driver).

Pages are driven as a user would: the tables at the latest version and at a pinned version,
a table's columns, indexes and schema versions, the timeline, a diff, live updates from the
event stream, and the token prompt of a server that checks tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from api.client import CatalogClient
from api.wire.roles import Role
from catalog import ColumnType, IndexStatus
from catalog import commands as c
from tests.integration.api.servers import RunningServer, ServerFactory, issue_token
from tests.integration.ui.pages import open_page, texts, until


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[tuple[RunningServer, CatalogClient, list[int]]]:
    factory = ServerFactory()
    try:
        server = factory.start(f"sqlite:///{tmp_path}/catalog.db")
        with CatalogClient(server.url) as client:
            versions = [
                client.execute(c.CreateZone(name="Z", partitions=4, replicas=1)).version,
                client.execute(
                    c.CreateTable(
                        name="ORDERS",
                        zone="Z",
                        columns=[
                            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                            c.Column(name="QTY", type=ColumnType.INT32, nullable=False, default=1),
                        ],
                        primary_key=["ID"],
                    )
                ).version,
                client.sql("CREATE INDEX ORDERS_BY_QTY ON ORDERS (QTY)").version,
                client.sql("ALTER TABLE ORDERS ADD COLUMN NOTE VARCHAR(40)").version,
                client.sql("CREATE TABLE ITEMS (ID BIGINT PRIMARY KEY)").version,
            ]
            yield server, client, versions
    finally:
        factory.stop_all()


def test_tables_table_page_pin_timeline_diff_and_live_updates(
    browser: WebDriver, shop: tuple[RunningServer, CatalogClient, list[int]]
) -> None:
    server, client, versions = shop
    open_page(browser, server.url + "/ui/")
    until(browser, lambda d: len(texts(d, "table-row")) == 2, "two tables listed")
    assert [row.split()[1] for row in texts(browser, "table-row")] == ["ORDERS", "ITEMS"]
    assert f"version {versions[-1]}" in texts(browser, "title")[0]
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
    )
    assert loaded and all(url.startswith(server.url + "/") for url in loaded), loaded  # no CDN

    browser.find_element(By.LINK_TEXT, "ORDERS").click()
    until(browser, lambda d: len(texts(d, "column-row")) == 3, "ORDERS columns")
    columns = texts(browser, "column-row")
    assert columns[0].split()[:3] == ["0", "ID", "INT64"] and "PK" in columns[0]
    assert "STRING(40)" in columns[2]
    indexes = {row.split()[0]: row for row in texts(browser, "index-row")}
    assert IndexStatus.REGISTERED.value in indexes["ORDERS_BY_QTY"]  # built later, by the DB
    assert IndexStatus.AVAILABLE.value in indexes["ORDERS_PK"]  # created with the table
    assert len(texts(browser, "schema-version")) == 2
    orders = client.table("PUBLIC", "ORDERS")
    assert texts(browser, "location") == [orders.location]  # in the warehouse beside the file

    # Pin the version before NOTE was added: the same page shows that moment.
    Select(browser.find_element(By.ID, "pin-mode")).select_by_value("version")
    browser.find_element(By.ID, "pin-value").send_keys(str(versions[2]))
    browser.find_element(By.CSS_SELECTOR, '#pin button[type="submit"]').click()
    until(browser, lambda d: len(texts(d, "column-row")) == 2, "the pinned version's columns")
    browser.find_element(By.CSS_SELECTOR, '[data-testid="nav-tables"]').click()
    until(browser, lambda d: texts(d, "engine-pin"), "the engines' warehouse for the pin")
    assert f"catalog@v{versions[2]}" in texts(browser, "engine-pin")[0]
    Select(browser.find_element(By.ID, "pin-mode")).select_by_value("latest")
    browser.find_element(By.CSS_SELECTOR, '#pin button[type="submit"]').click()

    browser.find_element(By.CSS_SELECTOR, '[data-testid="nav-timeline"]').click()
    until(browser, lambda d: len(texts(d, "version-row")) == versions[-1], "every version")
    rows = texts(browser, "version-row")
    # Newest first, in words: ITEMS, then ADD COLUMN NOTE.
    assert "created table PUBLIC.ITEMS, 1 column" in rows[0]
    assert "added column NOTE to PUBLIC.ORDERS" in rows[1]
    assert "object_id_gen" not in " ".join(texts(browser, "version-change"))
    assert "local via python-client" in texts(browser, "version-origin")[0]  # who, from what
    assert browser.find_elements(By.CSS_SELECTOR, "svg.timeline circle")

    open_page(browser, server.url + f"/ui/#/diff?from={versions[2]}&to={versions[4]}")
    until(browser, lambda d: len(texts(d, "change-row")) >= 2, "the diff")
    changes = " | ".join(texts(browser, "change-row"))
    assert "ITEMS added" in changes and "ORDERS altered" in changes
    # The altered table shows the one column added, not the whole table twice.
    assert texts(browser, "column-change") == ["+ column NOTE: STRING(40)"]
    assert texts(browser, "field-change") == ["schema_version 1 → 2"]

    # The leases that hold, and what they keep.
    lease = client.take_lease(client.now(), 600, "ui-report")
    browser.find_element(By.CSS_SELECTOR, '[data-testid="nav-leases"]').click()
    until(browser, lambda d: len(texts(d, "lease-row")) == 1, "the lease")
    assert (
        lease.id in texts(browser, "lease-row")[0] and "ui-report" in texts(browser, "lease-row")[0]
    )
    client.release_lease(lease.id)

    # Live: a change made elsewhere shows up without a reload.
    open_page(browser, server.url + "/ui/")
    until(browser, lambda d: f"v{versions[-1]}" in d.find_element(By.ID, "live").text, "live")
    later = client.sql("CREATE TABLE LATER (ID BIGINT PRIMARY KEY)").version
    until(browser, lambda d: len(texts(d, "table-row")) == 3, "the new table appears live")
    until(browser, lambda d: f"v{later}" in d.find_element(By.ID, "live").text, "live badge")


def test_a_server_that_checks_tokens_asks_for_one(browser: WebDriver, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/catalog.db"
    factory = ServerFactory()
    try:
        _ask_for_a_token(browser, factory.start(store, auth="on"), store)
    finally:
        factory.stop_all()


def _ask_for_a_token(browser: WebDriver, server: RunningServer, store: str) -> None:
    reader = issue_token(store, Role.READER)
    browser.get(server.url + "/ui/")
    browser.execute_script("sessionStorage.clear()")
    open_page(browser, server.url + "/ui/")
    until(browser, lambda d: d.find_element(By.ID, "token-form").is_displayed(), "token prompt")
    assert "UNAUTHENTICATED" in browser.find_element(By.ID, "main").text
    browser.find_element(By.ID, "token").send_keys(reader)
    browser.find_element(By.CSS_SELECTOR, '#token-form button[type="submit"]').click()
    until(browser, lambda d: "Catalog" in d.find_element(By.ID, "main").text, "the catalog")
    browser.execute_script("sessionStorage.clear()")


def test_the_api_reference_draws_offline_from_this_server_alone(
    browser: WebDriver, shop: tuple[RunningServer, CatalogClient, list[int]]
) -> None:
    server = shop[0]
    browser.get(server.url + "/docs")
    until(browser, lambda d: d.current_url.startswith(server.url + "/ui/docs/"), "redirected")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"), "operations drawn")
    summaries = " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock"))
    assert "/v1/ddl" in summaries and "/v1/schemas/{schema}/tables/{name}" in summaries
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
    )
    assert loaded and all(url.startswith(server.url + "/") for url in loaded), loaded


def test_views_are_listed_and_shown_with_their_query_at_any_version(
    browser: WebDriver, shop: tuple[RunningServer, CatalogClient, list[int]]
) -> None:
    server, client, _ = shop
    first = client.sql("CREATE VIEW big AS SELECT id FROM orders").version
    client.sql("CREATE OR REPLACE VIEW big (order_id COMMENT 'the order') AS SELECT id FROM items")
    open_page(browser, server.url + "/ui/")
    until(browser, lambda d: len(texts(d, "view-row")) == 1, "the view listed")
    assert texts(browser, "view-row")[0].split() == ["PUBLIC", "BIG", "spark,", "trino", "2"]
    browser.find_element(By.LINK_TEXT, "BIG").click()
    until(browser, lambda d: texts(d, "view-query"), "the view's query")
    assert texts(browser, "view-query") == ["SELECT id FROM items"] * 2
    assert texts(browser, "view-column") == ["ORDER_ID INT64 the order"]
    assert [v.split(",")[0] for v in texts(browser, "view-version")] == ["v2 (current)", "v1"]

    Select(browser.find_element(By.ID, "pin-mode")).select_by_value("version")
    browser.find_element(By.ID, "pin-value").send_keys(str(first))
    browser.find_element(By.CSS_SELECTOR, '#pin button[type="submit"]').click()
    until(browser, lambda d: texts(d, "view-query") == ["SELECT id FROM orders"] * 2, "then")
    assert texts(browser, "view-column") == ["ID INT64"]


def test_a_principal_of_the_role_none_sees_its_part_on_the_page(
    browser: WebDriver, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/catalog.db"
    factory = ServerFactory()
    try:
        server = factory.start(store, auth="on")
        with CatalogClient(server.url, token=issue_token(store, Role.ADMIN)) as admin:
            made = admin.create_principal("ann", Role.NONE)
            admin.sql(
                "CREATE SCHEMA SALES; CREATE TABLE SALES.ORDERS (ID INT PRIMARY KEY);"
                "CREATE TABLE SALES.SECRETS (ID INT PRIMARY KEY);"
                'GRANT USAGE ON SCHEMA SALES TO USER "ann";'
                'GRANT SELECT ON TABLE SALES.ORDERS TO USER "ann"'
            )
        form = {
            "grant_type": "client_credentials",
            "client_id": made.client_id,
            "client_secret": made.client_secret,
        }
        signed = httpx.post(f"{server.url}/v1/oauth/tokens", data=form, timeout=10)
        browser.get(server.url + "/ui/")
        browser.execute_script("sessionStorage.clear()")
        open_page(browser, server.url + "/ui/")
        until(browser, lambda d: d.find_element(By.ID, "token-form").is_displayed(), "prompt")
        browser.find_element(By.ID, "token").send_keys(signed.json()["access_token"])
        browser.find_element(By.CSS_SELECTOR, '#token-form button[type="submit"]').click()
        until(browser, lambda d: "ORDERS" in d.find_element(By.ID, "main").text, "ORDERS")
        assert "SECRETS" not in browser.find_element(By.ID, "main").text
        browser.execute_script("sessionStorage.clear()")
    finally:
        factory.stop_all()
