"""P9: REST GET of one table descriptor ÷ a bare FastAPI endpoint, requests/s, one worker each.

Both servers run as separate processes (one uvicorn worker each) and are loaded by ``wrk``
(Debian package ``wrk``) from another process. Without wrk, a Python load generator in a
separate process is used instead and the figure says so; it is then likely the bottleneck
and the ratio is optimistic.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import Figure, measure, progress
from bench.servers import serve_api, stop

TABLE_PATH = "/v1/schemas/PUBLIC/tables/ORDERS"


def _wrk(url: str, seconds: int) -> float:
    out = subprocess.run(
        ["wrk", "-t1", "-c32", f"-d{seconds}s", url], capture_output=True, text=True, check=True
    ).stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None or "Non-2xx" in out:
        raise RuntimeError(f"wrk output not understood or errors seen:\n{out}")
    return float(found.group(1))


async def _python_load(url: str, seconds: int) -> float:
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=32)) as client:
        done = 0
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                response = await client.get(url)
                response.raise_for_status()
                done += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(32)))
        return done / (time.perf_counter() - start)


def run(quick: bool) -> list[Figure]:
    """Measure P9."""
    seconds = 3 if quick else 10
    repeats = 3 if quick else 5
    tool = "wrk" if shutil.which("wrk") else "python-load"
    with tempfile.TemporaryDirectory() as tmp:
        progress(f"P9: starting the catalog server ({tool})")
        catalog, base = serve_api("catalog", f"sqlite:///{tmp}/catalog.db")
        try:
            ddl = {
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
            httpx.post(base + "/v1/ddl", json=ddl, timeout=30).raise_for_status()
            body = httpx.get(base + TABLE_PATH, timeout=5).content
            body_file = Path(tmp) / "body.json"
            body_file.write_bytes(body)
            bare, bare_base = serve_api("bare", str(body_file))
            try:

                def load(url: str) -> float:
                    if tool == "wrk":
                        return _wrk(url, seconds)
                    return asyncio.run(_python_load(url, seconds))

                progress("P9: loading the catalog endpoint")
                ours = measure(lambda: load(base + TABLE_PATH), repeats=repeats, unit="req/s")
                progress("P9: loading the bare endpoint")
                baseline = measure(
                    lambda: load(bare_base + TABLE_PATH), repeats=repeats, unit="req/s"
                )
            finally:
                stop(bare)
        finally:
            stop(catalog)
    return [
        Figure(
            "P9",
            f"REST GET table ÷ bare FastAPI endpoint, req/s, 1 worker ({tool})",
            ours,
            baseline,
            ">= 0.5",
        )
    ]
