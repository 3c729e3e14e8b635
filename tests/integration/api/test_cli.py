"""The ``catalog`` command line against real servers: in-process ``main`` and the console script."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from api.cli import main
from api.client import CatalogClient
from catalog import commands as c
from tests.integration.api.servers import RunningServer, ServerFactory, free_port
from tests.integration.api.support import create_table

CATALOG = Path(sys.executable).with_name("catalog")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``catalog argv`` in-process; return the exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def test_exec_get_versions_diff_time_nodes(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = api_server.url
    result = run_json(
        capsys, "exec", "--url", url, "--sql", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"
    )
    assert result["version"] == 2 and result["applied"] == [True]

    commands = tmp_path / "commands.json"
    commands.write_text(
        json.dumps(
            {
                "commands": c.dump(
                    [create_table("U"), c.CreateIndex(table="U", name="U_V", columns=["V"])]
                ),
                "request_id": "cli-1",
            }
        )
    )
    result = run_json(capsys, "exec", "--url", url, "-f", str(commands))
    assert result == {
        "version": 3,
        "applied": [True, True],
        "activation_ts": result["activation_ts"],
    }
    # The same file again is the same request: answered, not applied twice.
    assert run_json(capsys, "exec", "--url", url, "-f", str(commands)) == result

    tables = run_json(capsys, "get", "tables", "--url", url)
    assert sorted(t["name"] for t in tables) == ["T", "U"]
    assert [
        t["name"] for t in run_json(capsys, "get", "tables", "--url", url, "--version", "2")
    ] == ["T"]
    table = run_json(capsys, "get", "table", "U", "--url", url, "--schema", "PUBLIC")
    assert table["table"]["name"] == "U" and table["schema"] == "PUBLIC"
    assert {i["name"] for i in table["indexes"]} == {"U_PK", "U_V"}
    assert run_json(capsys, "get", "tables", "U", "--url", url)["table"] == table["table"]
    indexes = run_json(capsys, "get", "indexes", "--url", url, "--schema", "PUBLIC")
    assert {i["name"] for i in indexes} == {"T_PK", "U_PK", "U_V"}
    assert run_json(capsys, "get", "index", "U_V", "--url", url)["name"] == "U_V"
    zones = run_json(capsys, "get", "zones", "--url", url)
    zone = run_json(capsys, "get", "zone", f'"{zones[0]["name"]}"', "--url", url)  # "Default"
    assert len(zone["table_ids"]) == 2
    assert {s["name"] for s in run_json(capsys, "get", "schemas", "--url", url)} >= {"PUBLIC"}
    now = str(run_json(capsys, "time", "--url", url)["now"])
    whole = run_json(capsys, "get", "catalog", "--url", url, "--at", now)
    assert whole["version"] == 3 and len(whole["tables"]) == 2

    versions = run_json(capsys, "versions", "--url", url)
    assert (versions["earliest"], versions["latest"]) == (1, 3)
    diff = run_json(capsys, "diff", "2", "3", "--url", url)
    assert {ch["name"] for ch in diff["changes"]} == {"U", "U_PK", "U_V"}
    nodes = run_json(capsys, "nodes", "--url", url)
    assert nodes[0]["applied_version"] == 3
    # An altered table says what changed in it, one column at a time.
    run_json(capsys, "exec", "--url", url, "--sql", "ALTER TABLE u ADD COLUMN note VARCHAR(9)")
    code, out, _ = run(capsys, "diff", "4", "--url", url, "-o", "table")
    assert code == 0 and "schema_version 1 → 2; +NOTE" in out, out

    # YAML and tables for people.
    code, out, _ = run(capsys, "get", "table", "U", "--url", url, "-o", "yaml")
    assert code == 0 and yaml.safe_load(out)["table"]["name"] == "U"
    code, out, _ = run(capsys, "--url", url, "-o", "table", "get", "table", "U")
    assert code == 0 and "PUBLIC.U" in out and "STRING(20)" in out and "U_V" in out
    for argv in (
        ["get", "tables"],
        ["get", "indexes"],
        ["get", "zones"],
        ["get", "catalog"],
        ["versions"],
        ["diff", "1", "3"],
        ["time"],
        ["nodes"],
        ["get", "schemas"],
    ):
        code, out, err = run(capsys, *argv, "--url", url, "-o", "table")
        assert code == 0 and out.strip(), (argv, err)


def test_watch_prints_events_as_json_lines(
    api_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with CatalogClient(api_server.url) as client:
        client.execute(create_table("T"))
    code, out, err = run(
        capsys, "watch", "--url", api_server.url, "--from-version", "2", "--count", "4"
    )
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert [(e["id"], e["event"]) for e in events] == [
        ("2.0", "ZONE_CREATE"),  # the first table creates the Default zone
        ("2.1", "SET_DEFAULT_ZONE"),
        ("2.3", "TABLE_CREATE"),
        ("2.4", "INDEX_CREATE"),
    ]
    code, out, _ = run(
        capsys,
        "watch",
        "--url",
        api_server.url,
        "--last-event-id",
        "2.3",
        "--count",
        "1",
        "-o",
        "table",
    )
    assert code == 0 and "2.4" in out and "INDEX_CREATE" in out


def test_exit_codes(
    api_server: RunningServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = api_server.url
    # 1: the server refused; its code goes to stderr.
    code, out, err = run(capsys, "get", "table", "NOPE", "--url", url)
    assert (code, out) == (1, "") and "TABLE_NOT_FOUND" in err
    code, _, err = run(capsys, "exec", "--url", url, "--sql", "SELECT 1")
    assert code == 1 and "VALIDATION_ERROR" in err
    code, _, err = run(
        capsys, "exec", "--url", url, "--sql", "CREATE TABLE t (id INT, PRIMARY KEY (nope))"
    )
    assert code == 1 and "error:" in err
    code, _, err = run(capsys, "get", "tables", "--url", url, "--schema", "NOPE")
    assert code == 1 and "SCHEMA_NOT_FOUND" in err
    # 2: usage and input errors.
    assert run(capsys, "get")[0] == 2
    assert run(capsys, "get", "bogus")[0] == 2
    assert run(capsys, "get", "table", "--url", url)[0] == 2
    assert run(capsys, "get", "tables", "--version", "1", "--at", "5")[0] == 2
    assert run(capsys, "exec", "--url", url)[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "exec", "--url", url, "-f", str(bad))
    assert code == 2 and "not valid JSON" in err
    assert run(capsys, "exec", "--url", url, "-f", str(tmp_path / "missing.json"))[0] == 2
    assert run(capsys, "time", "--url", "ftp://nowhere")[0] == 2
    assert run(capsys, "--help")[0] == 0
    # 3: nothing answers.
    dead = f"http://127.0.0.1:{free_port()}"
    code, _, err = run(capsys, "time", "--url", dead, "--timeout", "1")
    assert code == 3 and "UNREACHABLE" in err
    # CATALOG_URL, with failover past a dead URL.
    monkeypatch.setenv("CATALOG_URL", f"{dead},{url}")
    assert run_json(capsys, "versions")["latest"] == 1


def test_compact_opens_the_store(
    api_servers: ServerFactory, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = api_servers.start(store_url)
    with CatalogClient(server.url) as client:
        for name in ("A", "B", "C"):
            client.execute(create_table(name))
        flags = ["--store", store_url, "--delay-ms", "20", "--max-clock-skew-ms", "10"]
        result = run_json(capsys, "compact", "--keep", "2", *flags)
        expiry = {
            "tables_dropped": 0,
            "folders_deleted": 0,
            "files_deleted": 0,
            "commits_merged": 0,
        }
        assert result == {
            "snapshot_version": 3,
            "earliest": 3,
            "latest": 4,
            "data_expiry": expiry,
            "held_back_by": None,  # no retention lease held it back
        }
        assert run_json(capsys, "compact", "--keep", "2", *flags)["snapshot_version"] is None
        deadline = time.monotonic() + 15
        while client.versions().earliest != 3:
            assert time.monotonic() < deadline, "the server never noticed the snapshot"
            time.sleep(0.1)
    # The cluster's settings must match: a wrong delay is refused with its code.
    code, _, err = run(capsys, "compact", "--keep", "1", "--store", store_url, "--delay-ms", "999")
    assert code == 1 and "SETTINGS_MISMATCH" in err


def test_console_script_serves_and_talks(tmp_path: Path) -> None:
    """``catalog serve`` and a client command as real processes (after ``pip install -e``)."""
    assert CATALOG.exists(), f"{CATALOG} is missing: pip install -e '.[api]'"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CATALOG_DELAY_MS": "20", "CATALOG_MAX_CLOCK_SKEW_MS": "10"}
    env.pop("CATALOG_URL", None)
    serve = subprocess.Popen(
        [
            str(CATALOG),
            "serve",
            "--store",
            f"sqlite:///{tmp_path}/c.db",
            "--port",
            str(port),
            "--node-name",
            "proc",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert serve.poll() is None, serve.communicate()[0]
            try:
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "catalog serve did not come up"
            time.sleep(0.1)
        done = subprocess.run(
            [str(CATALOG), "exec", "--sql", "CREATE TABLE t (id INT PRIMARY KEY)"],
            env={**env, "CATALOG_URL": url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["version"] == 2  # JSON: stdout is not a terminal
        nodes = subprocess.run(
            [str(CATALOG), "nodes", "--url", url], capture_output=True, text=True, timeout=60
        )
        assert nodes.returncode == 0 and json.loads(nodes.stdout)[0]["name"] == "proc"
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            printed = serve.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            serve.kill()
            printed = serve.communicate()[0]
    assert serve.returncode == 0
    # One line at start says which node serves where, from which store, at which version.
    started = f"catalog node proc serving {url} from sqlite:///{tmp_path}/c.db at catalog version 1"
    assert started in printed, printed


def test_serve_refuses_a_taken_port_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        store = tmp_path / "catalog.db"
        argv = [
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--store",
            f"sqlite:///{store}",
        ]
        done = subprocess.run(
            [str(Path(sys.executable).parent / "catalog"), *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another "
        "--port or --host, or stop what holds it"
    ]
    assert not store.exists()  # refused before the node opened the store


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("store", "said"),
    [
        ("etcd://127.0.0.1:{port}?timeout=1", "STORAGE_UNAVAILABLE"),
        ("nosuch://somewhere", "INVALID_STORE_URL"),
        ("sqlite:///{tmp}/not-a-store.db", "FORMAT_ERROR"),
    ],
)
def test_serve_that_cannot_start_says_why_in_one_line_and_exits_2(
    tmp_path: Path, store: str, said: str
) -> None:
    (tmp_path / "not-a-store.db").write_text("a text file, not a database\n" * 100)
    url = store.format(port=_free_port(), tmp=tmp_path)
    argv = ["serve", "--host", "127.0.0.1", "--port", str(_free_port()), "--store", url]
    done = subprocess.run(
        [str(Path(sys.executable).parent / "catalog"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "Traceback" not in done.stderr
