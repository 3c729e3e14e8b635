"""E1: the size of one event on a wide table; E2: commit → delivered to 100 event subscribers.

E1 adds one column to a table of 4,095 columns (a table holds at most 4,096) and reads the
event's frame from a real server's stream: the event carries the change, not the table. E1n
adds one field to a STRUCT column of 1,000 fields, the same way. E2
runs a real server, 100 SSE subscribers in another process (``bench.event_subscribers``) and
a writer committing one DDL at a time; each event's latency runs from the writer sending its
request (so it includes the commit itself) to a subscriber reading the event. Both figures
are budgets (2 KB, 50 ms); the whole table's size is printed beside E1.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx

from bench.harness import Figure, Sample, progress
from bench.servers import ROOT, serve_catalog, stop

E1_BUDGET_BYTES = 2048
E2_BUDGET_S = 0.050
SUBSCRIBERS = 100


def _ddl(http: httpx.Client, command: dict[str, Any]) -> int:
    response = http.post("/v1/ddl", json={"commands": [command]})
    response.raise_for_status()
    version: int = response.json()["version"]
    return version


def _e1(http: httpx.Client, name: str, nested: bool) -> tuple[int, int]:
    """Return the bytes of the ADD COLUMN event's frame and of the table it changed.

    ``nested``: the table is ID and a STRUCT of 1,000 fields, and the field is added to it.
    """
    columns: list[dict[str, Any]] = [{"name": "ID", "type": "INT64", "nullable": False}]
    many = 1000 if nested else 4094
    fields = [{"name": f"C{i}", "type": "STRING", "length": 40} for i in range(many)]
    columns += [{"name": "PAYLOAD", "type": "STRUCT", "fields": fields}] if nested else fields
    create = {"op": "create_table", "name": name, "columns": columns, "primary_key": ["ID"]}
    version = _ddl(http, create)
    table = len(http.get(f"/v1/schemas/PUBLIC/tables/{name}").content)
    params = {"from_version": str(version + 1)}
    with http.stream("GET", "/v1/events", params=params, timeout=30) as stream:
        add: dict[str, Any] = {"op": "add_columns", "table": name}
        add["columns"] = [{"name": "EXTRA", "type": "INT32"}]
        if nested:
            add["parent"] = ["PAYLOAD"]
        _ddl(http, add)
        frame = b""
        for line in stream.iter_lines():
            if line.startswith(":"):
                continue
            frame += line.encode() + b"\n"
            if not line and frame.strip():
                break
    return len(frame), table


def _e2(http: httpx.Client, url: str, commits: int) -> list[float]:
    """Return every (commit, subscriber) latency in seconds."""
    first = http.get("/v1/versions").json()["latest"] + 1
    last = first + commits - 1
    argv = [sys.executable, "-m", "bench.event_subscribers", url, str(SUBSCRIBERS)]
    subscribers = subprocess.Popen(
        [*argv, str(first), str(last)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert subscribers.stdout is not None
        if subscribers.stdout.readline().strip() != "ready":
            raise RuntimeError("the subscribers did not start")
        sent: dict[int, float] = {}
        for i in range(commits):
            started = time.monotonic()
            sent[_ddl(http, {"op": "create_schema", "name": f"E{first}_{i}"})] = started
        out, _ = subscribers.communicate(timeout=120)
    finally:
        if subscribers.poll() is None:
            subscribers.kill()
            subscribers.wait(5)
    seen: dict[str, list[float]] = json.loads(out)
    return [at - sent[v] for v, ats in ((int(k), a) for k, a in seen.items()) for at in ats]


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run(quick: bool) -> list[Figure]:
    """Measure E1 and E2."""
    commits = 1000
    env = {"CATALOG_MAX_SUBSCRIBERS_PER_PRINCIPAL": str(SUBSCRIBERS + 8)}
    with tempfile.TemporaryDirectory(prefix="bench-events-") as tmp:
        progress("E1/E2: starting a catalog server")
        proc, url = serve_catalog(f"sqlite:///{tmp}/catalog.db", env)
        try:
            with httpx.Client(base_url=url, timeout=60) as http:
                progress("E1: one ADD COLUMN on a 4,095-column table")
                frame, table = _e1(http, "WIDE", nested=False)
                progress("E1n: one field added to a STRUCT of 1,000 fields")
                nested_frame, nested_table = _e1(http, "NESTED", nested=True)
                progress(f"E2: {SUBSCRIBERS} subscribers, {commits} commits")
                latencies = _e2(http, url, commits)
        finally:
            stop(proc)
    p50, p99 = _percentile(latencies, 50), _percentile(latencies, 99)
    ms = [x * 1000 for x in latencies]
    return [
        Figure(
            "E1",
            "event bytes, ADD COLUMN on a 4,096-column table ÷ 2 KB budget",
            Sample(frame, frame, frame, "B"),
            Sample(E1_BUDGET_BYTES, E1_BUDGET_BYTES, E1_BUDGET_BYTES, "B"),
            "<= 1",
            {"whole_table_bytes": table},
        ),
        Figure(
            "E1n",
            "event bytes, one field added to a STRUCT of 1,000 fields ÷ 2 KB budget",
            Sample(nested_frame, nested_frame, nested_frame, "B"),
            Sample(E1_BUDGET_BYTES, E1_BUDGET_BYTES, E1_BUDGET_BYTES, "B"),
            "<= 1",
            {"whole_table_bytes": nested_table},
        ),
        Figure(
            "E2",
            f"p99 commit → delivered, {SUBSCRIBERS} SSE subscribers ÷ 50 ms budget",
            Sample(p99, min(latencies), max(latencies), "s"),
            Sample(E2_BUDGET_S, E2_BUDGET_S, E2_BUDGET_S, "s"),
            "<= 1",
            {
                "commits": commits,
                "deliveries": len(latencies),
                "p50_ms": round(p50 * 1000, 2),
                "p99_ms": round(p99 * 1000, 2),
                "max_ms": round(max(ms), 2),
                "percentiles_ms": {
                    str(q): round(_percentile(latencies, q) * 1000, 3) for q in range(1, 100)
                },
                "p999_ms": round(sorted(ms)[int(len(ms) * 0.999) - 1], 3),
            },
        ),
    ]
