"""The catalog browser shows a table's nested fields as a tree, in a real headless Chromium.

A STRUCT column is summed up as ``STRUCT<…>`` and its fields (an array's element, a map's key
and value) follow it, indented by depth, each with its id, its path and its type; a nested
field added later shows in the diff by its path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from api.client import CatalogClient
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.ui.pages import open_page, texts, until

EV = (
    "CREATE TABLE EV (ID BIGINT PRIMARY KEY, PAYLOAD STRUCT<SOURCE VARCHAR(10), "
    "ITEMS ARRAY<STRUCT<PRICE DECIMAL(10, 2) NOT NULL>>>, ATTRS MAP<VARCHAR(8), BIGINT>)"
)


@pytest.fixture
def events(tmp_path: Path) -> Iterator[tuple[RunningServer, list[int]]]:
    factory = ServerFactory()
    try:
        server = factory.start(f"sqlite:///{tmp_path}/catalog.db")
        with CatalogClient(server.url) as client:
            created = client.sql(EV).version
            added = client.sql("ALTER TABLE EV ADD COLUMN PAYLOAD.ORIGIN VARCHAR(5)").version
        yield server, [created, added]
    finally:
        factory.stop_all()


def test_a_tables_nested_fields_are_an_indented_tree_with_paths_ids_and_types(
    browser: WebDriver, events: tuple[RunningServer, list[int]]
) -> None:
    server, (created, added) = events
    open_page(browser, server.url + "/ui/#/table/PUBLIC/EV")
    until(browser, lambda d: len(texts(d, "field-row")) == 7, "the nested fields")

    columns = [row.split() for row in texts(browser, "column-row")]
    assert [c[:3] for c in columns] == [
        ["0", "ID", "INT64"],
        ["1", "PAYLOAD", "STRUCT<…>"],
        ["2", "ATTRS", "MAP<STRING(8),"],
    ]
    assert " ".join(columns[2][2:4]) == "MAP<STRING(8), INT64>"

    rows = browser.find_elements(By.CSS_SELECTOR, '[data-testid="field-row"]')
    shown = [
        (
            row.get_attribute("data-path"),
            len(row.find_elements(By.CSS_SELECTOR, ".indent")),
            row.text.split(),
        )
        for row in rows
    ]
    # Each field after its column, depth first, with the ids the table gave them: the
    # columns (0..2), then PAYLOAD's fields and theirs (3..6), ATTRS's (7, 8); ORIGIN, added
    # later, took the next id (9) and comes last in PAYLOAD.
    assert [(path, depth, words[0]) for path, depth, words in shown] == [
        ("PAYLOAD.SOURCE", 1, "3"),
        ("PAYLOAD.ITEMS", 1, "4"),
        ("PAYLOAD.ITEMS.element", 2, "5"),
        ("PAYLOAD.ITEMS.element.PRICE", 3, "6"),
        ("PAYLOAD.ORIGIN", 1, "9"),
        ("ATTRS.key", 1, "7"),
        ("ATTRS.value", 1, "8"),
    ]
    types = {path: " ".join(words[2:]) for path, _, words in shown}
    assert types == {
        "PAYLOAD.SOURCE": "STRING(10) yes",
        "PAYLOAD.ITEMS": "ARRAY<STRUCT<…>> yes",
        "PAYLOAD.ITEMS.element": "STRUCT<…> yes",
        "PAYLOAD.ITEMS.element.PRICE": "DECIMAL(10, 2) NOT NULL",
        "PAYLOAD.ORIGIN": "STRING(5) yes",
        "ATTRS.key": "STRING(8) NOT NULL",
        "ATTRS.value": "INT64 yes",
    }
    # Each row names the field by its whole path.
    assert all(words[1] == path for path, _, words in shown)

    # The diff names the new field by its path.
    open_page(browser, server.url + f"/ui/#/diff?from={created}&to={added}")
    until(browser, lambda d: texts(d, "column-change"), "the diff")
    assert texts(browser, "column-change") == ["+ column PAYLOAD.ORIGIN: STRING(5)"]
