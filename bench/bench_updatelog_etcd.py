"""etcd update log: appends/s through ``EtcdUpdateLog.append`` vs raw ``pyetcd`` transactions.

Both sides run against one real etcd started here (default settings, so every commit is
fsynced) and send transactions of the same shape: the same compares (version, safe time), the
same three puts with the same enveloped ~1 KiB update and the same reads on failure. The ratio
shows what the log adds on top of the client: the worker-thread hop from the event loop, the
envelope and the outcome handling. Each repeat appends under a fresh key prefix.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from typing import Any

import pyetcd

from bench.harness import Figure, Sample, alternate, progress
from deploy.etcd_server import EtcdServer
from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.etcd import EtcdUpdateLog
from updatelog.keys import KeyLayout

PAYLOAD = os.urandom(1024)


def _host_port(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.rsplit(":", 1)
    return host, int(port)


class _LogSide:
    def __init__(self, endpoint: str, count: int) -> None:
        self.endpoint = endpoint
        self.count = count

    def run(self) -> float:
        return asyncio.run(self._appends())

    async def _appends(self) -> float:
        log = EtcdUpdateLog([_host_port(self.endpoint)], prefix=f"bench-{uuid.uuid4().hex}")
        try:
            await log.latest_version()  # connect outside the timed loop, as the raw side does
            start = time.perf_counter()
            for version in range(1, self.count + 1):
                result = await log.append(version, PAYLOAD, version)
                if not result.committed:
                    raise RuntimeError(f"benchmark append lost a CAS: {result}")
            return self.count / (time.perf_counter() - start)
        finally:
            await log.close()


class _RawSide:
    """The baseline: the append transaction sent directly with pyetcd, from one thread."""

    def __init__(self, client: Any, count: int, payload: bytes = PAYLOAD) -> None:
        self.client = client
        self.count = count
        self.payload = payload

    def run(self) -> float:
        keys = KeyLayout(f"bench-raw-{uuid.uuid4().hex}")
        t = self.client.transactions
        self.client.get(keys.version)
        start = time.perf_counter()
        for version in range(1, self.count + 1):
            compare = [
                t.create(keys.version) == 0
                if version == 1
                else t.value(keys.version) == envelope.encode_int(Kind.VERSION, version - 1),
                t.create(keys.safe_time) == 0
                if version == 1
                else t.value(keys.safe_time) < envelope.encode_int(Kind.SAFE_TIME, version),
            ]
            ok, _ = self.client.transaction(
                compare=compare,
                success=[
                    t.put(keys.update(version), envelope.encode(Kind.UPDATE, self.payload)),
                    t.put(keys.version, envelope.encode_int(Kind.VERSION, version)),
                    t.put(keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, version)),
                ],
                failure=[t.get(keys.version), t.get(keys.safe_time), t.get(keys.update(version))],
            )
            if not ok:
                raise RuntimeError(f"raw transaction {version} failed its compare")
        return self.count / (time.perf_counter() - start)


def run(quick: bool) -> list[Figure]:
    count, repeats = (200, 5) if quick else (1_000, 7)
    with EtcdServer() as server:
        # The raw side is etcd's own synchronous Python client, from one thread: the fastest
        # way this process can send the same transaction.
        client = pyetcd.client(*_host_port(server.endpoint))
        try:
            progress(f"raw pyetcd append transaction and EtcdUpdateLog.append, x{count} each")
            raws, appends = alternate(
                [_RawSide(client, count).run, _LogSide(server.endpoint, count).run],
                repeats=repeats,
            )
            baseline, value = Sample.of(raws, "txn/s"), Sample.of(appends, "appends/s")
        finally:
            client.close()
    return [
        Figure(
            key="UL-E1",
            title="EtcdUpdateLog.append/s ÷ raw pyetcd txn/s (1 KiB, fsync)",
            value=value,
            baseline=baseline,
            goal=">= 0.8",
            extra={"appends_per_repeat": count, "repeats": repeats, "payload_bytes": 1024},
        )
    ]
