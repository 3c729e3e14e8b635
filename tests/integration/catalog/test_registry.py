"""The node registry and the stronger completion mode, on both backends.

Nodes register ``catalog.nodes.<name>`` with their address, applied version, observed safe time
and heartbeat; an entry that is not refreshed expires (a killed process, a closed log);
``execute(..., wait_for_nodes=...)`` waits for every live node and reports the laggards.
"""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from catalog import ValidationError
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.runtime.registry import NodeRecord, NodeRegistry, decode_nodes, wait_for_nodes
from catalog.runtime.registry_entries import RegistryEntries
from deploy.etcd_server import EtcdServer
from schemasync.clock import ManualClock
from schemasync.watermark import Watermark
from tests.integration.catalog.node_process import node_process
from tests.integration.catalog.support import create_table, run
from tests.integration.updatelog.support import opened
from updatelog import UpdateLog, open_log

SHORT_TTL_S = 1.5
# etcd raises a lease to its minimum TTL (2 s with default Raft timings) and sweeps expired
# leases every 500 ms; an expiry is awaited at most this long on either backend.
EXPIRY_BOUND_S = 10.0


async def registered(log: UpdateLog) -> dict[str, NodeRecord]:
    """Return the registry as stored (no overlay of a node's own fresher state)."""
    return {r.name: r for r in decode_nodes(await RegistryEntries(log.store, log.keys).list())}


