"""Event subscribers for the E2 benchmark: many raw SSE streams in one process, timing events.

``python -m bench.event_subscribers URL COUNT FROM_VERSION LAST_VERSION`` opens COUNT streams
of ``GET /v1/events?from_version=FROM_VERSION`` (plain sockets, no client library, so the
subscribers cost little), prints ``ready`` once every stream is open, and when every stream has
read LAST_VERSION prints one JSON object: for each version, the ``time.monotonic()`` at which
each stream read its first event (a system-wide clock on Linux, comparable across processes).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from urllib.parse import urlsplit


async def _subscribe(
    host: str, port: int, path: str, opened: asyncio.Queue[None], last: int
) -> dict[int, float]:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
    seen: dict[int, float] = {}
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"event stream refused: {status!r}")
    while await reader.readline() not in (b"\r\n", b""):
        pass  # headers
    opened.put_nowait(None)
    while True:
        line = await reader.readline()
        if not line:
            raise RuntimeError("event stream ended early")
        if line.startswith(b"id: "):
            version = int(line[4:].split(b".")[0])
            seen.setdefault(version, time.monotonic())
            if version >= last:
                writer.close()
                return seen


async def _main(url: str, count: int, first: int, last: int) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = f"/v1/events?from_version={first}"
    opened: asyncio.Queue[None] = asyncio.Queue()
    tasks = [asyncio.create_task(_subscribe(host, port, path, opened, last)) for _ in range(count)]
    for _ in range(count):
        await opened.get()
    print("ready", flush=True)
    streams = await asyncio.gather(*tasks)
    by_version: dict[int, list[float]] = {}
    for seen in streams:
        for version, at in seen.items():
            by_version.setdefault(version, []).append(at)
    print(json.dumps(by_version), flush=True)


if __name__ == "__main__":
    url, count, first, last = sys.argv[1], *map(int, sys.argv[2:5])
    asyncio.run(_main(url, count, first, last))
