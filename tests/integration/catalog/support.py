"""Helpers for node tests: run a scenario with a time bound, start and settle nodes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from catalog import ColumnType
from catalog import commands as c
from catalog.marshalling import decode_update
from catalog.runtime.node import CatalogNode

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T], timeout_s: float = 120.0) -> T:
    """Run ``coroutine`` on a fresh event loop, failing the test if it takes too long."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout_s))


def create_table(name: str, schema: str = "PUBLIC") -> c.CreateTableCommand:
    """Return a small CREATE TABLE."""
    return c.CreateTable(
        schema=schema,
        name=name,
        columns=[
            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
            c.Column(name="V", type=ColumnType.STRING, length=20),
        ],
        primary_key=["ID"],
    )


async def until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    """Poll until ``condition()`` holds, at most ``timeout_s`` (then fail saying ``what``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        assert loop.time() < deadline, f"not within {timeout_s} s: {what}"
        await asyncio.sleep(0.01)


async def settle(nodes: Sequence[CatalogNode], timeout_s: float = 20.0) -> int:
    """Wait until every node applied the log's latest version; return that version."""
    latest = await nodes[0].log.latest_version()
    await asyncio.wait_for(
        asyncio.gather(*(n.service.catalog_ready(latest) for n in nodes)), timeout_s
    )
    return latest


async def request_ids_in_log(node: CatalogNode) -> dict[str, list[int]]:
    """Return, per request id recorded in the retained log, the versions that recorded it."""
    found: dict[str, list[int]] = {}
    for entry in await node.log.read(await node.log.earliest_version()):
        if entry.is_snapshot:
            continue
        for outcome in decode_update(entry.payload).requests:
            found.setdefault(outcome.request_id, []).append(entry.version)
    return found


async def check_acknowledged(
    node: CatalogNode,
    recorded: dict[str, list[int]],
    request_id: str,
    version: int,
    applied: Sequence[bool],
) -> None:
    """Check where an acknowledged request is: in the log once, at the version it was told.

    One that changed nothing and was committed alone is in no version: its request record
    names the version it was judged at instead.
    """
    if recorded.get(request_id) == [version]:
        return
    assert not any(applied) and request_id not in recorded, (request_id, recorded.get(request_id))
    record = await node.log.request_record(request_id)
    assert record is not None and record.refusal is None, (request_id, record)
    assert record.version == version, (request_id, record)
