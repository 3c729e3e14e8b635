"""A1s: a table load signed in as a principal ÷ the same load with auth off (p99).

Two ``catalog serve`` processes share one SQLite store: one checks tokens, one does not. The
store holds 1,000 principals (made through ``/v1/principals``) and one Iceberg table. A
client of 16 concurrent requests loads the table (``GET /iceberg/v1/namespaces/{ns}/tables/
{t}``) from each server in turns, the signed one with a principal's access token (a JWT
from ``/iceberg/v1/oauth/tokens``): each request verifies the token's signature and reads the
principal in the node's catalog. The figure is the p99 latency of a round on the signed
server ÷ that of a round on the open one, medians over rounds (which server goes first
alternates from round to round).

The catalog keeps no grants on single objects yet, so this is the cost of signing in and of
the principal's lookup, not of deciding on grants.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import Figure, Sample, progress
from bench.servers import serve_catalog, stop

PRINCIPALS = 1000
CONCURRENCY = 16
REQUESTS = 800
ROUNDS = 5


def _p99(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=100, method="inclusive")[98]


async def _round(url: str, path: str, headers: dict[str, str], requests: int) -> float:
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(i)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:

        async def worker() -> None:
            while not queue.empty():
                queue.get_nowait()
                start = time.perf_counter()
                answer = await client.get(path)
                latencies.append(time.perf_counter() - start)
                answer.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return _p99(latencies)


async def _principals(url: str, admin: str, count: int) -> dict[str, str]:
    made: dict[str, str] = {}
    headers = {"Authorization": f"Bearer {admin}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        names = iter(range(count))

        async def worker() -> None:
            for i in names:
                answer = await client.post(
                    "/v1/principals", json={"name": f"p{i}", "role": "reader"}
                )
                answer.raise_for_status()
                made[f"p{i}"] = f"{answer.json()['client_id']}:{answer.json()['client_secret']}"

        await asyncio.gather(*(worker() for _ in range(16)))
    return made


def run(quick: bool) -> list[Figure]:
    """Measure A1s."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from api.wire.roles import Role
    from tests.integration.api.servers import TOKEN_SECRET_FILE, issue_token

    folder = Path(tempfile.mkdtemp(prefix="bench-auth-"))
    store = f"sqlite:///{folder}/catalog.db"
    env = {"CATALOG_TOKEN_SECRET_FILE": str(TOKEN_SECRET_FILE)}
    signed, signed_url = serve_catalog(store, {**env, "CATALOG_AUTH": "on"})
    open_, open_url = serve_catalog(store, {**env, "CATALOG_AUTH": "off"})
    try:
        admin = issue_token(store, Role.ADMIN)
        principals = PRINCIPALS // 10 if quick else PRINCIPALS
        progress(f"A1s: {principals} principals")
        made = asyncio.run(_principals(signed_url, admin, principals))
        catalog = load_catalog("b", type="rest", uri=f"{open_url}/iceberg")
        catalog.create_namespace("bench")
        catalog.create_table("bench.t", Schema(NestedField(1, "id", LongType(), required=True)))
        client_id, client_secret = made["p0"].split(":", 1)
        token = httpx.post(
            f"{signed_url}/iceberg/v1/oauth/tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": client_id,
                "client_secret": client_secret,
            },
            timeout=30,
        ).json()["access_token"]
        path = "/iceberg/v1/namespaces/bench/tables/t"
        requests = REQUESTS // 4 if quick else REQUESTS
        asyncio.run(_round(signed_url, path, {"Authorization": f"Bearer {token}"}, requests))
        asyncio.run(_round(open_url, path, {}, requests))  # warm both
        signed_p99: list[float] = []
        open_p99: list[float] = []
        for round_ in range(2 if quick else ROUNDS):
            progress(f"A1s: round {round_ + 1}")
            headers = {"Authorization": f"Bearer {token}"}
            turns = [(signed_p99, signed_url, headers), (open_p99, open_url, {})]
            for kept, url, sent in turns if round_ % 2 == 0 else turns[::-1]:
                kept.append(asyncio.run(_round(url, path, sent, requests)))
    finally:
        stop(signed)
        stop(open_)
    return [
        Figure(
            "A1s",
            f"table load p99, signed in as a principal ({principals} principals) ÷ auth off",
            Sample.of(signed_p99, "s"),
            Sample.of(open_p99, "s"),
            "<= 1.2",
            {"concurrency": CONCURRENCY, "requests_per_round": requests},
        )
    ]
