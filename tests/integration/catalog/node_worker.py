"""A catalog node in its own OS process, for the multi-process test.

Usage: ``python -m tests.integration.catalog.node_worker URL NAME OPS``. Executes OPS random
DDL batches with request ids ``NAME-<i>`` and prints one JSON line per outcome.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys

from catalog import CatalogError
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.random_ddl import random_batch


async def main(url: str, name: str, ops: int) -> None:
    async with CatalogNode.open(url, name, NodeOptions(delay_ms=10, max_clock_skew_ms=10)) as node:
        rng = random.Random(name)
        for i in range(ops):
            request_id = f"{name}-{i}"
            batch = random_batch(rng, node.service.latest_catalog())
            try:
                result = await node.manager.execute(batch, request_id=request_id)
                line = {
                    "id": request_id,
                    "version": result.version,
                    "applied": list(result.applied),
                    "ok": True,
                }
            except CatalogError as e:
                line = {"id": request_id, "code": str(e.code), "ok": False}
            print(json.dumps(line), flush=True)
        print(
            json.dumps(
                {
                    "latest": node.service.latest_version,
                    "digest": node.service.digest(node.service.latest_version),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
