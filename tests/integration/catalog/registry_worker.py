"""A process that keeps a node-registry entry alive until it is killed.

Usage: ``python -m tests.integration.catalog.registry_worker URL NAME TTL_S``. Registers
``NAME`` with a ttl of ``TTL_S`` seconds, prints ``registered``, then refreshes the entry every
``TTL_S / 4`` seconds for at most 60 s (a bound, in case nobody kills it).
"""

from __future__ import annotations

import asyncio
import sys

from catalog.runtime.registry_entries import RegistryEntries
from tests.integration.updatelog.support import opened

LIFETIME_S = 60.0


async def main(url: str, name: str, ttl_s: float) -> None:
    async with opened(url) as log:
        entries = RegistryEntries(log.store, log.keys)
        await entries.register(name, f"worker {name}".encode(), ttl_s)
        print("registered", flush=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LIFETIME_S
        while loop.time() < deadline:
            await asyncio.sleep(ttl_s / 4)
            await entries.register(name, f"worker {name}".encode(), ttl_s)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
