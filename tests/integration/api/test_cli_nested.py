"""The CLI shows a table's nested fields: each under its column, by its path, with its type."""

from __future__ import annotations

import json
import re

import pytest

from api.cli import main
from tests.integration.api.servers import RunningServer

EV = (
    "CREATE TABLE ev (id BIGINT PRIMARY KEY, payload STRUCT<source VARCHAR(10), n INT NOT NULL, "
    "items ARRAY<STRUCT<price DECIMAL(10, 2)>>>, attrs MAP<VARCHAR(8), BIGINT>)"
)
CHANGES = [
    "ALTER TABLE ev ADD COLUMN payload.origin VARCHAR(5)",
    "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE BIGINT",
    "ALTER TABLE ev RENAME COLUMN payload.items.element.price TO amount",
    "ALTER TABLE ev DROP COLUMN payload.source",
    "ALTER TABLE ev ADD COLUMN extra STRUCT<a INT>",
]


def _rows(out: str) -> dict[str, list[str]]:
    """The table's rows by the id in their first cell: the cells, stripped."""
    rows = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]]
        if cells and cells[0].isdigit():
            rows[cells[0]] = cells
    return rows


def test_get_and_describe_show_nested_fields_by_path(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per row
    url = api_server.url
    for statement in [EV, *CHANGES]:
        assert main(["exec", "--url", url, "--sql", statement, "-o", "json"]) == 0
    capsys.readouterr()

    assert main(["get", "table", "EV", "--url", url, "-o", "table"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [(r[1], r[2], r[3]) for r in rows.values()] == [
        ("ID", "INT64", "no"),
        ("PAYLOAD", "STRUCT<...>", "yes"),
        ("PAYLOAD.N", "INT64", "no"),
        ("PAYLOAD.ITEMS", "ARRAY<STRUCT<...>>", "yes"),
        ("PAYLOAD.ITEMS.element", "STRUCT<...>", "yes"),
        ("PAYLOAD.ITEMS.element.AMOUNT", "DECIMAL(10, 2)", "yes"),
        ("PAYLOAD.ORIGIN", "STRING(5)", "yes"),
        ("ATTRS", "MAP<STRING(8), INT64>", "yes"),
        ("ATTRS.key", "STRING(8)", "no"),
        ("ATTRS.value", "INT64", "yes"),
        ("EXTRA", "STRUCT<...>", "yes"),
        ("EXTRA.A", "INT32", "yes"),
    ]
    # A field is indented by its depth under its column.
    amount = next(line for line in out.splitlines() if "element.AMOUNT" in line)
    assert "      PAYLOAD.ITEMS.element.AMOUNT" in amount

    assert main(["describe", "table", "ev", "--url", url, "-o", "table"]) == 0
    described = " ".join(capsys.readouterr().out.split())
    assert (
        "schema versions: 1 (ID, PAYLOAD, ATTRS), 2 (+PAYLOAD.ORIGIN), 3 (~PAYLOAD.N), "
        "4 (~PAYLOAD.ITEMS.element.AMOUNT), 5 (-PAYLOAD.SOURCE), 6 (+EXTRA)"
    ) in described

    # A diff names a nested field by its path.
    assert main(["diff", "3", "--url", url, "-o", "json"]) == 0
    (change,) = json.loads(capsys.readouterr().out)["changes"]
    assert [(c["change"], c["name"]) for c in change["columns"]] == [("added", "PAYLOAD.ORIGIN")]
    assert main(["diff", "4", "--url", url, "-o", "table"]) == 0
    assert "~PAYLOAD.N (type INT32 → INT64)" in capsys.readouterr().out

    # -o json is the server's answer: the nested fields as they are stored.
    assert main(["get", "table", "EV", "--url", url, "-o", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)["table"]["versions"][-1]["columns"][1]
    assert [(f["name"], f["type"]) for f in payload["fields"]] == [
        ("N", "INT64"),
        ("ITEMS", "ARRAY"),
        ("ORIGIN", "STRING"),
    ]
