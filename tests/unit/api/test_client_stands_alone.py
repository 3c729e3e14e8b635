"""A client user installs and loads the client only: no server, no store, no etcd client.

The client installs alone (the ``client`` extra: httpx and pydantic over the core) and its
imports load nothing of the other jobs of ``api`` (server, Iceberg protocol, SQL, CLI) nor
their third-party modules. It returns the catalog's own typed objects, so it loads the
catalog's model modules; none of the modules that run a node (manager, service, stores).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
import tomllib
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
    "prometheus_client",
    "api.server",
    "api.iceberg",
    "api.sql",
    "api.cli",
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
    found = sorted(m for m in loaded if any(m == s or m.startswith(s + ".") for s in SERVER_ONLY))
    assert found == [], f"loading the client loaded {found}"


def test_the_client_extra_is_httpx_and_pydantic() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert sorted(re.split(r"[<>=\[ ]", d)[0] for d in extras["client"]) == ["httpx", "pydantic"]
    assert "event-catalog[client]" in extras["spark"]
    assert any(d.startswith("httpx") for d in extras["api"])


def test_the_api_package_imports_nothing() -> None:
    tree = ast.parse((ROOT / "api" / "__init__.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
