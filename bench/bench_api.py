"""P9: REST GET of one table descriptor ÷ a bare FastAPI endpoint, requests/s, one worker each.

Both servers run as separate processes (one uvicorn worker each) pinned to one core, and are
loaded by ``wrk`` (Debian package ``wrk``; ``make bench`` installs it) pinned to the other
core: one thread, 64 keep-alive connections. The two sides alternate, so a noisy neighbour
slows both alike. Without ``wrk`` the figure is skipped with a line saying so: a Python load
generator saturates before either server does, and its ratio would say nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx

from bench.harness import Figure, Sample, alternate, progress
from bench.servers import serve_api, stop

TABLE_PATH = "/v1/schemas/PUBLIC/tables/ORDERS"
CONNECTIONS = 64
SERVER_CPU, LOAD_CPU = 0, 1

ORDERS = {
    "commands": [
        {
            "op": "create_table",
            "name": "ORDERS",
            "columns": [
                {"name": "ID", "type": "INT64", "nullable": False},
                {"name": "AMOUNT", "type": "DECIMAL", "precision": 18, "scale": 2},
                {"name": "NOTE", "type": "STRING", "length": 200},
            ],
            "primary_key": ["ID"],
        }
    ]
}


def _pinned() -> bool:
    return shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2


def _wrk(url: str, seconds: int) -> float:
    pin = ["taskset", "-c", str(LOAD_CPU)] if _pinned() else []
    argv = [*pin, "wrk", "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", url]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None or "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk output not understood or errors seen:\n{out}")
    return float(found.group(1))


def run(quick: bool) -> list[Figure]:
    """Measure P9, or skip it with a line where ``wrk`` is not installed."""
    if shutil.which("wrk") is None:
        progress("P9 skipped: wrk is not installed (Debian package wrk; `make bench` installs it)")
        return []
    seconds = 3 if quick else 10
    repeats = 3 if quick else 5
    cpu = SERVER_CPU if _pinned() else None
    with tempfile.TemporaryDirectory() as tmp:
        progress(f"P9: starting the catalog and bare servers (pinned: {cpu is not None})")
        catalog, base = serve_api("catalog", f"sqlite:///{tmp}/catalog.db", cpu)
        try:
            httpx.post(base + "/v1/ddl", json=ORDERS, timeout=30).raise_for_status()
            body_file = Path(tmp) / "body.json"
            body_file.write_bytes(httpx.get(base + TABLE_PATH, timeout=5).content)
            bare, bare_base = serve_api("bare", str(body_file), cpu)
            try:
                progress(f"P9: wrk on each endpoint in turn, {repeats} x {seconds} s")
                ours, bares = alternate(
                    [
                        lambda: _wrk(base + TABLE_PATH, seconds),
                        lambda: _wrk(bare_base + TABLE_PATH, seconds),
                    ],
                    repeats=repeats,
                )
            finally:
                stop(bare)
        finally:
            stop(catalog)
    pinning = (
        f"server on cpu {SERVER_CPU}, wrk on cpu {LOAD_CPU}" if cpu is not None else "unpinned"
    )
    return [
        Figure(
            "P9",
            f"REST GET table ÷ bare FastAPI req/s, wrk -c{CONNECTIONS}, 1 worker",
            Sample.of(ours, "req/s"),
            Sample.of(bares, "req/s"),
            ">= 0.5",
            extra={"pinning": pinning, "seconds": seconds, "connections": CONNECTIONS},
        )
    ]
