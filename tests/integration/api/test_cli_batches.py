"""The CLI runs a SQL file as one batch, drops a table by a typed name, and fails in JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main
from api.client import CatalogClient
from tests.integration.api.servers import RunningServer

CATALOG = str(Path(sys.executable).parent / "catalog")


def test_a_sql_file_is_one_atomic_batch(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "schema.sql"
    good.write_text("CREATE TABLE orders (id INT PRIMARY KEY);\nCREATE INDEX o_id ON orders (id)")
    assert main(["exec", "-f", str(good), "--url", api_server.url, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == [True, True]
    bad = tmp_path / "more.sql"
    bad.write_text(
        "CREATE TABLE items (id INT PRIMARY KEY);\n\nCREATE TABLE orders (id INT PRIMARY KEY)"
    )
    assert main(["exec", "-f", str(bad), "--url", api_server.url, "-o", "json"]) == 1
    failure = json.loads(capsys.readouterr().out)
    assert (failure["code"], failure["status"], failure["statement"], failure["line"]) == (
        "TABLE_EXISTS",
        409,
        2,
        3,
    )
    with CatalogClient(api_server.url) as client:
        assert client.tables("PUBLIC") == ["ORDERS"]  # nothing of the refused batch


def test_drop_table_by_a_typed_name(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with CatalogClient(api_server.url) as client:
        client.sql("CREATE SCHEMA sales; CREATE TABLE sales.orders (id INT PRIMARY KEY)")
    assert main(["drop", "table", "sales.orders", "--url", api_server.url, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == [True]
    argv = ["drop", "table", "sales.orders", "--url", api_server.url, "-o", "json"]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "TABLE_NOT_FOUND"
    assert main([*argv, "--if-exists"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == [False]


def _catalog(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CATALOG, *argv], capture_output=True, text=True, timeout=60)


def test_failures_under_json_output_are_json_on_stdout(api_server: RunningServer) -> None:
    url = api_server.url
    done = _catalog("get", "table", "nope", "--url", url, "-o", "json")
    assert done.returncode == 1 and done.stderr == ""
    assert json.loads(done.stdout) == {
        "code": "TABLE_NOT_FOUND",
        "detail": "table PUBLIC.NOPE not found",
        "status": 404,
    }
    unreadable = _catalog("exec", "-f", "/nonexistent/x.sql", "--url", url, "-o", "json")
    assert unreadable.returncode == 2 and json.loads(unreadable.stdout)["code"] == "USAGE"
    texted = _catalog("get", "table", "nope", "--url", url, "-o", "table")
    assert texted.returncode == 1 and texted.stdout == ""
    assert texted.stderr.startswith("error: TABLE_NOT_FOUND: table PUBLIC.NOPE not found")


def test_describe_table_and_diff_of_one_version(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = api_server.url
    sql = [
        'CREATE SCHEMA "sales.eu"',
        'CREATE TABLE "sales.eu".orders (id INT PRIMARY KEY, v VARCHAR(20), gone INT)',
        'ALTER TABLE "sales.eu".orders ADD COLUMN note VARCHAR(10)',
        'ALTER TABLE "sales.eu".orders DROP COLUMN gone',
        'CREATE INDEX o_v ON "sales.eu".orders (v)',
    ]
    for statement in sql:
        assert main(["exec", "--url", url, "--sql", statement, "-o", "json"]) == 0
    capsys.readouterr()

    assert main(["describe", "table", '"sales.eu".orders', "--url", url, "-o", "table"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table may wrap its caption
    assert "sales.eu.ORDERS" in out and "VARCHAR" not in out and "STRING(20)" in out
    assert "colocated by ID" in out and "O_V REGISTERED" in out and "ORDERS_PK AVAILABLE" in out
    assert "schema versions: 1 (ID, V, GONE), 2 (+NOTE), 3 (-GONE)" in out

    assert main(["describe", "table", '"sales.eu".orders', "--url", url, "-o", "json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert [v["version"] for v in described["schema_versions"]] == [1, 2, 3]
    # Created in the cluster's warehouse (by default beside the SQLite file), shown as such.
    location = described["table"]["location"]
    assert location.endswith(f"/warehouse/table_{described['table']['id']}")
    compact = "".join(out.split())  # the caption may wrap anywhere, even inside the path
    assert "datain/" in compact and f"/table_{described['table']['id']}" in compact

    latest = main(["diff", "6", "--url", url, "-o", "json"])  # version 6 made the index
    assert latest == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert [(ch["change"], ch["name"]) for ch in changes] == [("added", "O_V")]


def test_an_index_moves_through_its_lifecycle_by_name(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = api_server.url
    sql = "CREATE SCHEMA s; CREATE TABLE s.t (id INT PRIMARY KEY, v INT)"
    assert main(["exec", "--url", url, "--sql", sql, "-o", "json"]) == 0
    # Created after its table (in a batch of its own), an index starts REGISTERED.
    index = 'CREATE INDEX "i.v" ON s.t (v)'
    assert main(["exec", "--url", url, "--sql", index, "-o", "json"]) == 0
    capsys.readouterr()

    def status() -> str:
        with CatalogClient(api_server.url) as client:
            return str(client.index("S", '"i.v"').status)

    # Out of order: refused with the status it has, nothing changes.
    assert main(["index", "available", 's."i.v"', "--url", url, "-o", "json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["code"] == "INDEX_STATUS_CONFLICT" and "REGISTERED" in refused["detail"]
    assert status() == "REGISTERED"
    assert main(["index", "start-build", 's."i.v"', "--url", url, "-o", "json"]) == 0
    assert status() == "BUILDING"
    assert main(["index", "available", 's."i.v"', "--url", url, "-o", "json"]) == 0
    assert status() == "AVAILABLE"
    capsys.readouterr()
    assert main(["index", "start-build", "s.nope", "--url", url, "-o", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "INDEX_NOT_FOUND"
