"""A client user installs and loads the client only: no server, no store, no etcd client."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# What only a server loads: the web framework and server, the manager and service, the stores
# (SQLite's module and etcd's client).
SERVER_ONLY = [
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlglot",
    "sqlite3",
    "grpc",
    "pyetcd",
    "pyiceberg",
    "catalog.manager",
    "catalog.service",
    "catalog.runtime.node",
    "updatelog.kv_sqlite",
    "updatelog.kv_etcd",
    "updatelog.url",
    "api.app",
    "api.routes",
]

_PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys

    from api.client import (
        AsyncCatalogClient, CatalogClient, RetryPolicy, UnreachableError,
    )

    once = RetryPolicy(max_attempts=1, backoff_s=0)
    with CatalogClient("http://127.0.0.1:9", retry=once, timeout=2) as client:
        try:
            client.time()
        except UnreachableError:
            pass

    async def main() -> None:
        async with AsyncCatalogClient("http://127.0.0.1:9", retry=once, timeout=2) as client:
            try:
                await client.time()
            except UnreachableError:
                pass

    asyncio.run(main())
    print(json.dumps(sorted(sys.modules)))
    """
)


def test_the_client_loads_no_server_store_or_etcd_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "api.client" in loaded and "httpx" in loaded
    found = sorted(m for m in loaded if m in SERVER_ONLY or m.split(".")[0] in SERVER_ONLY)
    assert found == [], f"loading the client loaded {found}"
