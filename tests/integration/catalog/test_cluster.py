"""Several nodes on one log: random DDL from many tasks, then check the history.

Checks (docs/design.md, "Invariants"): versions are contiguous; every node holds byte-identical
catalogs for every version; every acknowledged request is in the log exactly once and every
refused one not at all; reads at a fixed T agree on every node and never change; after
``execute`` returns on one node, a read at "now" on another includes the change.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from catalog import CatalogError
from catalog.apply_result import ApplyResult
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from schemasync.clock import HybridClock
from tests.integration.catalog.support import (
    check_acknowledged,
    create_table,
    request_ids_in_log,
    run,
    settle,
)
from tests.random_ddl import random_batch

STRESS_SECONDS = float(os.environ.get("CATALOG_STRESS_SECONDS", "4"))
ROOT = Path(__file__).resolve().parents[3]


async def _check_history(
    nodes: list[CatalogNode],
    acknowledged: dict[str, ApplyResult],
    refused: set[str],
) -> int:
    latest = await settle(nodes)
    log = nodes[0].log
    entries = await log.read(await log.earliest_version())
    assert [e.version for e in entries] == list(range(entries[0].version, latest + 1))
    for version in range(max(n.service.earliest_version for n in nodes), latest + 1):
        assert len({n.service.digest(version) for n in nodes}) == 1, f"digests differ at {version}"
    recorded = await request_ids_in_log(nodes[0])
    for request_id, result in acknowledged.items():
        await check_acknowledged(nodes[0], recorded, request_id, result.version, result.applied)
    for request_id in refused:
        assert request_id not in recorded, request_id
    return latest


def test_random_ddl_from_16_tasks_on_3_nodes(store_url: str) -> None:
    async def scenario() -> None:
        nodes = [
            await CatalogNode.start(
                store_url, f"n{i}", NodeOptions(delay_ms=20, max_clock_skew_ms=10)
            )
            for i in range(3)
        ]
        acknowledged: dict[str, ApplyResult] = {}
        refused: set[str] = set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STRESS_SECONDS

        async def worker(k: int) -> None:
            rng = random.Random(k)
            for i in range(10_000):
                if loop.time() > deadline:
                    return
                node = nodes[rng.randrange(len(nodes))]
                request_id = f"w{k}-{i}"
                batch = random_batch(rng, node.service.latest_catalog())
                try:
                    result = await node.manager.execute(batch, request_id=request_id)
                except CatalogError:
                    refused.add(request_id)
                    continue
                acknowledged[request_id] = result
                if rng.random() < 0.1:  # a client retry after a lost reply
                    retry = nodes[rng.randrange(len(nodes))]
                    assert await retry.manager.execute(batch, request_id=request_id) == result

        try:
            await asyncio.gather(*(worker(k) for k in range(16)))
            latest = await _check_history(nodes, acknowledged, refused)
            assert len(acknowledged) > 20 and latest > 10
            # A node replaying the whole log from scratch reaches the same catalog.
            fresh = await CatalogNode.start(
                store_url, "fresh", NodeOptions(delay_ms=20, max_clock_skew_ms=10)
            )
            try:
                await settle([fresh])
                assert fresh.service.digest(latest) == nodes[0].service.digest(latest)
            finally:
                await fresh.close()
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario(), timeout_s=STRESS_SECONDS + 120)


def test_reads_at_a_fixed_time_agree_and_never_change(store_url: str) -> None:
    """Invariant 5: after completeness, active_catalog(T) is one version on every node."""

    async def scenario() -> None:
        nodes = [
            await CatalogNode.start(
                store_url, f"n{i}", NodeOptions(delay_ms=50, max_clock_skew_ms=20)
            )
            for i in range(3)
        ]
        try:
            writers = asyncio.gather(
                *(nodes[i % 3].manager.execute(create_table(f"T{i}")) for i in range(12))
            )
            await asyncio.sleep(0.03)
            pinned = nodes[1].clock.now()
            await asyncio.gather(
                *(n.schema_sync.wait_for_metadata_completeness(pinned) for n in nodes)
            )
            seen = {n.service.active_catalog(pinned).digest() for n in nodes}
            assert len(seen) == 1
            await writers
            for i in range(5):
                await nodes[i % 3].manager.execute(create_table(f"LATER{i}"))
            await settle(nodes)
            assert {n.service.active_catalog(pinned).digest() for n in nodes} == seen
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario())


def test_a_change_is_visible_at_now_on_every_node_despite_clock_skew(store_url: str) -> None:
    """Invariant 6 with clocks offset by ±200 ms (max skew setting covers the 400 ms spread)."""

    async def scenario() -> None:
        offsets = [200, -200, 0]
        nodes = [
            await CatalogNode.start(
                store_url,
                f"n{i}",
                NodeOptions(
                    delay_ms=100, max_clock_skew_ms=450, clock=HybridClock(offset_ms=offset)
                ),
            )
            for i, offset in enumerate(offsets)
        ]
        try:
            for step in range(3):
                writer = nodes[step]
                result = await writer.manager.execute(create_table(f"T{step}"))
                for reader in nodes:
                    now = reader.clock.now()
                    await reader.schema_sync.wait_for_metadata_completeness(now)
                    cat = reader.service.active_catalog(now)
                    assert cat.version >= result.version
                    assert cat.find_table("PUBLIC", f"T{step}") is not None
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario())


def test_nodes_in_separate_processes_converge(store_url: str) -> None:
    async def scenario() -> None:
        node = await CatalogNode.start(
            store_url, "local", NodeOptions(delay_ms=10, max_clock_skew_ms=10)
        )
        try:
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            procs = [
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "tests.integration.catalog.node_worker",
                    store_url,
                    f"p{i}",
                    "25",
                    stdout=subprocess.PIPE,
                    cwd=ROOT,
                    env=env,
                )
                for i in range(2)
            ]
            local_ok: dict[str, ApplyResult] = {}
            local_refused: set[str] = set()
            rng = random.Random(99)
            for i in range(25):
                batch = random_batch(rng, node.service.latest_catalog())
                try:
                    local_ok[f"local-{i}"] = await node.manager.execute(
                        batch, request_id=f"local-{i}"
                    )
                except CatalogError:
                    local_refused.add(f"local-{i}")
            outputs = [await asyncio.wait_for(p.communicate(), 90) for p in procs]
            assert all(p.returncode == 0 for p in procs)
            recorded = await request_ids_in_log(node)
            for out, _ in outputs:
                lines = [json.loads(line) for line in out.decode().splitlines()]
                final = lines.pop()
                await node.service.catalog_ready(final["latest"])
                assert node.service.digest(final["latest"]) == final["digest"]
                for line in lines:
                    if line["ok"]:
                        await check_acknowledged(
                            node, recorded, line["id"], line["version"], line["applied"]
                        )
                    else:
                        assert line["id"] not in recorded
            for request_id, result in local_ok.items():
                await check_acknowledged(node, recorded, request_id, result.version, result.applied)
            assert not local_refused & set(recorded)
        finally:
            await node.close()

    run(scenario(), timeout_s=150)
