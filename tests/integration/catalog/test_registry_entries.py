"""Registry entries on both stores (``store_url``): leases that expire without a refresh.

The entries live beside the update log in its store (``catalog.nodes.<name>``), kept by the
catalog's ``RegistryEntries`` over the key-value seam.
"""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from catalog.runtime.registry_entries import RegistryEntries
from tests.integration.updatelog.support import opened, run, take, versions, watching
from updatelog import LogEntry, SafeTimeAdvanced, UpdateLog

ROOT = Path(__file__).resolve().parents[3]
_ENTRIES: weakref.WeakKeyDictionary[UpdateLog, RegistryEntries] = weakref.WeakKeyDictionary()


def entries(log: UpdateLog) -> RegistryEntries:
    """The registry entries of ``log``'s catalog, one object per log (it keeps the leases)."""
    found = _ENTRIES.get(log)
    if found is None:
        found = _ENTRIES[log] = RegistryEntries(log.store, log.keys)
    return found


# -- node registry ------------------------------------------------------------------------

REGISTRY_TTL_S = 1.0
# etcd rounds a lease up to its minimum TTL (2 s with default Raft timings) and revokes expired
# leases on a 500 ms sweep; this bounds how long an expiry may take on either backend.
EXPIRY_BOUND_S = 8.0


async def _until_absent(log: UpdateLog, name: str, bound_s: float = EXPIRY_BOUND_S) -> float:
    """Poll the entries until ``name`` is gone; return how long it took (bounded)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while name in await entries(log).list():
        assert loop.time() - started < bound_s, f"{name} still registered after {bound_s} s"
        await asyncio.sleep(0.05)
    return loop.time() - started


def test_registry_register_refresh_list_and_deregister(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            assert await entries(log).list() == {}
            await entries(log).register("n1", b"first", 30)
            await entries(log).register("n2", b"\x00binary\xff", 30)
            assert await entries(log).list() == {"n1": b"first", "n2": b"\x00binary\xff"}
            await entries(log).register("n1", b"refreshed", 30)
            assert await entries(log).list() == {"n1": b"refreshed", "n2": b"\x00binary\xff"}
            await entries(log).deregister("n2")
            await entries(log).deregister("never-registered")
            assert await entries(log).list() == {"n1": b"refreshed"}
            # The registry is not the log: versions, safe time and reads are untouched.
            assert await log.latest_version() == 0
            assert await log.safe_time() == 0
            assert await log.read(1) == []

    run(scenario())


def test_registry_is_shared_by_every_log_on_the_store(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as a, opened(store_url) as b:
            await entries(a).register("a", b"from a", 30)
            await entries(b).register("b", b"from b", 30)
            assert (
                await entries(a).list()
                == await entries(b).list()
                == {"a": b"from a", "b": b"from b"}
            )
            await entries(b).deregister("a")
            assert await entries(a).list() == {"b": b"from b"}

    run(scenario())


def test_registry_refuses_bad_names_and_ttls(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            for name in ("", "bad\nname"):
                with pytest.raises(ValueError):
                    await entries(log).register(name, b"x", 10)
            for ttl in (0, -1.0, float("nan"), float("inf")):
                with pytest.raises(ValueError):
                    await entries(log).register("n", b"x", ttl)
            assert await entries(log).list() == {}

    run(scenario())


def test_registry_writes_do_not_disturb_the_watch(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log, watching(log, 1) as events:
            await entries(log).register("n1", b"one", 30)
            await log.append(1, b"one", 10)
            await entries(log).register("n1", b"two", 30)
            await entries(log).deregister("n1")
            await log.append(2, b"two", 11)
            seen = await take(events, 2)
            assert versions(seen) == [1, 2]
            assert all(isinstance(e, LogEntry | SafeTimeAdvanced) for e in seen)

    run(scenario())


def test_entry_of_a_log_closed_without_deregistering_expires(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as keeper:
            await entries(keeper).register("keeper", b"alive", 30)
            async with opened(store_url) as leaving:
                await entries(leaving).register("leaving", b"gone soon", REGISTRY_TTL_S)
                assert set(await entries(keeper).list()) == {"keeper", "leaving"}
            took = await _until_absent(keeper, "leaving")
            assert took >= REGISTRY_TTL_S / 2  # it expired, it was not deleted on close
            assert await entries(keeper).list() == {"keeper": b"alive"}

    run(scenario())


def test_refreshed_entry_outlives_its_ttl(store_url: str) -> None:
    async def scenario() -> None:
        async with opened(store_url) as log:
            loop = asyncio.get_running_loop()
            end = loop.time() + 4 * REGISTRY_TTL_S + 2.5  # beyond etcd's 2 s minimum TTL too
            while loop.time() < end:
                await entries(log).register("steady", b"x", REGISTRY_TTL_S)
                assert "steady" in await entries(log).list()
                await asyncio.sleep(REGISTRY_TTL_S / 4)
            await _until_absent(log, "steady")

    run(scenario())


def test_entry_of_a_killed_process_expires(store_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.integration.catalog.registry_worker",
            store_url,
            "doomed",
            str(REGISTRY_TTL_S),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        assert line.strip() == "registered", line

        async def alive_then_killed() -> None:
            async with opened(store_url) as log:
                # The worker refreshes its entry: it is still there well past its ttl.
                await asyncio.sleep(3 * REGISTRY_TTL_S)
                assert (await entries(log).list()).get("doomed") == b"worker doomed"
                proc.kill()  # SIGKILL: no deregistering, no closing
                await asyncio.to_thread(proc.wait, 10)
                await _until_absent(log, "doomed")

        run(alive_then_killed())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
