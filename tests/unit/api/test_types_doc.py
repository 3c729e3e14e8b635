"""``docs/types.md`` says what the catalog does: its SQL and JSON examples are one command.

The nested table's JSON and SQL spellings parse to the same command and give the ids the page
lists; each evolution row's SQL parses to the JSON command beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from api.sql import parse_sql
from catalog import Catalog, prepare
from catalog.commands import parse
from catalog.descriptors.nested import walk
from tests.unit.catalog.helpers import catalog_with_default_zone

DOC = (Path(__file__).resolve().parents[3] / "docs" / "types.md").read_text()


def _block(language: str) -> str:
    (found,) = re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)
    return str(found)


def _evolution_rows() -> list[tuple[str, dict[str, Any]]]:
    """The evolution table's rows whose JSON cell is a whole command: (SQL, command)."""
    section = DOC.split("### Evolution\n", 1)[1]
    rows = re.findall(r"^\| `(ALTER TABLE [^`]+)` \| `(\{.+\})` \|$", section, flags=re.MULTILINE)
    return [(sql, json.loads(command)) for sql, command in rows]


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return prepare(catalog_with_default_zone(), parse_sql(_block("sql"))).catalog


def test_the_nested_tables_json_and_sql_are_one_command() -> None:
    assert parse_sql(_block("sql")) == parse(json.loads(_block("json")))


def test_the_ids_the_page_lists_are_the_tables(cat: Catalog) -> None:
    listed = re.findall(r"`([A-Z][A-Za-z.]*)` (\d+)", DOC.split("- **Ids.**", 1)[1][:400])
    ids = {".".join(path): f.id for path, f in walk(cat.table("PUBLIC", "EV").columns)}
    assert {name: int(number) for name, number in listed} == ids


ROWS = _evolution_rows()


def test_the_evolution_table_has_its_rows() -> None:
    assert len(ROWS) == 4


@pytest.mark.parametrize(("sql", "command"), ROWS, ids=[sql for sql, _ in ROWS])
def test_each_evolution_row_is_one_command(sql: str, command: dict[str, Any], cat: Catalog) -> None:
    with_field = prepare(cat, parse_sql("ALTER TABLE EV ADD COLUMN PAYLOAD.N INT", cat)).catalog
    assert parse_sql(sql, with_field) == parse(command)
    prepare(with_field, parse(command))  # and it applies