async def until(
    log: UpdateLog,
    check: str,
    predicate: Callable[[dict[str, NodeRecord]], bool],
    bound_s: float,
) -> float:
    """Poll the registry until ``predicate(records)`` holds; return the time it took."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not predicate(await registered(log)):
        assert loop.time() - started < bound_s, f"{check}: not within {bound_s} s"
        await asyncio.sleep(0.05)
    return loop.time() - started


async def start(
    store: str | UpdateLog, name: str, registry_ttl_s: float | None = 10.0
) -> CatalogNode:
    return await CatalogNode.start(
        store,
        name,
        NodeOptions(
            delay_ms=20,
            max_clock_skew_ms=10,
            address=f"http://{name}.test:8000",
            registry_ttl_s=registry_ttl_s,
        ),
    )


def test_nodes_register_with_address_version_safe_time_and_heartbeat(store_url: str) -> None:
    async def scenario() -> None:
        a = await start(store_url, "a")
        b = await start(store_url, "b")
        try:
            result = await a.manager.execute(create_table("T"))
            await until(
                a.log,
                "both report the new version",
                lambda rs: (
                    {n: r.applied_version for n, r in rs.items()}
                    == {"a": result.version, "b": result.version}
                ),
                5.0,
            )
            records = await registered(a.log)
            for name, record in records.items():
                assert record.address == f"http://{name}.test:8000"
                assert record.safe_time > 0
                assert record.started_ms <= record.heartbeat_ms
            assert [r.name for r in await b.cluster_nodes()] == ["a", "b"]
            assert a.registry is not None and a.registry.writes >= 2
            await b.close()  # a clean stop deregisters at once
            assert set(await registered(a.log)) == {"a"}
        finally:
            await asyncio.gather(a.close(), b.close())
            async with opened(store_url) as log:
                assert await RegistryEntries(log.store, log.keys).list() == {}

    run(scenario())


def test_heartbeats_keep_an_idle_node_registered_past_its_ttl(store_url: str) -> None:
    async def scenario() -> None:
        a = await start(store_url, "a", registry_ttl_s=SHORT_TTL_S)
        try:
            first = (await registered(a.log))["a"].heartbeat_ms
            await asyncio.sleep(3 * SHORT_TTL_S)
            latest = (await registered(a.log))["a"]
            assert latest.heartbeat_ms > first
        finally:
            await a.close()

    run(scenario())


def test_entry_of_a_node_whose_log_was_closed_without_deregistering_expires(
    store_url: str,
) -> None:
    async def scenario() -> None:
        watcher = await start(store_url, "watcher")
        own_log = open_log(store_url)
        lost = await start(own_log, "lost", registry_ttl_s=SHORT_TTL_S)
        try:
            assert set(await registered(watcher.log)) == {"lost", "watcher"}
            await own_log.close()  # heartbeats now fail; nothing deregisters
            took = await until(
                watcher.log, "lost expires", lambda rs: "lost" not in rs, EXPIRY_BOUND_S
            )
            assert took > 0.2
            assert set(await registered(watcher.log)) == {"watcher"}
        finally:
            await lost.close()  # its deregistering fails (log closed) and is only logged
            await watcher.close()

    run(scenario())


def test_entry_of_a_killed_node_process_expires(store_url: str) -> None:
    async def scenario(kill: Callable[[], None]) -> None:
        a = await start(store_url, "a")
        try:
            await until(a.log, "worker registered", lambda rs: "w" in rs, 10.0)
            await asyncio.sleep(2 * SHORT_TTL_S)  # its heartbeats keep it there
            assert "w" in await registered(a.log)
            kill()
            await until(a.log, "w expires", lambda rs: "w" not in rs, EXPIRY_BOUND_S)
            assert set(await registered(a.log)) == {"a"}
        finally:
            await a.close()

    with node_process(store_url, "w", SHORT_TTL_S) as proc:

        def kill() -> None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)

        run(scenario(kill))


def test_wait_for_nodes_confirms_every_node(store_url: str) -> None:
    async def scenario() -> None:
        nodes = [await start(store_url, f"n{i}") for i in range(3)]
        try:
            plain = await nodes[0].manager.execute(create_table("PLAIN"))
            assert (plain.nodes_synced, plain.nodes_lagging) == (None, None)
            loop = asyncio.get_running_loop()
            started = loop.time()
            result = await nodes[1].manager.execute(create_table("T"), wait_for_nodes=10.0)
            assert result.nodes_synced == ("n0", "n1", "n2")
            assert result.nodes_lagging == ()
            assert loop.time() - started < 5.0
            for node in nodes:  # "confirmed" means applied, not just reported
                assert node.service.latest_version >= result.version
            # A no-op batch still reports the cluster at the current version.
            again = await nodes[2].manager.execute(
                create_table("T").model_copy(update={"if_not_exists": True}), wait_for_nodes=5.0
            )
            assert again.applied == (False,) and again.nodes_lagging == ()
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario())


def test_wait_for_nodes_reports_a_node_whose_watch_stopped(store_url: str) -> None:
    async def scenario() -> None:
        nodes = [await start(store_url, f"n{i}") for i in range(3)]
        try:
            await nodes[2].service.close()  # n2 stops applying but keeps heartbeating
            loop = asyncio.get_running_loop()
            started = loop.time()
            result = await nodes[0].manager.execute(create_table("T"), wait_for_nodes=1.0)
            waited = loop.time() - started
            assert result.nodes_synced == ("n0", "n1")
            assert result.nodes_lagging == ("n2",)
            assert 1.0 <= waited < 4.0
            # A look without waiting: at once, same answer for n2.
            started = loop.time()
            quick = await nodes[1].manager.execute(create_table("U"), wait_for_nodes=0)
            assert "n2" in (quick.nodes_lagging or ()) and loop.time() - started < 1.5
            records = await registered(nodes[0].log)
            assert records["n2"].applied_version < result.version
        finally:
            await asyncio.gather(*(n.close() for n in nodes))

    run(scenario())


def test_wait_for_nodes_reports_a_paused_node_process(etcd_server: EtcdServer) -> None:
    # etcd only: on SQLite a process paused inside a write transaction holds the file's lock,
    # so every node sharing the file would stall with it.
    store_url = f"etcd://{etcd_server.endpoint}/test-{uuid.uuid4().hex}"
    with node_process(store_url, "paused", 30.0) as proc:

        async def scenario() -> None:
            a = await start(store_url, "a")
            try:
                await until(a.log, "worker registered", lambda rs: "paused" in rs, 10.0)
                proc.send_signal(signal.SIGSTOP)
                try:
                    result = await a.manager.execute(create_table("T"), wait_for_nodes=1.0)
                    assert result.nodes_synced == ("a",)
                    assert result.nodes_lagging == ("paused",)
                finally:
                    proc.send_signal(signal.SIGCONT)
                # Resumed, it catches up and confirms the next change.
                later = await a.manager.execute(create_table("U"), wait_for_nodes=20.0)
                assert later.nodes_synced == ("a", "paused") and later.nodes_lagging == ()
            finally:
                await a.close()

        run(scenario())
        proc.communicate(timeout=30)  # stdin closes: the worker deregisters and exits
        assert proc.returncode == 0

        async def gone() -> None:
            async with opened(store_url) as log:
                assert "paused" not in await RegistryEntries(log.store, log.keys).list()

        run(gone())


def test_wait_for_nodes_is_validated_before_anything_is_applied(store_url: str) -> None:
    async def scenario() -> None:
        a = await start(store_url, "a")
        try:
            before = await a.log.latest_version()
            for bad in (-1.0, float("nan"), float("inf")):
                with pytest.raises(ValidationError):
                    await a.manager.execute(create_table("T"), wait_for_nodes=bad)
            assert await a.log.latest_version() == before
            with pytest.raises(ValidationError):
                await wait_for_nodes(a.log, 1, -1)
        finally:
            await a.close()

    run(scenario())


def test_a_node_can_stay_out_of_the_registry(store_url: str) -> None:
    async def scenario() -> None:
        a = await start(store_url, "a")
        tool = await start(store_url, "tool", registry_ttl_s=None)
        try:
            assert tool.registry is None
            assert set(await registered(a.log)) == {"a"}
            result = await tool.manager.execute(create_table("T"), wait_for_nodes=5.0)
            assert result.nodes_synced == ("a",) and result.nodes_lagging == ()
        finally:
            await asyncio.gather(a.close(), tool.close())

    run(scenario())


def test_registry_settings_are_checked(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(f"sqlite:///{tmp_path}/c.db") as log:
            for ttl, interval in ((0.0, None), (1.0, 1.0), (1.0, 0.0), (float("inf"), 1.0)):
                with pytest.raises(ValueError):
                    NodeRegistry(
                        log,
                        node_name="n",
                        address=None,
                        clock=ManualClock(),
                        applied=Watermark(0),
                        safe_time=Watermark(0),
                        ttl_s=ttl,
                        interval_s=interval,
                    )

    run(scenario())
