"""Read back what a cluster holds after a chaos run, for ``tests.chaos.history.check``.

The log is read directly (an ``UpdateLog`` opened on the same store: retained versions, the
request ids each update records, the ``catalog.request.<id>`` keys). Every node is read over
REST: ``/v1/versions`` and ``/v1/catalog?version=N`` for every retained version, hashed.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Sequence

import httpx

from catalog.marshalling import decode_update
from tests.chaos.history import LoggedRequest, Observed
from updatelog.url import open_log

SETTLE_TIMEOUT_S = 60.0
_PARALLEL = 16


async def _read_log(store: str, request_ids: Iterable[str]) -> Observed:
    log = open_log(store)
    try:
        earliest = await log.earliest_version()
        latest = await log.latest_version()
        entries = await log.read(earliest)
        observed = Observed(
            log_earliest=earliest, log_latest=latest, log_versions=[e.version for e in entries]
        )
        for entry in entries:
            if entry.is_snapshot:
                continue
            for outcome in decode_update(entry.payload).requests:
                observed.requests_in_log.setdefault(outcome.request_id, []).append(
                    LoggedRequest(entry.version, tuple(outcome.applied))
                )
        ids = sorted(set(request_ids))
        for start in range(0, len(ids), _PARALLEL * 4):
            chunk = ids[start : start + _PARALLEL * 4]
            found = await asyncio.gather(*(log.request_record(i) for i in chunk))
            observed.request_keys.update(zip(chunk, found, strict=True))
        return observed
    finally:
        await log.close()


def _latest(http: httpx.Client, url: str) -> int | None:
    try:
        response = http.get(url + "/v1/versions", params={"limit": "1"})
    except httpx.TransportError:
        return None
    return int(response.json()["latest"]) if response.status_code == 200 else None


def settle(urls: Sequence[str], store: str, timeout_s: float = SETTLE_TIMEOUT_S) -> int:
    """Wait until every node serves the log's latest version; return it.

    Raises:
        AssertionError: a node did not catch up within ``timeout_s``.
    """

    async def latest_in_log() -> int:
        log = open_log(store)
        try:
            return await log.latest_version()
        finally:
            await log.close()

    target = asyncio.run(latest_in_log())
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as http:
        while True:
            seen = {url: _latest(http, url) for url in urls}
            if all(v is not None and v >= target for v in seen.values()):
                return target
            assert time.monotonic() < deadline, f"nodes did not reach version {target}: {seen}"
            time.sleep(0.1)


async def _get(http: httpx.AsyncClient, url: str, params: dict[str, str]) -> httpx.Response:
    """GET with a few retries: reads are idempotent, and after thousands of them a pooled
    keep-alive connection can be closed by the server just as it is reused."""
    for attempt in range(4):
        try:
            return await http.get(url, params=params)
        except httpx.TransportError:
            if attempt == 3:
                raise
            await asyncio.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


async def _node_digests(url: str) -> tuple[list[int], dict[int, str]]:
    async with httpx.AsyncClient(timeout=30.0) as http:
        response = await _get(http, url + "/v1/versions", {"limit": "1"})
        response.raise_for_status()
        earliest, latest = response.json()["earliest"], response.json()["latest"]
        versions: list[int] = []
        page_start = earliest
        while page_start <= latest:
            response = await _get(
                http, url + "/v1/versions", {"from_version": str(page_start), "limit": "10000"}
            )
            response.raise_for_status()
            page = [int(v["version"]) for v in response.json()["versions"]]
            if not page:
                break
            versions += page
            page_start = page[-1] + 1
        digests: dict[int, str] = {}
        gone: set[int] = set()
        semaphore = asyncio.Semaphore(_PARALLEL)

        async def fetch(version: int) -> None:
            async with semaphore:
                answer = await _get(http, url + "/v1/catalog", {"version": str(version)})
            if answer.status_code in (404, 410):  # truncated behind a snapshot meanwhile
                gone.add(version)
                return
            answer.raise_for_status()
            digests[version] = hashlib.sha256(answer.content).hexdigest()

        await asyncio.gather(*(fetch(v) for v in versions))
        return [v for v in versions if v not in gone], digests


def observe(urls: Sequence[str], store: str, request_ids: Iterable[str]) -> Observed:
    """Wait for every node to catch up, then read the log and every node's versions.

    Args:
        urls: every catalog node's base URL.
        store: the store URL the nodes share.
        request_ids: the request ids whose ``catalog.request.<id>`` keys to read.
    """
    settle(urls, store)
    observed = asyncio.run(_read_log(store, request_ids))

    async def all_nodes() -> list[tuple[list[int], dict[int, str]]]:
        return list(await asyncio.gather(*(_node_digests(u) for u in urls)))

    for url, (versions, digests) in zip(urls, asyncio.run(all_nodes()), strict=True):
        observed.node_versions[url] = versions
        observed.digests[url] = digests
    return observed
