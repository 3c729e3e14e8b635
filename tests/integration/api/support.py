"""Helpers for API tests: commands, a request-recording transport, reading the log directly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import TypeVar

import httpx

from catalog import ColumnType
from catalog import commands as c
from catalog.marshalling import decode_update
from updatelog.url import open_log

T = TypeVar("T")


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


class RecordingTransport(httpx.HTTPTransport):
    """The real HTTP transport, remembering what was sent (method, path, JSON body)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, str, object]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.sent.append((request.method, request.url.path, body))
        return super().handle_request(request)


def request_ids_in_log(store: str) -> dict[str, list[int]]:
    """Return, per request id recorded in the store's retained log, the versions holding it."""

    async def read() -> dict[str, list[int]]:
        log = open_log(store)
        try:
            found: dict[str, list[int]] = {}
            for entry in await log.read(await log.earliest_version()):
                if entry.is_snapshot:
                    continue
                for outcome in decode_update(entry.payload).requests:
                    found.setdefault(outcome.request_id, []).append(entry.version)
            return found
        finally:
            await log.close()

    return asyncio.run(asyncio.wait_for(read(), 30))


def take(events: Iterator[T], n: int) -> list[T]:
    """Return the next ``n`` items of ``events``."""
    return [next(events) for _ in range(n)]
